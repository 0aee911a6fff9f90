"""xarray and zarrx: engine "zarrx" reads what xarray's zarr engine writes, and ``to_zarrx``
writes what it reads, identically, in Zarr v2 and v3; lazily, with dask, in appends and regions,
with or without consolidated metadata.

xarray's own engine (zarr-python) is the oracle: every comparison is
``xr.testing.assert_identical`` on loaded datasets (values, dtypes, coordinates, attributes)."""
from __future__ import annotations

import json

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
zarr = pytest.importorskip("zarr")
da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from dask.delayed import Delayed  # noqa: E402

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.store import CountingStore, LocalStore  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

from xarray_samples import ENGINE, load, sample  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


REGISTERED = "zarrx" in xr.backends.list_engines()


@pytest.mark.parametrize("fmt", [2, 3])
def test_reads_xarray_output_identically(tmp_path, fmt):
    ds = sample()
    ds.to_zarr(tmp_path / "x.zarr", zarr_format=fmt, mode="w")
    ref = load(tmp_path / "x.zarr", "zarr")
    got = load(tmp_path / "x.zarr", "zarrx")
    xr.testing.assert_identical(got, ref)
    xr.testing.assert_identical(got, ds)
    assert got.time.dtype == np.dtype("datetime64[ns]")
    assert got.vlen.dtype == ref.vlen.dtype      # StringDType where this xarray keeps it
    assert got.vlen.encoding.get("dtype") == ref.vlen.encoding.get("dtype")
    assert int(got["count"].isnull().sum()) == 1                   # _FillValue masks


@pytest.mark.parametrize("fmt", [2, 3])
def test_writes_what_xarray_reads_identically(tmp_path, fmt):
    ds = sample()
    assert isinstance(zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt), zarrx.Group)
    ds.to_zarr(tmp_path / "x.zarr", zarr_format=fmt)
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarr"), ds)
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarrx"), ds)
    # the same documents as xarray's own output, codecs aside
    for name in ds.variables:
        if fmt == 2:
            mine, ref = (json.loads((p / name / ".zarray").read_text()) for p in
                         (tmp_path / "z.zarr", tmp_path / "x.zarr"))
            assert (mine["dtype"], mine["fill_value"], mine["shape"]) == \
                   (ref["dtype"], ref["fill_value"], ref["shape"]), name
            assert json.loads((tmp_path / "z.zarr" / name / ".zattrs").read_text()) == \
                   json.loads((tmp_path / "x.zarr" / name / ".zattrs").read_text()), name
        else:
            mine, ref = (json.loads((p / name / "zarr.json").read_text()) for p in
                         (tmp_path / "z.zarr", tmp_path / "x.zarr"))
            for key in ("data_type", "shape", "dimension_names", "attributes"):
                assert mine[key] == ref[key], (name, key)
            if name != "raw":      # |S: zarrx spells the empty fill as base64, zarr-python as ""
                assert mine["fill_value"] == ref["fill_value"], name


def test_lazy_outer_and_vectorised_indexing_read_only_what_they_need(tmp_path):
    ds = sample(n_time=40)
    zx.to_zarrx(ds, tmp_path / "z.zarr", encoding={"temp": {"chunks": (4, 3, 2)}})
    counted = CountingStore(LocalStore(tmp_path / "z.zarr", read_only=True))
    got = xr.open_dataset(counted, engine=ENGINE)
    counted.reset()
    temp = got.temp
    assert counted.counts["get"] == 0                              # nothing read yet
    np.testing.assert_array_equal(temp[5, 1].values, ds.temp.values[5, 1])
    assert counted.counts["get"] == 2                              # two chunks of one row
    outer = temp.isel(time=[1, 7, 30], x=[0, 3]).values
    np.testing.assert_array_equal(outer, ds.temp.values[[1, 7, 30]][:, :, [0, 3]])
    t = xr.DataArray([0, 9, 39], dims="p")
    y = xr.DataArray([2, 0, 1], dims="p")
    vec = temp.isel(time=t, y=y).values
    np.testing.assert_array_equal(vec, ds.temp.values[[0, 9, 39], [2, 0, 1]])


def test_chunks_give_dask_arrays_aligned_with_shards(tmp_path):
    ds = sample(n_time=40)
    zx.to_zarrx(ds, tmp_path / "z.zarr",
                encoding={"temp": {"chunks": (2, 3, 2), "shards": (8, 3, 4)}})
    got = xr.open_dataset(tmp_path / "z.zarr", engine=ENGINE, chunks={})
    assert got.temp.chunks == ((8,) * 5, (3,), (4,))
    assert got.temp.encoding["shards"] == (8, 3, 4) and got.temp.encoding["chunks"] == (2, 3, 2)
    import cloudpickle                      # tasks carry the store's path, not data
    graph = dict(got.temp.data.__dask_graph__())
    assert max(len(cloudpickle.dumps(v)) for v in graph.values()) < 2048
    xr.testing.assert_identical(got.load(), ds)
    auto = xr.open_dataset(tmp_path / "z.zarr", engine=ENGINE, chunks="auto",
                           drop_variables=["vlen"])          # object dtype: no auto size
    assert all(c % 8 == 0 for c in auto.temp.chunks[0][:-1])


