"""xarray and zarrx: engine "zarrx" reads what xarray's zarr engine writes, and ``to_zarrx``
writes what it reads, identically, in Zarr v2 and v3.

xarray's own engine (zarr-python) is the oracle: every comparison is
``xr.testing.assert_identical`` on loaded datasets (values, dtypes, coordinates, attributes).
"""
from __future__ import annotations

import json
import re

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

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]
ENGINE = ZarrxBackendEntrypoint        # the entry point is used by name where it is installed
REGISTERED = "zarrx" in xr.backends.list_engines()


def sample(n_time=6):
    rng = np.random.default_rng(0)
    temp = rng.normal(280, 5, (n_time, 3, 4)).astype("f4")
    temp[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {"temp": (("time", "y", "x"), temp, {"units": "K", "valid": np.array([1.5, 2.0]),
                                             "count": np.int64(3), "note": "ok"}),
         "count": (("time",), np.arange(n_time, dtype="f4")),
         "label": (("y",), np.array(["a", "bb", "ccc"])),
         "vlen": (("y",), np.array(["α", "", "longer text"], dtype=object)),
         "flag": (("x",), np.array([True, False, True, True])),
         "raw": (("x",), np.array([b"x", b"yy", b"", b"z"]))},
        coords={"time": pd.date_range("2000-01-01", periods=n_time, freq="6h"),
                "y": [10, 20, 30], "x": np.linspace(0, 1, 4),
                "lat": (("y",), np.array([1.0, 2.0, 3.0]))},
        attrs={"title": "sample", "history": ["a", "b"], "version": 2})
    ds["count"][2] = np.nan                     # stored as int16 with -1 for missing
    ds["count"].encoding.update({"dtype": "i2", "_FillValue": -1})
    return ds


def load(path, engine, **kw):
    if engine == "zarr":
        return xr.open_zarr(path, **kw).load()
    return xr.open_dataset(path, engine=ENGINE, **kw).load()


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


@pytest.mark.skipif(not hasattr(xr, "open_datatree"), reason="this xarray has no DataTree")
def test_open_datatree(tmp_path):
    ds = sample()
    zx.to_zarrx(ds[["temp"]], tmp_path / "t.zarr")
    zx.to_zarrx(ds[["label"]], tmp_path / "t.zarr", group="child", mode="a")
    zx.to_zarrx(ds[["count"]], tmp_path / "t.zarr", group="child/leaf", mode="a")
    tree = xr.open_datatree(tmp_path / "t.zarr", engine=ENGINE)
    ref = xr.open_datatree(tmp_path / "t.zarr", engine="zarr")
    assert sorted(tree.groups) == ["/", "/child", "/child/leaf"]
    for path in tree.groups:
        xr.testing.assert_identical(tree[path].to_dataset().load(), ref[path].to_dataset().load())


def sample_tree():
    ds = sample()
    return xr.DataTree.from_dict({"/": ds[["temp"]], "/child": ds[["label"]].assign_attrs(n=1),
                                  "/child/leaf": xr.Dataset({"c": ("z", [1.0, 2.0])}),
                                  "/empty": xr.Dataset()})


@pytest.mark.skipif(not hasattr(xr, "DataTree"), reason="this xarray has no DataTree")
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("inherited", [False, True])
def test_a_datatree_is_written_as_datatree_to_zarr_writes_it(tmp_path, fmt, inherited):
    tree = sample_tree()
    tree.to_zarr(tmp_path / "ref.zarr", zarr_format=fmt, write_inherited_coords=inherited)
    got = zx.to_zarrx(tree, tmp_path / "z.zarr", zarr_format=fmt,
                      write_inherited_coords=inherited)
    assert got.path == "" and got.zarr_format == fmt
    ref, ours = zarr.open_group(tmp_path / "ref.zarr"), zarr.open_group(tmp_path / "z.zarr")
    members = sorted(k for k, _ in ref.members(max_depth=None))
    assert sorted(k for k, _ in ours.members(max_depth=None)) == members
    for key in members:
        assert dict(ours[key].attrs) == dict(ref[key].attrs), key
    for engine in ("zarr", ENGINE):
        xr.testing.assert_identical(xr.open_datatree(tmp_path / "z.zarr", engine=engine).load(),
                                    tree)
        xr.testing.assert_identical(xr.open_datatree(tmp_path / "z.zarr", engine=engine,
                                                     consolidated=True).load(), tree)


