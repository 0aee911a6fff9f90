"""Malformed CF attributes in a store are a MetadataError naming the variable, the attribute,
what was found and what was expected, raised when the dataset opens (engine "zarr" raises
xarray's own errors, some only on load); reads that do not decode them read the raw values."""
from __future__ import annotations

import importlib.util
import re
import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
from zarrx.errors import MetadataError  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

_TIME = ("CF time units ('<unit> since <date>', days since 2000-01-01) by which xarray "
         "decodes the values stored")
_CALENDARS = ("a CF calendar xarray decodes (standard, proleptic_gregorian, noleap, 365_day, "
              "360_day, julian, all_leap, 366_day)")

CASES = {
    # name: (dtype, attributes, what the message says after "variable 'v': attribute ",
    #        whether decode_times=False reads it)
    "scale_factor_list": ("i2", {"scale_factor": [1, 2]},
                          "scale_factor: expected a number (or a list of one number), found "
                          "[1, 2]", False),
    "scale_factor_text": ("i2", {"scale_factor": "x"},
                          "scale_factor: expected a number (or a list of one number), found "
                          "'x'", False),
    "add_offset_text": ("i2", {"add_offset": "x"},
                        "add_offset: expected a number (or a list of one number), found 'x'",
                        False),
    "add_offset_object": ("f4", {"add_offset": {"a": 1}},
                          "add_offset: expected a number (or a list of one number), found "
                          "{'a': 1}", False),
    "missing_value_text": ("f4", {"missing_value": "abc"},
                           "missing_value: expected a number, a value of its type float32, "
                           "found 'abc'", False),
    "units_unparsable": ("i8", {"units": "fortnights since whenever"},
                         f"units: expected {_TIME}, found 'fortnights since whenever'", True),
    "units_bad_date": ("i8", {"units": "days since 2000-13-45"},
                       f"units: expected {_TIME}, found 'days since 2000-13-45'", True),
    "calendar_unknown": ("i8", {"units": "days since 2000-01-01", "calendar": "martian"},
                         f"calendar: expected {_CALENDARS}, found 'martian'", True),
    "calendar_list": ("i8", {"units": "days since 2000-01-01", "calendar": [1]},
                      "calendar: expected a calendar's name (standard, noleap, 360_day, ...), "
                      "found [1]", True),
    "encoding_unknown": ("S1", {"_Encoding": "no-such-codec"},
                         "_Encoding: expected the name of a text encoding (utf-8), found "
                         "'no-such-codec'", False),
}


def _store(path, zarr_format, dtype, attrs):
    g = zarrx.open_group(str(path), mode="w", zarr_format=zarr_format)
    dims = {"dimension_names": ["x"]} if zarr_format == 3 else {}
    a = g.create_array("v", shape=(3,), dtype=dtype, chunks=(3,), **dims)
    a[:] = np.array([b"a", b"b", b"c"]) if dtype == "S1" else np.arange(3).astype(dtype)
    a.attrs.update({**({"_ARRAY_DIMENSIONS": ["x"]} if zarr_format == 2 else {}), **attrs})
    return a[:]


