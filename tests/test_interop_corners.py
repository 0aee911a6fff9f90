"""Rarely used corners where zarrx, zarr-python 3 and tensorstore must agree on what is stored."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")


def _v2_array(path, dtype: str, fill, filters=None) -> None:
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [4], "chunks": [2], "dtype": dtype, "compressor": None,
        "filters": filters, "order": "C", "fill_value": fill}))


def _chunks(path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if not p.name.startswith("."))


def _zarr_python_reads(path) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(str(path), mode="r")[...].tolist()


@pytest.mark.parametrize("write_empty", [None, False])
def test_strings_equal_to_a_zero_fill_value_are_stored(tmp_path, write_empty) -> None:
    """zarr-python 2 wrote ``"fill_value": 0`` for every string array. zarrx reads the cells of
    a missing chunk there as ``""``, zarr-python 3 as ``"0"`` and zarr-python 2 as the integer
    0: zarrx deleted the chunks it wrote holding only ``""``, which zarr-python then read as
    ``"0"``."""
    path = tmp_path / "s.zarr"
    _v2_array(path, "|O", 0, [{"id": "vlen-utf8"}])
    z = zarrx.open_array(str(path), mode="r+", write_empty_chunks=write_empty)
    z[...] = ""
    z[:2] = ["", ""]
    assert _chunks(path) == ["0", "1"]
    assert _zarr_python_reads(path) == ["", "", "", ""]
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == ["", "", "", ""]


def test_bytes_equal_to_a_zero_fill_value_are_stored(tmp_path) -> None:
    path = tmp_path / "b.zarr"
    _v2_array(path, "|O", 0, [{"id": "vlen-bytes"}])
    z = zarrx.open_array(str(path), mode="r+")
    z[...] = b""
    assert _chunks(path) == ["0", "1"]
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == [b""] * 4


@pytest.mark.parametrize("dtype, value", [("<i4", 0), ("<f8", 0.0), ("<M8[s]", "NaT")])
def test_chunks_of_an_array_without_a_fill_value_are_stored(tmp_path, dtype, value) -> None:
    """A Zarr v2 ``null`` fill value leaves the cells of a missing chunk undefined (zarr-python 2
    hands out uninitialised memory there): zarrx deleted the chunks it wrote holding what it
    reads there (zeros, NaT). It now stores them, as zarr-python 2 and tensorstore do."""
    path = tmp_path / "n.zarr"
    _v2_array(path, dtype, None)
    z = zarrx.open_array(str(path), mode="r+")
    z[...] = np.array(value, dtype=dtype)
    assert _chunks(path) == ["0", "1"]
    if dtype == "<M8[s]":
        return                                  # a data type tensorstore does not read
    ts_path = tmp_path / "t.zarr"
    _v2_array(ts_path, dtype, None)
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(ts_path)}}).result()
    t[...] = np.array(value, dtype=dtype)
    assert _chunks(ts_path) == _chunks(path)
    assert (ts_path / "0").read_bytes() == (path / "0").read_bytes()


@pytest.mark.parametrize("dtype, fill, filters, value", [
    ("|O", "", [{"id": "vlen-utf8"}], ""), ("<i4", 0, None, 0)])
def test_chunks_equal_to_a_fill_value_all_read_alike_are_still_deleted(tmp_path, dtype, fill,
                                                                       filters, value) -> None:
    path = tmp_path / "d.zarr"
    _v2_array(path, dtype, fill, filters)
    z = zarrx.open_array(str(path), mode="r+")
    z[...] = value
    assert _chunks(path) == []


LONE = "a\udcff"          # a lone surrogate: Python text UTF-8 cannot encode


def _attrs_of_array(path, fmt, attrs):
    zarrx.create_array(str(path), shape=(2,), dtype="i4", zarr_format=fmt, attributes=attrs)


def _attrs_set_later(path, fmt, attrs):
    z = zarrx.create_array(str(path), shape=(2,), dtype="i4", zarr_format=fmt)
    z.attrs.update(attrs)


def _attrs_of_group(path, fmt, attrs):
    zarrx.open_group(str(path), mode="w", zarr_format=fmt, attributes=attrs)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("make,where", [
    (_attrs_of_array, "create_array: attributes"),
    (_attrs_set_later, "attributes of array '/'"),
    (_attrs_of_group, "open_group: attributes")], ids=["create_array", "attrs", "group"])
@pytest.mark.parametrize("attrs,key", [
    ({"k": LONE}, "k"), ({LONE: 1}, LONE), ({"k": [1, {"n": LONE}]}, "k"),
    ({"k": {LONE: "v"}}, "k")], ids=["value", "key", "nested-value", "nested-key"])
def test_attributes_with_lone_surrogates_are_refused(tmp_path, make, where, attrs, key,
                                                     fmt) -> None:
    """Text holding a lone surrogate was written as an escape ("\\udcff") that tensorstore
    refuses to parse, so it could not open the array at all (zarr-python writes the same)."""
    path = tmp_path / "a.zarr"
    with pytest.raises(zarrx.ArgumentError) as info:
        make(path, fmt, attrs)
    assert str(info.value) == (f"{where}: {key!r}: expected text that UTF-8 can encode (no "
                               f"lone surrogates), found {LONE!r}")
    if make is _attrs_set_later:
        assert dict(zarrx.open_array(str(path), mode="r").attrs) == {}


def test_dimension_names_with_lone_surrogates_are_refused(tmp_path) -> None:
    with pytest.raises(zarrx.MetadataError) as info:
        zarrx.create_array(str(tmp_path / "a"), shape=(2, 2), dtype="i4",
                           dimension_names=["x", LONE])
    assert str(info.value) == ("array metadata dimension_names: expected names that UTF-8 can "
                               f"encode (no lone surrogates), found {LONE!r}")
    assert not (tmp_path / "a").exists()


def test_non_ascii_text_in_metadata_reads_in_tensorstore(tmp_path) -> None:
    path = tmp_path / "a.zarr"
    z = zarrx.create_array(str(path), shape=(2,), dtype="i4", dimension_names=["é"],
                           attributes={"日本": ["ü", {"\U0001f600": "\u2028"}]})
    z[...] = [1, 2]
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()
    assert t.domain.labels == ("é",) and t.read().result().tolist() == [1, 2]


@pytest.mark.parametrize("fmt", [2, 3])
def test_lone_surrogates_another_writer_stored_are_read_and_kept(tmp_path, fmt) -> None:
    """zarr-python 3.1.6 stores them (as escapes): zarrx reads them and keeps them when it
    rewrites the document."""
    path = str(tmp_path / "a.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(path, shape=(2,), dtype="i4", zarr_format=fmt,
                          attributes={"k": LONE})
    z = zarrx.open_array(path, mode="r+")
    z.attrs["n"] = 1
    assert dict(zarrx.open_array(path, mode="r").attrs) == {"k": LONE, "n": 1}


def _ts_open(path):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result()


@pytest.mark.parametrize("names", [["x", "x", None], ["", "", "t"], [None, None, "t"]])
def test_repeated_dimension_names_are_written_and_read(tmp_path, names) -> None:
    """The v3 core spec recommends, but does not require, distinct non-null dimension names.
    zarrx and zarr-python write and read repeated ones; tensorstore 0.1.86 refuses to open an
    array whose non-empty names repeat ("Dimension label(s) ... not unique")."""
    path = tmp_path / "a.zarr"
    z = zarrx.create_array(str(path), shape=(2, 3, 1), dtype="i2", dimension_names=names)
    z[...] = np.arange(6).reshape(2, 3, 1)
    assert zarrx.open_array(str(path), mode="r").dimension_names == tuple(names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.open_array(str(path), mode="r").metadata.dimension_names == tuple(names)
    if names[0]:
        with pytest.raises(ValueError, match="not unique"):
            _ts_open(path)
    else:
        t = _ts_open(path)
        assert t.domain.labels == ("", "", "t") and t.read().result().ravel().tolist() == \
            list(range(6))


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1.5, -float("inf")]])
def test_non_finite_attributes_are_written_bare_which_tensorstore_cannot_open(tmp_path,
                                                                               value) -> None:
    """JSON has no NaN or infinity; zarrx writes them in attributes as zarr-python 3 does, as
    the bare tokens NaN / Infinity / -Infinity, which zarr-python and zarrx read back as floats
    but tensorstore 0.1.86 refuses as "Invalid JSON", so it cannot open the array at all
    (docs/SPEC.md). Fill values are the spec's strings and do not have this problem."""
    path = tmp_path / "a.zarr"
    zarrx.create_array(str(path), shape=(2,), dtype="f4", fill_value=np.nan,
                       attributes={"k": value})
    assert b'"fill_value": "NaN"' in (path / "zarr.json").read_bytes()
    got = zarrx.open_array(str(path), mode="r").attrs["k"]
    assert np.array_equal(got, value, equal_nan=True)
    with pytest.raises(ValueError, match="Invalid JSON"):
        _ts_open(path)
    path2 = tmp_path / "b.zarr"
    zarrx.create_array(str(path2), shape=(2,), dtype="f4", fill_value=np.nan,
                       attributes={"k": "NaN"})
    assert np.isnan(_ts_open(path2).fill_value)


