"""Engine "zarrx" lists a group without consolidated metadata once per opening, as its docs
say: xarray asks the backend's data store for its variables twice (once for zarrx's checks
of the CF attributes, once to decode them), and each time the group was listed again, which
on an object store is a listing of every key below the group (every chunk of every array)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray  # noqa: E402,F401
from zarrx.store import CountingStore, MemoryStore  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


@pytest.mark.parametrize("chunks", [None, {}])
def test_open_dataset_lists_the_group_once(chunks):
    inner = MemoryStore()
    ds = xr.Dataset({"v": ("t", np.arange(6.0)), "w": ("t", np.arange(6))},
                    coords={"t": np.arange(6)})
    ds.zarrx.to_zarrx(inner, consolidated=False, encoding={"v": {"chunks": (1,)}})
    store = CountingStore(inner)
    back = xr.open_dataset(store, engine=ZarrxBackendEntrypoint, consolidated=False,
                           chunks=chunks)
    assert store.counts["list"] == 1
    xr.testing.assert_identical(back.load(), ds)
