"""``zarrx bench --workload hierarchy``: opening and listing the arrays of a large group.

Each worker builds, once and untimed, a Zarr v3 group of N small arrays (N = ``--arrays``,
default 1,000): float32, shape (100,), chunks (25,), every chunk written, each array's
attributes naming it, so no two arrays have the same metadata document (a cache keyed by a
document's bytes cannot answer for another array). zarrx and zarr-python then consolidate the
group's metadata with their own ``consolidate_metadata``; tensorstore, which has no groups,
creates the arrays by path and the root ``zarr.json`` through its kvstore. Every repetition
times, on a store opened anew:

- ``open by path``: opening every array by its path (``open_array(store, path=...)``;
  tensorstore ``ts.open`` of the ``zarr3`` driver on the array's kvstore path), one after the
  other;
- ``list members``: the names of the group's members (``list(group.keys())``) from a group
  opened, untimed, without consolidated metadata;
- ``consolidated``: opening the root group with consolidated metadata and every array through
  it (``group[name]``);
- ``not consolidated``: the same without consolidated metadata.

tensorstore has no groups: "n/a" in the last three. The worker side is ``Hierarchy``; the parent
side is ``describe``, ``summarise`` and ``render``.
"""
from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrx.bench.systems import LABELS
from zarrx.bench.tables import (available, cell, fmt, header_lines, reps_text, stats,
                                store_text, table, targets_table, title_of)

__all__ = ["OPS", "LENGTH", "CHUNK", "TARGETS", "Hierarchy", "describe", "summarise", "render"]

OPS = ("open by path", "list members", "consolidated", "not consolidated")
OP_TITLES = {"open by path": "open every array by path",
             "list members": "list the group's members",
             "consolidated": "open group (consolidated) + every array",
             "not consolidated": "open group (not consolidated) + every array"}
LENGTH, CHUNK = 100, 25
# opening every array by path: zarrx's time over the peer's at most (docs/performance.md)
TARGETS = {"zarr": 0.5, "tensorstore": 1.0}


def _names(n: int) -> list[str]:
    return [f"a{i:05d}" for i in range(n)]


def _values(i: int) -> np.ndarray:
    return np.arange(LENGTH, dtype=np.float32) + np.float32(i)


def _attrs(i: int) -> dict:
    return {"index": i, "long_name": f"variable {i}"}


class _ZarrLike:
    """zarrx and zarr-python: the same calls, from either module."""

    groups = True

    def __init__(self, system: Any, module: Any) -> None:
        self.sys, self.zarr = system, module

    def build(self, handle: Any, names: list[str]) -> None:
        g = self.zarr.open_group(self.sys.store_obj(handle), mode="w")
        for i, name in enumerate(names):
            a = g.create_array(name, shape=(LENGTH,), chunks=(CHUNK,), dtype="float32",
                               fill_value=0, attributes=_attrs(i))
            a[...] = _values(i)
        self.zarr.consolidate_metadata(self.sys.store_obj(handle))

    def store(self, handle: Any) -> Any:
        return self.sys.store_obj(handle, read_only=True)

    def open_array(self, store: Any, name: str) -> Any:
        return self.zarr.open_array(store, path=name, mode="r")

    def open_group(self, store: Any, consolidated: bool) -> Any:
        return self.zarr.open_group(store, mode="r", use_consolidated=consolidated)


class _TensorStore:
    """tensorstore: arrays by kvstore path; no groups."""

    groups = False

    def __init__(self, system: Any) -> None:
        import tensorstore as ts
        self.sys, self.ts = system, ts

    def build(self, handle: Any, names: list[str]) -> None:
        ts = self.ts
        for i, name in enumerate(names):
            meta = {"shape": [LENGTH], "data_type": "float32", "fill_value": 0,
                    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [CHUNK]}},
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    "attributes": _attrs(i)}
            t = ts.open({"driver": "zarr3", "kvstore": handle.at(name), "metadata": meta},
                        create=True, context=handle.context).result()
            t.write(_values(i)).result()
        kv = ts.KvStore.open(handle.kvstore, context=handle.context).result()
        root = {"zarr_format": 3, "node_type": "group", "attributes": {}}
        kv.write("zarr.json", json.dumps(root).encode()).result()

    def store(self, handle: Any) -> Any:
        """A fresh context for a local store (nothing cached from an earlier open); a memory
        store's contents live in its context."""
        return type(handle)(self.sys.context(), handle.kvstore) if self.sys.local else handle

    def open_array(self, store: Any, name: str) -> Any:
        return self.ts.open({"driver": "zarr3", "kvstore": store.at(name)}, open=True,
                            read=True, context=store.context).result()


