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
