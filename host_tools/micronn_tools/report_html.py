"""`micronn inspect MODEL --html F [--bench B.json]`: a one-page model report for a browser.

Self-contained (styles and the memory-plan picture inline as SVG): the model, its arena, the
operator graph as a list (each op with the ops its inputs come from), the bytes alive at every op
and, with `micronn bench --json` output, the instructions (or µs) each op took on the board."""
import html
import io
import os

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f2f2f2; }
.bar { background: #4c78a8; height: 10px; display: inline-block; }
.no { color: #b00; }
svg { max-width: 100%; height: auto; }
"""


def _e(x):
    return html.escape(str(x))


def _shape(s):
    return "[" + ",".join(map(str, s)) + "]"


def _bar(v, top, width=160):
    w = 0 if not top else max(1, round(width * v / top))
    return f'<span class="bar" style="width:{w}px"></span>'


def render(r, problem=None, plan_res=None, chosen=None, bench=None):
    """HTML text from an inspect report `r` (cmd_inspect.collect), the plan problem and planner
    results (None when the model cannot be prepared) and a bench --json object (or None)."""
    from . import plan as planmod
    ts = r["tensors"]
    ops = r["operators"]
    producer = {}
    for op in ops:
        for t in op["outputs"]:
            producer[t] = op["index"]
    live = problem.live_bytes() if problem else None
    per_op = {p["index"]: p for p in bench["per_op"]} if bench else {}
    unit = bench["unit"] if bench else None
    name = os.path.basename(r["model"])
    out = [f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>micronn: {_e(name)}</title>",
           f"<style>{STYLE}</style></head><body>",
           f"<h1>{_e(name)}</h1>",
           f"<p>{r['size']:,} bytes, sha256 <code>{_e(r['sha256'])}</code>; {r['subgraphs']} subgraph(s), "
           f"{len(ops)} operators, {len(ts)} tensors.</p>"]
    for kind in ("inputs", "outputs"):
        items = ", ".join(f"tensor {t} <code>{_e(ts[t]['name'])}</code> {_e(ts[t]['dtype'])} {_shape(ts[t]['shape'])}"
                          for t in r[kind])
        out.append(f"<p><b>{kind}</b>: {items}</p>")
    a = r["arena"]
    if a["bytes"] is not None:
        out.append(f"<p><b>Arena on a 32-bit board</b>: {a['bytes']:,} bytes (persistent {a['persistent']:,} + "
                   f"non-persistent {a['nonpersistent']:,} + alignment slack).</p>")
    else:
        out.append(f"<p class='no'><b>Arena</b>: not computable: {_e(a['error'])}</p>")
    if not r["supported"]:
        out.append("<p class='no'>Unsupported operators: " + "; ".join(
            f"op {u['op']} {_e(u['name'])}: {_e(u['reason'])}" for u in r["unsupported"]) + "</p>")
    if bench:
        out.append(f"<p><b>Benchmark</b> ({_e(bench.get('board'))}): {bench['per_inference']:,} {_e(unit)} per "
                   f"inference, kernels {_e(', '.join(bench.get('kernels') or []) or 'reference')}.</p>")
    if problem and plan_res:
        lb = problem.lower_bound()
        out.append("<h2>Memory plan (non-persistent part)</h2><table><tr><th>planner</th><th>bytes</th></tr>")
        out.append(f"<tr><td>lower bound (most bytes alive at one op)</td><td class='n'>{lb:,}</td></tr>")
        for n, p in plan_res.items():
            extra = "" if n != "optimal" else (" (proven)" if p["proven"] else " (not proven)")
            mark = " &larr; chosen" if n == chosen else ""
            out.append(f"<tr><td>{_e(n)}{extra}{mark}</td><td class='n'>{p['arena']:,}</td></tr>")
        out.append("</table>")
        buf = io.BytesIO()
        planmod.draw(problem, plan_res[chosen]["device_offsets"], buf,
                     f"{name}: {chosen} plan (x: op index, y: offset)", fmt="svg")
        svg = buf.getvalue().decode()
        out.append(svg[svg.index("<svg"):])
    out.append("<h2>Operators</h2><table><tr><th>op</th><th>name</th><th>inputs (from op)</th><th>outputs</th>"
               + ("<th>bytes alive</th>" if live else "")
               + (f"<th>{_e(unit)}</th><th>share</th><th>variant</th>" if bench else "") + "</tr>")
    top_live = max(live) if live else 0
    top_b = max((p["value"] for p in per_op.values()), default=0)
    for op in ops:
        ins = []
        for t in op["inputs"]:
            if t < 0:
                ins.append("-")
                continue
            d = ts[t]
            src = f" &larr; op {producer[t]}" if t in producer else (" (const)" if d["const"] else "")
            ins.append(f"{t} {_e(d['dtype'])}{_shape(d['shape'])}{src}")
        outs = [f"{t} {_e(ts[t]['dtype'])}{_shape(ts[t]['shape'])}" for t in op["outputs"]]
        name_cell = _e(op["name"]) + ("" if op["supported"] else f" <span class='no'>(unsupported: "
                                      f"{_e(op['error']['message'])})</span>")
        row = f"<tr><td class='n'>{op['index']}</td><td>{name_cell}</td><td>{'<br>'.join(ins)}</td><td>{'<br>'.join(outs)}</td>"
        if live:
            v = live[op["index"]] if op["index"] < len(live) else 0
            row += f"<td class='n'>{v:,} {_bar(v, top_live)}</td>"
        if bench:
            p = per_op.get(op["index"])
            if p:
                row += (f"<td class='n'>{p['value']:,} {_bar(p['value'], top_b)}</td>"
                        f"<td class='n'>{100 * p['share']:.1f}%</td><td>{_e(p.get('variant') or '')}</td>")
            else:
                row += "<td></td><td></td><td></td>"
        out.append(row + "</tr>")
    out.append("</table>")
    out.append("<p>Made by <code>micronn inspect --html</code>.</p></body></html>\n")
    return "\n".join(out)