def _open(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_dataset(str(path), engine=ZarrxBackendEntrypoint, **kw).load()


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_malformed_cf_attribute_is_a_metadata_error_naming_it(tmp_path, zarr_format, case):
    # (before: xarray's ValueError, TypeError or UFuncTypeError, some only on load)
    dtype, attrs, message, times_only = CASES[case]
    raw = _store(tmp_path / "d.zarr", zarr_format, dtype, attrs)
    with pytest.raises(MetadataError, match=re.escape(f"variable 'v': attribute {message}")):
        xr.open_dataset(str(tmp_path / "d.zarr"), engine=ZarrxBackendEntrypoint)
    ds = _open(tmp_path / "d.zarr", decode_cf=False)      # the raw values, as stored
    np.testing.assert_array_equal(ds.v.values, raw)
    assert {k: ds.v.attrs[k] for k in attrs} == attrs
    if times_only:                          # the numbers, masked and scaled as ever
        ds = _open(tmp_path / "d.zarr", decode_times=False)
        assert ds.v.dtype.kind in "if" and ds.v.attrs["units"] == attrs["units"]
    else:
        with pytest.raises(MetadataError, match=re.escape(message)):
            _open(tmp_path / "d.zarr", decode_times=False)


@pytest.mark.parametrize("value", ["abc", [1, 2]])
def test_a_v3_fill_value_attribute_that_does_not_decode_is_raw_without_masking(tmp_path,
                                                                               value):
    raw = _store(tmp_path / "d.zarr", 3, "i2", {"_FillValue": value})
    with pytest.raises(MetadataError, match=re.escape(
            f"/v attributes: _FillValue: expected a number for dtype int16, found {value!r}")):
        xr.open_dataset(str(tmp_path / "d.zarr"), engine=ZarrxBackendEntrypoint)
    for kw in ({"decode_cf": False}, {"mask_and_scale": False}):
        ds = _open(tmp_path / "d.zarr", **kw)   # (before: refused whatever was decoded)
        np.testing.assert_array_equal(ds.v.values, raw)
        assert ds.v.attrs["_FillValue"] == value


def test_the_trees_and_groups_of_a_store_check_their_variables_too(tmp_path):
    g = zarrx.open_group(str(tmp_path / "t.zarr"), mode="w", zarr_format=2)
    g.create_group("sub").create_array("v", shape=(2,), dtype="i2", attributes={
        "_ARRAY_DIMENSIONS": ["x"], "scale_factor": "x"})
    with pytest.raises(MetadataError, match=re.escape("variable 'v': attribute scale_factor")):
        xr.open_datatree(str(tmp_path / "t.zarr"), engine=ZarrxBackendEntrypoint)
    tree = xr.open_datatree(str(tmp_path / "t.zarr"), engine=ZarrxBackendEntrypoint,
                            decode_cf=False)
    assert tree["sub"]["v"].attrs["scale_factor"] == "x"


@pytest.mark.skipif(importlib.util.find_spec("cftime") is not None,
                    reason="cftime decodes such times")
def test_times_of_an_index_xarray_cannot_represent_are_a_metadata_error(tmp_path):
    # (before: xarray's ImportError, asking for cftime, from xr.open_dataset)
    g = zarrx.open_group(str(tmp_path / "d.zarr"), mode="w", zarr_format=2)
    g.create_array("t", shape=(3,), dtype="i8", chunks=(1,), attributes={
        "_ARRAY_DIMENSIONS": ["t"], "units": "days since 2000-01-01"})[:] = [0, 2**62, 1]
    with pytest.raises(MetadataError, match=re.escape(
            f"variable 't': attribute units: expected {_TIME}, found 'days since 2000-01-01' "
            f"(xarray: ImportError: ")):
        xr.open_dataset(str(tmp_path / "d.zarr"), engine=ZarrxBackendEntrypoint)
    assert _open(tmp_path / "d.zarr", decode_cf=False).t.values.tolist() == [0, 2**62, 1]


def test_well_formed_attributes_decode_as_before(tmp_path):
    g = zarrx.open_group(str(tmp_path / "d.zarr"), mode="w", zarr_format=2)
    g.create_array("v", shape=(3,), dtype="i2", attributes={
        "_ARRAY_DIMENSIONS": ["x"], "scale_factor": [0.5], "add_offset": 1,
        "missing_value": [-1, -2]})[:] = [2, -1, -2]
    g.create_array("t", shape=(2,), dtype="i4", attributes={
        "_ARRAY_DIMENSIONS": ["t"], "units": "days since 2000-01-01",
        "calendar": "proleptic_gregorian"})[:] = [1, 2]
    ds = _open(tmp_path / "d.zarr")
    assert ds.v.values[0] == 2.0 and np.isnan(ds.v.values[1:]).all()
    np.testing.assert_array_equal(ds.t.values, np.array(["2000-01-02", "2000-01-03"],
                                                        "datetime64[ns]"))


@pytest.mark.skipif(importlib.util.find_spec("cftime") is not None,
                    reason="cftime decodes such times")
@pytest.mark.parametrize("chunks", [None, {}])
def test_times_xarray_cannot_represent_are_a_metadata_error_when_they_load(tmp_path, chunks):
    # (before: xarray's ImportError, asking for cftime, from .load() or .compute())
    import pickle
    g = zarrx.open_group(str(tmp_path / "d.zarr"), mode="w", zarr_format=2)
    g.create_array("v", shape=(3,), dtype="i8", chunks=(1,), attributes={
        "_ARRAY_DIMENSIONS": ["x"], "units": "days since 2000-01-01"})[:] = [1, 2**62, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = xr.open_dataset(str(tmp_path / "d.zarr"), engine=ZarrxBackendEntrypoint,
                             chunks=chunks)
        np.testing.assert_array_equal(ds.v[[0, 2]].values, np.array(
            ["2000-01-02", "2000-01-03"], "datetime64[ns]"))  # the values it can decode
        for copy in (ds, pickle.loads(pickle.dumps(ds))):
            with pytest.raises(MetadataError, match=re.escape(
                    "variable 'v': its stored values are no times xarray decodes by its "
                    "units 'days since 2000-01-01' (xarray: ImportError: ")):
                copy.load()


@pytest.mark.skipif(importlib.util.find_spec("cftime") is not None,
                    reason="cftime decodes such times")
@pytest.mark.parametrize("calendar", ["noleap", "360_day", "JULIAN"])
def test_a_calendar_only_cftime_decodes_says_so_without_cftime(tmp_path, calendar):
    # (before: "expected a CF calendar xarray decodes (..., noleap, ...), found 'noleap'")
    _store(tmp_path / "d.zarr", 2, "i4", {"units": "days since 2000-01-01",
                                          "calendar": calendar})
    with pytest.raises(MetadataError, match=re.escape(
            f"variable 'v': attribute calendar: expected a calendar xarray decodes without "
            f"cftime (standard, gregorian, proleptic_gregorian), found {calendar!r}, which "
            f"needs cftime (not installed; or read with decode_times=False) (xarray: ")):
        xr.open_dataset(str(tmp_path / "d.zarr"), engine=ZarrxBackendEntrypoint)
    assert _open(tmp_path / "d.zarr", decode_times=False).v.values.tolist()[1:] == [1, 2]


@pytest.mark.skipif(importlib.util.find_spec("cftime") is not None,
                    reason="cftime decodes such times")
@pytest.mark.parametrize("calendar", ["standard", "noleap"])
def test_use_cftime_without_cftime_is_an_argument_error_naming_it(tmp_path, calendar):
    # (before: a MetadataError blaming the well-formed units 'days since 2000-01-01')
    _store(tmp_path / "d.zarr", 2, "i4", {"units": "days since 2000-01-01",
                                          "calendar": calendar})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "variable 'v': use_cftime=True decodes its times (units 'days since 2000-01-01') "
            "with cftime, which is not installed (install cftime, or leave use_cftime out) "
            "(xarray: ")):
        xr.open_dataset(str(tmp_path / "d.zarr"), engine=ZarrxBackendEntrypoint,
                        use_cftime=True)


@pytest.mark.parametrize("attrs", [{"units": "days since 2000-01-01"},
                                   {"units": "seconds", "dtype": "timedelta64[ns]"}])
def test_a_chunk_of_times_that_does_not_decode_is_the_stores_error(tmp_path, attrs):
    # (before: a MetadataError blaming the units, "its stored values are no times xarray
    # decodes by its units", around the chunk's CodecError; xarray reads the first and the
    # last value when the dataset opens, the middle chunk only as it loads)
    path = tmp_path / "d.zarr"
    g = zarrx.open_group(str(path), mode="w", zarr_format=2)
    g.create_array("v", shape=(3,), dtype="i8", chunks=(1,), compressors=None, attributes={
        "_ARRAY_DIMENSIONS": ["x"], **attrs})[:] = [1, 2, 3]
    (path / "v" / "1").write_bytes(b"\0" * 24)
    ds = xr.open_dataset(str(path), engine=ZarrxBackendEntrypoint)
    with pytest.raises(zarrx.CodecError, match=re.escape("chunk 'v/1'")) as info:
        ds.load()
    assert "xarray decodes" not in str(info.value)
