"""Scale-out benchmark: dask and xarray through zarrx against zarr-python, in one run.

    python -m zarrx.bench.scale                 # 1 GiB array, 5 repetitions
    python -m zarrx.bench.scale --size 4096 --reps 3 --json scale.json

Cases (each system in turn within every repetition, the order rotating, medians reported):

- dask read of a float32 array (default 16384 x 16384 = 1 GiB; Zarr v3, chunks 256 x 256,
  shards 2048 x 2048, zstd level 0, written once and read by both systems) with the threaded
  scheduler and with a ``LocalCluster`` of 2 worker processes (``--codec none``: no compression,
  so that the libraries' own costs show rather than libzstd's): ``zarrx.dask.from_zarrx`` against
  ``dask.array.from_zarr`` given the same dask chunks (zarrx's default: whole shards merged up
  to 128 MiB), each block reduced to one element on its worker so that only reading is timed;
- dask write of the same array (in memory, same blocks) to a new array of the same layout:
  ``zarrx.dask.to_zarrx`` against ``dask.array.to_zarr``;
- ``xr.open_dataset`` of a consolidated 100-variable dataset written by xarray (Zarr v3):
  engine "zarrx" against engine "zarr".

Only dask, xarray and zarr-python are needed besides zarrx.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from zarrx.bench.workload import wave_rows

__all__ = ["main"]

MIB = 1 << 20


def _touch(block: np.ndarray) -> np.ndarray:
    """One element of a block: the block was read, nothing more is computed or sent."""
    return np.ascontiguousarray(block[(slice(0, 1),) * block.ndim])


def _data(size: int, seed: int = 12345) -> np.ndarray:
    out = np.empty((size, size), dtype=np.float32)
    rng = np.random.default_rng(seed)
    step = 1024
    for r in range(0, size, step):
        out[r:r + step] = wave_rows(size, r, min(r + step, size), rng)
    return out


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="zarrx-scale-", dir=args.dir)
        self.samples: dict[str, dict[str, list[float]]] = {}

    def log(self, msg: str) -> None:
        if not self.args.quiet:
            print(msg, file=sys.stderr, flush=True)

    def add(self, case: str, system: str, seconds: float) -> None:
        self.samples.setdefault(case, {}).setdefault(system, []).append(seconds)
        self.log(f"  {case:<24} {system:<6} {seconds:8.3f} s")

    def path(self, name: str) -> str:
        return os.path.join(self.dir, name)

    # -- the array cases ----------------------------------------------------------------------
    def arrays(self) -> None:
        import dask
        import dask.array as da
        import zarr

        import zarrx
        import zarrx.dask as zd

        a = self.args
        data = _data(a.size)
        self.nbytes = data.nbytes
        layout = {"chunks": (a.chunk, a.chunk), "shards": (a.shard, a.shard)}
        zx_codec = zarrx.codecs.Zstd(level=0) if a.codec == "zstd" else None
        zp_codec = zarr.codecs.ZstdCodec(level=0) if a.codec == "zstd" else None
        src = self.path("src.zarr")
        zarrx.create_array(src, shape=data.shape, dtype="f4", compressors=zx_codec,
                           **layout)[...] = data
        blocks = zd.from_zarrx(src).chunks
        self.blocks = [max(c) for c in blocks]
        check = zarr.open_array(src, mode="r")[:: a.size // 7, :: a.size // 5]
        assert np.array_equal(check, data[:: a.size // 7, :: a.size // 5])

        readers = {
            "zarrx": lambda: zd.from_zarrx(src),
            "zarr": lambda: da.from_zarr(src, chunks=blocks),
        }

        def read(system: str, **compute: Any) -> None:
            x = readers[system]()
            x.map_blocks(_touch, dtype=x.dtype, chunks=tuple((1,) * len(c) for c in x.chunks)
                         ).compute(**compute)

        source = da.from_array(data, chunks=blocks)
        writers = {
            "zarrx": lambda p: zd.to_zarrx(source, p, compressors=zx_codec, **layout),
            "zarr": lambda p: da.to_zarr(source, p, compressors=zp_codec, **layout),
        }
        systems = ["zarrx", "zarr"]
        with dask.config.set(scheduler="threads"):
            for rep in range(a.reps):
                order = systems[rep % 2:] + systems[:rep % 2]
                self.log(f"repetition {rep + 1}/{a.reps}")
                for s in order:
                    self.add("dask read (threads)", s, _timed(lambda: read(s)))
                for s in order:
                    out = self.path(f"w-{s}-{rep}.zarr")
                    self.add("dask write (threads)", s, _timed(lambda: writers[s](out)))
                    if rep == 0:      # each system's output read back by the other
                        other = zarr.open_array(out, mode="r") if s == "zarrx" \
                            else zarrx.open_array(out, mode="r")
                        assert np.array_equal(other[...], data), s
                    shutil.rmtree(out)
        if a.no_distributed:
            return
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=50) as cluster, \
                Client(cluster) as client:
            read("zarrx")                      # workers import everything once, untimed
            read("zarr")
            for rep in range(a.reps):
                order = systems[rep % 2:] + systems[:rep % 2]
                for s in order:
                    self.add("dask read (LocalCluster)", s, _timed(lambda: read(s)))
            del client

    # -- the open case ------------------------------------------------------------------------
    def opens(self) -> None:
        import pandas as pd
        import xarray as xr

        from zarrx.xarray import ZarrxBackendEntrypoint

        a = self.args
        rng = np.random.default_rng(0)
        ds = xr.Dataset({f"v{i:03d}": (("time", "y", "x"), rng.random((4, 20, 30)).astype("f4"),
                                       {"units": "K", "long_name": f"variable {i}"})
                         for i in range(a.vars)},
                        coords={"time": pd.date_range("2000-01-01", periods=4),
                                "y": np.arange(20.0), "x": np.arange(30.0)})
        path = self.path("many.zarr")
        ds.to_zarr(path, zarr_format=3, consolidated=True, mode="w")
        engines = {"zarrx": ZarrxBackendEntrypoint, "zarr": "zarr"}
        ref = xr.open_dataset(path, engine="zarr").load()
        xr.testing.assert_identical(xr.open_dataset(path, engine=ZarrxBackendEntrypoint).load(),
                                    ref)
        systems = ["zarrx", "zarr"]
        for rep in range(a.opens):
            order = systems[rep % 2:] + systems[:rep % 2]
            for s in order:
                t = _timed(lambda: xr.open_dataset(path, engine=engines[s]))
                self.samples.setdefault(f"open {a.vars} variables", {}).setdefault(s, []).append(t)
        for s in systems:
            self.log(f"  open {a.vars} variables {s:<6} median "
                     f"{statistics.median(self.samples[f'open {a.vars} variables'][s]):.4f} s")

    # -- the report ---------------------------------------------------------------------------
    def table(self) -> str:
        a = self.args
        lines = [f"zarrx scale benchmark: {a.size}x{a.size} float32 ({self.nbytes / MIB:.0f} MiB),"
                 f" chunks {a.chunk}^2, shards {a.shard}^2, "
                 f"{'zstd 0' if a.codec == 'zstd' else 'no compression'}, dask blocks "
                 f"{self.blocks[0]}x{self.blocks[1]}; {a.reps} repetitions ({a.opens} for opens),"
                 f" medians [min-max]; {os.cpu_count()} CPUs", "",
                 "| case | zarrx | zarr-python | zarrx / zarr-python |", "|---|---|---|---|"]
        for case, by in self.samples.items():
            zx, zp = (statistics.median(by[s]) for s in ("zarrx", "zarr"))
            if case.startswith("open"):
                fmt = lambda s: f"{statistics.median(by[s]) * 1e3:.1f} ms " \
                                f"[{min(by[s]) * 1e3:.1f}-{max(by[s]) * 1e3:.1f}]"  # noqa: E731
                ratio = f"{zx / zp:.2f}x the time"
            else:
                fmt = lambda s: f"{self.nbytes / MIB / statistics.median(by[s]):.0f} MiB/s " \
                                f"[{self.nbytes / MIB / max(by[s]):.0f}-" \
                                f"{self.nbytes / MIB / min(by[s]):.0f}]"  # noqa: E731
                ratio = f"{zp / zx:.2f}x the speed"
            lines.append(f"| {case} | {fmt('zarrx')} | {fmt('zarr')} | {ratio} |")
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m zarrx.bench.scale", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=16384, help="side of the float32 array")
    p.add_argument("--chunk", type=int, default=256)
    p.add_argument("--shard", type=int, default=2048)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--codec", choices=["zstd", "none"], default="zstd",
                   help="zstd level 0 (default) or no compression")
    p.add_argument("--vars", type=int, default=100, help="variables of the opened dataset")
    p.add_argument("--opens", type=int, default=30, help="timed opens per engine")
    p.add_argument("--dir", default=None, help="where to write (default: a temp directory)")
    p.add_argument("--no-distributed", action="store_true")
    p.add_argument("--json", default=None, help="write every sample here")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    run = Run(args)
    try:
        run.arrays()
        run.opens()
    finally:
        shutil.rmtree(run.dir, ignore_errors=True)
    print(run.table())
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "samples": run.samples, "nbytes": run.nbytes}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