@pytest.mark.parametrize("fmt", [2, 3])
def test_dask_backed_variables_are_written_block_by_block(tmp_path, fmt):
    ds = sample(n_time=40).chunk({"time": 7})               # 7 does not divide the shards
    enc = {"temp": {"chunks": (4, 3, 4)} if fmt == 2 else {"chunks": (2, 3, 4),
                                                         "shards": (8, 3, 4)}}
    delayed = zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt, encoding=enc,
                          compute=False)
    assert isinstance(delayed, Delayed)
    before = load(tmp_path / "z.zarr", "zarr")
    assert bool(before.temp.isnull().all())                 # metadata only, so far
    with dask.config.set(scheduler="threads"):
        delayed.compute()
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarr"), ds.load())
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarrx"), ds.load())


@pytest.mark.parametrize("fmt", [2, 3])
def test_append_along_a_dimension_keeps_the_stored_encoding(tmp_path, fmt):
    ds = sample(n_time=12)
    zx.to_zarrx(ds.isel(time=slice(0, 5)), tmp_path / "z.zarr", zarr_format=fmt)
    zx.to_zarrx(ds.isel(time=slice(5, 9)), tmp_path / "z.zarr", append_dim="time")
    ds.isel(time=slice(9, 12)).chunk({"time": 2}).zarrx.to_zarrx(tmp_path / "z.zarr",
                                                                 append_dim="time")
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarr"), ds)
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarrx"), ds)
    units = xr.open_dataset(tmp_path / "z.zarr", engine=ENGINE).time.encoding["units"]
    assert units == "hours since 2000-01-01" or units.startswith("hours since 2000-01-01 00")
    # xarray appends to what zarrx wrote, and zarrx to what xarray wrote
    more = sample(n_time=15).isel(time=slice(12, 15))
    more.to_zarr(tmp_path / "z.zarr", append_dim="time")
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarrx"), sample(n_time=15))


@pytest.mark.parametrize("fmt", [2, 3])
def test_region_writes(tmp_path, fmt):
    ds = sample(n_time=20)
    template = ds.copy(deep=True)
    template["temp"][:] = -1.0
    zx.to_zarrx(template, tmp_path / "z.zarr", zarr_format=fmt,
                encoding={"temp": {"chunks": (5, 3, 4)}})
    part = ds[["temp", "count"]].isel(time=slice(5, 12))
    zx.to_zarrx(part.drop_vars(["y", "x", "lat"]), tmp_path / "z.zarr",
                region={"time": slice(5, 12)})
    # located by the time coordinate, dask-backed
    zx.to_zarrx(ds[["temp"]].isel(time=slice(14, 17)).chunk({"time": 1}), tmp_path / "z.zarr",
                region="auto")
    expect = template.copy(deep=True)
    expect["temp"][5:12] = ds.temp[5:12]
    expect["count"][5:12] = ds["count"][5:12]
    expect["temp"][14:17] = ds.temp[14:17]
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarr"), expect)
    xr.testing.assert_identical(load(tmp_path / "z.zarr", "zarrx"), expect)


def test_consolidated_metadata_is_written_and_read(tmp_path):
    ds = sample()
    zx.to_zarrx(ds, tmp_path / "v3.zarr")
    zx.to_zarrx(ds, tmp_path / "v2.zarr", zarr_format=2)
    zx.to_zarrx(ds, tmp_path / "plain.zarr", consolidated=False)
    for name in ("v3.zarr", "v2.zarr"):
        assert zarrx.open_group(tmp_path / name, mode="r").metadata.consolidated is not None
        xr.testing.assert_identical(xr.open_zarr(tmp_path / name, consolidated=True).load(), ds)
        xr.testing.assert_identical(load(tmp_path / name, "zarrx", consolidated=True), ds)
    assert zarrx.open_group(tmp_path / "plain.zarr", mode="r").metadata.consolidated is None
    with pytest.raises(zarrx.MetadataError, match="has no consolidated metadata"):
        xr.open_dataset(tmp_path / "plain.zarr", engine=ENGINE, consolidated=True)
    xr.testing.assert_identical(load(tmp_path / "plain.zarr", "zarrx"), ds)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("group", [None, "a/b"])
