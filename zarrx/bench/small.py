"""``zarrx bench --workload small-chunks``: the cost of many small chunks, in chunks per second.

A 1-D float32 array of N chunks of 1,024 elements (4 KiB each; N = ``--small-chunks``, default
65,536 = 256 MiB), bytes codec only, unsharded, so the work per chunk is a few KiB of copying
and one stored value (one file on a local store): what is measured is each system's overhead
per chunk. The array is written, reopened and read in aligned slabs of at most 16,384 chunks
(64 MiB), so 1,000,000 chunks (3.8 GiB) need no more than one slab of memory; only the write and
read calls are timed, and every slab read back is compared with the data.

The worker side is ``SmallChunks`` (one ``measure`` per repetition); the parent side is
``describe``, ``summarise`` and ``render``.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from zarrx.bench.systems import LABELS
from zarrx.bench.tables import (available, best_peer, cell, cores, cores_text, fmt,
                                header_lines, reps_text, stats, store_text, table,
                                targets_table, title_of)
from zarrx.bench.workload import CASES_BY_NAME, MIB

__all__ = ["CHUNK_ELEMS", "SLAB_CHUNKS", "TARGET", "SmallChunks", "describe", "summarise",
           "render"]

CHUNK_ELEMS = 1024          # float32: 4 KiB per chunk
SLAB_CHUNKS = 16384         # chunks per write or read call: 64 MiB
TARGET = 2.0                # zarrx over the best peer, both directions (docs/performance.md)
DIRECTIONS = ("write", "read")


class SmallChunks:
    """The worker's state: the data of one slab, reused for every slab of the array (the
    values do not matter to a bytes-only codec; only their round trip does)."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        p = worker.params
        self.chunks = p.small_chunks
        self.slab_elems = min(self.chunks, SLAB_CHUNKS) * CHUNK_ELEMS
        self.slab = np.random.default_rng(p.seed).random(self.slab_elems, dtype=np.float32)

    def _slabs(self) -> list[slice]:
        total = self.chunks * CHUNK_ELEMS
        return [slice(a, min(a + self.slab_elems, total))
                for a in range(0, total, self.slab_elems)]

    def measure(self) -> dict:
        """Write the array into a fresh store, reopen it, read it back; seconds and bytes."""
        s = self.worker.sys
        total = self.chunks * CHUNK_ELEMS
        store = s.new_store()
        arr = s.create(store, CASES_BY_NAME["raw"], (total,), (CHUNK_ELEMS,), (total,))
        slabs = self._slabs()
        self.worker.before_write()
        c0, t0 = time.process_time(), time.perf_counter()
        for sl in slabs:
            s.write(arr, sl, self.slab[:sl.stop - sl.start])
        write_s = time.perf_counter() - t0
        write_cpu = time.process_time() - c0
        reader = s.open(store)
        self.worker.before_read()
        read_s, read_cpu, ok = 0.0, 0.0, True
        for sl in slabs:
            c0, t0 = time.process_time(), time.perf_counter()
            out = s.read(reader, sl)
            read_s += time.perf_counter() - t0
            read_cpu += time.process_time() - c0
            ok = ok and bool(np.array_equal(out, self.slab[:sl.stop - sl.start]))
            del out
        stored = s.stored_bytes(store)
        del reader, arr
        s.discard(store)
        return {"write_s": write_s, "read_s": read_s, "write_cpu_s": write_cpu,
                "read_cpu_s": read_cpu, "chunks": self.chunks, "raw": total * 4,
                "stored": stored, "calls": len(slabs), "verified": ok}


def describe(reply: dict) -> str:
    """One system's part of a progress line: chunks per second written and read."""
    n = reply["chunks"]
    return f"w {n / reply['write_s']:,.0f} r {n / reply['read_s']:,.0f} chunks/s"


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Chunks per second (median, min, max over the repetitions) per config and system, with
    stored/raw and zarrx over the best peer."""
    params = result["params"]
    out: dict[str, Any] = {"configs": {}}
    for config in params["configs"]:
        row: dict[str, Any] = {"systems": {}}
        for name in params["systems"]:
            ss = [s for s in result["samples"] if s["config"] == config and s["system"] == name]
            if ss:
                row["systems"][name] = {
                    "write": stats([s["chunks"] / s["write_s"] for s in ss]),
                    "read": stats([s["chunks"] / s["read_s"] for s in ss]),
                    "write_mib_s": stats([s["raw"] / MIB / s["write_s"] for s in ss]),
                    "read_mib_s": stats([s["raw"] / MIB / s["read_s"] for s in ss]),
                    "stored_raw": stats([s["stored"] / s["raw"] for s in ss]),
                    "cores": cores(ss),
                    "verified": all(s["verified"] for s in ss)}
        row["zarrx_best"] = {d: best_peer({n: st[d]["median"]
                                           for n, st in row["systems"].items()})
                             for d in DIRECTIONS}
        out["configs"][config] = row
    return out


def render(result: dict[str, Any], summary: dict[str, Any]) -> str:
    """One table per configuration: chunks/s written and read, MiB/s, stored/raw, and zarrx
    over the best peer against the target."""
    p = result["params"]
    n = p["small_chunks"]
    systems = available(result)
    out = header_lines(result,
                       f"small chunks: a 1-D float32 array of {n:,} chunks of {CHUNK_ELEMS:,} "
                       f"elements (4 KiB; {n * CHUNK_ELEMS * 4 / MIB:,.0f} MiB in all), bytes "
                       f"codec only, unsharded, Zarr v3, {store_text(p)}; written and read in "
                       f"slabs of up to {SLAB_CHUNKS:,} chunks; {reps_text(p)}, "
                       "median [min–max].")
    for config in p["configs"]:
        row = summary["configs"].get(config, {"systems": {}, "zarrx_best": {}})
        out += ["", f"### Small chunks, {title_of(config)} (chunks/s)", ""]
        rows = []
        for name in systems:
            st = row["systems"].get(name)
            if st is None:
                rows.append([LABELS.get(name, name)] + ["–"] * 6)
                continue
            rows.append([LABELS.get(name, name), cell(st["write"]), cell(st["read"]),
                         fmt(st["write_mib_s"]["median"]), fmt(st["read_mib_s"]["median"]),
                         fmt(st["stored_raw"]["median"], 3), cores_text(st.get("cores"))])
        out += table(["system", "write chunks/s", "read chunks/s", "write MiB/s", "read MiB/s",
                      "stored/raw", "cores busy (write · read)"], rows)
        out += targets_table(
            f"{title_of(config)} (zarrx over the best peer's chunks/s)",
            [(f"{d} chunks/s", f"≥ {TARGET:.1f}× best peer", row["zarrx_best"].get(d),
              None if not row["zarrx_best"].get(d) else row["zarrx_best"][d]["ratio"] >= TARGET)
             for d in DIRECTIONS])
    return "\n".join(out) + "\n"
