"""Metadata: creating and opening arrays and groups, v2 and v3, consolidated or not."""
from __future__ import annotations

from . import _common  # noqa: F401  # isort: skip - makes zarrx importable from an in-place build
import zarrx  # noqa: E402
from zarrx.store import MemoryStore  # noqa: E402


class ArrayMeta:
    """Create / open one array."""

    params = ([2, 3],)
    param_names = ["zarr_format"]

    def setup(self, zarr_format: int) -> None:
        self.store = MemoryStore()
        zarrx.create_array(self.store, shape=(4096, 4096), dtype="float32", chunks=(256, 256),
                           fill_value=0, zarr_format=zarr_format, attributes={"units": "K"})
        self.zarr_format = zarr_format

    def time_create(self, zarr_format: int) -> None:
        zarrx.create_array(MemoryStore(), shape=(4096, 4096), dtype="float32",
                           chunks=(256, 256), fill_value=0, zarr_format=zarr_format)

    def time_open(self, zarr_format: int) -> None:
        zarrx.open_array(self.store, mode="r")

    def time_open_attrs(self, zarr_format: int) -> None:
        zarrx.open_array(self.store, mode="r").attrs["units"]


class Hierarchy:
    """A group with 100 arrays: listing members, with and without consolidated metadata."""

    params = ([2, 3], [False, True])
    param_names = ["zarr_format", "consolidated"]

    def setup(self, zarr_format: int, consolidated: bool) -> None:
        self.store = MemoryStore()
        g = zarrx.open_group(self.store, mode="w", zarr_format=zarr_format)
        for i in range(100):
            g.create_array(f"a{i:03d}", shape=(100,), dtype="int32", chunks=(10,))
        if consolidated:
            zarrx.consolidate_metadata(self.store)

    def time_members(self, zarr_format: int, consolidated: bool) -> None:
        list(zarrx.open_group(self.store, mode="r").members())

    def time_open_member(self, zarr_format: int, consolidated: bool) -> None:
        zarrx.open_group(self.store, mode="r")["a050"]


class Check:
    """``zarrx.check`` of a hierarchy of groups holding arrays with a chunk each: each stored
    object is attributed to its node, so the time grows with the number of objects."""

    params = ([1_000, 10_000],)
    param_names = ["nodes"]
    timeout = 300

    def setup(self, nodes: int) -> None:
        self.store = MemoryStore()
        g = zarrx.open_group(self.store, mode="w")
        for i in range(nodes // 10):
            sub = g.create_group(f"g{i}")
            for j in range(9):
                sub.create_array(f"a{j}", shape=(2,), chunks=(2,), dtype="int8")[:] = 1

    def time_check(self, nodes: int) -> None:
        zarrx.check(self.store)
