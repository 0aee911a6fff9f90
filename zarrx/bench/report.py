"""Summaries (medians, min–max, ratios, fractions of the ceilings) and the markdown tables."""
from __future__ import annotations

from statistics import median
from typing import Any

from zarrx.bench.ceilings import CEILING_KEYS, case_ceiling
from zarrx.bench.systems import LABELS
from zarrx.bench.workload import CASES_BY_NAME, MIB

__all__ = ["summarise", "render"]

CONFIG_TITLES = {"single": "single-threaded", "default": "default threading"}


def _stats(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {"median": median(values), "min": min(values), "max": max(values), "n": len(values)}


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Medians and ranges per config × case × system, ceilings, latency, ratios."""
    params = result["params"]
    ceil_stats = {k: _stats([c[k] for c in result["ceilings"] if k in c])
                  for k in sorted({k for c in result["ceilings"] for k in c if k != "rep"})}
    ceil_med = {k: v["median"] for k, v in ceil_stats.items() if v}
    out: dict[str, Any] = {"ceilings": ceil_stats, "cases": {}, "latency": {}}
    for config in params["configs"]:
        rows: dict[str, Any] = {}
        for case in params["cases"]:
            row: dict[str, Any] = {"systems": {}}
            for sys_name in params["systems"]:
                ss = [s for s in result["samples"] if s["config"] == config
                      and s["case"] == case and s["system"] == sys_name]
                if not ss:
                    continue
                row["systems"][sys_name] = {
                    "write": _stats([s["raw"] / MIB / s["write_s"] for s in ss]),
                    "read": _stats([s["raw"] / MIB / s["read_s"] for s in ss]),
                    "stored_raw": median(s["stored"] / s["raw"] for s in ss),
                    "verified": all(s["verified"] for s in ss),
                }
            cw, cr = case_ceiling(CASES_BY_NAME[case], ceil_med) if ceil_med else (None, None)
            row["ceiling"] = {"write": cw, "read": cr}
            zx = row["systems"].get("zarrx")
            for sys_name, st in row["systems"].items():
                st["pct_ceiling"] = {d: (100.0 * st[d]["median"] / c if c else None)
                                     for d, c in (("write", cw), ("read", cr))}
                if zx is not None and sys_name != "zarrx":
                    st["zarrx_ratio"] = {d: zx[d]["median"] / st[d]["median"]
                                         for d in ("write", "read")}
            rows[case] = row
        out["cases"][config] = rows
        lat: dict[str, Any] = {}
        for sys_name in params["systems"]:
            reps = [r["ops"] for r in result["latency"]
                    if r["config"] == config and r["system"] == sys_name]
            if reps:
                lat[sys_name] = {op: {"median_us": median(r[op]["median_us"] for r in reps),
                                      "min_us": min(r[op]["min_us"] for r in reps)}
                                 for op in reps[0]}
        out["latency"][config] = lat
    return out


def _f(x: float | None, nd: int = 0) -> str:
    if x is None:
        return "–"
    return f"{x:,.{nd}f}" if abs(x) >= 10 or nd else f"{x:.1f}"


def _cell(st: dict | None) -> str:
    if not st:
        return "–"
    return f"{_f(st['median'])} [{_f(st['min'])}–{_f(st['max'])}]"


def _pair(a: float | None, b: float | None, nd: int = 2, pct: bool = False) -> str:
    if a is None and b is None:
        return "–"
    if pct:
        return f"{_f(a, 0) if a is not None else '–'}% · {_f(b, 0) if b is not None else '–'}%"
    return f"{_f(a, nd)} · {_f(b, nd)}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def render(result: dict[str, Any], summary: dict[str, Any]) -> str:
    """The markdown report: throughput, ratios and ceilings, bare ceilings, latency."""
    p, m = result["params"], result["machine"]
    systems = [s for s in p["systems"] if result["systems"].get(s, {}).get("available")]
    label = {s: LABELS.get(s, s) for s in systems}
    vers = ", ".join(f"{label[s]} {result['systems'][s].get('version', '?')}" for s in systems)
    libs = ", ".join(f"{k} {m[k]}" for k in ("numpy", "libzstd", "blosc", "zlib", "zlib_backend",
                                                     "crc32c_backend") if k in m)
    out = [f"Machine: {m.get('cpu')} ({m.get('cpus')} CPUs), Python {m.get('python')}; {vers}; "
           f"{libs}.",
           f"Workload: {p['size']}×{p['size']} float32 ({p['nbytes'] / MIB:.0f} MiB), chunks "
           f"{p['chunk']}×{p['chunk']}, shards {p['shard']}×{p['shard']} where sharded, Zarr v3, "
           f"memory store; {p['reps']} repetitions, median [min–max]."]
    for note in result["notes"]:
        one = " ".join(note.split())
        out.append(f"- note: {one[:300]}{'…' if len(one) > 300 else ''}")
    peers = [s for s in systems if s != "zarrx"]
    for config in p["configs"]:
        rows_s = summary["cases"].get(config, {})
        title = CONFIG_TITLES.get(config, config)
        out += ["", f"### Throughput, {title} (MiB/s)", ""]
        header = ["case"] + [f"{label[s]} write" for s in systems] + \
                 [f"{label[s]} read" for s in systems]
        rows = []
        for case in p["cases"]:
            st = rows_s.get(case, {}).get("systems", {})
            rows.append([case] + [_cell(st.get(s, {}).get("write")) for s in systems]
                        + [_cell(st.get(s, {}).get("read")) for s in systems])
        out += _table(header, rows)
        out += ["", f"### Ratios and ceilings, {title} (write · read)", ""]
        header = ["case", "stored/raw (" + " · ".join(label[s] for s in systems) + ")"]
        header += [f"zarrx/{label[s]}" for s in peers if "zarrx" in systems]
        header += ["ceiling MiB/s"] + [f"{label[s]} % of ceiling" for s in systems]
        rows = []
        for case in p["cases"]:
            row_s = rows_s.get(case, {})
            st = row_s.get("systems", {})
            row = [case, " · ".join(_f(st[s]["stored_raw"], 3) if s in st else "–"
                                    for s in systems)]
            for s in peers:
                if "zarrx" in systems:
                    r = st.get(s, {}).get("zarrx_ratio")
                    row.append(_pair(r["write"], r["read"]) if r else "–")
            c = row_s.get("ceiling", {})
            row.append(_pair(c.get("write"), c.get("read"), nd=0))
            for s in systems:
                pc = st.get(s, {}).get("pct_ceiling")
                row.append(_pair(pc["write"], pc["read"], pct=True) if pc else "–")
            rows.append(row)
        out += _table(header, rows)
    if summary["ceilings"]:
        out += ["", "### Ceilings (single-threaded building blocks, MiB/s of raw data)", ""]
        rows = [[k, _cell(summary["ceilings"][k])] for k in CEILING_KEYS
                if summary["ceilings"].get(k)]
        out += _table(["block", "MiB/s"], rows)
    for config in p["configs"]:
        lat = summary["latency"].get(config, {})
        if not lat:
            continue
        lsys = [s for s in systems if s in lat]
        ops = list(next(iter(lat.values())))
        out += ["", f"### Latency, {title_of(config)} (µs per call, median of per-rep medians)", ""]
        header = ["operation"] + [label[s] for s in lsys]
        header += [f"{label[s]}/zarrx time" for s in lsys if s != "zarrx" and "zarrx" in lsys]
        rows = []
        for op in ops:
            row = [op] + [_f(lat[s][op]["median_us"], 1) for s in lsys]
            for s in lsys:
                if s != "zarrx" and "zarrx" in lsys:
                    zx = lat["zarrx"][op]["median_us"]
                    row.append(_f(lat[s][op]["median_us"] / zx, 2) if zx else "–")
            rows.append(row)
        out += _table(header, rows)
    return "\n".join(out) + "\n"


def title_of(config: str) -> str:
    return CONFIG_TITLES.get(config, config)