@pytest.mark.skipif(not hasattr(xr, "DataTree"), reason="this xarray has no DataTree")
def test_datatree_writes_take_encoding_by_node_modes_groups_and_compute(tmp_path):
    tree = sample_tree()
    lazy = tree.zarrx.to_zarrx(tmp_path / "t.zarr", compute=False, group="in/here",
                               encoding={"/child": {"label": {"chunks": (2,)}}})
    lazy.compute()
    stored = zarrx.open_group(tmp_path / "t.zarr", mode="r")
    assert stored["in/here/child/label"].chunks == (2,)
    xr.testing.assert_identical(xr.open_datatree(tmp_path / "t.zarr", engine="zarr",
                                                 group="in/here").load(), tree)
    with pytest.raises(zarrx.NodeExistsError):
        zx.to_zarrx(tree, tmp_path / "t.zarr", group="in/here")
    more = tree.copy()
    more["/child/extra"] = xr.DataArray([5.0, 6.0], dims="z")
    zx.to_zarrx(more, tmp_path / "t.zarr", group="in/here", mode="a")
    xr.testing.assert_identical(xr.open_datatree(tmp_path / "t.zarr", engine=ENGINE,
                                                 group="in/here").load(), more)
    # a v2 hierarchy: the nodes added below its root are v2 groups too
    zx.to_zarrx(tree["/"].to_dataset(), tmp_path / "v2.zarr", zarr_format=2)
    zx.to_zarrx(tree, tmp_path / "v2.zarr", mode="a")
    assert zarrx.open_group(tmp_path / "v2.zarr", mode="r")["child/leaf"].zarr_format == 2
    xr.testing.assert_identical(xr.open_datatree(tmp_path / "v2.zarr", engine="zarr").load(),
                                tree)
    with pytest.raises(ValueError, match="unexpected encoding group name"):   # engine "zarr"
        tree.to_zarr(tmp_path / "bad.zarr", encoding={"/nope": {}})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "to_zarrx: encoding names groups ['/nope'], which are not in the DataTree "
            "(expected node paths such as '/' or '/a/b')")):
        zx.to_zarrx(tree, tmp_path / "bad.zarr", encoding={"/nope": {}})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "to_zarrx: append_dim is not supported for a DataTree; append to each node's "
            "group with group=")):
        zx.to_zarrx(tree, tmp_path / "t.zarr", group="in/here", append_dim="time")
    assert not (tmp_path / "bad.zarr").exists()


