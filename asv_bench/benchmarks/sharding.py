"""Sharded arrays: inner-chunk reads (index lookup + one range), whole-array write and read."""
from __future__ import annotations

from . import _common


class Sharded:
    """A 1024×1024 float32 array, shards 512×512, inner chunks of the given side."""

    params = ([64, 128, 256], ["raw", "zstd-0"])
    param_names = ["chunk", "codec"]

    def setup(self, chunk: int, codec: str) -> None:
        self.values = _common.data(1024)
        self.store, self.z = _common.array(self.values, (1024, 1024), (chunk, chunk), codec,
                                           shards=(512, 512))
        self.chunk = chunk

    def time_read_inner_chunk(self, chunk: int, codec: str) -> None:
        self.z[chunk:2 * chunk, 512:512 + chunk]

    def time_read_element(self, chunk: int, codec: str) -> None:
        self.z[700, 300]

    def time_read_all(self, chunk: int, codec: str) -> None:
        self.z[...]

    def time_write_all(self, chunk: int, codec: str) -> None:
        self.z[...] = self.values

    def time_write_element(self, chunk: int, codec: str) -> None:
        self.z[700, 300] = 1.5


class Unsharded:
    """The same reads without sharding, as the baseline for ``Sharded``."""

    params = ([64, 128, 256], ["raw", "zstd-0"])
    param_names = ["chunk", "codec"]

    def setup(self, chunk: int, codec: str) -> None:
        self.values = _common.data(1024)
        self.store, self.z = _common.array(self.values, (1024, 1024), (chunk, chunk), codec)

    def time_read_inner_chunk(self, chunk: int, codec: str) -> None:
        self.z[chunk:2 * chunk, 512:512 + chunk]

    def time_read_all(self, chunk: int, codec: str) -> None:
        self.z[...]
