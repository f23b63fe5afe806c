"""Differential testing with generated models: micronn (every host configuration) against the oracle.

    PYTHONPATH=host_tools .venv/bin/python -m tests.gen run --seed 1 --count 1000 [--workers 2]
        [--family int8] [--findings DIR] [--no-shrink] [--log FILE]
    PYTHONPATH=host_tools .venv/bin/python -m tests.gen show SEED        # the IR of one seed
    PYTHONPATH=host_tools .venv/bin/python -m tests.gen replay DIR/NAME  # a saved finding / regression

Model k of a run is generate(seed + k): any model of a long run is reproduced by its seed alone.
Every model that fails (mismatch, micronn refusing what the oracle runs, a crash, the oracle
refusing a generated model: a generator bug) is shrunk (tests/gen/shrink.py) and saved in
--findings (default build/gen/findings) as NAME.tflite + NAME.npz (inputs per invoke) + NAME.json
(seed, status, detail, the IR before and after shrinking); `make gen` runs this.
A finding fixed in the engine is copied into tests/gen/regressions/ (test_gen.py runs them all).
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

import numpy as np

from . import generate, run, shrink

ROOT = Path(__file__).resolve().parents[2]


def save_case(case, path, meta):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".tflite").write_bytes(case.model)
    arrays = {f"i{k}_{j}": x for k, inv in enumerate(case.inputs) for j, x in enumerate(inv)}
    np.savez(path.with_suffix(".npz"), **arrays)
    path.with_suffix(".json").write_text(json.dumps(dict(meta, oracle=case.oracle, invokes=len(case.inputs)),
                                                    indent=1) + "\n")


def load_case(path):
    path = Path(path)
    meta = json.loads(path.with_suffix(".json").read_text())
    z = np.load(path.with_suffix(".npz"))
    inputs = []
    for k in range(meta["invokes"]):
        j, inv = 0, []
        while f"i{k}_{j}" in z:
            inv.append(z[f"i{k}_{j}"])
            j += 1
        inputs.append(inv)
    return run.Case(path.with_suffix(".tflite").read_bytes(), inputs, meta["oracle"], meta.get("ir", "")), meta


def check_seed(seed, family=None):
    """(seed, family, status, detail, configs, sat, kinds)"""
    try:
        ir = generate.generate(seed, family)
    except Exception as e:   # noqa: BLE001
        return (seed, family, "gen_error", f"{type(e).__name__}: {e}", [], 0.0, [])
    try:
        case = run.make_case(ir)
    except Exception as e:   # noqa: BLE001: calibration failed (the oracle refused the float graph)
        return (seed, ir.family, "oracle_refused", f"calibration: {type(e).__name__}: {e}".splitlines()[0][:300],
                [], 0.0, ir.kinds())
    r = run.check_case(case)
    return (seed, ir.family, r.status, r.detail, r.configs, r.sat, ir.kinds())


def shrink_and_save(seed, family, status, findings, log=print):
    ir = generate.generate(seed, family)
    before = ir.describe()

    def fails(c):
        try:
            return run.check_case(run.make_case(c)).status == status
        except Exception:   # noqa: BLE001
            return status == "oracle_refused"
    small = shrink.shrink(ir, fails)
    try:
        case = run.make_case(small)
        r = run.check_case(case)
    except Exception as e:   # noqa: BLE001
        log(f"  seed {seed}: shrunk model fails to build: {e}")
        return None
    name = f"{status}-{small.family}-{'-'.join(small.kinds())}-s{seed}"
    path = Path(findings) / name
    save_case(case, path, dict(seed=seed, status=r.status, detail=r.detail, configs=r.configs,
                               ir=small.describe(), original=before))
    return path


def _worker(args):
    seed, family = args
    return check_seed(seed, family)


def cmd_run(a):
    seeds = range(a.seed, a.seed + a.count)
    counts = collections.Counter()
    fams = collections.Counter()
    kinds = collections.Counter()
    failures = []
    sat_hi = 0
    t0 = time.time()
    logf = open(a.log, "a") if a.log else None

    def log(msg):
        print(msg, flush=True)
        if logf:
            logf.write(msg + "\n")
            logf.flush()
    log(f"gen run: seeds {a.seed}..{a.seed + a.count - 1}, family {a.family or 'any'}, workers {a.workers}")
    jobs = [(s, a.family) for s in seeds]
    if a.workers > 1:
        pool = mp.get_context("fork").Pool(a.workers, maxtasksperchild=2000)
        it = pool.imap_unordered(_worker, jobs, chunksize=16)
    else:
        pool = None
        it = map(_worker, jobs)
    done = 0
    for seed, fam, status, detail, configs, sat, ks in it:
        done += 1
        counts[status] += 1
        fams[(fam, status)] += 1
        kinds.update(ks)
        sat_hi += sat > 0.5
        if status not in run.AGREE:
            failures.append((seed, fam, status))
            log(f"seed {seed} {fam} {status} {configs}: {detail.splitlines()[0] if detail else ''}")
        if done % a.progress == 0:
            dt = time.time() - t0
            log(f"  {done} models, {done / dt:.1f}/s, {dict(counts)}")
    if pool:
        pool.close()
        pool.join()
    dt = time.time() - t0
    log(f"done: {done} models in {dt:.1f} s ({done / dt:.1f} models/s): {dict(counts)}")
    log(f"  by family: {dict(sorted(fams.items()))}")
    log(f"  op kinds (models containing): {dict(sorted(kinds.items()))}")
    log(f"  models with over half their integer outputs at the type's limits: {sat_hi}")
    if failures and not a.no_shrink:
        for seed, fam, status in failures[:a.max_shrink]:
            p = shrink_and_save(seed, None if a.family is None else fam, status, a.findings, log)
            log(f"  seed {seed}: shrunk to {p}")
    if logf:
        logf.close()
    return 1 if failures else 0


def cmd_show(a):
    ir = generate.generate(a.seed, a.family)
    print(ir.describe())
    if a.check:
        case = run.make_case(ir)
        print(run.check_case(case))


def cmd_replay(a):
    case, meta = load_case(a.path)
    print(meta.get("ir", ""))
    r = run.check_case(case)
    print(r.status, r.detail)
    return 0 if r.status in run.AGREE else 1


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m tests.gen", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--count", type=int, default=1000)
    r.add_argument("--workers", type=int, default=1)
    r.add_argument("--family", choices=generate.FAMILIES)
    r.add_argument("--findings", default=str(ROOT / "build" / "gen" / "findings"))
    r.add_argument("--no-shrink", action="store_true")
    r.add_argument("--max-shrink", type=int, default=50)
    r.add_argument("--progress", type=int, default=1000)
    r.add_argument("--log")
    s = sub.add_parser("show")
    s.add_argument("seed", type=int)
    s.add_argument("--family", choices=generate.FAMILIES)
    s.add_argument("--check", action="store_true")
    q = sub.add_parser("replay")
    q.add_argument("path")
    a = p.parse_args(argv)
    return {"run": cmd_run, "show": cmd_show, "replay": cmd_replay}[a.cmd](a) or 0


if __name__ == "__main__":
    sys.exit(main())
