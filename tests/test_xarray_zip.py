"""``to_zarrx`` into a zip archive (a path ending in ``.zip``): written anew from a copy in
memory once the write has run, since zip entries cannot be replaced."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def dataset(start="2000-01-01"):
    return xr.Dataset({"t2m": (("time", "x"), np.arange(12.0).reshape(3, 4), {"units": "K"}),
                       "name": ("x", np.array(["a", "b", "c", "d"], dtype=object))},
                      coords={"time": pd.date_range(start, periods=3)}, attrs={"title": "t"})


def read_both(path):
    """The dataset at the archive ``path``, by engine "zarrx" and by engine "zarr"."""
    mine = xr.open_dataset(path, engine=ZarrxBackendEntrypoint).load()
    with zarr.storage.ZipStore(path, mode="r") as store:
        theirs = xr.open_zarr(store).load()
    return mine, theirs


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_dataset_is_written_appended_and_updated_in_a_zip_archive(tmp_path, fmt):
    path = str(tmp_path / "data.zarr.zip")
    ds, more = dataset(), dataset("2000-01-04")
    assert isinstance(zx.to_zarrx(ds, path, zarr_format=fmt), zarrx.Group)
    for got in read_both(path):
        xr.testing.assert_identical(got, ds)
    zx.to_zarrx(more.chunk({"time": 1}), path, append_dim="time")
    whole = xr.concat([ds, more], "time", data_vars="minimal")
    for got in read_both(path):
        xr.testing.assert_identical(got, whole)
    update = ds[["t2m"]].isel(time=[1]).chunk() * 0
    delayed = zx.to_zarrx(update, path, region="auto", compute=False)
    for got in read_both(path):                 # the archive changes once computed
        xr.testing.assert_identical(got, whole)
    delayed.compute()
    whole["t2m"][1] = 0.0
    for got in read_both(path):
        xr.testing.assert_identical(got, whole)


def test_a_datatree_is_written_in_a_zip_archive_and_a_refused_write_leaves_it(tmp_path):
    path = str(tmp_path / "tree.zip")
    tree = xr.DataTree.from_dict({"/": dataset(), "/sub": xr.Dataset({"b": ("y", [1.0])})})
    zx.to_zarrx(tree, path)
    before = (tmp_path / "tree.zip").read_bytes()
    with pytest.raises(zarrx.NodeExistsError):
        zx.to_zarrx(dataset(), path, mode="w-")
    with pytest.raises(zarrx.ArgumentError):
        zx.to_zarrx(dataset("2001-01-01").isel(x=[0]), path, append_dim="time")
    assert (tmp_path / "tree.zip").read_bytes() == before
    xr.testing.assert_identical(
        xr.open_datatree(path, engine=ZarrxBackendEntrypoint).load(), tree)


def test_a_zipstore_is_written_when_it_holds_no_entry_yet(tmp_path):
    path = str(tmp_path / "data.zip")
    ds = dataset()
    with zarrx.store.ZipStore(path, mode="w") as store:
        zx.to_zarrx(ds.chunk({"time": 1}), store)
    for got in read_both(path):
        xr.testing.assert_identical(got, ds)
    before = (tmp_path / "data.zip").read_bytes()
    with zarrx.store.ZipStore(path, mode="a") as store:
        with pytest.raises(zarrx.ArgumentError, match="holds entries .* pass the archive's path"):
            zx.to_zarrx(ds, store, mode="w")
    assert (tmp_path / "data.zip").read_bytes() == before


def test_dask_values_are_written_to_the_archive_whatever_the_default_scheduler(tmp_path):
    # the copy in memory lives in this process: its writes run on the threaded scheduler
    # (a distributed Client, or processes, set as the default would write to copies of it)
    import dask
    path = str(tmp_path / "data.zip")
    ds = dataset()
    with dask.config.set(scheduler="processes"):
        zx.to_zarrx(ds.chunk({"time": 1}), path)
    for got in read_both(path):
        xr.testing.assert_identical(got, ds)


def test_an_archive_whose_rewrite_is_interrupted_stays_as_it_was(tmp_path, monkeypatch):
    """The archive is written anew from the copy in memory: a copy interrupted part way (Ctrl-C,
    or any exception) leaves the archive as it was, not one holding the entries copied."""
    from zarrx.store.zip import ZipStore
    path = tmp_path / "data.zip"
    zx.to_zarrx(dataset(), str(path))
    before = path.read_bytes()
    real = ZipStore.set_many

    def set_some(self, items):
        real(self, list(items)[:2])
        raise KeyboardInterrupt
    monkeypatch.setattr(ZipStore, "set_many", set_some)
    with pytest.raises(KeyboardInterrupt):
        zx.to_zarrx(dataset("2000-01-04"), str(path), append_dim="time")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.zip"]
