"""``chunks={}`` of engine "zarrx" makes one dask block per stored object, but never more than
``zarrx.dask.chunks.MAX_BLOCKS``: a store declaring millions of tiny chunks (a few bytes of
metadata) took seconds to open and gigabytes to compute one element from (2^24 one-byte
chunks: 12 s to open, then a MemoryError past 3.7 GB; 2^40: a MemoryError at once). Past the
limit, ``preferred_chunks`` (and so the blocks) are whole multiples of the stored objects."""
from __future__ import annotations

import math

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("dask")

import zarrx  # noqa: E402
import zarrx.dask.chunks as dask_chunks  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


def _store(path, shape, chunks, zarr_format=3):
    g = zarrx.open_group(str(path), mode="w", zarr_format=zarr_format)
    dims = ["y", "x"][-len(shape):]
    kw = {"dimension_names": dims} if zarr_format == 3 else {
        "attributes": {"_ARRAY_DIMENSIONS": dims}}
    g.create_array("v", shape=shape, dtype="u1", chunks=chunks, **kw)
    return str(path)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_store_of_more_objects_than_blocks_are_made_gets_whole_multiples(tmp_path,
                                                                          zarr_format):
    path = _store(tmp_path / "d.zarr", (2**40,), (1,), zarr_format)
    ds = xr.open_dataset(path, engine=ZarrxBackendEntrypoint)     # (no dask: nothing made)
    block = ds.v.encoding["preferred_chunks"]["x"]
    assert block == 2**18 and 2**40 // block == dask_chunks.MAX_BLOCKS
    assert ds.v.encoding["chunks"] == (1,)                          # what is stored


@pytest.mark.parametrize("shape, chunks, want", [
    ((100,), (1,), (2,)), ((10, 30), (1, 1), (2, 4)), ((64, 1), (1, 1), (1, 1)),
    ((1000,), (7,), (28,))])
def test_chunks_empty_makes_at_most_the_limit_of_blocks(tmp_path, monkeypatch, shape,
                                                        chunks, want):
    monkeypatch.setattr(dask_chunks, "MAX_BLOCKS", 64)
    path = _store(tmp_path / "d.zarr", shape, chunks)
    ds = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, chunks={})
    assert tuple(ds.v.encoding["preferred_chunks"].values()) == want
    assert math.prod(ds.v.data.numblocks) <= 64
    assert all(b % c == 0 for b, c in zip(want, chunks))            # whole objects
    np.testing.assert_array_equal(ds.v.values, np.zeros(shape, "u1"))


def test_fewer_objects_than_the_limit_keep_one_block_each(tmp_path):
    path = _store(tmp_path / "d.zarr", (10, 9), (3, 4))
    ds = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, chunks={})
    assert ds.v.encoding["preferred_chunks"] == {"y": 3, "x": 4}
    assert ds.v.chunks == ((3, 3, 3, 1), (4, 4, 1))