@pytest.mark.skipif(not hasattr(xr, "open_datatree"), reason="this xarray has no DataTree")
def test_open_datatree_and_open_groups_take_the_arguments_of_open_dataset(tmp_path):
    ds = sample()
    zx.to_zarrx(ds[["temp", "count"]], tmp_path / "t.zarr")
    zx.to_zarrx(ds[["count"]], tmp_path / "t.zarr", group="child", mode="a")
    zx.to_zarrx(ds[["label"]], tmp_path / "t.zarr", group="child/leaf", mode="a")
    path = tmp_path / "t.zarr"
    for kw in ({"decode_times": False}, {"mask_and_scale": False}, {"decode_cf": False},
               {"drop_variables": ["count"]}, {"group": "child"}, {"consolidated": False}):
        ours = xr.open_datatree(path, engine=ENGINE, **kw)
        ref = xr.open_datatree(path, engine="zarr", **kw)
        assert sorted(ours.groups) == sorted(ref.groups), kw
        for node in ref.groups:
            xr.testing.assert_identical(ours[node].to_dataset().load(),
                                        ref[node].to_dataset().load())
    assert xr.open_datatree(path, engine=ENGINE, decode_times=False)["time"].dtype.kind == "i"
    for kw in ({}, {"group": "child"}, {"group": "/child"}, {"group": "/"}):
        ours = xr.open_groups(path, engine=ENGINE, **kw)
        ref = xr.open_groups(path, engine="zarr", **kw)
        assert sorted(ours) == sorted(ref), kw              # {".": ..., "leaf": ...} below a group
        for key in ref:
            xr.testing.assert_identical(ours[key].load(), ref[key].load())
    # an unknown keyword is refused at the call, as engine "zarr" refuses it
    for opener, method in ((xr.open_datatree, "open_datatree"),
                           (xr.open_groups, "open_groups_as_dict")):
        with pytest.raises(TypeError, match=re.escape(
                f"ZarrxBackendEntrypoint.{method}() got an unexpected keyword argument 'bogus'")):
            opener(path, engine=ENGINE, bogus=1)
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            "engine 'zarrx': store= (an opened xarray ZarrStore) is not supported, found int")):
        xr.open_datatree(path, engine=ENGINE, store=1)
    # the keywords open_dataset takes apply to every group
    assert "_FillValue" not in xr.open_datatree(path, engine=ENGINE, mask_and_scale=False)[
        "child"]["y"].attrs                                 # Zarr v3: fill_value is no mask
    masked = xr.open_datatree(path, engine=ENGINE, mask_and_scale=False,
                              use_zarr_fill_value_as_mask=True)
    assert masked["child"]["y"].attrs["_FillValue"] == 0


def test_zarr_v3_attributes_are_shown_as_stored(tmp_path):
    """Older xarray versions wrote ``_ARRAY_DIMENSIONS`` into Zarr v3 arrays too; in v3 the
    dimensions come from ``dimension_names`` and engine "zarr" shows every attribute."""
    path = tmp_path / "old.zarr"
    g = zarr.open_group(path, mode="w", zarr_format=3)
    g.create_array("a", shape=(3,), dtype="f8", dimension_names=["x"],
                   attributes={"_ARRAY_DIMENSIONS": ["x"], "units": "m", "_nc_note": 1})
    g.create_array("b", shape=(3,), dtype="f8", dimension_names=["x"],
                   attributes={"_ARRAY_DIMENSIONS": ["y"]})
    got = load(path, "zarrx")
    xr.testing.assert_identical(got, load(path, "zarr"))
    assert got["a"].attrs == {"_ARRAY_DIMENSIONS": ["x"], "units": "m", "_nc_note": 1}
    assert got["b"].dims == ("x",) and got["b"].attrs == {"_ARRAY_DIMENSIONS": ["y"]}
    # in Zarr v2 the attribute names the dimensions and is hidden, as engine "zarr" hides it
    zx.to_zarrx(got, tmp_path / "v2.zarr", zarr_format=2)
    v2 = load(tmp_path / "v2.zarr", "zarrx")
    xr.testing.assert_identical(v2, load(tmp_path / "v2.zarr", "zarr"))
    assert v2["b"].dims == ("x",) and v2["b"].attrs == {}


@pytest.mark.skipif(not REGISTERED, reason="zarrx is not installed with its entry point")
def test_engine_by_name(tmp_path):
    ds = sample()
    ds.to_zarr(tmp_path / "x.zarr")
    got = xr.open_dataset(tmp_path / "x.zarr", engine="zarrx", chunks={})
    xr.testing.assert_identical(got.load(), ds)
    assert isinstance(xr.backends.list_engines()["zarrx"], ZarrxBackendEntrypoint)


def test_nan_attributes_of_zarr_v2_are_read_as_nan(tmp_path):
    ds = sample()
    ds.attrs["missing"] = np.nan
    ds.temp.attrs["bounds"] = [1.5, np.nan]
    ds.to_zarr(tmp_path / "x.zarr", zarr_format=2)
    got = load(tmp_path / "x.zarr", "zarrx")
    assert np.isnan(got.attrs["missing"]) and np.isnan(got.temp.attrs["bounds"][1])
    xr.testing.assert_identical(got, load(tmp_path / "x.zarr", "zarr"))


