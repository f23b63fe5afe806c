"""Offline memory planning: what the engine plans, other planners over the same buffers, the plan
stored in the model as TFLM's OfflineMemoryAllocation metadata, and pictures of a plan.

The buffers come from the engine itself (mn_interp_plan_buffer after a prepare in the host
library): every tensor that gets non-persistent memory with its size rounded to the arena
alignment and its op-index lifetime, and every kernel scratch buffer (alive during its op). So
the host sees exactly what the device plans; only the scratch buffers of a board's optimized
kernel backend may differ from the host library's (generic backend, as the UNIX and RV32 builds).

Planners (each returns one offset per buffer):
  ffd         greedy first-fit-decreasing: the device planner (mn_plan), reproduced exactly
  by-size     greedy by size with best fit (Lee et al. 2019, "On-Device Neural Net Inference with
              Mobile GPUs"): largest first, into the smallest gap that fits
  by-breadth  greedy by breadth (same paper): ops by the bytes alive at them, largest first; each
              op's unplaced buffers largest first, best fit
  optimal     branch and bound over placement orders (below), within a node and time budget; with
              convolution slides (a conv's output may overlap its dying input, mn_inplace_slide)
              first fit no longer reaches every placement, so a local search over placement
              orders instead (proven optimal only when it reaches the lower bound)

The stored plan fixes the tensors' offsets; the device places the scratch buffers around them
with its greedy planner, so every plan is scored by simulating that (device_offsets()).
"""
import bisect
import time

import numpy as np

PLANNERS = ("ffd", "by-size", "by-breadth", "optimal")
METADATA_NAME = "OfflineMemoryAllocation"
ALIGN = 16   # MN_ARENA_ALIGN
MAX_SEARCH_BUFFERS = 600   # above this the optimal planner keeps the best greedy plan (unproven)


class PlanError(Exception):
    pass


class Buf:
    """One planned buffer: tensor index or scratch index, size (aligned), lifetime [first, last].
    over: index (in the buffer list) of the buffer this one may share bytes with, the dying input
    of the convolution that writes it, provided it starts at most `shift` bytes above it
    (mn_inplace_slide); None otherwise."""
    __slots__ = ("k", "tensor", "scratch", "size", "first", "last", "over", "shift")

    def __init__(self, k, tensor, scratch, size, first, last, over=None, shift=0):
        self.k, self.tensor, self.scratch = k, tensor, scratch
        self.size, self.first, self.last = size, first, last
        self.over, self.shift = over, shift

    def overlaps(self, o):
        return self.first <= o.last and o.first <= self.last

    def forbidden(self, o, o_off):
        """The open interval of offsets this buffer may not take next to `o` (at o_off), alive at
        the same time: normally (o_off - size, o_off + o.size)."""
        lo, hi = o_off - self.size, o_off + o.size
        if self.over is not None and self.over == o.k:
            lo = max(lo, o_off + self.shift)          # o is the input this one slides over
        if o.over is not None and o.over == self.k:
            hi = min(hi, max(o_off - o.shift, 0))     # o is the output of this one's op
        return lo, hi

    def label(self):
        return f"t{self.tensor}" if self.tensor is not None else f"scratch{self.scratch}"


