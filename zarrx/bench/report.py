"""The throughput workload's summary (medians, min–max, ratios, fractions of the ceilings) and
its markdown tables."""
from __future__ import annotations

from statistics import median
from typing import Any

from zarrx.bench.ceilings import CEILING_KEYS, case_ceiling
from zarrx.bench.systems import LABELS
from zarrx.bench.tables import (available, best_peer, cell, cores, cores_text, fmt,
                                header_lines, stats, store_text, table, targets_table,
                                title_of)
from zarrx.bench.workload import CASES_BY_NAME, MIB

__all__ = ["summarise", "render", "describe", "LOCAL_TARGETS"]

DIRECTIONS = ("write", "read")
# zarrx over the best peer, both directions, on a local store (docs/performance.md)
LOCAL_TARGETS = {"raw": 1.5, "sharded raw": 1.5, "zstd-0": 1.0, "sharded zstd-0": 1.0}


def describe(reply: dict) -> str:
    """One system's part of a progress line: MiB/s written and read."""
    mib = reply["raw"] / MIB
    return f"w {mib / reply['write_s']:.0f} r {mib / reply['read_s']:.0f}"


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Medians and ranges per config × case × system, ceilings, latency, ratios."""
    params = result["params"]
    ceil_stats = {k: stats([c[k] for c in result["ceilings"] if k in c])
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
                    "write": stats([s["raw"] / MIB / s["write_s"] for s in ss]),
                    "read": stats([s["raw"] / MIB / s["read_s"] for s in ss]),
                    "stored_raw": median(s["stored"] / s["raw"] for s in ss),
                    "verified": all(s["verified"] for s in ss),
                    "cores": cores(ss),
                }
            cw, cr = case_ceiling(CASES_BY_NAME[case], ceil_med) if ceil_med else (None, None)
            row["ceiling"] = {"write": cw, "read": cr}
            zx = row["systems"].get("zarrx")
            for sys_name, st in row["systems"].items():
                st["pct_ceiling"] = {d: (100.0 * st[d]["median"] / c if c else None)
                                     for d, c in (("write", cw), ("read", cr))}
                if zx is not None and sys_name != "zarrx":
                    st["zarrx_ratio"] = {d: zx[d]["median"] / st[d]["median"]
                                         for d in DIRECTIONS}
            row["zarrx_best"] = {d: best_peer({s: st[d]["median"]
                                               for s, st in row["systems"].items()})
                                 for d in DIRECTIONS}
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


def _pair(a: float | None, b: float | None, nd: int = 2, pct: bool = False) -> str:
    if a is None and b is None:
        return "–"
    if pct:
        return " · ".join(f"{fmt(x, 0)}%" if x is not None else "–%" for x in (a, b))
    return f"{fmt(a, nd)} · {fmt(b, nd)}"


def _targets(p: dict[str, Any], rows_s: dict[str, Any], title: str) -> list[str]:
    """zarrx over the best peer against the local-store targets, for the cases of the run."""
    rows = []
    for case, want in LOCAL_TARGETS.items():
        if case not in p["cases"]:
            continue
        for d in DIRECTIONS:
            best = rows_s.get(case, {}).get("zarrx_best", {}).get(d)
            rows.append((f"{case} {d}", f"≥ {want:.1f}× best peer", best,
                         None if best is None else best["ratio"] >= want))
    return targets_table(f"{title} (zarrx over the best peer's MiB/s)", rows)


def render(result: dict[str, Any], summary: dict[str, Any]) -> str:
    """The markdown report: throughput, ratios and ceilings, targets (local store), bare
    ceilings, latency."""
    p = result["params"]
    systems = available(result)
    label = {s: LABELS.get(s, s) for s in systems}
    out = header_lines(result,
                       f"{p['size']}×{p['size']} float32 ({p['nbytes'] / MIB:.0f} MiB), chunks "
                       f"{p['chunk']}×{p['chunk']}, shards {p['shard']}×{p['shard']} where "
                       f"sharded, Zarr v3, {store_text(p)}; {p['reps']} repetitions, "
                       "median [min–max].")
    peers = [s for s in systems if s != "zarrx"]
    for config in p["configs"]:
        rows_s = summary["cases"].get(config, {})
        title = title_of(config)
        out += ["", f"### Throughput, {title} (MiB/s)", ""]
        header = ["case"] + [f"{label[s]} write" for s in systems] + \
                 [f"{label[s]} read" for s in systems]
        rows = []
        for case in p["cases"]:
            st = rows_s.get(case, {}).get("systems", {})
            rows.append([case] + [cell(st.get(s, {}).get("write")) for s in systems]
                        + [cell(st.get(s, {}).get("read")) for s in systems])
        out += table(header, rows)
        out += ["", f"### Ratios and ceilings, {title} (write · read)", ""]
        header = ["case", "stored/raw (" + " · ".join(label[s] for s in systems) + ")"]
        if "zarrx" in systems:
            header += [f"zarrx/{label[s]}" for s in peers]
            header += ["zarrx/best peer"] if peers else []
        header += ["ceiling MiB/s"] + [f"{label[s]} % of ceiling" for s in systems]
        rows = []
        for case in p["cases"]:
            row_s = rows_s.get(case, {})
            st = row_s.get("systems", {})
            row = [case, " · ".join(fmt(st[s]["stored_raw"], 3) if s in st else "–"
                                    for s in systems)]
            if "zarrx" in systems:
                for s in peers:
                    r = st.get(s, {}).get("zarrx_ratio")
                    row.append(_pair(r["write"], r["read"]) if r else "–")
                if peers:
                    best = row_s.get("zarrx_best", {})
                    row.append(" · ".join(fmt(best[d]["ratio"], 2) if best.get(d) else "–"
                                          for d in DIRECTIONS))
            c = row_s.get("ceiling", {})
            row.append(_pair(c.get("write"), c.get("read"), nd=0))
            for s in systems:
                pc = st.get(s, {}).get("pct_ceiling")
                row.append(_pair(pc["write"], pc["read"], pct=True) if pc else "–")
            rows.append(row)
        out += table(header, rows)
        if any(st.get("cores") for r in rows_s.values() for st in r["systems"].values()):
            out += ["", f"### Cores busy, {title} (process CPU time over wall time, write · "
                        "read)", ""]
            out += table(["case"] + [label[s] for s in systems],
                         [[case] + [cores_text(rows_s.get(case, {}).get("systems", {})
                                               .get(s, {}).get("cores")) for s in systems]
                          for case in p["cases"]])
        if p.get("store") == "local":
            out += _targets(p, rows_s, title)
    if summary["ceilings"]:
        out += ["", "### Ceilings (single-threaded building blocks, MiB/s of raw data)", ""]
        rows = [[k, cell(summary["ceilings"][k])] for k in CEILING_KEYS
                if summary["ceilings"].get(k)]
        out += table(["block", "MiB/s"], rows)
    for config in p["configs"]:
        lat = summary["latency"].get(config, {})
        if not lat:
            continue
        lsys = [s for s in systems if s in lat]
        ops = list(next(iter(lat.values())))
        out += ["", f"### Latency, {title_of(config)} (µs per call, median of per-rep medians)",
                ""]
        header = ["operation"] + [label[s] for s in lsys]
        header += [f"{label[s]}/zarrx time" for s in lsys if s != "zarrx" and "zarrx" in lsys]
        rows = []
        for op in ops:
            row = [op] + [fmt(lat[s][op]["median_us"], 1) for s in lsys]
            for s in lsys:
                if s != "zarrx" and "zarrx" in lsys:
                    zx = lat["zarrx"][op]["median_us"]
                    row.append(fmt(lat[s][op]["median_us"] / zx, 2) if zx else "–")
            rows.append(row)
        out += table(header, rows)
    return "\n".join(out) + "\n"