def test_raw_bits_fill_values_in_both_spellings(tmp_path) -> None:
    """The v3 core spec spells the fill value of a raw type ``r<N>`` as an array of byte values;
    tensorstore 0.1.86 takes only a base64 string ("Expected base64-encoded string for
    raw_bytes fill_value"), so it cannot open the raw arrays zarrx writes. zarrx writes the
    spec's array and reads tensorstore's base64 as the same bytes."""
    path = tmp_path / "a.zarr"
    zarrx.create_array(str(path), shape=(3,), chunks=(2,), dtype="r16", fill_value=b"\x01\x02")
    assert json.loads((path / "zarr.json").read_text())["fill_value"] == [1, 2]
    with pytest.raises(ValueError, match="Expected base64-encoded string"):
        _ts_open(path)
    doc = json.loads((path / "zarr.json").read_text())
    doc["fill_value"] = "AQI="
    (path / "zarr.json").write_text(json.dumps(doc))
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == [b"\x01\x02"] * 3


@pytest.mark.parametrize("data_type, fill", [("int32", 3.0), ("int8", -128.0), ("uint64", 0.0),
                                             ("int64", -4503599627370496.0)])
def test_a_v3_integer_fill_value_written_with_a_fraction_part(tmp_path, data_type, fill) -> None:
    """A writer storing an integer fill value as ``3.0``: zarr-python 3 and tensorstore read
    it as the integer (zarrx refused it with ``MetadataError``); so does zarrx."""
    path = tmp_path / "a.zarr"
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [3], "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}))
    want = np.full(3, int(fill), data_type)
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
    np.testing.assert_array_equal(ts.open(spec).result().read().result(), want)
    assert _zarr_python_reads(path) == want.tolist()
    z = zarrx.open_array(str(path), mode="r+")
    np.testing.assert_array_equal(z[...], want)
    assert z.fill_value == int(fill) and z.fill_value.dtype == np.dtype(data_type)
    z[1:] = 1
    assert _zarr_python_reads(path) == [int(fill), 1, 1]