class Problem:
    """The buffers of one model as the engine plans them: the host library's (greedy planner), or
    `board_plan`, what a board's `Interpreter.plan()` returned (its kernels' scratch buffers)."""

    def __init__(self, model_bytes, reuse_inputs=False, lib_path=None, board_plan=None, patches=False):
        from . import engine
        self.model_bytes = model_bytes
        self.reuse_inputs = reuse_inputs
        self.model = engine.Model(model_bytes, lib_path)
        self.n_tensors = self.model.num_tensors
        self.n_ops = len(self.model.ops())
        # patches: the patch stage (engine.Model.patch_choice) the plan is made for, or None
        self.patches_asked = bool(patches)
        self.patch = self.model.patch_choice(reuse_inputs=reuse_inputs) if patches else None
        it = engine.Interpreter(self.model, planner="greedy", reuse_inputs=reuse_inputs, patches=self.patch)
        self.engine_stats = it.stats()
        self.board = board_plan is not None
        if self.board:
            raw = [{"tensor": e[0] if e[0] >= 0 else None, "scratch": -1 - e[0] if e[0] < 0 else None,
                    "size": e[1], "first": e[2], "last": e[3], "offset": e[4],
                    "over": e[5] if len(e) > 6 and e[5] >= 0 else None, "shift": e[6] if len(e) > 6 else 0}
                   for e in board_plan]
            self.engine_stats = dict(self.engine_stats,
                                     nonpersistent=max((r["offset"] + r["size"] for r in raw), default=0))
        else:
            raw = it.plan_buffers()
        by_tensor = {r["tensor"]: i for i, r in enumerate(raw) if r["tensor"] is not None}
        self.bufs = [Buf(i, r["tensor"], r["scratch"], r["size"], r["first"], r["last"],
                         by_tensor.get(r.get("over")), r.get("shift") or 0)
                     for i, r in enumerate(raw)]
        # The engine's own greedy offsets (what the device does without a stored plan).
        self.engine_offsets = [r["offset"] for r in raw]

    def live_bytes(self):
        """Bytes alive at each op."""
        live = [0] * max(self.n_ops, 1)
        for b in self.bufs:
            for t in range(b.first, b.last + 1):
                live[t] += b.size
        return live

    def lower_bound(self):
        return lower_bound(self.bufs, self.n_ops)


def _pair_span(x, y):
    """Fewest bytes input x and output y (sliding over x) can cover together."""
    return min(x.size + y.size, max(y.size, x.size - min(y.shift, 0)))


def lower_bound(bufs, n_ops):
    """The most bytes alive at one op, where a convolution's output and the input it slides over
    count as the least they can cover together (a valid bound, exact without slides)."""
    best = 0
    for t in range(max(n_ops, 1)):
        alive = [b for b in bufs if b.first <= t <= b.last]
        need = sum(b.size for b in alive)
        for y in alive:
            if y.over is not None and bufs[y.over].first <= t <= bufs[y.over].last:
                x = bufs[y.over]
                need -= x.size + y.size - _pair_span(x, y)
        best = max(best, need)
    return best


def peak(bufs, offs):
    return max((o + b.size for b, o in zip(bufs, offs)), default=0)


def check(bufs, offs):
    """Raise PlanError when two buffers alive at the same time share bytes or one is misaligned."""
    for i, a in enumerate(bufs):
        if offs[i] < 0 or offs[i] % ALIGN:
            raise PlanError(f"{a.label()}: offset {offs[i]} is negative or not {ALIGN}-byte aligned")
        for j in range(i):
            b = bufs[j]
            lo, hi = a.forbidden(b, offs[j])
            if a.overlaps(b) and lo < offs[i] < hi:
                raise PlanError(f"{b.label()} [{offs[j]},{offs[j] + b.size}) and {a.label()} "
                                f"[{offs[i]},{offs[i] + a.size}) overlap while both alive")


# ---- greedy planners --------------------------------------------------------------------------------

def _first_fit(placed, bufs, offs, x):
    """Lowest offset clear of the placed buffers (sorted by offset) alive with x; mn_planner.c's
    first_fit, step for step."""
    cand, under = 0, None
    for j in placed:
        p = bufs[j]
        if not p.overlaps(x):
            continue
        if offs[j] >= cand and offs[j] - cand >= x.size:
            break
        lo, hi = x.forbidden(p, offs[j])
        if x.over == j and cand <= lo:
            under = (lo, hi)   # x's input: x may overlap it from here
            continue
        cand = max(cand, hi)
        if under is not None and under[0] < cand < under[1]:
            cand = under[1]
    return cand


def _free_gaps(placed, bufs, offs, x):
    """The offsets x may take, as sorted disjoint [start, end) ranges (end None = unbounded)."""
    cuts = sorted(x.forbidden(bufs[j], offs[j]) for j in placed if bufs[j].overlaps(x))
    gaps, start = [], 0
    for lo, hi in cuts:
        if lo + 1 > start:
            gaps.append((start, lo + 1))
        start = max(start, hi)
    gaps.append((start, None))
    return gaps


