"""micronn: neural-network inference on MicroPython.

    import micronn
    m = micronn.load("person_detect")          # built-in model (flash, zero copy), file path or bytes
    it = micronn.Interpreter(m)                # arena sized by the engine, allocated once
    it.input(0)[:] = frame                     # any buffer of the right size
    it.invoke()                                # no heap allocation
    print(micronn.top_k(it.output(0), 1))

Everything of the C module `_micronn` is re-exported: Model, Interpreter, Tensor, ops(), models,
version, PROFILE_CLOCK, ticks(). The helpers below are thin Python on top of it.
"""
from _micronn import *  # noqa: F401,F403
from _micronn import Model, Interpreter, models, PROFILE_CLOCK


def arena_size(*models, **options):
    """Bytes of a micronn.Arena that Interpreters of all these models share (made in any order,
    with the same options, e.g. reuse_inputs=True): their persistent parts stacked plus the
    largest of the rest, which the engine's dry runs give exactly.

        shared = micronn.Arena(micronn.arena_size(m1, m2))
        it1 = micronn.Interpreter(m1, arena=shared)
        it2 = micronn.Interpreter(m2, arena=shared)
    """
    parts = [load(m).arena_needed(detail=True, **options) for m in models]
    return sum(p["persistent"] for p in parts) + max(p["needed"] - p["persistent"] for p in parts)

_INT_RANGE = {
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "uint16": (0, 65535),
    "int32": (-2147483648, 2147483647),
}


def load_file(path):
    """Model from a file. A file on ROMFS (/rom) is memory the CPU reads directly (flash on a
    real board): the Model uses it in place, no heap copy. Any other file is read once into an
    immutable bytes object (one heap block of the file's size) that the Model then uses."""
    import os
    from _micronn import read_bytes

    with open(path, "rb") as f:
        try:
            return Model(memoryview(f))  # read-only buffer: referenced, never copied
        except TypeError:  # not memory-mapped (littlefs, FAT, host files)
            pass
        return Model(read_bytes(f, os.stat(path)[6]))


def load(source):
    """Model from a built-in name (micronn.models), a file path, or a buffer (used in place)."""
    if isinstance(source, Model):
        return source
    if isinstance(source, str):
        if source in models:
            return Model(models[source])
        try:
            return load_file(source)
        except OSError as e:
            if e.errno != 2:  # ENOENT
                raise
            raise ValueError("no model %r: not built in (micronn.models has %s) and no such file"
                             % (source, sorted(models) or "none")) from None
    return Model(source)


def _round(x):
    # TFLite rounds half away from zero (std::round).
    return int(x + 0.5) if x >= 0 else -int(-x + 0.5)


def _params(t, scale, zero_point):
    if scale is None:
        scale = t.scale
    if zero_point is None:
        zero_point = t.zero_point
    if not scale:
        raise ValueError("tensor is not quantized")
    return scale, zero_point


def quantize(t, values, out=None, scale=None, zero_point=None):
    """Quantize real ``values`` with ``t``'s scale/zero_point (or the given ones).

    ``t`` is a Tensor (or anything with .scale, .zero_point, .dtype). With ``out`` (e.g. the Tensor
    itself) the integers are written into it; otherwise a list is returned.
    """
    scale, zp = _params(t, scale, zero_point)
    lo, hi = _INT_RANGE.get(t.dtype, (None, None))
    res = out if out is not None else [0] * len(values)
    inv = 1.0 / scale
    for i, x in enumerate(values):
        q = _round(x * inv) + zp
        if lo is not None:
            q = lo if q < lo else hi if q > hi else q
        res[i] = q
    return res


def dequantize(t, values=None, scale=None, zero_point=None):
    """Real values of a quantized Tensor ``t`` (or of ``values`` with ``t``'s parameters): a list."""
    scale, zp = _params(t, scale, zero_point)
    if values is None:
        values = t
    return [(v - zp) * scale for v in values]