class Hierarchy:
    """The worker's state: the group, built on the first request and timed on every one."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        s = worker.sys
        self.names = _names(worker.params.arrays)
        if s.name == "tensorstore":
            self.lib: Any = _TensorStore(s)
        else:
            self.lib = _ZarrLike(s, importlib.import_module(s.name))
        self.handle = s.new_store()
        self.lib.build(self.handle, self.names)
        self.stored = s.stored_bytes(self.handle)

    def _timed(self, fn: Callable[[], list]) -> tuple[float, list]:
        self.worker.before_read()
        t0 = time.perf_counter()
        got = fn()
        return time.perf_counter() - t0, got

    def _complete(self, arrays: list) -> bool:
        return len(arrays) == len(self.names) and all(tuple(a.shape) == (LENGTH,)
                                                       for a in arrays)

    def measure(self) -> dict:
        """Every operation once; seconds per operation (None: the system has no such
        operation) and whether each one found every array."""
        lib, names = self.lib, self.names
        seconds: dict[str, float | None] = dict.fromkeys(OPS)
        store = lib.store(self.handle)
        seconds["open by path"], got = self._timed(
            lambda: [lib.open_array(store, n) for n in names])
        ok = self._complete(got)
        if lib.groups:
            group = lib.open_group(lib.store(self.handle), False)
            seconds["list members"], got = self._timed(lambda: list(group.keys()))
            ok = ok and sorted(got) == names
            for op, consolidated in (("consolidated", True), ("not consolidated", False)):
                seconds[op], got = self._timed(self._through_group(consolidated))
                ok = ok and self._complete(got)
        return {"arrays": len(names), "seconds": seconds, "stored": self.stored,
                "verified": ok}

    def _through_group(self, consolidated: bool) -> Callable[[], list]:
        """Open the root group of a store opened anew, then every array through it."""
        store = self.lib.store(self.handle)

        def run() -> list:
            group = self.lib.open_group(store, consolidated)
            return [group[n] for n in self.names]
        return run


def describe(reply: dict) -> str:
    """One system's part of a progress line: milliseconds per operation."""
    sec = reply["seconds"]
    return " ".join(f"{op.split()[0]} {sec[op] * 1e3:.0f}" for op in OPS
                    if sec.get(op) is not None) + " ms"


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """Per config, system and operation: milliseconds (median, min, max over repetitions),
    and zarrx's median time over each peer's."""
    params = result["params"]
    out: dict[str, Any] = {"configs": {}}
    for config in params["configs"]:
        ops: dict[str, Any] = {}
        for op in OPS:
            row: dict[str, Any] = {"systems": {}, "zarrx_time_ratio": {}}
            for name in params["systems"]:
                ss = [s["seconds"][op] for s in result["samples"]
                      if s["config"] == config and s["system"] == name]
                if ss:
                    row["systems"][name] = stats([1e3 * x for x in ss if x is not None])
            zx = row["systems"].get("zarrx")
            for name, st in row["systems"].items():
                if name != "zarrx" and zx and st:
                    row["zarrx_time_ratio"][name] = zx["median"] / st["median"]
            ops[op] = row
        out["configs"][config] = ops
    return out


def render(result: dict[str, Any], summary: dict[str, Any]) -> str:
    """One table per configuration (ms per operation, µs per array opened, zarrx's time over
    each peer's) and the targets for opening every array by path."""
    p = result["params"]
    n = p["arrays"]
    systems = available(result)
    peers = [s for s in systems if s != "zarrx"]
    out = header_lines(result,
                       f"hierarchy: a group of {n:,} float32 arrays of shape ({LENGTH},), "
                       f"chunks ({CHUNK},), Zarr v3, {store_text(p)}; {reps_text(p)}, "
                       "median [min–max].")
    for config in p["configs"]:
        ops = summary["configs"].get(config, {})
        out += ["", f"### Hierarchy of {n:,} arrays, {title_of(config)} (ms)", ""]
        header = ["operation"] + [LABELS.get(s, s) for s in systems]
        if "zarrx" in systems:
            header += [f"zarrx/{LABELS.get(s, s)} time" for s in peers]
        rows = []
        for op in OPS:
            st = ops.get(op, {}).get("systems", {})
            row = [OP_TITLES[op]] + [cell(st.get(s), 1) if st.get(s) else "n/a"
                                     for s in systems]
            if "zarrx" in systems:
                ratios = ops.get(op, {}).get("zarrx_time_ratio", {})
                row += [fmt(ratios[s], 2) if s in ratios else "n/a" for s in peers]
            rows.append(row)
            if op == "open by path":
                per = [fmt(1e3 * st[s]["median"] / n, 1) if st.get(s) else "n/a"
                       for s in systems]
                rows.append(["… µs per array (median)"] + per
                            + ([""] * len(peers) if "zarrx" in systems else []))
        out += table(header, rows)
        ratios = ops.get("open by path", {}).get("zarrx_time_ratio", {})
        out += targets_table(
            f"{title_of(config)} (zarrx's time over the peer's, opening every array by path)",
            [(f"open {n:,} arrays vs {LABELS[s]}", f"≤ {want:.1f}×",
              {"ratio": ratios[s], "peer": s} if s in ratios else None,
              ratios[s] <= want if s in ratios else None) for s, want in TARGETS.items()])
    return "\n".join(out) + "\n"