def _best_fit(placed, bufs, offs, x):
    """Start of the smallest gap between placed buffers alive with x that holds x, else the end of
    the highest of them (the mobile-GPU paper's offset rule). With slides a gap is a range of
    allowed offsets: its room is the range's length plus x's size."""
    gaps = _free_gaps(placed, bufs, offs, x)
    best, best_room = None, None
    for start, end in gaps[:-1]:
        room = end - start + x.size - 1
        if best_room is None or room < best_room:
            best, best_room = start, room
    return gaps[-1][0] if best is None else best


class _Placed:
    """Indices of placed buffers kept sorted by offset (ties: in placement order)."""

    def __init__(self, offs):
        self.offs, self.keys, self.idx = offs, [], []

    def add(self, j):
        pos = bisect.bisect_right(self.keys, self.offs[j])
        self.keys.insert(pos, self.offs[j])
        self.idx.insert(pos, j)


MOVES, TRIES, MOVE_BUFS = 4, 16, 512   # mn_plan.h MN_PLAN_MOVES, MN_PLAN_TRIES, MN_PLAN_MOVE_BUFS


def _place_moved(bufs, fixed, order, moved):
    """mn_planner.c place_all: the fixed buffers, then `moved` (the last moved first), then the
    others in `order`, each first fit. Returns (offsets, peak, the buffer reaching the highest end,
    the last placed of those that do)."""
    offs = [None] * len(bufs)
    placed = _Placed(offs)
    for j, o in sorted(fixed.items()):
        offs[j] = o
        placed.add(j)
    top, top_end = None, -1
    for j in list(reversed(moved)) + [j for j in order if j not in moved]:
        offs[j] = _first_fit(placed.idx, bufs, offs, bufs[j])
        placed.add(j)
        if offs[j] + bufs[j].size >= top_end:
            top, top_end = j, offs[j] + bufs[j].size
    return offs, peak(bufs, offs), top


def plan_ffd(bufs, fixed=None, moves=True):
    """The device's greedy planner (mn_plan): buffers with a fixed offset first, then the others by
    size descending, earlier first use first, then index; each at the lowest offset that fits.
    Then, up to MOVES times: each buffer alive with the one reaching the peak (at most TRIES, in
    that order) is tried at the front of the order, and the move lowering the peak most is kept
    (the device keeps the moves when its planner's temporaries fit in the plan: n x ~40 bytes;
    moves=False: first fit in greedy order only)."""
    fixed = fixed or {}
    order = sorted((j for j in range(len(bufs)) if j not in fixed), key=lambda j: (-bufs[j].size, bufs[j].first))
    moved = []
    offs, best, top = _place_moved(bufs, fixed, order, moved)
    while moves and len(moved) < MOVES and top is not None and len(bufs) <= MOVE_BUFS:
        cands = [j for j in order if j not in moved and bufs[j].overlaps(bufs[top])][:TRIES]
        pick = None
        for j in cands:
            o, pk, nxt = _place_moved(bufs, fixed, order, moved + [j])
            if pk < best:
                pick, best, picked = j, pk, (o, nxt)
        if pick is None:
            break
        moved.append(pick)
        offs, top = picked
    return offs


def plan_by_size(bufs):
    offs = [None] * len(bufs)
    placed = _Placed(offs)
    for j in sorted(range(len(bufs)), key=lambda j: (-bufs[j].size, bufs[j].first)):
        offs[j] = _best_fit(placed.idx, bufs, offs, bufs[j])
        placed.add(j)
    return offs


def plan_by_breadth(bufs, n_ops):
    offs = [None] * len(bufs)
    placed = _Placed(offs)
    alive = [[j for j, b in enumerate(bufs) if b.first <= t <= b.last] for t in range(max(n_ops, 1))]
    breadth = [sum(bufs[j].size for j in a) for a in alive]
    for t in sorted(range(len(alive)), key=lambda t: -breadth[t]):
        for j in sorted((j for j in alive[t] if offs[j] is None), key=lambda j: (-bufs[j].size, bufs[j].first)):
            offs[j] = _best_fit(placed.idx, bufs, offs, bufs[j])
            placed.add(j)
    return offs


# ---- exact planner ----------------------------------------------------------------------------------

