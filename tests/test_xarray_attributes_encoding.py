"""xarray and zarrx: stored attributes (Zarr v3 attributes, NaN), fill value attributes, codecs
in the encoding, variable-length text and bytes of Zarr v2 datasets, and variables xarray cannot
read, compared with what xarray's zarr engine does."""
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

from xarray_samples import ENGINE, load, sample  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


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