@pytest.mark.parametrize("direction", ["zarrx-writes-v2", "zarrx-writes-v3", "zarr-writes-v3"])
def test_nan_attributes_round_trip(tmp_path, direction):
    ds = sample()
    ds.attrs["missing"] = np.nan
    if direction == "zarr-writes-v3":
        ds.to_zarr(tmp_path / "x.zarr", zarr_format=3)
        xr.testing.assert_identical(load(tmp_path / "x.zarr", "zarrx"), ds)
    else:
        zx.to_zarrx(ds, tmp_path / "x.zarr", zarr_format=int(direction[-1]))
        xr.testing.assert_identical(load(tmp_path / "x.zarr", "zarr"), ds)


def test_writer_errors(tmp_path):
    ds = sample()
    zx.to_zarrx(ds, tmp_path / "z.zarr")
    with pytest.raises(zarrx.NodeExistsError, match="mode 'w-' creates"):
        zx.to_zarrx(ds, tmp_path / "z.zarr")
    extra = ds.assign(new=ds["count"] * 2)
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "mode 'r+' writes only existing variables; 'new' is not in")):
        zx.to_zarrx(extra, tmp_path / "z.zarr", mode="r+")
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "variables ['flag', 'label', 'lat', 'raw', 'vlen', 'x', 'y'] have none of these "
            "dimensions")):
        zx.to_zarrx(ds.isel(time=slice(0, 2)), tmp_path / "z.zarr",
                    region={"time": slice(0, 2)})
    with pytest.raises(zarrx.ZarrError, match=re.escape("append_dim='depth' is not a dimension")):
        zx.to_zarrx(ds, tmp_path / "z.zarr", append_dim="depth")
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "encoding of 'temp': unexpected keys ['level']")):
        zx.to_zarrx(ds, tmp_path / "e.zarr", encoding={"temp": {"level": 3}})
    with pytest.raises(zarrx.ZarrError, match=re.escape("region['time'] = 'auto': the dataset's")):
        zx.to_zarrx(ds[["temp"]].isel(time=[0, 2]), tmp_path / "z.zarr", region="auto")


def test_arrays_without_dimension_names_are_refused(tmp_path):
    g = zarrx.open_group(tmp_path / "g.zarr", mode="w")
    g.create_array("a", shape=(3,), dtype="i4")
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            "/a: expected dimension_names naming each of the 1 dimensions")):
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE)


def test_a_group_that_is_not_a_string_is_refused(tmp_path):
    zarrx.open_group(tmp_path / "g.zarr", mode="w")
    for source in (tmp_path / "g.zarr", zarrx.open_group(tmp_path / "g.zarr", mode="r")):
        with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
                "engine 'zarrx': group: expected a str, found int 5")):
            xr.open_dataset(source, engine=ENGINE, group=5)
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            "to_zarrx: group: expected a str, found int 5")):
        zx.to_zarrx(xr.Dataset({"a": ("x", np.arange(3))}), tmp_path / "w.zarr", group=5)


def test_a_dimension_name_with_two_lengths_is_refused(tmp_path):
    g = zarrx.open_group(tmp_path / "g.zarr", mode="w")
    g.create_array("a", shape=(3,), dtype="i4", dimension_names=["x"])
    g.create_array("b", shape=(4, 4), dtype="i4", dimension_names=["y", "x"])
    with pytest.raises(ValueError):                     # engine "zarr" refuses it too
        xr.open_dataset(tmp_path / "g.zarr", engine="zarr", consolidated=False)
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            "/: dimension 'x' has length 3 in array 'a' and 4 in array 'b'; expected one "
            "length per dimension name")):
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE)
    g = zarrx.open_group(tmp_path / "h.zarr", mode="w")      # within one array
    g.create_array("c", shape=(2, 5), dtype="i4", dimension_names=["y", "y"])
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            "/: dimension 'y' has length 2 in array 'c' and 5 in array 'c'")):
        xr.open_datatree(tmp_path / "h.zarr", engine=ENGINE)


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



