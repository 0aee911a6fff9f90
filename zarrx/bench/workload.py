"""The benchmark workloads: the data, the cases and the run parameters.

Three workloads: ``throughput`` (the whole square array written and read per case, plus
latency), ``small-chunks`` (many 4 KiB chunks, in chunks per second) and ``hierarchy`` (opening
and listing the arrays of a large group). Every worker process builds the data itself from the
same seed, so all systems see identical bytes without shipping 64 MiB between processes.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["Case", "CASES", "CASE_NAMES", "Params", "make_data", "MIB", "WORKLOADS"]

MIB = 1 << 20
WORKLOADS = ("throughput", "small-chunks", "hierarchy")


@dataclass(frozen=True, slots=True)
class Case:
    """One row of the table: a codec chain, optionally sharded.

    ``codec`` is one of ``raw`` (bytes only), ``crc32c``, ``gzip``, ``zstd``, ``blosc-lz4``;
    ``level`` is the codec's level where it has one.
    """

    name: str
    codec: str
    level: int | None = None
    sharded: bool = False


CASES: tuple[Case, ...] = (
    Case("raw", "raw"),
    Case("crc32c", "crc32c"),
    Case("gzip-1", "gzip", 1),
    Case("gzip-5", "gzip", 5),
    Case("zstd-0", "zstd", 0),
    Case("blosc-lz4", "blosc-lz4", 5),
    Case("sharded raw", "raw", sharded=True),
    Case("sharded zstd-0", "zstd", 0, sharded=True),
)
CASE_NAMES: tuple[str, ...] = tuple(c.name for c in CASES)
CASES_BY_NAME: dict[str, Case] = {c.name: c for c in CASES}


@dataclass(frozen=True, slots=True)
class Params:
    """What one run measures. ``size`` is the side of the square float32 array (throughput);
    ``small_chunks`` the number of 4 KiB chunks (small-chunks); ``arrays`` the number of arrays
    in the group (hierarchy). ``store`` is ``memory`` or ``local``: local stores are made in
    ``root``, a directory the parent creates under ``base_dir`` for the run. ``cold``: empty
    the page cache before every timed read. ``warmup``: untimed repetitions of each system
    before the timed ones (the small-chunks and hierarchy workloads)."""

    workload: str = "throughput"
    store: str = "memory"
    base_dir: str | None = None
    root: str = ""
    cold: bool = False
    small_chunks: int = 65536
    arrays: int = 1000
    size: int = 4096
    chunk: int = 256
    shard: int = 1024
    reps: int = 5
    warmup: int = 1
    seed: int = 12345
    latency_iters: int = 200
    cases: tuple[str, ...] = CASE_NAMES
    systems: tuple[str, ...] = ("zarrx", "zarr", "tensorstore")
    configs: tuple[str, ...] = ("single", "default")

    @property
    def nbytes(self) -> int:
        return self.size * self.size * 4

    def to_json(self) -> dict:
        out = asdict(self)
        out["cases"] = list(self.cases)
        out["systems"] = list(self.systems)
        out["configs"] = list(self.configs)
        out["nbytes"] = self.nbytes
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "Params":
        names = {f for f in cls.__dataclass_fields__}
        kw = {k: v for k, v in obj.items() if k in names}
        for k in ("cases", "systems", "configs"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**kw)


def make_data(size: int, seed: int = 12345) -> np.ndarray:
    """A ``size``×``size`` float32 field: smooth waves plus gaussian noise, quantised to 1/1024
    (an instrument's resolution). Stored/raw is about 0.6 under zstd at its default level."""
    return wave_rows(size, 0, size, np.random.default_rng(seed))


def wave_rows(size: int, start: int, stop: int, rng: np.random.Generator) -> np.ndarray:
    """Rows ``start:stop`` of the waves of a ``size``×``size`` field, plus noise from ``rng``,
    quantised to 1/1024."""
    y = np.linspace(0.0, 8 * np.pi, size, dtype=np.float32)[start:stop, None]
    x = np.linspace(0.0, 6 * np.pi, size, dtype=np.float32)[None, :]
    out = rng.standard_normal((stop - start, size), dtype=np.float32)
    out *= np.float32(0.05)
    out += np.sin(y) * np.cos(x) * np.float32(10.0) + np.float32(20.0)
    out *= np.float32(1024.0)
    np.round(out, out=out)
    out *= np.float32(1.0 / 1024.0)
    return out