def plan_optimal(bufs, n_ops, upper=None, max_nodes=200_000, max_seconds=10.0):
    """Branch and bound. Any placement can be lowered, buffer by buffer in order of offset, to the
    lowest offset clear of the buffers before it (each one ends no higher: by induction the buffers
    before it end no higher than before, so its old offset stays free); repeating that reaches a
    placement that first fit reproduces when buffers are taken in (offset, index) order. So it is
    enough to search placement orders whose first-fit offsets (with index as tie-break) increase.
    Bound at a node whose last placement is at offset L: at every op, the unplaced buffers alive
    there all go above L, together with the placed bytes above L.

    Returns (offsets, proven_optimal, nodes); `upper` = offsets of a known plan to beat. Graphs of
    more than MAX_SEARCH_BUFFERS buffers are not searched."""
    n = len(bufs)
    t_end = time.monotonic() + max_seconds
    ops = range(max(n_ops, 1))
    lb = lower_bound(bufs, n_ops)
    # With slides first-fit orders need not reach every placement, and the bound below may count
    # a slide pair twice: only reaching the lower bound proves a plan optimal then.
    slides = any(b.over is not None for b in bufs)
    best = list(upper) if upper is not None else plan_ffd(bufs)
    best_peak = peak(bufs, best)
    if n == 0 or best_peak <= lb:
        return best, True, 0
    if slides:
        return _search_orders(bufs, best, lb, max_nodes, t_end)
    if n > MAX_SEARCH_BUFFERS:   # one recursion level per buffer
        return best, False, 0
    alive_at = [[j for j in range(n) if bufs[j].first <= t <= bufs[j].last] for t in ops]
    offs = [None] * n
    placed = _Placed(offs)
    state = {"nodes": 0, "best": best, "best_peak": best_peak, "stopped": False}

    def bound(last_off, cur_peak):
        h = cur_peak
        for al in alive_at:
            need = last_off
            for j in al:
                o = offs[j]
                if o is None:
                    need += bufs[j].size
                else:
                    e = o + bufs[j].size
                    if e > last_off:
                        need += e - max(o, last_off)
            h = max(h, need)
        return h

    def rec(depth, last_key, cur_peak):
        if state["stopped"]:
            return
        state["nodes"] += 1
        if state["nodes"] >= max_nodes or time.monotonic() > t_end:
            state["stopped"] = True
            return
        if depth == n:
            if cur_peak < state["best_peak"]:
                state["best"], state["best_peak"] = list(offs), cur_peak
            return
        cands = []
        for j in range(n):
            if offs[j] is None:
                o = _first_fit(placed.idx, bufs, offs, bufs[j])
                if (o, j) > last_key and max(cur_peak, o + bufs[j].size) < state["best_peak"]:
                    cands.append((o, -bufs[j].size, j))
        cands.sort()
        for o, _, j in cands:
            if time.monotonic() > t_end:   # a node of a large graph can take long on its own
                state["stopped"] = True
                return
            offs[j] = o
            pk = max(cur_peak, o + bufs[j].size)
            if bound(o, pk) < state["best_peak"]:
                pos = bisect.bisect_right(placed.keys, o)
                placed.keys.insert(pos, o)
                placed.idx.insert(pos, j)
                rec(depth + 1, (o, j), pk)
                del placed.keys[pos]
                del placed.idx[pos]
            offs[j] = None
            if state["best_peak"] <= lb or state["stopped"]:
                return

    rec(0, (-1, -1), 0)
    proven = (not state["stopped"] and not slides) or state["best_peak"] <= lb
    return state["best"], proven, state["nodes"]


def _place_in_order(bufs, order):
    offs = [None] * len(bufs)
    placed = _Placed(offs)
    for j in order:
        offs[j] = _first_fit(placed.idx, bufs, offs, bufs[j])
        placed.add(j)
    return offs


