"""Where ``zarrx.dask`` behaves as ``dask.array.to_zarr`` / ``from_zarr`` do on the same
inputs: the exception classes a dask user catches, the arguments dask's calls take."""
from __future__ import annotations

import re

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import zarrx  # noqa: E402
import zarrx.dask as zd  # noqa: E402

REFUSAL = "to_zarrx(/): cannot store into an in-memory array (MemoryStore) using the "


def test_in_memory_writes_from_other_processes_are_a_runtime_error():
    """dask.array.to_zarr refuses a write into an in-memory array with the distributed
    scheduler with a RuntimeError; zarrx refuses it (and with worker processes) with an error
    that is both a ZarrError and a RuntimeError."""
    x = da.ones(20, chunks=5, dtype="i4")
    z = zarrx.create_array(zarrx.store.MemoryStore(), shape=(20,), dtype="i4", chunks=(5,),
                           fill_value=0)
    with dask.config.set(scheduler="processes"):
        with pytest.raises(RuntimeError, match=re.escape(REFUSAL + "processes scheduler")) \
                as info:
            zd.to_zarrx(x, z)
    assert isinstance(info.value, zarrx.errors.SchedulerError)
    assert isinstance(info.value, zarrx.ZarrError)
    write = zd.to_zarrx(x, z, compute=False)        # the scheduler is known only here
    with pytest.raises(RuntimeError, match=re.escape(REFUSAL + "distributed or process")):
        write.compute(scheduler="processes", num_workers=1)
    assert int(z[...].sum()) == 0


def test_fsspec_store_from_url_takes_a_pathlib_path(tmp_path):
    """zarr-python's FsspecStore.from_url takes a pathlib path (dask's sharding test opens what
    to_zarr wrote that way); zarrx refused it as not a URL."""
    pytest.importorskip("fsspec")
    x = da.arange(60, chunks=6)
    zd.to_zarrx(x, tmp_path, chunks=(3,), shards=(12,))
    z = zarrx.open_array(zarrx.storage.FsspecStore.from_url(tmp_path), mode="r")
    assert z.shards == (12,)
    np.testing.assert_array_equal(z[...], np.arange(60))
    assert repr(zarrx.storage.FsspecStore(tmp_path)) == \
        repr(zarrx.storage.FsspecStore(str(tmp_path)))


def test_mode_r_is_refused_as_read_only_before_anything_is_written(tmp_path):
    """dask.array.to_zarr refuses mode='r' with a ValueError saying it cannot use a read-only
    mode; zarrx says the same (before: only that 'r' is not one of the modes it takes)."""
    x = da.arange(10, chunks=5)
    with pytest.raises(ValueError, match=re.escape(
            "to_zarrx: cannot use mode 'r' (read-only) to write; expected one of a, w, w-, r+")):
        zd.to_zarrx(x, tmp_path / "a.zarr", mode="r")
    assert not (tmp_path / "a.zarr").exists()
    with pytest.raises(zarrx.errors.ArgumentError, match=re.escape(
            "to_zarrx: mode: expected one of a, w, w-, r+, found 'x'")):
        zd.to_zarrx(x, tmp_path / "a.zarr", mode="x")


@pytest.mark.parametrize("compute", [True, False], ids=["compute", "delayed"])
def test_a_region_with_a_step_writes_every_step_th_element(compute):
    """dask.array.to_zarr writes into region=(slice(a, b, step),); zarrx refused any step but 1.
    The blocks are regrouped where a stored object ends between two selected elements."""
    z = zarrx.create_array(zarrx.store.MemoryStore(), shape=(40, 30), dtype="i4",
                           chunks=(4, 5), shards=(8, 10), fill_value=-1)
    x = da.from_array(np.arange(130, dtype="i4").reshape(13, 10), chunks=((2, 5, 6), (3, 7)))
    region = (slice(1, 40, 3), slice(2, 22, 2))
    stored = zd.to_zarrx(x, z, region=region, compute=compute, return_stored=True)
    expect = np.full((40, 30), -1, dtype="i4")
    expect[region] = x.compute()
    np.testing.assert_array_equal(stored.compute(), x.compute())
    assert stored.chunks == x.chunks
    np.testing.assert_array_equal(z[...], expect)


def test_region_edges_are_stored_object_boundaries_between_selected_elements():
    from zarrx.dask.chunks import region_edges, region_offset

    _, slices = region_offset((slice(1, None, 3), slice(4, 9)), (24, 12), "t")
    # shards end at 8 and 16: elements 7 | 10 and 13 | 16 of the first axis fall on either side
    assert region_edges([[0, 8, 16, 24], [0, 6, 12]], slices) == [[0, 3, 5, 8], [0, 2, 5]]


def test_a_region_step_below_one_is_refused():
    z = zarrx.create_array(zarrx.store.MemoryStore(), shape=(10,), dtype="i4", chunks=(5,))
    with pytest.raises(zarrx.errors.ArgumentError, match=re.escape(
            "to_zarrx(/): region[0]: expected a slice with a positive step, found "
            "slice(None, None, -1)")):
        zd.to_zarrx(da.arange(10, chunks=5, dtype="i4"), z, region=(slice(None, None, -1),))