def test_writes_with_consolidated_false_leave_no_stale_consolidated_metadata(tmp_path, fmt,
                                                                             group):
    """After an append or a new variable written with consolidated=False, readers that use the
    consolidated metadata (the default) see what was written."""
    ds = sample(n_time=6)
    path = tmp_path / "z.zarr"
    zx.to_zarrx(ds.isel(time=slice(0, 4)), path, zarr_format=fmt, group=group)
    zx.to_zarrx(ds.isel(time=slice(4, 6)), path, append_dim="time", consolidated=False,
                group=group)
    extra = xr.Dataset({"extra": ("x", np.arange(4.0))}, attrs=ds.attrs)
    zx.to_zarrx(extra, path, mode="a", consolidated=False, group=group)
    want = ds.merge(extra)
    for engine in ("zarr", "zarrx"):
        xr.testing.assert_identical(load(path, engine, group=group), want)
    if group is None:                   # the store root's is kept in step, not removed
        root = zarrx.open_group(str(path), mode="r")
        assert root.metadata.consolidated is not None
        assert root["temp"].shape[0] == 6
    zx.to_zarrx(ds, path, mode="w", zarr_format=fmt, group=group)         # consolidated again
    for engine in ("zarr", "zarrx"):
        xr.testing.assert_identical(load(path, engine, group=group, consolidated=True), ds)


@pytest.mark.parametrize("fmt", [2, 3])
def test_writes_with_consolidated_false_keep_the_groups_consolidated_metadata_in_step(tmp_path,
                                                                                      fmt):
    """The written group and a group above it carry consolidated metadata of their own: writes
    with consolidated=False keep both in step, and readers of the group that use them see what
    was written."""
    ds = sample(n_time=6)
    path = tmp_path / "z.zarr"
    zx.to_zarrx(ds.isel(time=slice(0, 4)), path, zarr_format=fmt, group="a/b")
    for group in ("a/b", "a"):
        zarrx.consolidate_metadata(str(path), path=group)
    zx.to_zarrx(ds.isel(time=slice(4, 6)), path, append_dim="time", consolidated=False,
                group="a/b")
    extra = xr.Dataset({"extra": ("x", np.arange(4.0))}, attrs=ds.attrs)
    zx.to_zarrx(extra, path, mode="a", consolidated=False, group="a/b")
    for group in ("a/b", "a"):
        assert zarrx.open_group(str(path), path=group, mode="r").metadata.consolidated \
            is not None
    assert zarrx.open_group(str(path), path="a", mode="r")["b/temp"].shape[0] == 6
    for engine in ("zarr", "zarrx"):
        xr.testing.assert_identical(load(path, engine, group="a/b", consolidated=True),
                                    ds.merge(extra))


def test_open_mfdataset_and_groups(tmp_path):
    ds = sample(n_time=10)
    paths = []
    for i, sl in enumerate([slice(0, 4), slice(4, 10)]):
        paths.append(tmp_path / f"part{i}.zarr")
        ds.isel(time=sl).to_zarr(paths[-1], zarr_format=3)
    both = xr.open_mfdataset(paths, engine=ENGINE, combine="by_coords", data_vars="minimal",
                             coords="minimal", compat="override")
    xr.testing.assert_identical(both.load(), ds)
    zx.to_zarrx(ds, tmp_path / "tree.zarr", group="a/b")
    xr.testing.assert_identical(load(tmp_path / "tree.zarr", "zarrx", group="a/b"), ds)


@pytest.mark.skipif(not REGISTERED, reason="zarrx is not installed with its entry point")
def test_engine_by_name(tmp_path):
    ds = sample()
    ds.to_zarr(tmp_path / "x.zarr")
    got = xr.open_dataset(tmp_path / "x.zarr", engine="zarrx", chunks={})
    xr.testing.assert_identical(got.load(), ds)
    assert isinstance(xr.backends.list_engines()["zarrx"], ZarrxBackendEntrypoint)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_scalar_variables_written_by_xarray_open(tmp_path, zarr_format):
    """zarr-python leaves dimension_names out of a 0-d array's zarr.json."""
    path = str(tmp_path / "s.zarr")
    ds = xr.Dataset({"scale": ((), 2.5), "a": ("x", np.arange(3.0))})
    ds.to_zarr(path, zarr_format=zarr_format)
    got = xr.open_dataset(path, engine="zarrx").load()
    assert float(got["scale"]) == 2.5 and got["scale"].dims == ()
    xr.testing.assert_identical(got, xr.open_dataset(path, engine="zarr").load())
    # and to_zarrx writes them as xarray does
    zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=zarr_format)
    for name in ds.variables:
        mine, ref = (zarr.open_array(p, path=name).metadata.to_dict()
                     for p in (tmp_path / "z.zarr", path))
        assert mine.get("dimension_names") == ref.get("dimension_names"), name
        assert mine["attributes"] == ref["attributes"], name


@pytest.mark.parametrize("consolidated", [True, False, None])
def test_sub_group_of_a_store_consolidated_at_the_root(tmp_path, consolidated):
    path = str(tmp_path / "g.zarr")
    ds = xr.Dataset({"a": ("x", np.arange(3.0))})
    ds.to_zarr(path, group="child", consolidated=True)
    got = xr.open_dataset(path, engine="zarrx", group="child", consolidated=consolidated)
    xr.testing.assert_identical(got.load(), ds)
