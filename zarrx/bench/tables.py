"""What every report of ``zarrx bench`` shares: statistics over repetitions, number formats,
markdown tables, the header lines (machine, versions, notes) and zarrx-over-best-peer ratios."""
from __future__ import annotations

from statistics import median
from typing import Any

from zarrx.bench.systems import LABELS

__all__ = ["CONFIG_TITLES", "stats", "fmt", "cell", "table", "title_of", "available",
           "header_lines", "best_peer", "store_text", "ratio_text", "targets_table", "cores",
           "cores_text", "reps_text"]

CONFIG_TITLES = {"single": "single-threaded", "default": "default threading"}


def stats(values: list[float]) -> dict[str, float] | None:
    """Median, minimum, maximum and count of the samples of one cell (None: no samples)."""
    if not values:
        return None
    return {"median": median(values), "min": min(values), "max": max(values), "n": len(values)}


def cores(samples: list[dict]) -> dict[str, float] | None:
    """How many cores a system kept busy: the median, per direction, of the process's CPU
    time (every thread, user and system) over the wall time of the timed calls. None when the
    samples do not carry CPU times."""
    if not samples or any("write_cpu_s" not in s or "read_cpu_s" not in s for s in samples):
        return None
    return {d: median(s[f"{d}_cpu_s"] / s[f"{d}_s"] for s in samples) for d in ("write", "read")}


def cores_text(c: dict[str, float] | None) -> str:
    """``cores`` as ``1.00 · 0.98`` (write · read)."""
    return "–" if not c else f"{c['write']:.2f} · {c['read']:.2f}"


def fmt(x: float | None, nd: int = 0) -> str:
    """``x`` with thousands separators and ``nd`` decimals (small values get one); "–" for
    a missing value."""
    if x is None:
        return "–"
    return f"{x:,.{nd}f}" if abs(x) >= 10 or nd else f"{x:.1f}"


def cell(st: dict | None, nd: int = 0) -> str:
    """``median [min–max]`` of a ``stats`` result."""
    if not st:
        return "–"
    return f"{fmt(st['median'], nd)} [{fmt(st['min'], nd)}–{fmt(st['max'], nd)}]"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table: the first column left-aligned, the others right-aligned."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return lines


def title_of(config: str) -> str:
    return CONFIG_TITLES.get(config, config)


def available(result: dict[str, Any]) -> list[str]:
    """The systems of the run that started, in the order asked for."""
    return [s for s in result["params"]["systems"]
            if result["systems"].get(s, {}).get("available")]


def store_text(params: dict[str, Any]) -> str:
    """How the stores of a run were kept, for the workload line."""
    if params.get("store") != "local":
        return "memory store"
    cache = "page cache emptied before every timed read" if params.get("cold") else \
        "page cache warm"
    return f"local store (a fresh directory per write under {params.get('root') or '?'}; {cache})"


def reps_text(params: dict[str, Any]) -> str:
    """How many repetitions were timed, and how many untimed ones each system ran first."""
    warm = params.get("warmup", 0)
    first = f" after {warm} untimed" if warm else ""
    return f"{params['reps']} repetitions{first}"


def header_lines(result: dict[str, Any], workload: str) -> list[str]:
    """The machine and version line, the ``workload`` line, and one line per note."""
    m = result["machine"]
    systems = available(result)
    vers = ", ".join(f"{LABELS.get(s, s)} {result['systems'][s].get('version', '?')}"
                     for s in systems)
    libs = ", ".join(f"{k} {m[k]}" for k in ("numpy", "libzstd", "blosc", "zlib", "zlib_backend",
                                                     "crc32c_backend") if k in m)
    out = [f"Machine: {m.get('cpu')} ({m.get('cpus')} CPUs), Python {m.get('python')}; {vers}; "
           f"{libs}.", f"Workload: {workload}"]
    for note in result["notes"]:
        one = " ".join(note.split())
        out.append(f"- note: {one[:300]}{'…' if len(one) > 300 else ''}")
    return out


def best_peer(speeds: dict[str, float]) -> dict | None:
    """zarrx's median speed over the fastest peer's, ``{"ratio": ..., "peer": name}`` (above
    1 favours zarrx), or None when zarrx or every peer is missing."""
    zx = speeds.get("zarrx")
    peers = {s: v for s, v in speeds.items() if s != "zarrx" and v}
    if not zx or not peers:
        return None
    name = max(peers, key=lambda s: peers[s])
    return {"ratio": zx / peers[name], "peer": name}


def ratio_text(best: dict | None) -> str:
    """A ``best_peer`` result as ``1.23 (tensorstore)``."""
    return f"{best['ratio']:.2f} ({LABELS.get(best['peer'], best['peer'])})" if best else "–"


def targets_table(title: str, rows: list[tuple[str, str, dict | None, bool | None]]) -> list[str]:
    """A ``### Targets`` section: one row per ``(what, target, best_peer result, met)``
    (``met`` None: not measured in this run). No section when no row was measured."""
    if not any(best for _, _, best, _ in rows):
        return []
    body = [[what, want, ratio_text(best), "–" if met is None else ("yes" if met else "no")]
            for what, want, best, met in rows]
    return ["", f"### Targets, {title}", ""] + table(["measure", "target", "result", "met"],
                                                       body)