def test_a_fill_value_attribute_that_is_not_a_number_on_an_integer_array(tmp_path):
    g = zarrx.open_group(tmp_path / "g.zarr", mode="w")
    g.create_array("v", shape=(3,), dtype="i4", dimension_names=["x"],
                   attributes={"_FillValue": "AAAAAAAA8D8="})
    with pytest.raises(TypeError):                      # engine "zarr" refuses it too
        xr.open_dataset(tmp_path / "g.zarr", engine="zarr", consolidated=False)
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            "/v attributes: _FillValue: expected a number for dtype int32, found "
            "'AAAAAAAA8D8='")):
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE)
    g["v"].attrs["_FillValue"] = 1.5                    # a number is taken as engine "zarr" does
    xr.testing.assert_identical(load(tmp_path / "g.zarr", "zarrx"),
                                load(tmp_path / "g.zarr", "zarr", consolidated=False))


@pytest.mark.parametrize("fmt", [2, 3])
def test_codecs_are_in_the_encoding_and_survive_a_read_then_write(tmp_path, fmt):
    from numcodecs import Zstd
    from zarr.codecs import BloscCodec

    ds = sample()
    enc = {"temp": {"chunks": (2, 3, 4),
                    "compressors": [Zstd(level=5)] if fmt == 2 else
                    [BloscCodec(cname="lz4", clevel=9)]}}
    if fmt == 3:
        enc["temp"]["shards"] = (6, 3, 4)
    ds.to_zarr(tmp_path / "src.zarr", zarr_format=fmt, encoding=enc)
    ours = xr.open_dataset(tmp_path / "src.zarr", engine=ENGINE)
    theirs = xr.open_dataset(tmp_path / "src.zarr", engine="zarr")
    for name in ours.variables:
        assert sorted(ours[name].encoding) == sorted(theirs[name].encoding)

    def codecs(path):
        return {n: repr((a.compressors, a.filters, a.serializer))
                for n, a in zarr.open_group(path).arrays()}

    outs = ["by-zarrx.zarr"]
    zx.to_zarrx(ours, tmp_path / "by-zarrx.zarr", zarr_format=fmt)
    if fmt == 3:
        outs.append("by-xarray.zarr")
        ours.to_zarr(tmp_path / "by-xarray.zarr", zarr_format=fmt)
    else:   # xarray's writer cannot write back the vlen-utf8 strings its own engine reads
        for opened in (ours, theirs):
            with pytest.raises(ValueError, match="No Zarr data type found that matches"):
                opened.to_zarr(tmp_path / f"{id(opened)}.zarr", zarr_format=fmt)
    for out in outs:
        assert codecs(tmp_path / out) == codecs(tmp_path / "src.zarr")
        xr.testing.assert_identical(load(tmp_path / out, "zarr"), ds)