def _search_orders(bufs, upper, lb, max_nodes, t_end, patience=5000):
    """With slides: local search over placement orders (first fit each), from the greedy order and
    the order of `upper`'s offsets; a move takes one buffer elsewhere in the order, kept when the
    plan is no higher. Deterministic (fixed seed). Returns (offsets, reached the bound, moves)."""
    import random
    n = len(bufs)
    rng = random.Random(0)
    best, best_peak, order = list(upper), peak(bufs, upper), None
    for o in (sorted(range(n), key=lambda j: (-bufs[j].size, bufs[j].first)),
              sorted(range(n), key=lambda j: (upper[j], j))):
        offs = _place_in_order(bufs, o)
        if order is None or peak(bufs, offs) <= best_peak:
            order = o
            if peak(bufs, offs) < best_peak:
                best, best_peak = offs, peak(bufs, offs)
    moves = stale = 0
    while best_peak > lb and moves < max_nodes and stale < patience and time.monotonic() < t_end:
        moves += 1
        o = list(order)
        o.insert(rng.randrange(n), o.pop(rng.randrange(n)))
        offs = _place_in_order(bufs, o)
        pk = peak(bufs, offs)
        stale = 0 if pk < best_peak else stale + 1
        if pk <= best_peak:
            order = o
            if pk < best_peak:
                best, best_peak = offs, pk
    return best, best_peak <= lb, moves


# ---- what the device makes of a stored plan ---------------------------------------------------------

def device_offsets(bufs, offs):
    """Tensors at the plan's offsets, scratch buffers placed by the device's greedy planner around
    them (what mn_plan does with an offline plan)."""
    fixed = {j: offs[j] for j, b in enumerate(bufs) if b.tensor is not None}
    return plan_ffd(bufs, fixed)


def offline_vector(problem, offs):
    """The OfflineMemoryAllocation int32 vector: [version 0, subgraph 0, n_tensors, offset or -1 ...]."""
    v = [-1] * problem.n_tensors
    for b, o in zip(problem.bufs, offs):
        if b.tensor is not None:
            v[b.tensor] = int(o)
    return [0, 0, problem.n_tensors] + v


def run_planners(problem, names=PLANNERS, max_nodes=200_000, max_seconds=10.0):
    """{name: {"offsets", "arena" (planned bytes the device ends up with), "planner_peak", ...}}."""
    bufs = problem.bufs
    out = {}
    for name in names:
        t0 = time.monotonic()
        extra = {}
        if name == "ffd":
            offs = plan_ffd(bufs)
        elif name == "by-size":
            offs = plan_by_size(bufs)
        elif name == "by-breadth":
            offs = plan_by_breadth(bufs, problem.n_ops)
        elif name == "optimal":
            seeds = [plan_ffd(bufs), plan_by_size(bufs), plan_by_breadth(bufs, problem.n_ops)]
            upper = min(seeds, key=lambda o: peak(bufs, o))
            offs, proven, nodes = plan_optimal(bufs, problem.n_ops, upper, max_nodes, max_seconds)
            extra = {"proven": proven, "nodes": nodes}
        else:
            raise PlanError(f"unknown planner {name!r} (one of {', '.join(PLANNERS)})")
        check(bufs, offs)
        dev = device_offsets(bufs, offs)
        check(bufs, dev)
        out[name] = dict(offsets=offs, device_offsets=dev, planner_peak=peak(bufs, offs),
                         arena=peak(bufs, dev), seconds=time.monotonic() - t0, **extra)
    return out


def choose(results):
    """The planner whose plan needs the fewest bytes on the device (earlier in PLANNERS on ties)."""
    return min(results, key=lambda n: (results[n]["arena"], PLANNERS.index(n)))


# ---- the plan in the model --------------------------------------------------------------------------

PATCH_METADATA = "micronn_patch_v1"


def patch_metadata(patch):
    """The micronn_patch_v1 buffer for a patch stage: u16 first op, last op, rows."""
    import struct
    return struct.pack("<HHH", patch["first"], patch["last"], patch["rows"])


def with_offline_plan(model_bytes, vector):
    """The model with `vector` as its OfflineMemoryAllocation metadata (replacing an existing one).
    Constant buffers stay 16-byte aligned in the rewritten file, so the engine uses them in place
    as before."""
    return with_metadata(model_bytes, {METADATA_NAME: np.asarray(vector, dtype="<i4").tobytes()})


def with_tables(model_bytes, **engine_options):
    """The model with the engine's per-op tables (per-channel multipliers and shifts, folded biases:
    engine.op_tables) stored as micronn_quant_v1 metadata, replacing an existing one. The engine
    compares each stored table with what it computes and uses the stored copy in place (no arena
    bytes) when identical. Returns (new model bytes, number of tables, their bytes)."""
    from . import engine
    plain = with_metadata(model_bytes, {engine.TABLES_METADATA: None})
    tables = engine.op_tables(engine.Model(plain), **engine_options)
    blob = engine.tables_metadata(tables)
    return with_metadata(model_bytes, {engine.TABLES_METADATA: blob}), len(tables), sum(len(t[3]) for t in tables)


