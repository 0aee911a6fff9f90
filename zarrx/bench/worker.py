"""A benchmark worker: one process per system and configuration.

    python -m zarrx.bench.worker <system> <config>

It speaks JSON lines: each request on stdin gets one reply on stdout. Anything else the
libraries print goes to stderr, so it cannot corrupt the protocol. Requests:

- ``{"op": "init", "params": {...}}`` builds the data (same seed, same bytes in every process)
  and configures the system before any I/O; replies with the system's version.
- ``{"op": "case", "case": "zstd-0"}`` writes the whole array to a fresh store, reopens it,
  reads it whole, checks the values and replies with ``write_s``, ``read_s``, ``stored``.
- ``{"op": "latency", "iters": 200}`` replies with median and minimum µs per call of small ops.
- ``{"op": "ceilings"}`` (system ``ceilings``) replies with the bare building blocks' MiB/s.
- ``{"op": "measure"}`` runs one repetition of the small-chunks or hierarchy workload
  (``zarrx.bench.small``, ``zarrx.bench.hierarchy``) and replies with its figures.
- ``{"op": "quit"}``.

With ``cold`` set in the parameters, the page cache is emptied before every timed read.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

import numpy as np

from zarrx.bench.local import drop_caches
from zarrx.bench.workload import CASES_BY_NAME, Case, Params, make_data

__all__ = ["Worker", "serve", "LATENCY_OPS"]

LATENCY_OPS = ("open", "read 1 elem (raw)", "read 1 elem (zstd)", "read 10x10 (zstd)",
               "read 1 inner chunk (sharded zstd)", "write 1 elem (raw)")


class Worker:
    """The state one worker process keeps between requests."""

    def __init__(self, system: str, config: str) -> None:
        self.system_name = system
        self.config = config
        self.params = Params()
        self.data: np.ndarray | None = None
        self.sys: Any = None
        self._lat: dict[str, Any] | None = None
        self._measure: Any = None

    def init(self, params: dict) -> dict:
        self.params = p = Params.from_json(params)
        if p.workload == "throughput":
            self.data = make_data(p.size, p.seed)
        if self.system_name == "ceilings":
            import zarrx
            from zarrx.bench.runner import library_versions
            return {"version": zarrx.__version__, "libraries": library_versions()}
        from zarrx.bench.systems import get_system
        self.sys = get_system(self.system_name, self.config, p.store, p.root)
        self.sys.configure()
        return {"version": self.sys.version()}

    def before_read(self) -> None:
        """Untimed, just before a timed read: a collection, and with ``cold`` an empty page
        cache."""
        if self.params.cold:
            drop_caches()
        gc.collect()

    def before_write(self) -> None:
        """Untimed, just before a timed write: a collection, and on a local store the dirty
        pages of earlier writes (this system's or another's) written back, so that their
        writeback does not land in this write's time."""
        if self.sys.local:
            os.sync()
        gc.collect()

    def _create(self, store: Any, case: Case) -> Any:
        p = self.params
        return self.sys.create(store, case, (p.size, p.size), (p.chunk, p.chunk),
                               (p.shard, p.shard))

    def _written(self, case: Case) -> tuple[Any, Any]:
        store = self.sys.new_store()
        arr = self._create(store, case)
        self.sys.write(arr, Ellipsis, self.data)
        return store, arr

    def case(self, name: str) -> dict:
        case = CASES_BY_NAME[name]
        s, data = self.sys, self.data
        assert data is not None
        store = s.new_store()
        arr = self._create(store, case)
        self.before_write()
        c0, t0 = time.process_time(), time.perf_counter()
        s.write(arr, Ellipsis, data)
        t1, c1 = time.perf_counter(), time.process_time()
        reader = s.open(store)
        self.before_read()
        c2, t2 = time.process_time(), time.perf_counter()
        out = s.read(reader, Ellipsis)
        t3, c3 = time.perf_counter(), time.process_time()
        ok = out.shape == data.shape and bool(np.array_equal(out, data))
        stored = s.stored_bytes(store)
        del out, reader, arr
        s.discard(store)
        return {"write_s": t1 - t0, "read_s": t3 - t2, "write_cpu_s": c1 - c0,
                "read_cpu_s": c3 - c2, "stored": stored, "raw": data.nbytes, "verified": ok}

    def measure(self) -> dict:
        """One repetition of the small-chunks or hierarchy workload."""
        if self._measure is None:
            if self.params.workload == "small-chunks":
                from zarrx.bench.small import SmallChunks
                self._measure = SmallChunks(self)
            elif self.params.workload == "hierarchy":
                from zarrx.bench.hierarchy import Hierarchy
                self._measure = Hierarchy(self)
            else:
                raise ValueError(f"no measure op for workload {self.params.workload!r}")
        return self._measure.measure()

    def latency(self, iters: int) -> dict:
        s, p = self.sys, self.params
        if self._lat is None:
            raw_store, _ = self._written(CASES_BY_NAME["raw"])
            zstd_store, _ = self._written(CASES_BY_NAME["zstd-0"])
            shard_store, _ = self._written(CASES_BY_NAME["sharded zstd-0"])
            self._lat = {"raw_store": raw_store, "raw": s.open(raw_store),
                         "zstd": s.open(zstd_store), "sharded": s.open(shard_store),
                         "rw": s.open(raw_store, writable=True)}
        L = self._lat
        n, c = p.size, p.chunk
        i, j = n // 2 + 3, n // 3 + 5
        i0 = (i // c) * c + 1
        k0 = ((n // 2) // c) * c
        inner = (slice(k0, k0 + c), slice(k0, k0 + c))
        value = np.float32(1.5)
        ops: dict[str, Callable[[], object]] = {
            "open": lambda: s.open(L["raw_store"]),
            "read 1 elem (raw)": lambda: s.read(L["raw"], (i, j)),
            "read 1 elem (zstd)": lambda: s.read(L["zstd"], (i, j)),
            "read 10x10 (zstd)": lambda: s.read(L["zstd"], (slice(i0, i0 + 10), slice(i0, i0 + 10))),
            "read 1 inner chunk (sharded zstd)": lambda: s.read(L["sharded"], inner),
            "write 1 elem (raw)": lambda: s.write(L["rw"], (i, j), value),
        }
        out = {}
        for name, fn in ops.items():
            out[name] = _per_call(fn, iters)
        return out

    def ceilings(self) -> dict:
        from zarrx.bench.ceilings import measure_ceilings
        return measure_ceilings(self.data, self.params.chunk)


def _per_call(fn: Callable[[], object], iters: int) -> dict:
    for _ in range(min(3, iters)):
        fn()
    times = []
    for _ in range(max(iters, 1)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    arr = np.asarray(times) * 1e6
    return {"median_us": float(np.median(arr)), "min_us": float(arr.min()), "iters": len(times)}


def serve(system: str, config: str, inp: TextIO, out: TextIO) -> None:
    """Answer requests until ``quit`` or end of input."""
    w = Worker(system, config)
    for line in inp:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        try:
            if op == "quit":
                reply: dict = {"ok": True}
            elif op == "init":
                reply = {"ok": True, **w.init(req["params"])}
            elif op == "case":
                reply = {"ok": True, **w.case(req["case"])}
            elif op == "latency":
                reply = {"ok": True, "latency": w.latency(int(req.get("iters", 100)))}
            elif op == "ceilings":
                reply = {"ok": True, "ceilings": w.ceilings()}
            elif op == "measure":
                reply = {"ok": True, **w.measure()}
            else:
                reply = {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which skips the cell
            traceback.print_exc(file=sys.stderr)
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if op == "quit":
            return


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m zarrx.bench.worker <system> <config>", file=sys.stderr)
        return 2
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                       # stray prints (Python or C) go to stderr
    sys.stdout = sys.stderr
    serve(argv[0], argv[1], sys.stdin, proto)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