@pytest.mark.parametrize("fmt", [2, 3])
def test_variable_length_text_and_bytes_of_a_zarr_v2_dataset_are_written_back(tmp_path, fmt):
    # Zarr v2 names the vlen-utf8 / vlen-bytes codec among an array's filters, so the encoding
    # read holds it there: writing back to v2 keeps the type variable-length; to v3, text
    # takes the codec as its serializer and bytes are fixed-width, as engine "zarr" stores
    # bytes. (engine "zarr" refuses to write either back, in both formats.)
    g = zarr.open_group(tmp_path / "src.zarr", mode="w", zarr_format=2)
    for name, dtype, values in (("s", str, ["a", "bb", ""]), ("b", zarr.dtype.VariableLengthBytes(),
                                                              [b"a", b"bb", b""])):
        a = g.create_array(name, shape=(3,), dtype=dtype, chunks=(2,))
        a.attrs["_ARRAY_DIMENSIONS"] = ["x"]
        a[:] = np.array(values, dtype=object)
    ours = xr.open_dataset(tmp_path / "src.zarr", engine=ENGINE)
    assert [type(f).__name__ for f in ours.b.encoding["filters"]] == ["VLenBytes"]
    if fmt == 3:    # (the v2 fill value "" of the text, which engine zarr cannot read in v3;
        # without it, the text's NaN missing value is stored as "nan", as engine zarr stores it)
        with pytest.raises(zarrx.ArgumentError, match="a _FillValue cannot be given"):
            zx.to_zarrx(ours, tmp_path / "out.zarr", zarr_format=fmt)
        del ours.s.encoding["_FillValue"]
        ours["s"] = ours.s.copy(data=np.array(["a", "bb", "nan"], dtype=ours.s.dtype))
    zx.to_zarrx(ours, tmp_path / "out.zarr", zarr_format=fmt)
    out = zarr.open_group(tmp_path / "out.zarr")
    if fmt == 2:
        assert [a.metadata.dtype for a in (out["s"], out["b"])] == \
            [g["s"].metadata.dtype, g["b"].metadata.dtype]
    else:
        assert type(out["s"].serializer).__name__ == "VLenUTF8Codec"
        assert out["s"].filters == ()
        assert out["b"].dtype == np.dtype("S2")
    back = load(tmp_path / "out.zarr", "zarrx")
    for name in ("s", "b"):     # ("" and b"" are the fill values, read as missing)
        assert [v if v == v else "missing" for v in back[name].values.tolist()] == \
            [v if v == v else "missing" for v in ours[name].values.tolist()]
    if fmt == 2:
        xr.testing.assert_identical(load(tmp_path / "out.zarr", "zarr"),
                                    load(tmp_path / "src.zarr", "zarr"))


@pytest.mark.parametrize("fmt", [2, 3])
def test_drop_variables_leaves_out_arrays_xarray_cannot_read(tmp_path, fmt):
    # engine "zarr" looks up the dimensions of every array first, and refuses both reads
    g = zarr.open_group(tmp_path / "g.zarr", mode="w", zarr_format=fmt)
    for name, n in (("good", 3), ("bad", 3), ("longer", 4)):
        a = g.create_array(name, shape=(n,), dtype="f8",
                           dimension_names=["x"] if fmt == 3 and name != "bad" else None)
        if fmt == 2 and name != "bad":
            a.attrs["_ARRAY_DIMENSIONS"] = ["x"]
    where = "the attribute _ARRAY_DIMENSIONS to list" if fmt == 2 else \
        "dimension_names naming each of"
    with pytest.raises(zarrx.MetadataError, match=re.escape(f"/bad: expected {where}")):
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE, drop_variables="longer")
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            "/: dimension 'x' has length 3 in array 'good' and 4 in array 'longer'; expected "
            "one length per dimension name")):
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE, drop_variables="bad")
    for opened in (xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE,
                                   drop_variables=["bad", "longer"]),
                   xr.open_datatree(tmp_path / "g.zarr", engine=ENGINE,
                                    drop_variables=("longer", "bad")).to_dataset()):
        assert list(opened.variables) == ["good"]
        assert opened.sizes == {"x": 3}


def test_open_errors_name_the_problem_with_the_builtin_engine_zarr_raises(tmp_path):
    xr.Dataset({"a": ("x", [1.0, 2.0])}).to_zarr(tmp_path / "g.zarr", group="sub")
    with pytest.raises(TypeError):                              # engine "zarr" too
        xr.open_dataset(5, engine="zarr")
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            "store: expected a path or URL, a zarrx Store, a dict, an fsspec mapper, an obstore "
            "store or a zarr-python store, found int 5")):
        xr.open_dataset(5, engine=ENGINE)
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            "engine 'zarrx': expected a path, URL, store or Group, found None")):
        xr.open_dataset(None, engine=ENGINE)
    with pytest.raises(ValueError):
        xr.open_dataset(tmp_path / "g.zarr", engine="zarr", zarr_format=4)
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "zarr_format: expected 2 or 3, found 4")):
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE, zarr_format=4)
    with pytest.raises(zarrx.NodeMismatchError, match=re.escape(
            "engine 'zarrx': 'sub/a' is an array, not a group")):
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE, group="sub/a")
    with pytest.raises(FileNotFoundError):
        xr.open_dataset(tmp_path / "missing.zarr", engine=ENGINE)
