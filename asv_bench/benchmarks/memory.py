"""Memory: peak RSS of reading a whole sharded zstd array, beyond the output itself.

The target is an overhead of at most 64 MiB whatever the size read. ``zarrx bench --memory``
measures it at 1 GiB against zarr-python and tensorstore; here a 4096×4096 float32 array
(64 MiB, shards 2048², chunks 256², zstd 1) keeps asv quick. Each measurement writes the array
to a temporary LocalStore folder and reads it in a fresh process.
"""
from __future__ import annotations

from . import _common  # noqa: F401  isort: skip - makes zarrx importable from an in-place build
from zarrx.bench.memory import measure_read_memory


class ReadMemory:
    """Overhead (peak RSS − RSS before − output) of ``z[...]`` with 1 and 2 threads."""

    params = ([1, 2],)
    param_names = ["threads"]
    unit = "MiB"
    timeout = 300

    def track_read_overhead_mib(self, threads: int) -> float:
        mem = measure_read_memory(side=4096, chunk=256, shard=2048, threads=threads)
        return mem["results"]["zarrx"]["overhead_mib"]
