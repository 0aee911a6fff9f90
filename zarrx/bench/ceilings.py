"""Ceilings: what the bare building blocks reach on this machine, single-threaded.

Copies and the checksum take the best of two calls; every output buffer is written once before
it is timed, so no figure pays for first-touch page faults.

- ``memcpy``: ``np.copyto`` of the whole array into a preallocated one.
- ``gather`` / ``scatter``: copying every chunk-sized tile out of / back into the array (the copy
  a chunked write / read cannot avoid), with zarrx's strided copy kernel when present.
- bare codecs: compressing every tile and decompressing it into a preallocated buffer, through
  zarrx's Cython codec modules (``codec_c`` / ``codec_d``), and the crc32c checksum.

A case's ceiling combines the copy and its codec as a pipeline with no other overhead:
write = 1 / (1/gather + 1/compress), read = 1 / (1/scatter + 1/decompress); the raw rows use the
copy alone. Sharded rows share their unsharded counterpart's ceiling.
"""
from __future__ import annotations

import gc
import time
from collections.abc import Callable

import numpy as np

from zarrx.bench.workload import MIB, Case

__all__ = ["measure_ceilings", "case_ceiling", "CEILING_KEYS"]

CEILING_KEYS = ("memcpy", "gather", "scatter", "crc32c", "gzip-1_c", "gzip-1_d", "gzip-5_c",
                "gzip-5_d", "zstd-0_c", "zstd-0_d", "blosc-lz4_c", "blosc-lz4_d")


def _rate(nbytes: int, fn: Callable[[], object], tries: int = 1) -> float:
    """MiB/s of the best of ``tries`` calls (a ceiling is what the block can reach)."""
    best = float("inf")
    for _ in range(tries):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return nbytes / MIB / max(best, 1e-9)


def _touched(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A buffer whose pages are already mapped, so no timing pays for page faults."""
    out = np.empty(shape, dtype=dtype)
    out.fill(1)
    return out


def _copier() -> Callable[[np.ndarray, tuple, np.ndarray, tuple, tuple], None]:
    try:
        from zarrx._gather import copy_box
        return copy_box
    except Exception:  # noqa: BLE001 - fall back to numpy slicing
        def copy(src: np.ndarray, s0: tuple, dst: np.ndarray, d0: tuple, n: tuple) -> None:
            dst[tuple(slice(a, a + k) for a, k in zip(d0, n))] = \
                src[tuple(slice(a, a + k) for a, k in zip(s0, n))]
        return copy


def _codecs() -> dict[str, tuple[Callable, Callable]]:
    """name -> (compress(tile) -> bytes, decompress_into(blob, out))."""
    out: dict[str, tuple[Callable, Callable]] = {}
    try:
        from zarrx.codecs import _zlib
        for level in (1, 5):
            out[f"gzip-{level}"] = (
                lambda t, lv=level: _zlib.compress(t, lv, "gzip"),
                lambda b, o: _zlib.decompress_into(b, o, "gzip"))
    except Exception:  # noqa: BLE001 - a missing module only removes its ceiling
        pass
    try:
        from zarrx.codecs import _zstd
        out["zstd-0"] = (lambda t: _zstd.compress(t, 0), _zstd.decompress_into)
    except Exception:  # noqa: BLE001
        pass
    try:
        from zarrx.codecs import _blosc
        out["blosc-lz4"] = (lambda t: _blosc.compress(t, 4, 5, 1, "lz4"), _blosc.decompress_into)
    except Exception:  # noqa: BLE001
        pass
    return out


def measure_ceilings(data: np.ndarray, chunk: int) -> dict[str, float]:
    """One measurement of every ceiling, in MiB/s of uncompressed data."""
    n = data.shape[0]
    nbytes = data.nbytes
    res: dict[str, float] = {}
    dst = _touched(data.shape, data.dtype)
    res["memcpy"] = _rate(nbytes, lambda: np.copyto(dst, data), 2)
    copy = _copier()
    starts = [(i, j) for i in range(0, n, chunk) for j in range(0, n, chunk)]
    tiles = _touched((len(starts), chunk, chunk), data.dtype)
    box = (chunk, chunk)

    def gather() -> None:
        for k, st in enumerate(starts):
            copy(data, st, tiles[k], (0, 0), box)

    def scatter() -> None:
        for k, st in enumerate(starts):
            copy(tiles[k], (0, 0), dst, st, box)

    res["gather"] = _rate(nbytes, gather, 2)
    res["scatter"] = _rate(nbytes, scatter, 2)
    views = [tiles[k].reshape(-1).view(np.uint8) for k in range(len(starts))]
    try:
        from zarrx.codecs._crc32c import crc32c
        res["crc32c"] = _rate(nbytes, lambda: [crc32c(v) for v in views], 2)
    except Exception:  # noqa: BLE001
        pass
    out = _touched(tiles.shape, tiles.dtype)
    outs = [out[k].reshape(-1).view(np.uint8) for k in range(len(starts))]
    for name, (compress, decompress_into) in _codecs().items():
        blobs: list[bytes] = []
        res[f"{name}_c"] = _rate(nbytes, lambda: blobs.extend(compress(v) for v in views))
        res[f"{name}_d"] = _rate(
            nbytes, lambda: [decompress_into(b, o) for b, o in zip(blobs, outs)])
        if not np.array_equal(out, tiles):
            raise AssertionError(f"ceilings: {name} did not round-trip")
        res[f"{name}_ratio"] = sum(len(b) for b in blobs) / nbytes
    return res


def _pipe(*rates: float | None) -> float | None:
    if any(r is None or r <= 0 for r in rates):
        return None
    return 1.0 / sum(1.0 / r for r in rates)  # type: ignore[operator]


def case_ceiling(case: Case, ceil: dict[str, float]) -> tuple[float | None, float | None]:
    """(write, read) ceiling of ``case`` in MiB/s from one set of ceiling medians."""
    gather, scatter = ceil.get("gather"), ceil.get("scatter")
    if case.codec == "raw":
        return gather, scatter
    if case.codec == "crc32c":
        crc = ceil.get("crc32c")
        return _pipe(gather, crc), _pipe(scatter, crc)
    key = {"gzip": f"gzip-{case.level}", "zstd": "zstd-0", "blosc-lz4": "blosc-lz4"}[case.codec]
    return _pipe(gather, ceil.get(f"{key}_c")), _pipe(scatter, ceil.get(f"{key}_d"))
