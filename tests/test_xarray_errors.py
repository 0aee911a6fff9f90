"""xarray and zarrx: what the engine and ``to_zarrx`` refuse, and how their errors name the
problem (with the builtin class xarray's zarr engine raises)."""
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


@pytest.mark.parametrize("fmt", [2, 3])
def test_arrays_without_dimension_names_raise_what_engine_zarr_raises(tmp_path, fmt):
    """A KeyError, as engine "zarr" raises, so that one except clause takes both engines'
    refusal; names stored but malformed stay a MetadataError only."""
    g = zarrx.open_group(tmp_path / "g.zarr", mode="w", zarr_format=fmt)
    g.create_array("a", shape=(3, 2), dtype="f4")
    for engine in ("zarr", ENGINE):
        with pytest.raises(KeyError):
            xr.open_dataset(tmp_path / "g.zarr", engine=engine, consolidated=False)
    with pytest.raises(zarrx.errors.DimensionNamesMissingError) as info:
        xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE)
    assert isinstance(info.value, zarrx.MetadataError)
    where = "the attribute _ARRAY_DIMENSIONS to list the 2 dimension names" if fmt == 2 else \
        "dimension_names naming each of the 2 dimensions (xarray needs them)"
    assert str(info.value) == f"/a: expected {where}, found None"    # (not quoted)
    g["a"].attrs["_ARRAY_DIMENSIONS"] = ["x"]                           # one name for two
    if fmt == 2:
        with pytest.raises(zarrx.MetadataError) as info:
            xr.open_dataset(tmp_path / "g.zarr", engine=ENGINE)
        assert not isinstance(info.value, KeyError)


def test_a_null_array_dimensions_attribute_is_malformed_not_missing(tmp_path):
    # stored, but as JSON null: a MetadataError only, as other malformed names (engine "zarr"
    # raises a TypeError, no KeyError); the message as before
    g = zarrx.open_group(tmp_path / "g.zarr", mode="w", zarr_format=2)
    g.create_array("a", shape=(3, 2), dtype="f4").attrs["_ARRAY_DIMENSIONS"] = None
    with pytest.raises(TypeError):
        xr.open_dataset(tmp_path / "g.zarr", engine="zarr", consolidated=False)
    for read in (xr.open_dataset, xr.open_datatree, xr.open_groups):
        with pytest.raises(zarrx.MetadataError) as info:
            read(tmp_path / "g.zarr", engine=ENGINE)
        assert not isinstance(info.value, KeyError)
        assert str(info.value) == ("/a: expected the attribute _ARRAY_DIMENSIONS to list the 2 "
                                   "dimension names, found None")


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
