"""Encoding values and names ``to_zarrx`` takes as xarray's writer takes them (compared with
what engine "zarr" stores), and names it refuses rather than store them changed."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")

import zarrx.xarray as zx  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning")]

WRITERS = {"zarr": lambda ds, path, **kw: ds.to_zarr(path, **kw),
           "zarrx": lambda ds, path, **kw: zx.to_zarrx(ds, path, **kw)}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("lazy", [False, True])
def test_chunks_auto_is_the_default_chunking(tmp_path, fmt, lazy):
    # (to_zarrx refused it: "expected an int or a tuple of ints")
    ds = xr.Dataset({"v": (("t", "y"), np.arange(300_000.0).reshape(1000, 300))})
    ds = ds.chunk(t=100) if lazy else ds
    chunks = {}
    for writer, write in WRITERS.items():
        write(ds, tmp_path / f"{writer}.zarr", zarr_format=fmt,
              encoding={"v": {"chunks": "auto"}})
        chunks[writer] = zarr.open_array(tmp_path / f"{writer}.zarr" / "v").chunks
        xr.testing.assert_identical(xr.open_zarr(tmp_path / f"{writer}.zarr").load(), ds)
    assert chunks["zarrx"] == chunks["zarr"] == ((100, 300) if lazy else (250, 150))


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dim", [0, np.int64(1), ("x", 1)], ids=["int", "numpy-int", "tuple"])
def test_dimension_names_that_are_not_strings_are_refused(tmp_path, fmt, dim):
    # (to_zarrx stored str() of them: dimension 0 read back as "0", and a variable named "0"
    # along it as its index coordinate)
    import re

    import zarrx

    ds = xr.Dataset({"0": ((dim,), [1.0, 2.0])})
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            f"to_zarrx: variable '0': invalid dimension name {dim!r} ({type(dim).__name__}): "
            f"expected a string (what else is stored reads back as another name)")):
        zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt)
    assert not (tmp_path / "z.zarr").exists()


def test_integer_dimension_names_xarrays_writer_stores_in_v2_are_read_as_integers(tmp_path):
    # (engine zarrx refused them: "expected the attribute _ARRAY_DIMENSIONS to list the 1
    # dimension names, found [0]")
    from zarrx.xarray import ZarrxBackendEntrypoint

    ds = xr.Dataset({"c": ((0,), [1.0, 2.0])})
    ds.to_zarr(tmp_path / "z.zarr", zarr_format=2)
    back = xr.open_dataset(tmp_path / "z.zarr", engine=ZarrxBackendEntrypoint).load()
    xr.testing.assert_identical(back, xr.open_zarr(tmp_path / "z.zarr").load())
    xr.testing.assert_identical(back, ds)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("values, dtype", [
    (np.array(["2000-01-01", "2000-01-02"], dtype="datetime64[ns]"), "datetime64[ns]"),
    (np.array([3600, 7200], dtype="timedelta64[s]"), "timedelta64[ns]"),
    (np.array([1.5, 3.0]), "datetime64[s]")], ids=["times", "deltas", "numbers"])
def test_an_encoding_dtype_of_times_is_refused(tmp_path, fmt, values, dtype):
    # (xarray's coders store times as numbers in their units, then cast them to it: both
    # writers stored 2000-01-02 so that it read back as 1970-01-01T00:00:00.000000001)
    import re

    import zarrx

    ds = xr.Dataset({"v": ("t", values)})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"to_zarrx: encoding of 'v': dtype {np.dtype(dtype)}: expected the integer or "
            f"float type to store its values as")):
        zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt, encoding={"v": {"dtype": dtype}})
    assert not (tmp_path / "z.zarr").exists()
    ds.to_zarr(tmp_path / "oracle.zarr", zarr_format=fmt, encoding={"v": {"dtype": dtype}})
    assert not np.array_equal(xr.open_zarr(tmp_path / "oracle.zarr").v.values, values)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("values, dtype, unit", [
    (np.array(["abc", "d"], dtype=object), "U2", "characters"),
    (np.array(["abc", "d"]), "U2", "characters"),
    (np.array(["abc", "d"], dtype=np.dtypes.StringDType()), "U2", "characters"),
    (np.array([b"abc", b"d"]), "S2", "bytes"),
    (np.array([b"abc", b"d"], dtype=object), "S2", "bytes")],
    ids=["objects", "fixed", "stringdtype", "bytes", "object-bytes"])
def test_text_longer_than_the_width_its_encoding_names_is_refused(tmp_path, lazy, values,
                                                                  dtype, unit):
    # (both writers cut it: "abc" was stored as "ab")
    import re

    import zarrx

    ds = xr.Dataset({"s": ("t", values)})
    ds = ds.chunk(t=1) if lazy else ds
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"to_zarrx: variable 's': {values.tolist()[0]!r} is longer than the 2 {unit} of "
            f"{np.dtype(dtype)}, the dtype its encoding names; it would be cut")):
        zx.to_zarrx(ds, tmp_path / "z.zarr", encoding={"s": {"dtype": dtype}})
    fits = ds.isel(t=[1])
    zx.to_zarrx(fits, tmp_path / "z.zarr", mode="w", encoding={"s": {"dtype": dtype}})
    assert zarr.open_array(tmp_path / "z.zarr" / "s").dtype == np.dtype(dtype)
    assert xr.open_zarr(tmp_path / "z.zarr").s.values.tolist() == fits.s.values.tolist()


@pytest.mark.parametrize("values", [np.array(["ab", "zz"], dtype=object),
                                    np.array(["ab", "zz"], dtype=np.dtypes.StringDType())],
                         ids=["objects", "stringdtype"])
@pytest.mark.parametrize("fill", ["zz", 5])
def test_a_fill_value_for_variable_length_strings_in_v3_is_refused(tmp_path, values, fill):
    # (to_zarrx stored it as an attribute engine zarr cannot read back: "Failed to decode
    # fill_value"; xarray's writer refuses it)
    import re

    import zarrx

    ds = xr.Dataset({"s": ("t", values)})
    found = repr(fill if values.dtype.kind == "O" else str(fill))   # (cast by the coders)
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"to_zarrx: variable 's': a _FillValue cannot be given for variable-length strings "
            f"in Zarr v3 (found {found}); drop it from the variable's encoding, or write Zarr "
            f"v2")):
        zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=3, encoding={"s": {"_FillValue": fill}})
    assert not (tmp_path / "z.zarr").exists()
    with pytest.raises(ValueError):
        ds.to_zarr(tmp_path / "oracle.zarr", zarr_format=3, encoding={"s": {"_FillValue": fill}})
    zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=2, encoding={"s": {"_FillValue": fill}})
    back = xr.open_zarr(tmp_path / "z.zarr").load()
    assert back.s.values.tolist()[0] == "ab"


@pytest.mark.parametrize("var, enc, error", [
    ("m", {"calendar": 5}, "AttributeError: 'int' object has no attribute 'lower'"),
    ("s", {"dtype": "S1", "_Encoding": "nope"}, "LookupError: unknown encoding: nope")])
def test_encodings_xarrays_coders_fail_on_are_zarr_errors(tmp_path, var, enc, error):
    # (the coders' AttributeError and LookupError came through as they were)
    import re

    import pandas as pd

    import zarrx

    ds = xr.Dataset({"m": ("t", pd.date_range("2000", periods=2)),
                     "s": ("t", np.array(["a", "b"], dtype=object))})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"to_zarrx: variable {var!r}: xarray's CF encoding refused it ({error})")):
        zx.to_zarrx(ds, tmp_path / "z.zarr", encoding={var: enc})
    assert not (tmp_path / "z.zarr").exists()


@pytest.mark.parametrize("enc", [{"_FillValue": -9}, {"missing_value": -9},
                                 {"dtype": "u1", "_FillValue": 300}],
                         ids=["fill", "missing", "dtype-fill"])
def test_a_fill_value_the_stored_type_cannot_hold_is_an_argument_error(tmp_path, enc):
    # an OverflowError of xarray's coders went through (engine "zarr" raises it too)
    import re

    from zarrx.errors import ArgumentError

    ds = xr.Dataset({"v": ("x", np.array([1, 2], "u2"))})
    value = enc.get("_FillValue", enc.get("missing_value"))
    msg = f"to_zarrx: variable 'v': xarray's CF encoding refused it (OverflowError: Python " \
          f"integer {value} out of bounds for uint"
    with pytest.raises(ArgumentError, match=re.escape(msg)):
        zx.to_zarrx(ds, tmp_path / "a.zarr", encoding={"v": enc})
    assert not (tmp_path / "a.zarr").exists()


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("values, dtype, msg", [
    (np.array([1 + 2j, 3]), "f8", "to_zarrx: encoding of 'v': dtype float64: cannot hold "
                                  "complex numbers"),
    (np.array([1 + 2j, 3]), "i4", "to_zarrx: encoding of 'v': dtype int32: cannot hold "
                                  "complex numbers"),
    (np.array([0.0, 1.5, np.nan]), "bool", "to_zarrx: variable 'v': 1.5 does not fit the "
                                           "booleans of the dtype its encoding names"),
    (np.array([1, 2]), "bool", "to_zarrx: variable 'v': 2 does not fit the booleans")],
    ids=["complex-f8", "complex-i4", "float-bool", "int-bool"])
def test_an_encoding_dtype_that_would_change_the_values_is_refused(tmp_path, values, dtype,
                                                                    msg, lazy):
    # xarray's coders cast them: 1+2j was stored as 1.0, 1.5 and 2 as True
    import re

    from zarrx.errors import ArgumentError

    ds = xr.Dataset({"v": ("x", values)})
    with pytest.raises(ArgumentError, match=re.escape(msg)):
        zx.to_zarrx(ds.chunk() if lazy else ds, tmp_path / "a.zarr",
                    encoding={"v": {"dtype": dtype}})


@pytest.mark.parametrize("values", [np.array([1, 0]), np.array([1.0, 0.0])], ids=["int", "float"])
def test_numbers_that_are_booleans_are_stored_as_the_bool_dtype_names(tmp_path, values):
    ds = xr.Dataset({"v": ("x", values)})
    for writer, write in WRITERS.items():
        write(ds, tmp_path / f"{writer}.zarr", encoding={"v": {"dtype": "bool"}})
    xr.testing.assert_identical(xr.open_zarr(tmp_path / "zarrx.zarr").load(),
                                xr.open_zarr(tmp_path / "zarr.zarr").load())


@pytest.mark.parametrize("value", ["false", "yes", 0, 2, [1]])
@pytest.mark.parametrize("where", ["argument", "encoding"])
@pytest.mark.parametrize("mode", ["w", "a"])
def test_write_empty_chunks_is_a_bool_not_a_truth_value(tmp_path, value, where, mode):
    # "false" was taken by its truth, as True; engine "zarr" refuses anything but a bool
    import re

    from zarrx.errors import ArgumentTypeError
    from zarrx.store import MemoryStore
    store = MemoryStore()
    zx.to_zarrx(xr.Dataset({"v": ("x", [1, 2])}), store)
    before = {k: store.get(k) for k in store.list_prefix("")}
    ds = xr.Dataset({"v": ("x", [0, 0]), "n": ("x", [0, 0])}, attrs={"a": 1})
    found = f"{type(value).__name__} {value!r}"
    if where == "argument":
        kw = {"write_empty_chunks": value}
        msg = f"to_zarrx: write_empty_chunks: expected True, False or None, found {found}"
    else:
        kw = {"encoding": {"n": {"write_empty_chunks": value}}}
        msg = (f"to_zarrx: encoding of 'n': write_empty_chunks: expected True or False, "
               f"found {found}")
    with pytest.raises(ArgumentTypeError, match=re.escape(msg)) as info:
        zx.to_zarrx(ds, store, mode=mode, **kw)
    assert isinstance(info.value, ValueError)       # as engine "zarr" raises
    with pytest.raises(ValueError, match="Expected bool"):
        ds.to_zarr(tmp_path / "z.zarr", mode=mode, **kw)
    assert {k: store.get(k) for k in store.list_prefix("")} == before
    zx.to_zarrx(ds, store, mode=mode, write_empty_chunks=np.bool_(False))
    assert not any(k.startswith("n/c") for k in store.list_prefix(""))     # all fill: not stored


BAD_CF = {
    "scale-text": ("i", {"scale_factor": "x"}),
    "scale-list": ("i", {"scale_factor": [1, 2]}),
    "scale-none-packed": ("v", {"scale_factor": None, "dtype": "i2", "_FillValue": -1}),
    "offset-two": ("i", {"add_offset": [1, 2], "dtype": "i2"}),
    "fill-list-float": ("v", {"_FillValue": [1]}),
    "fill-list-int": ("i", {"_FillValue": [1]}),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("case", list(BAD_CF))
def test_cf_encoding_values_of_the_wrong_kind_name_the_variable(fmt, case):
    # (bare ValueError / TypeError from float() before, in the checks made ahead of xarray's
    # coders and in the Zarr v3 _FillValue attribute)
    import re

    from zarrx.errors import ZarrError
    from zarrx.store import MemoryStore
    name, enc = BAD_CF[case]
    ds = xr.Dataset({"i": ("t", [1, 2, 3]), "v": ("t", [1.5, 2.0, np.nan])})
    store = MemoryStore()
    # (a Zarr v2 _FillValue is the array's fill_value: refused there, naming the array)
    with pytest.raises(ZarrError, match=f"^(to_zarrx: variable|array) {re.escape(repr(name))}"):
        zx.to_zarrx(ds, store, zarr_format=fmt, encoding={name: enc})
    assert not list(store.list_prefix(""))


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_multiindex_is_a_not_implemented_error_that_is_a_zarr_error(fmt):
    # (xarray's own NotImplementedError before, no ZarrError)
    import re

    from zarrx.errors import ArgumentNotImplementedError
    from zarrx.store import MemoryStore
    ds = xr.Dataset({"v": ("z", [1, 2, 3, 4])},
                    coords={"a": ("z", [1, 1, 2, 2]), "b": ("z", [1, 2, 1, 2])})
    store = MemoryStore()
    with pytest.raises(ArgumentNotImplementedError, match=re.escape(
            "to_zarrx: variable 'z': xarray's CF encoding refused it (variable 'z' is a "
            "MultiIndex, which cannot yet be serialized")) as info:
        zx.to_zarrx(ds.set_index(z=["a", "b"]), store, zarr_format=fmt)
    assert isinstance(info.value, NotImplementedError)      # as xarray's writer raises
    assert not list(store.list_prefix(""))
    zx.to_zarrx(ds, store, zarr_format=fmt)     # its levels as coordinates (reset_index)
    xr.testing.assert_identical(xr.open_dataset(store, engine="zarrx").load(), ds)