def with_metadata(model_bytes, entries):
    """The model with metadata entries {name: bytes} (16-byte aligned buffers), replacing those of
    the same names; None removes an entry. Constant buffers stay 16-byte aligned in the rewritten
    file, so the engine uses them in place as before."""
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    class AlignedBuffer(s.BufferT):
        def Pack(self, builder):
            data = None
            if self.data is not None:
                arr = np.ascontiguousarray(self.data, dtype=np.uint8)
                builder.StartVector(1, arr.size, ALIGN)
                builder.head = builder.head - arr.size
                builder.Bytes[builder.head:builder.head + arr.size] = arr.tobytes()
                builder.vectorNumElems = arr.size
                data = builder.EndVector()
            s.BufferStart(builder)
            if data is not None:
                s.BufferAddData(builder, data)
            s.BufferAddOffset(builder, self.offset)
            s.BufferAddSize(builder, self.size)
            return s.BufferEnd(builder)

    mt = s.ModelT.InitFromPackedBuf(bytearray(model_bytes), 0)
    bufs = []
    for b in mt.buffers or []:
        if b.offset and b.offset > 1:
            raise PlanError("the model keeps constant data outside the flatbuffer (Buffer.offset); "
                            "rewriting it is not supported")
        nb = AlignedBuffer()
        nb.data, nb.offset, nb.size = b.data, b.offset, b.size
        bufs.append(nb)
    mt.buffers = bufs
    names = {n.encode() for n in entries}
    meta = [m for m in (mt.metadata or []) if m.name not in names]
    extra = 0
    for name, blob in entries.items():
        if blob is None:
            continue
        data = AlignedBuffer()
        data.data = np.frombuffer(bytes(blob), dtype=np.uint8)
        mt.buffers.append(data)
        entry = s.MetadataT()
        entry.name = name.encode()
        entry.buffer = len(mt.buffers) - 1
        meta.append(entry)
        extra += len(blob)
    mt.metadata = meta
    b = flatbuffers.Builder(len(model_bytes) + extra + 1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


# ---- pictures ---------------------------------------------------------------------------------------

def draw(problem, offs, path, title=None, lower_bound=None, fmt=None):
    """The plan as rectangles (x: op index, y: offset), lower bound as a dashed line. The file's
    suffix picks the format (.png, .svg, anything matplotlib writes); `path` may be a binary file
    object with `fmt` given."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    bufs = problem.bufs
    lb = problem.lower_bound() if lower_bound is None else lower_bound
    top = peak(bufs, offs)
    fig, ax = plt.subplots(figsize=(max(6.0, min(16.0, 0.35 * problem.n_ops + 4)), 5.5))
    cmap = plt.get_cmap("tab20")
    for i, (b, o) in enumerate(zip(bufs, offs)):
        scratch = b.tensor is None
        ax.add_patch(Rectangle((b.first - 0.45, o), b.last - b.first + 0.9, b.size,
                               facecolor="none" if scratch else cmap(i % 20),
                               edgecolor="black", linewidth=0.6, hatch="///" if scratch else None, alpha=0.9))
        if b.size >= 0.04 * max(top, 1):
            ax.text((b.first + b.last) / 2, o + b.size / 2, f"s{b.scratch}" if scratch else b.label(),
                    ha="center", va="center", fontsize=7)
    ax.axhline(lb, color="red", linestyle="--", linewidth=1.2, label=f"lower bound {lb:,} B")
    ax.axhline(top, color="black", linestyle=":", linewidth=1.0, label=f"arena (planned part) {top:,} B")
    ax.set_xlim(-0.8, max(problem.n_ops, 1) - 0.2)
    ax.set_ylim(0, max(top, lb, 1) * 1.05)
    ax.set_xlabel("op index")
    ax.set_ylabel("offset in the arena (bytes)")
    ax.set_title(title or "memory plan")
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.06), ncol=2, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, format=fmt)
    plt.close(fig)
