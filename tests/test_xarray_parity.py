"""``to_zarrx`` against ``Dataset.to_zarr`` (engine "zarr", the oracle) on encodings and
arguments the round-trip tests leave out: text stored as encoded bytes (``dtype: "S1"``),
encoding keys no coder uses, encodings xarray's coders refuse, nested attribute values, and a
``zarr_format=`` other than the stored group's.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

from xarray_checks import WRITERS, read, stored  # noqa: E402


def text(kind):
    values = ["a", "bcd", "é"]
    if kind == "U":
        return np.array(values)
    if kind == "object":
        return np.array(values, dtype=object)
    if kind == "object-missing":
        return np.array(["a", None, "é"], dtype=object)
    return np.array(values, dtype=np.dtypes.StringDType())


@pytest.mark.parametrize("fmt, kind", [(2, "U"), (3, "U"), (2, "object"), (3, "object"),
                                       (2, "object-missing"), (3, "object-missing"),
                                       (2, "StringDType")])
def test_text_with_encoding_dtype_s1_is_stored_as_utf8_bytes(tmp_path, fmt, kind):
    ds = xr.Dataset({"s": ("x", text(kind))})
    enc = {"s": {"dtype": "S1"}}
    ds.to_zarr(tmp_path / "x.zarr", zarr_format=fmt, encoding=enc)
    zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt, encoding=enc)
    if fmt == 2:
        assert json.loads((tmp_path / "z.zarr" / "s" / ".zattrs").read_text()) == \
            json.loads((tmp_path / "x.zarr" / "s" / ".zattrs").read_text())
        assert json.loads((tmp_path / "z.zarr" / "s" / ".zarray").read_text())["dtype"] == \
            json.loads((tmp_path / "x.zarr" / "s" / ".zarray").read_text())["dtype"]
    else:
        mine, ref = (json.loads((tmp_path / p / "s" / "zarr.json").read_text())
                     for p in ("z.zarr", "x.zarr"))
        for key in ("data_type", "shape", "dimension_names", "attributes"):
            assert mine[key] == ref[key], key
    for kw in ({}, {"decode_cf": False}):
        ref = read(tmp_path / "x.zarr", "zarr", **kw)
        assert ref.s.attrs.get("_Encoding", ref.s.encoding.get("_Encoding")) == "utf-8"
        for engine in ("zarr", "zarrx"):
            got = read(tmp_path / "z.zarr", engine, **kw)
            xr.testing.assert_identical(got, ref)
            assert got.s.encoding["dtype"] == ref.s.encoding["dtype"]
            assert ref.s.encoding["dtype"].kind == "S"


@pytest.mark.parametrize("fmt", [2, 3])
def test_appending_text_to_text_stored_as_bytes_encodes_it_with_its_encoding(tmp_path, fmt):
    path = tmp_path / "z.zarr"
    first = xr.Dataset({"s": ("t", np.array(["abc", "d"], dtype=object))}, coords={"t": [0, 1]})
    zx.to_zarrx(first, path, zarr_format=fmt, encoding={"s": {"dtype": "S1"}})
    more = xr.Dataset({"s": ("t", np.array(["é", "x"], dtype=object))}, coords={"t": [2, 3]})
    assert zarr.open_group(path)["s"].dtype == np.dtype("S3")
    zx.to_zarrx(more, path, append_dim="t")     # engine "zarr" fails: it encodes as ASCII
    for engine in ("zarr", "zarrx"):
        assert read(path, engine).s.values.tolist() == ["abc", "d", "é", "x"]
    # read back and written again, non-ASCII text survives as well
    zx.to_zarrx(read(path, "zarrx"), tmp_path / "again.zarr", zarr_format=fmt)
    assert read(tmp_path / "again.zarr", "zarr").s.values.tolist() == ["abc", "d", "é", "x"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_text_too_long_for_the_stored_bytes_is_refused_not_cut(tmp_path, fmt):
    path = tmp_path / "z.zarr"
    first = xr.Dataset({"s": ("t", np.array(["abc", "d"], dtype=object))}, coords={"t": [0, 1]})
    zx.to_zarrx(first, path, zarr_format=fmt, encoding={"s": {"dtype": "S1"}})
    before = stored(path)
    longer = xr.Dataset({"s": ("t", np.array(["toolong", "x"], dtype=object))},
                        coords={"t": [2, 3]})
    # engine "zarr" stores "too"
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "to_zarrx: variable 's': values of dtype |S7 do not fit the stored array's |S3; "
            "they would be cut")):
        zx.to_zarrx(longer, path, append_dim="t")
    assert stored(path) == before


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype", ["U", "S"])
def test_shorter_fixed_width_strings_are_appended_longer_or_other_ones_refused(tmp_path, fmt,
                                                                              dtype):
    path = tmp_path / "z.zarr"
    first = xr.Dataset({"s": ("t", np.array(["abc", "d"], dtype=f"{dtype}3"))})
    zx.to_zarrx(first, path, zarr_format=fmt)
    before = stored(path)
    other = "S" if dtype == "U" else "U"
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"to_zarrx: variable 's' has dtype {np.dtype(dtype + '4').str}, but the stored one "
            f"has {np.dtype(dtype + '3').str}: fixed-width strings would be cut")):
        zx.to_zarrx(first.astype(f"{dtype}4"), path, append_dim="t")
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            f"to_zarrx: variable 's' has dtype {np.dtype(other + '1').str}, but the stored one "
            f"has {np.dtype(dtype + '3').str}: expected {'text' if dtype == 'U' else 'bytes'}")):
        zx.to_zarrx(first.astype(f"{other}1"), path, append_dim="t")
    assert stored(path) == before
    # engine "zarr" refuses the shorter ones too ("Mismatched dtypes"), which fit
    zx.to_zarrx(first.astype(f"{dtype}1"), path, append_dim="t")
    assert read(path, "zarr").s.values.tolist() == \
        first.s.values.tolist() + first.astype(f"{dtype}1").s.values.tolist()


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype", ["U", "S"])
@pytest.mark.parametrize("lazy", [False, True])
def test_python_strings_written_into_fixed_width_text_are_checked_not_cut(tmp_path, fmt, dtype,
                                                                         lazy):
    # engine "zarr" (and zarrx before) cast them to the stored width: "toolong" became "too",
    # 1 became "1" and None "nan"
    path = tmp_path / "z.zarr"
    kind = (lambda v: v) if dtype == "U" else (lambda v: v.encode())
    zx.to_zarrx(xr.Dataset({"s": ("t", np.array(["abc", "d"], dtype=f"{dtype}3"))}), path,
                zarr_format=fmt)
    before = stored(path)

    def more(values, as_strings=False):
        data = np.array(values, dtype=np.dtypes.StringDType() if as_strings else object)
        ds = xr.Dataset({"s": ("t", data)})
        return ds.chunk() if lazy else ds

    width = np.dtype(f"{dtype}7").str
    for values in ([kind("toolong"), kind("y")],) + ((["toolong", "y"], True),) * (dtype == "U"):
        data = more(*values) if isinstance(values, tuple) else more(values)
        with pytest.raises(zarrx.ArgumentError, match=re.escape(
                f"to_zarrx: variable 's': {kind('toolong')!r} is longer than the 3 "
                f"{'characters' if dtype == 'U' else 'bytes'} of the stored "
                f"{np.dtype(dtype + '3').str}: fixed-width strings would be cut")):
            zx.to_zarrx(data, path, append_dim="t")
    element, other = ("str", b"x") if dtype == "U" else ("bytes", "x")
    for bad in (other, 1):
        with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
                f"to_zarrx: variable 's': the stored array holds {element} values; cannot store "
                f"{type(bad).__name__} {bad!r}")):
            zx.to_zarrx(more([kind("x"), bad]), path, append_dim="t")
    # (dask values are checked as their blocks compute, once the rows are claimed: the claim
    # is undone, so the variable is as before either way)
    assert stored(path) == before
    zx.to_zarrx(more([kind("xy"), None]), path, append_dim="t")
    zx.to_zarrx(more([kind("é") if dtype == "U" else b"z", np.nan]), path,
                region={"t": slice(0, 2)})
    got = read(path, "zarrx").s.values.tolist()
    assert got[:2] + got[-2:] == [kind("é") if dtype == "U" else b"z", kind(""), kind("xy"),
                                  kind("")]
    assert len(got) == 4


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("enc, values, message", [
    ({}, [70000.0, 1.0], "70000.0 does not fit the stored int16 values (-32768 to 32767)"),
    ({}, [np.nan, 1.0], "NaN cannot be stored in the stored int16 values, which have no "
                        "_FillValue"),
    ({"dtype": "u1", "scale_factor": 2.0, "_FillValue": 255}, [600.0, np.nan],
     "a value packed by scale_factor/add_offset to 300.0 does not fit the stored uint8 values "
     "(0 to 255)"),
    ({"dtype": "i4", "_FillValue": -1}, [np.inf, 1.0],
     "inf does not fit the stored int32 values (-2147483648 to 2147483647)"),
])
def test_numbers_the_stored_integers_cannot_hold_are_refused_not_wrapped(tmp_path, fmt, enc,
                                                                        values, message):
    # engine "zarr" (and zarrx before) cast them: 70000 became 4464 and NaN 0
    path = tmp_path / "z.zarr"
    first = xr.Dataset({"v": ("t", np.array([2, 4], dtype="i2" if not enc else "f8"))})
    zx.to_zarrx(first, path, zarr_format=fmt, encoding={"v": enc} if enc else None)
    before = stored(path)
    for kw in ({"append_dim": "t"}, {"region": {"t": slice(0, 2)}}):
        with pytest.raises(zarrx.ArgumentError, match=re.escape(
                f"to_zarrx: variable 'v': {message}")):
            zx.to_zarrx(xr.Dataset({"v": ("t", np.array(values))}), path, **kw)
    assert stored(path) == before
    fits = [2.0, np.nan] if enc else [6.0, -8.0]
    zx.to_zarrx(xr.Dataset({"v": ("t", np.array(fits))}), path, append_dim="t")
    np.testing.assert_array_equal(read(path, "zarrx").v.values, [2, 4] + fits)


@pytest.mark.parametrize("compute", [True, False])
@pytest.mark.parametrize("dtype, values, message", [
    ("i2", [1.0, 70000.0], "70000.0 does not fit the stored int16 values (-32768 to 32767)"),
    ("u1", [1, -1], "-1 does not fit the stored uint8 values (0 to 255)"),
    ("i2", [1.0, np.nan], "NaN cannot be stored in the stored int16 values, which have no "
                          "_FillValue"),
])
def test_dask_numbers_the_stored_integers_cannot_hold_are_refused_not_wrapped(
        tmp_path, compute, dtype, values, message):
    # dask values were cast lazily by the coders: 70000 became 4464, -1 255 and NaN 0; they
    # are checked block by block as the graph computes (with compute=False, not before)
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"v": ("t", np.array([2, 4], dtype=dtype))}), path,
                encoding={"v": {"chunks": (1,)}})
    for kw, bad_row, kept in (({"append_dim": "t"}, 3, 0), ({"region": {"t": slice(0, 2)}}, 1, 4)):
        ds = xr.Dataset({"v": ("t", np.array(values))}).chunk(t=1)
        written = None if compute else zx.to_zarrx(ds, path, compute=False, **kw)
        with pytest.raises(zarrx.ArgumentError, match=re.escape(
                f"to_zarrx: variable 'v': {message}")):
            zx.to_zarrx(ds, path, **kw) if compute else written.compute()
        # (the block before may be written; the refused one is not; with compute=True an
        # append gives its rows back: docs/guide/xarray.md, "When a write of dask values fails")
        stored = zarrx.open_array(path, path="v")
        if compute and "append_dim" in kw:
            assert stored.shape == (2,) and stored[...].tolist() == [2, 4]
        else:
            assert stored[bad_row] == kept
    fits = xr.Dataset({"v": ("t", np.array([6, 8], dtype=dtype))}).chunk(t=1)
    zx.to_zarrx(fits, path, region={"t": slice(0, 2)})
    assert zarrx.open_array(path, path="v")[:2].tolist() == [6, 8]


@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
@pytest.mark.parametrize("var, enc, unused", [
    ("a", {"units": "days since 2000-01-01"}, ["units"]),
    ("a", {"calendar": "noleap", "dtype": "f4"}, ["calendar"]),
    ("s", {"_Encoding": "utf-8"}, ["_Encoding"]),
])
def test_encoding_keys_no_coder_uses_are_refused(tmp_path, writer, var, enc, unused):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0]), "s": ("x", np.array(["p", "q"]))})
    with pytest.raises(ValueError) as info:
        WRITERS[writer](ds, tmp_path / "d.zarr", encoding={var: enc})
    if writer == "zarrx":
        assert isinstance(info.value, zarrx.ArgumentError)
        assert str(info.value) == (f"to_zarrx: encoding of {var!r}: unexpected keys {unused} "
                                   f"(they apply to no data of dtype {ds[var].dtype})")
        assert not (tmp_path / "d.zarr").exists()


@pytest.mark.parametrize("enc, error, message, oracle", [
    ({"a": {"dtype": "nope"}}, zarrx.ArgumentTypeError,
     "to_zarrx: variable 'a': xarray's CF encoding refused it (TypeError: data type "
     "'nope' not understood)", TypeError),
    ({"a": {"_FillValue": "x"}}, zarrx.ArgumentError,
     "to_zarrx: variable 'a': xarray's CF encoding refused it (ValueError: could not "
     "convert string to float: 'x')", ValueError),
    ({"s": {"dtype": "S3"}}, zarrx.ArgumentError,
     "to_zarrx: variable 's': xarray's CF encoding refused it (UnicodeEncodeError: "
     "'ascii' codec can't encode character '\\xe9' in position 0: ordinal not in range(128))", ValueError),
])
def test_an_encoding_xarrays_coders_refuse_names_the_variable(tmp_path, enc, error, message,
                                                              oracle):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0]), "s": ("x", np.array(["é", "q"], dtype=object))})
    zx.to_zarrx(ds, tmp_path / "d.zarr")
    before = stored(tmp_path / "d.zarr")
    with pytest.raises(error) as info:
        zx.to_zarrx(ds, tmp_path / "d.zarr", mode="w", encoding=enc)
    assert str(info.value) == message
    assert stored(tmp_path / "d.zarr") == before
    assert issubclass(error, oracle)
    with pytest.raises(oracle):
        ds.to_zarr(tmp_path / "x.zarr", encoding=enc)


@pytest.mark.parametrize("fmt", [2, 3])
def test_numpy_values_nested_in_attributes_are_stored_as_json(tmp_path, fmt):
    attrs = {"d": {"k": np.int64(1), "l": [np.float32(0.5), np.bool_(True)]}}
    ds = xr.Dataset({"a": ("x", [1.0], attrs)}, attrs=attrs)
    path = tmp_path / "d.zarr"
    zx.to_zarrx(xr.Dataset({"b": ("y", [2.0])}), path, zarr_format=fmt)
    zx.to_zarrx(ds, path, mode="w", zarr_format=fmt)
    plain = {"d": {"k": 1, "l": [0.5, True]}}
    for engine in ("zarr", "zarrx"):
        back = read(path, engine)
        assert back.attrs == plain
        assert back.a.attrs == plain
        assert list(back.variables) == ["a"]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kw", [{"mode": "a"}, {"mode": "r+"}, {"append_dim": "x"}])
def test_a_zarr_format_other_than_the_stored_groups_is_refused(tmp_path, fmt, kw):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0])})
    path = tmp_path / "d.zarr"
    zx.to_zarrx(ds, path, zarr_format=fmt)
    before = stored(path)
    other = 5 - fmt
    with pytest.raises(zarrx.ArgumentError) as info:
        zx.to_zarrx(ds, path, zarr_format=other, **kw)
    mode = kw.get("mode", "a")
    assert str(info.value) == (f"to_zarrx: zarr_format={other}, but the node at '/' is Zarr "
                               f"v{fmt} (mode {mode!r} writes into it; leave zarr_format out "
                               f"or use mode='w' to replace it)")
    assert stored(path) == before
    # no metadata document of the other format was added
    assert not (path / ("zarr.json" if fmt == 2 else ".zgroup")).exists()
    zx.to_zarrx(ds * 2, path, zarr_format=fmt, **kw)     # the stored format is taken


@pytest.mark.parametrize("dtype, fill, message", [
    ("f4", "NaN", "/a attributes: _FillValue: expected base64 text, found 'NaN'"),
    ("f8", "AAAA", "/a attributes: _FillValue: expected 8 bytes of a float64, found 3"),
    ("c8", "AAAAAAAA+H8=", "/a attributes: _FillValue: expected [real, imag], found "
                           "'AAAAAAAA+H8='"),
])
def test_a_malformed_fill_value_attribute_of_zarr_v3_is_a_metadata_error(tmp_path, dtype, fill,
                                                                         message):
    grp = zarr.open_group(tmp_path / "g.zarr", mode="w", zarr_format=3)
    grp.create_array("a", shape=(2,), dtype=dtype, dimension_names=["x"],
                     attributes={"_FillValue": fill})
    with pytest.raises(Exception):      # engine "zarr": binascii, struct or TypeError
        xr.open_dataset(tmp_path / "g.zarr", engine="zarr")
    with pytest.raises(zarrx.MetadataError) as info:
        xr.open_dataset(tmp_path / "g.zarr", engine=ZarrxBackendEntrypoint)
    assert str(info.value) == message


@pytest.mark.parametrize("region, message", [
    ({"x": 1}, "to_zarrx: region['x']: expected a slice or 'auto', found int 1"),
    ({"x": [0, 1]}, "to_zarrx: region['x']: expected a slice or 'auto', found list [0, 1]"),
])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_a_region_that_is_not_a_slice_is_a_type_error_as_with_xarray(tmp_path, writer, region,
                                                                    message):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0, 3.0])})
    WRITERS[writer](ds, tmp_path / "d.zarr")
    with pytest.raises(TypeError) as info:
        WRITERS[writer](ds.isel(x=[1]), tmp_path / "d.zarr", region=region)
    if writer == "zarrx":
        assert isinstance(info.value, zarrx.ArgumentTypeError)
        assert str(info.value) == message


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("case", ["append", "mode-a", "region"])
def test_a_new_variable_of_another_length_than_the_stored_dimension_is_refused(tmp_path, fmt,
                                                                               case):
    """xarray's writer stores it, and the group no longer opens (two lengths for one
    dimension)."""
    path = tmp_path / "d.zarr"
    ds = xr.Dataset({"a": (("t", "y"), np.zeros((4, 3)))}, coords={"t": [0, 1, 2, 3]})
    zx.to_zarrx(ds, path, zarr_format=fmt)
    before = stored(path)
    if case == "append":
        more = xr.Dataset({"a": (("t", "y"), np.ones((2, 3))), "n": ("t", [1.0, 2.0])},
                          coords={"t": [4, 5]})
        kw, dim, n, want = {"append_dim": "t"}, "t", 2, 6
    elif case == "mode-a":
        more = xr.Dataset({"n": ("y", [1.0, 2.0])})
        kw, dim, n, want = {"mode": "a"}, "y", 2, 3
    else:
        more = xr.Dataset({"a": (("t", "y"), np.ones((2, 3))), "n": ("t", [1.0, 2.0])})
        kw, dim, n, want = {"mode": "a", "region": {"t": slice(1, 3)}}, "t", 2, 4
    with pytest.raises(zarrx.ArgumentError) as info:
        zx.to_zarrx(more, path, **kw)
    assert str(info.value) == (
        f"to_zarrx: variable 'n' is not stored yet and has {n} elements along {dim!r}, but the "
        f"stored group's {dim!r} has {want} once written; write the whole variable with "
        f"mode='a' (no append_dim or region)")
    assert stored(path) == before
    xr.testing.assert_identical(read(path, "zarr"), ds)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_new_variable_is_added_beside_growing_arrays_and_arrays_without_dimensions(tmp_path,
                                                                                    fmt):
    path = tmp_path / "d.zarr"
    ds = xr.Dataset({"a": (("t", "y"), np.zeros((4, 3)))}, coords={"t": [0, 1, 2, 3]})
    zx.to_zarrx(ds, path, zarr_format=fmt)
    grp = zarrx.open_group(path)
    grp["a"].resize((6, 3))                 # rows claimed by an append under way
    grp.create_array("raw", shape=(5,), dtype="f8")     # no dimension names
    zx.to_zarrx(xr.Dataset({"n": ("y", [1.0, 2.0, 3.0])}), path, mode="a")
    zx.to_zarrx(xr.Dataset({"m": ("t", np.arange(6.0))}), path, mode="a")
    assert zarrx.open_group(path)["n"][...].tolist() == [1.0, 2.0, 3.0]
    assert zarrx.open_group(path)["m"].shape == (6,)


@pytest.mark.parametrize("kind", ["zarr-python", "dict", "fsspec"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_engine_zarrx_opens_the_stores_engine_zarr_opens(kind, fmt):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0])}, attrs={"k": 1})
    if kind == "zarr-python":
        store = zarr.storage.MemoryStore()
    elif kind == "dict":
        store = {}
    else:
        fsspec = pytest.importorskip("fsspec")
        store = fsspec.get_mapper(f"memory://parity-{fmt}.zarr")
        store.clear()
    ds.to_zarr(store, zarr_format=fmt)
    xr.testing.assert_identical(xr.open_dataset(store, engine=ZarrxBackendEntrypoint).load(),
                                xr.open_dataset(store, engine="zarr").load())
    xr.testing.assert_identical(xr.open_datatree(store, engine=ZarrxBackendEntrypoint).load(),
                                xr.open_datatree(store, engine="zarr").load())


@pytest.mark.parametrize("mask", [None, True])
@pytest.mark.parametrize("dtype", [[("a", "<i4"), ("b", "<f8")], "V3"])
def test_records_and_raw_bytes_open_unmasked(tmp_path, dtype, mask):
    """Engine "zarr" masks them with the Zarr v2 fill value and fails (a TypeError from CF
    decoding: a record cannot be compared with it)."""
    values = np.array([(1, 2.0), (3, 4.0)], dtype=dtype) if isinstance(dtype, list) \
        else np.array([b"abc", b"def"], dtype=dtype)
    grp = zarr.open_group(tmp_path / "g.zarr", mode="w", zarr_format=2)
    arr = grp.create_array("a", shape=(2,), dtype=dtype, attributes={"_ARRAY_DIMENSIONS": ["x"]})
    arr[:] = values
    got = xr.open_dataset(tmp_path / "g.zarr", engine=ZarrxBackendEntrypoint,
                          use_zarr_fill_value_as_mask=mask).load()
    assert got.a.dtype == values.dtype
    assert got.a.values.tolist() == values.tolist()
    assert "_FillValue" not in got.a.encoding


@pytest.mark.parametrize("fmt, enc, error, message", [
    (2, {"shards": (2,)}, zarrx.ArgumentError,
     "array 'b': create_array: shards= needs zarr_format=3 (Zarr v2 has no sharding)"),
    (3, {"compressors": [{"name": "nope"}]}, zarrx.errors.UnknownCodecError,
     "array 'b': create_array compressors[0]: unknown codec 'nope'; known codecs: "),
])
def test_a_setting_create_array_refuses_names_the_variable(tmp_path, fmt, enc, error, message):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0]), "b": ("x", [1.0, 2.0])})
    with pytest.raises(error) as info:
        zx.to_zarrx(ds, tmp_path / "d.zarr", zarr_format=fmt, encoding={"b": enc})
    assert str(info.value).startswith(message)
    assert info.value.array == "b"
    assert not (tmp_path / "d.zarr").exists()


@pytest.mark.parametrize("group, message", [
    ("a/./b", "expected a node path without '.' or '..' segments, found 'a/./b'"),
    ("..", "expected a node path without '.' or '..' segments, found '..'"),
])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_a_group_with_a_dot_segment_is_a_value_error_as_with_xarray(tmp_path, writer, group,
                                                                    message):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0])})
    with pytest.raises(ValueError) as info:
        WRITERS[writer](ds, tmp_path / "d.zarr", group=group)
    if writer == "zarrx":
        assert isinstance(info.value, zarrx.ArgumentError)
        assert str(info.value) == f"to_zarrx: group: {message}"
        with pytest.raises(zarrx.ArgumentError) as info:
            xr.open_dataset(tmp_path / "d.zarr", engine=ZarrxBackendEntrypoint, group=group)
        assert str(info.value) == f"engine 'zarrx': group: {message}"
        with pytest.raises(zarrx.ArgumentError) as info:
            zarrx.open_group(zarrx.store.MemoryStore(), path=group, mode="w")
        assert str(info.value) == f"open_group: path: {message}"


def test_repeated_slashes_of_a_group_are_one_as_with_xarray(tmp_path):
    ds = xr.Dataset({"a": ("x", [1.0, 2.0])})
    ds.to_zarr(tmp_path / "x.zarr", group="a//b")
    zx.to_zarrx(ds, tmp_path / "z.zarr", group="a//b")
    for path in ("x.zarr", "z.zarr"):
        for engine in ("zarr", ZarrxBackendEntrypoint):
            xr.testing.assert_identical(
                xr.open_dataset(tmp_path / path, engine=engine, group="a/b").load(), ds)
        assert zarrx.open_group(tmp_path / path, path="a//b").path == "a/b"


@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_region_auto_with_labels_not_stored_is_a_key_error_as_with_xarray(tmp_path, writer):
    ds = xr.Dataset({"a": ("t", np.arange(4.0))}, coords={"t": [10, 20, 30, 40]})
    WRITERS[writer](ds, tmp_path / "d.zarr")
    before = stored(tmp_path / "d.zarr")
    other = xr.Dataset({"a": ("t", [1.0, 2.0])}, coords={"t": [40, 50]})
    with pytest.raises(KeyError) as info:
        WRITERS[writer](other, tmp_path / "d.zarr", region="auto")
    if writer == "zarrx":
        assert isinstance(info.value, zarrx.ArgumentKeyError)
        assert isinstance(info.value, ValueError)
        assert str(info.value) == ("to_zarrx: region['t'] = 'auto': 1 of the dataset's 't' values "
                                   "are not in the stored coordinate (the first: 50)")
    assert stored(tmp_path / "d.zarr") == before
