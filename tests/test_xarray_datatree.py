"""xarray DataTrees and zarrx: ``open_datatree`` and ``open_groups`` read hierarchies written
by xarray, and a DataTree written with zarrx reads as the one ``to_zarr`` writes."""
from __future__ import annotations

import re

import numpy as np

import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
zarr = pytest.importorskip("zarr")
da = pytest.importorskip("dask.array")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

from xarray_samples import ENGINE, sample  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


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


@pytest.mark.skipif(not hasattr(xr, "DataTree"), reason="this xarray has no DataTree")
@pytest.mark.parametrize("fmt", [2, 3])
def test_values_shared_by_nodes_compute_once(tmp_path, fmt):
    """The nodes' dask values are computed together, as xarray's writer computes them: a
    block two nodes depend on is computed once, not once per node."""
    import threading
    runs, lock = [], threading.Lock()

    def counted(block):
        with lock:
            runs.append(block.shape)
        return block + 1

    shared = da.arange(6.0, chunks=3).map_blocks(counted, meta=np.array((), float))
    tree = xr.DataTree.from_dict({"/a": xr.Dataset({"v": ("x", shared)}),
                                  "/b": xr.Dataset({"w": ("x", shared * 2)})})
    zx.to_zarrx(tree, tmp_path / "t.zarr", zarr_format=fmt)
    assert len(runs) == 2            # its two blocks, once each
    back = xr.open_datatree(tmp_path / "t.zarr", engine=ENGINE)
    assert back["a/v"].values.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert back["b/w"].values.tolist() == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