def set_input(t, values):
    """Write ``values`` into Tensor ``t``: buffers are copied unchanged; lists of floats are
    quantized when ``t`` is quantized."""
    if isinstance(values, (list, tuple)) and t.dtype in _INT_RANGE and t.scale and values \
            and isinstance(values[0], float):
        quantize(t, values, out=t)
    else:
        t[:] = values


def top_k(values, k=1):
    """The ``k`` largest entries of a Tensor or sequence: [(index, value), ...], largest first."""
    best = []
    for i in range(len(values)):
        v = values[i]
        if len(best) < k:
            best.append((i, v))
            best.sort(key=lambda e: -e[1])
        elif v > best[-1][1]:
            best[-1] = (i, v)
            best.sort(key=lambda e: -e[1])
    return best


def argmax(values):
    """Index of the largest entry (the first one on ties)."""
    return top_k(values, 1)[0][0]


def profile_report(it, instructions_per_tick=None, cpu_hz=None, file=None):
    """Print and return a per-op profile of an Interpreter made with ``profile=True``.

    Ticks are in units of ``micronn.PROFILE_CLOCK``: ``"cpu"`` = CPU clock cycles (bare-metal
    port), ``"ns"`` (UNIX), ``"us"`` (other ports), ``"none"`` (a port without a clock: ticks are
    0, calls are counted). On an emulated board run with QEMU's
    ``-icount shift=0``, ``instructions_per_tick`` (board.json; 40 on the MPS2 boards) turns cycles
    into executed instructions; ``cpu_hz`` turns cycles into microseconds. With a delegate
    (``Interpreter(..., delegate=...)``) a line per backend gives its share. Returns a list of
    (op_index, op_name, calls, ticks, per_call) where per_call is in instructions when
    ``instructions_per_tick`` is given, else in ticks.
    """
    rows = []
    total = 0
    variants = it.variants()
    for idx, name, calls, ticks in it.profile():
        total += ticks
        per = ticks // calls if calls else 0
        if instructions_per_tick:
            per = int(per * instructions_per_tick)
        rows.append((idx, name, calls, ticks, per))
    unit = "instr" if instructions_per_tick else PROFILE_CLOCK + " ticks"
    lines = ["%4s  %-28s %-24s %6s %14s %6s" % ("op", "name", "kernel", "calls", unit + "/call", "%")]
    for idx, name, calls, ticks, per in rows:
        pct = 100 * ticks / total if total else 0.0
        lines.append("%4d  %-28s %-24s %6d %14d %6.1f" % (idx, name, variants[idx], calls, per, pct))
    calls = max([r[2] for r in rows] or [1]) or 1
    tot = total // calls
    backends = it.backends()
    if any(backends):
        # ticks per backend: the delegate's subgraphs vs the interpreter's kernels
        split = {}
        for (idx, name, c, ticks, per), b in zip(rows, backends):
            split[b or "kernels"] = split.get(b or "kernels", 0) + ticks
        for b, ticks in sorted(split.items()):
            pct = 100 * ticks / total if total else 0.0
            t = ticks // calls
            lines.append("backend %-12s %14d %s per invoke %6.1f%%" % (
                b, int(t * instructions_per_tick) if instructions_per_tick else t,
                "instructions" if instructions_per_tick else PROFILE_CLOCK + " ticks", pct))
    if instructions_per_tick:
        lines.append("total per invoke: %d instructions" % int(tot * instructions_per_tick))
    elif PROFILE_CLOCK == "cpu" and cpu_hz:
        lines.append("total per invoke: %d cycles (%d us)" % (tot, tot * 1000000 // cpu_hz))
    else:
        lines.append("total per invoke: %d %s ticks" % (tot, PROFILE_CLOCK))
    text = "\n".join(lines)
    if file is not None:
        file.write(text + "\n")
    else:
        print(text)
    return rows
