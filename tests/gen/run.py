"""Make a generated model concrete (weights quantized, calibrated, inputs drawn) and run it on the
oracle and on micronn under every host configuration.

    case = make_case(ir)                   # Case: model bytes, inputs per invoke, dtypes
    result = check_case(case)              # Result: status ok | both_refused | mismatch | refused | oracle_refused ...

micronn runs each model with every planner (greedy, greedy with reused inputs, no_reuse, an offline
plan from micronn_tools.plan stored in the model), with the host build's optimized kernel variants
(generic) and with the reference kernels (reference=True), delegated to the generic backend, and
with patch-based execution: CONFIGS. The oracle is LiteRT with its reference kernels
(BUILTIN_REF), or TFLM for int8 SVDF with int8 weights_time (LiteRT has no such kernel).

Comparison: integer outputs bit-exact; float32 outputs within rtol 1e-5 plus atol = 1e-5 x the
largest magnitude of that output (FLOAT_ATOL): the engine's float kernels (generic variants:
other summation orders, fused multiply-adds the compiler may emit) round each partial sum
differently, and such an error is relative to the terms summed, not to a result that cancels to
near zero; the output's largest value bounds the terms' scale (inputs O(1), weights at fan-in
scale).
"""
from __future__ import annotations

import dataclasses
import sys
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
for p in (ROOT / "tests", ROOT / "host_tools"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from . import emit  # noqa: E402
from .ir import infer  # noqa: E402

FLOAT_RTOL = 1e-5
FLOAT_ATOL = 1e-5   # x max |reference| of the output

# Statuses where the engine agrees with the oracle: both run it alike, or both refuse it (a model
# LiteRT refuses, e.g. a fused activation bound that does not quantize into int32, must be refused).
AGREE = ("ok", "both_refused")

CONFIGS = {
    "greedy": dict(),
    "reuse": dict(reuse_inputs=True),
    "no_reuse": dict(planner="no_reuse"),
    "offline": dict(planner="offline"),
    "reference": dict(reference=True),
    "delegate": dict(delegate="generic"),
    "patches": dict(patches=True),
}


@dataclasses.dataclass
class Case:
    model: bytes
    inputs: list          # per invoke: list of arrays
    oracle: str = "litert"
    desc: str = ""
    sat: float = 0.0      # share of quantized output values at their type's limits (oracle run)
    asym_inputs: list = dataclasses.field(default_factory=list)   # hybrid: see asym_tie()


@dataclasses.dataclass
class Result:
    status: str                     # ok | both_refused | mismatch | refused | oracle_refused | crash | known_asym_tie
    detail: str = ""
    configs: list = dataclasses.field(default_factory=list)   # the configs that failed
    sat: float = 0.0


# ---- oracle -----------------------------------------------------------------------------------------

def litert(model, inputs, tensors=()):
    """Outputs per invoke (and the listed tensors' values after each invoke) with LiteRT BUILTIN_REF."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    it = Interpreter(model_content=model, experimental_op_resolver_type=OpResolverType.BUILTIN_REF,
                     experimental_preserve_all_tensors=bool(tensors))
    it.allocate_tensors()
    ins, outs = it.get_input_details(), it.get_output_details()
    res, seen = [], []
    for xs in inputs:
        for d, x in zip(ins, xs):
            it.set_tensor(d["index"], np.asarray(x, d["dtype"]).reshape(d["shape"]))
        it.invoke()
        res.append([it.get_tensor(d["index"]).copy() for d in outs])
        if tensors:
            seen.append({t: it.get_tensor(t).copy() for t in tensors})
    return (res, seen) if tensors else res


class OracleCrash(RuntimeError):
    pass


def tflm(model, inputs):
    """TFLM's outputs per invoke, computed in a forked child: TFLM's Python interpreter crashes
    (SIGSEGV) on some models it should refuse, which must not end the generator's run."""
    import os
    import pickle
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # child
        os.close(r)
        try:
            res = ("ok", _tflm(model, inputs))
        except BaseException as e:   # noqa: BLE001 (sent to the parent)
            res = ("err", f"{type(e).__name__}: {e}")
        with os.fdopen(w, "wb") as f:
            pickle.dump(res, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        raise OracleCrash(f"TFLM died of signal {os.WTERMSIG(st)}")
    kind, val = pickle.loads(data)
    if kind != "ok":
        raise RuntimeError(val)
    return val


def _tflm(model, inputs):
    from tflite_micro.python.tflite_micro import runtime
    it = runtime.Interpreter.from_bytes(model, arena_size=len(model) + (1 << 20))
    n_out = _num_outputs(model)
    res = []
    for xs in inputs:
        for i, x in enumerate(xs):
            d = it.get_input_details(i)
            it.set_input(np.asarray(x, d["dtype"]).reshape(d["shape"]), i)
        it.invoke()
        res.append([it.get_output(i).copy() for i in range(n_out)])
    return res


def _num_outputs(model):
    from ai_edge_litert import schema_py_generated as S
    return S.Model.GetRootAsModel(model, 0).Subgraphs(0).OutputsLength()


def run_oracle(case):
    return tflm(case.model, case.inputs) if case.oracle == "tflm" else litert(case.model, case.inputs)


# ---- micronn ----------------------------------------------------------------------------------------

def _offline_model(model):
    from micronn_tools import plan
    p = plan.Problem(model)
    offs = plan.plan_by_breadth(p.bufs, p.n_ops)
    plan.check(p.bufs, offs)
    return plan.with_offline_plan(model, plan.offline_vector(p, offs))


def run_micronn(model, inputs, config="greedy", lib_path=None):
    from micronn_tools import engine as E
    kw = dict(CONFIGS[config])
    if config == "offline":
        model = _offline_model(model)
    if kw.get("delegate") and kw["delegate"] not in E.backends():
        kw.pop("delegate")
    m = E.Model(model, lib_path=lib_path) if lib_path else E.Model(model)
    it = E.Interpreter(m, **kw)
    res = []
    for xs in inputs:
        for i, x in enumerate(xs):
            it.set_input(i, np.ascontiguousarray(x))
        it.invoke()
        outs = []
        for i in range(it.num_outputs):
            o = it.output(i)
            outs.append(np.asarray(o).reshape(it.output_details(i)["shape"]))
        res.append(outs)
    return res


# ---- making a case ----------------------------------------------------------------------------------

def float_inputs(ir):
    """Float test inputs per invoke: normal values at a per-input scale (1e-1 .. 1e1); hybrid models
    give each row its own range and some an offset (symmetric and asymmetric input quantization
    then differ)."""
    rng = np.random.default_rng([ir.seed, 1])
    scales = {v: 10 ** rng.uniform(-1, 1) for v in ir.inputs}
    out = []
    for _ in range(ir.invokes):
        xs = []
        for v in ir.inputs:
            shape = ir.shapes[v]
            x = rng.normal(0, scales[v], shape)
            if ir.family == "hybrid" and rng.random() < 0.5:
                rows = x.reshape(shape[0], -1)
                rows *= 10 ** rng.uniform(-1, 1, (shape[0], 1))
                rows += rng.choice([0.0, 1.0], (shape[0], 1)) * rng.uniform(-2, 2, (shape[0], 1))
                x = rows.reshape(shape)
            xs.append(x.astype(np.float32))
        out.append(xs)
    return out


def calibrate(ir, wq, deq, xs):
    """{value or ("state", v): (min, max)} over the float calibration run of deq."""
    model, vt = emit.build(deq, wq, calib=True)
    idx = sorted(set(vt.values()))
    _, seen = litert(model, xs, tensors=idx)
    ranges = {}
    for key, t in vt.items():
        vals = [s[t] for s in seen]
        lo = min(float(v.min()) for v in vals)
        hi = max(float(v.max()) for v in vals)
        ranges[key] = (lo, hi)
    return ranges


def make_case(ir):
    infer(ir)
    xs = float_inputs(ir)
    wq, deq = emit.quantize_weights(ir)
    if ir.family in ("int8", "int16"):
        ranges = calibrate(ir, wq, deq, xs)
        qp, common = emit.assign_quant(ir, ranges)
        for n in ir.nodes:   # SVDF state: its (feature activation) range
            if n.kind == "svdf":
                lo, hi = ranges[("state", n.out)]
                m = max(-lo, hi, 1e-6) * emit.MARGIN
                tmax = 127 if n.a.get("time8") else 32767
                qp[("state", n.out)] = (float(np.float32(m / tmax)), 0)
        model, _ = emit.build(ir, wq, qp, common)
        if not ir.float_io:
            dt = np.int16 if ir.family == "int16" else np.int8
            info = np.iinfo(dt)
            xs = [[np.clip(np.round(x / qp[v][0]) + qp[v][1], info.min, info.max).astype(dt)
                   for v, x in zip(ir.inputs, inv)] for inv in xs]
        return Case(model, xs, ir.oracle, ir.describe())
    model, vt = emit.build(ir, wq)
    case = Case(model, xs, ir.oracle, ir.describe())
    if ir.family == "hybrid":   # inputs the oracle quantizes asymmetrically: (tensor, per image?)
        for i, n in enumerate(ir.nodes):
            per_channel = n.kind in ("conv", "dw") and len(wq[i]["w"][1]) > 1
            if per_channel or (n.kind in ("fc", "svdf") and n.a.get("asym")):
                case.asym_inputs.append((vt[n.ins[0]], n.kind in ("conv", "dw")))
    return case


def _asym_q(x, scale_in_float):
    """int8 values of one row as LiteRT's AsymmetricQuantizeFloats gives them, the scale computed
    in double (the engine, TFLite's source) or in float32 (what ai-edge-litert's results match)."""
    f = np.float32
    lo, hi = min(f(0), f(x.min())), max(f(0), f(x.max()))
    if lo == hi:
        return np.zeros(x.shape)
    sc = float(f((hi - lo) / f(255))) if scale_in_float else (float(hi) - float(lo)) / 255
    zmin, zmax = -128 - float(lo) / sc, 127 - float(hi) / sc
    z = zmin if 128 + abs(float(lo) / sc) < 127 + abs(float(hi) / sc) else zmax
    z = min(127.0, max(-128.0, float(np.sign(z) * np.floor(abs(z) + 0.5))))
    v = f(z) + x.astype(f) * (f(1) / f(sc))
    return np.clip(np.sign(v) * np.floor(np.abs(v) + 0.5), -128, 127)


def asym_tie(case):
    """True when an asymmetrically quantized hybrid input of the oracle's run quantizes differently
    with a double and a float32 scale: the engine's known difference (tests/gen/regressions/
    hybrid-*-asym-tie.json), not a new finding."""
    if not case.asym_inputs:
        return False
    _, seen = litert(case.model, case.inputs, tensors=sorted({t for t, _ in case.asym_inputs}))
    for inv in seen:
        for t, per_image in case.asym_inputs:
            x = inv[t]
            rows = x.reshape(x.shape[0], -1) if per_image else x.reshape(-1, x.shape[-1])
            for r in rows:
                if not np.array_equal(_asym_q(r, False), _asym_q(r, True)) or _near_tie(r):
                    return True
    return False


def _near_tie(x):
    """An element within float32 rounding of a .5 tie before rounding in the quantization (z + x / scale),
    where LiteRT's and the engine's arithmetic can round to neighbouring values."""
    f = np.float32
    lo, hi = min(f(0), f(x.min())), max(f(0), f(x.max()))
    if lo == hi:
        return False
    sc = (float(hi) - float(lo)) / 255
    v = x.astype(np.float64) / sc
    return bool((np.abs(np.abs(v - np.floor(v)) - 0.5) < 1e-4).any())


# ---- checking ---------------------------------------------------------------------------------------

def compare(ref, got):
    """None when equal by the rules above, else a description of the first difference."""
    if len(ref) != len(got):
        return f"{len(got)} invokes, oracle {len(ref)}"
    for k, (r_inv, g_inv) in enumerate(zip(ref, got)):
        if len(r_inv) != len(g_inv):
            return f"invoke {k}: {len(g_inv)} outputs, oracle {len(r_inv)}"
        for j, (r, g) in enumerate(zip(r_inv, g_inv)):
            if r.dtype != g.dtype or r.size != g.size:
                return f"invoke {k} output {j}: {g.dtype}{g.shape}, oracle {r.dtype}{r.shape}"
            g = g.reshape(r.shape)
            if r.dtype == np.float32:
                atol = FLOAT_ATOL * float(np.abs(r).max()) if r.size else 0.0
                bad = ~np.isclose(g, r, rtol=FLOAT_RTOL, atol=atol, equal_nan=True)
            else:
                bad = g != r
            if bad.any():
                i = np.argwhere(bad)[0]
                return (f"invoke {k} output {j}: {int(bad.sum())}/{r.size} differ, first at {tuple(i)}: "
                        f"micronn {g[tuple(i)]!r} oracle {r[tuple(i)]!r}")
    return None


def saturation(ref):
    """Share of integer output values at their type's limits (float outputs: not counted)."""
    n = s = 0
    for inv in ref:
        for r in inv:
            if r.dtype in (np.int8, np.int16):
                info = np.iinfo(r.dtype)
                n += r.size
                s += int(((r == info.min) | (r == info.max)).sum())
    return s / n if n else 0.0


def check_case(case, configs=None, lib_path=None):
    from micronn_tools import engine as E
    try:
        ref = run_oracle(case)
    except Exception as e:   # the oracle cannot run it: the engine must refuse it too
        why = f"{type(e).__name__}: {e}".splitlines()[0][:300]
        try:
            run_micronn(case.model, case.inputs, "reference", lib_path)
        except E.MicronnError as e2:
            return Result("both_refused", f"{why}\nmicronn: {e2}")
        except Exception:   # noqa: BLE001: a crash is reported by the configurations below
            pass
        else:
            return Result("oracle_refused", f"{why} (micronn runs it)")
    sat = saturation(ref)
    failed, details = [], []
    for cfg in configs or CONFIGS:
        try:
            got = run_micronn(case.model, case.inputs, cfg, lib_path)
        except E.MicronnError as e:
            return Result("refused", f"{cfg}: {e}", [cfg], sat)
        except Exception as e:
            return Result("crash", f"{cfg}: {type(e).__name__}: {e}\n{traceback.format_exc()}", [cfg], sat)
        d = compare(ref, got)
        if d:
            failed.append(cfg)
            details.append(f"{cfg}: {d}")
    if failed:
        if asym_tie(case):
            return Result("known_asym_tie", "\n".join(details), failed, sat)
        return Result("mismatch", "\n".join(details), failed, sat)
    return Result("ok", "", [], sat)
