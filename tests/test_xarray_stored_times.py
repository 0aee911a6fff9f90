"""Times and time deltas appended (or written in a region) to a variable stored as integers in
given units: refused when the stored integers cannot hold them exactly, where xarray's writer
(and zarrx before) stored them wrapped, in other units than the stored ones, or NaT as 0. Times
read from a Zarr array of datetime64 or timedelta64 are written back as xarray's writer stores
them."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

from xarray_checks import read  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def stored(path):
    return {name: zarrx.open_array(path, path=name)[...].tolist() for name in ("o", "lag")}


def first(tenc):
    ds = xr.Dataset({"o": ("n", pd.to_datetime(["2000-01-01", "2000-01-02"])),
                     "lag": ("n", np.array([1, 2], dtype="timedelta64[s]"))})
    ds.o.encoding = {"units": "seconds since 2000-01-01", "dtype": "int32", **tenc}
    ds.lag.encoding = {"units": "seconds", "dtype": "int16"}
    return ds


def more(when, lag=3):
    return xr.Dataset({"o": ("n", np.array([when, "2000-01-04"], dtype="datetime64[ns]")),
                       "lag": ("n", np.array([lag, 4], dtype="timedelta64[s]"))})


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("tenc, values, message", [
    # 2100 wrapped to 1963 in int32 seconds
    ({}, more("2100-01-01"), "'o': a value encoded as 3155760000 'seconds since 2000-01-01' "
                             "does not fit the stored int32 values (-2147483648 to 2147483647)"),
    # stored in milliseconds under the stored "seconds" units: read back in 2005
    ({}, more("2000-01-03T00:00:00.5"), "'o': its values cannot be stored exactly as int32 "
                                        "'seconds since 2000-01-01', the stored variable's "
                                        "units (they would need 'milliseconds since "
                                        "2000-01-01')"),
    # NaT stored as 0: read back as 2000-01-01
    ({}, more("NaT"), "'o': NaT cannot be stored in the stored int32 values, which have no "
                      "_FillValue"),
    ({"_FillValue": -1}, more("2000-01-03", 40000), "'lag': a value encoded as 40000 'seconds' "
                                                    "does not fit the stored int16 values "
                                                    "(-32768 to 32767)"),
])
def test_times_the_stored_integers_cannot_hold_exactly_are_refused(tmp_path, fmt, lazy, tenc,
                                                                   values, message):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(first(tenc), path, zarr_format=fmt)
    before = stored(path)
    for kw in ({"append_dim": "n"}, {"region": {"n": slice(0, 2)}}):
        with pytest.raises(zarrx.ArgumentError, match=re.escape(
                f"to_zarrx: variable {message}")):
            zx.to_zarrx(values.chunk(n=1) if lazy else values, path, **kw)
        if not lazy:        # (dask values: blocks before a refused one may be written)
            assert stored(path) == before


@pytest.mark.parametrize("fmt", [2, 3])
def test_times_the_stored_integers_hold_are_appended(tmp_path, fmt):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(first({"_FillValue": -1}), path, zarr_format=fmt)
    zx.to_zarrx(more("NaT").chunk(n=1), path, append_dim="n")
    zx.to_zarrx(more("2001-01-01"), path, append_dim="n")
    got = read(path, "zarrx")
    np.testing.assert_array_equal(got.o.values, np.array(
        ["2000-01-01", "2000-01-02", "NaT", "2000-01-04", "2001-01-01", "2000-01-04"],
        dtype="datetime64[ns]"))
    assert (got.lag.values / np.timedelta64(1, "s")).tolist() == [1, 2, 3, 4, 3, 4]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("values, enc, message", [
    (["2000-01-01", "2100-01-01"], {}, "a value encoded as 3155760000 'seconds since "
                                       "2000-01-01' does not fit the stored int32 values "
                                       "(-2147483648 to 2147483647)"),
    (["2000-01-01", "NaT"], {}, "NaT cannot be stored in the stored int32 values, which have "
                                "no _FillValue"),
])
def test_new_times_the_integers_of_their_encoding_cannot_hold_are_refused(tmp_path, lazy,
                                                                          values, enc, message):
    # engine "zarr" (and zarrx before) stored 2100 as 1963 and NaT as 2000-01-01
    ds = xr.Dataset({"o": ("n", np.array(values, dtype="datetime64[ns]"))})
    ds.o.encoding = {"units": "seconds since 2000-01-01", "dtype": "int32", **enc}
    with pytest.raises(zarrx.ArgumentError, match=re.escape(f"to_zarrx: variable 'o': {message}")):
        zx.to_zarrx(ds.chunk(n=1) if lazy else ds, tmp_path / "z.zarr")
    ds.o.encoding["_FillValue"] = -1
    if "NaT" in values:
        zx.to_zarrx(ds.chunk(n=1) if lazy else ds, tmp_path / "z.zarr", mode="w")
        xr.testing.assert_identical(read(tmp_path / "z.zarr", "zarrx"), ds)


def test_new_dask_times_needing_finer_units_than_their_encoding_are_an_argument_error(tmp_path):
    # (values in memory are stored in the finer units, as xarray's coders store them)
    ds = xr.Dataset({"o": ("n", np.array(["2000-01-01", "2000-01-01T00:00:00.5"],
                                         dtype="datetime64[ns]"))})
    ds.o.encoding = {"units": "seconds since 2000-01-01", "dtype": "int32"}
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "to_zarrx: variable 'o': its values cannot be stored exactly as int32 'seconds "
            "since 2000-01-01', its encoding's units (they would need 'milliseconds since "
            "2000-01-01')")):
        zx.to_zarrx(ds.chunk(n=1), tmp_path / "z.zarr")
    zx.to_zarrx(ds, tmp_path / "z.zarr", mode="w")
    xr.testing.assert_identical(read(tmp_path / "z.zarr", "zarrx"), ds)


@pytest.mark.parametrize("lazy", [False, True])
def test_time_units_the_coders_cannot_parse_are_an_argument_error(tmp_path, lazy):
    # (xarray's coders raise a KeyError: 'ds')
    ds = xr.Dataset({"o": ("n", np.array(["2000-01-01", "2000-01-03"], dtype="datetime64[ns]"))})
    ds.o.encoding = {"units": "d since 2000-01-01", "dtype": "int32"}
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "to_zarrx: variable 'o': xarray's CF encoding refused it (KeyError: 'ds')")):
        zx.to_zarrx(ds.chunk(n=1) if lazy else ds, tmp_path / "z.zarr")


@pytest.mark.parametrize("units", ["day since 2000-01-01", "Days since 2000-1-1"])
def test_times_are_appended_in_units_spelled_otherwise(tmp_path, units):
    # (as another writer may spell them; xarray's coders spell them "days since 2000-01-01")
    ds = xr.Dataset({"v": ("time", [1.0, 2.0])},
                    coords={"time": np.array(["2000-01-01", "2000-01-02"], "M8[ns]")})
    ds.time.encoding = {"dtype": "int32"}
    zx.to_zarrx(ds, tmp_path / "z.zarr", consolidated=False)
    zarrx.open_array(tmp_path / "z.zarr", path="time", mode="r+").attrs["units"] = units
    more = xr.Dataset({"v": ("time", [3.0])}, coords={"time": np.array(["2000-01-03"], "M8[ns]")})
    for values in (more, more.chunk()):
        zx.to_zarrx(values, tmp_path / "z.zarr", append_dim="time")
    assert zarrx.open_array(tmp_path / "z.zarr", path="time")[...].tolist() == [0, 1, 2, 2]


@pytest.mark.parametrize("first_writer", ["zarr", "zarrx"])
@pytest.mark.parametrize("lazy", [False, True])
def test_nat_alone_is_appended_to_times_stored_as_int64(tmp_path, first_writer, lazy):
    # (NaT needs no unit: a block of NaT alone asked xarray's coders for seconds, refused)
    ds = xr.Dataset({"v": ("t", np.array([0, 0], dtype="i1"))},
                    coords={"t": np.array(["2001-09-09T01:46:40", "NaT"], dtype="M8[ns]")})
    path = tmp_path / "z.zarr"
    head, tail = ds.isel(t=[0]), ds.isel(t=[1])
    head.to_zarr(path) if first_writer == "zarr" else zx.to_zarrx(head, path)
    zx.to_zarrx(tail.chunk() if lazy else tail, path, append_dim="t")
    for engine in ("zarr", "zarrx"):
        xr.testing.assert_identical(read(path, engine), ds)


@pytest.mark.parametrize("calendar", ["standard", "gregorian"])
def test_new_dask_times_with_blocks_of_nat_alone_are_written(tmp_path, calendar):
    # (a block of NaT alone in calendar "standard": xarray's coders compared its earliest
    # time, None, with the Gregorian reform, a TypeError)
    times = np.array(["NaT", "2000-01-02", "NaT", "NaT"], dtype="M8[ns]")
    ds = xr.Dataset({"d": ("t", times)}).chunk({"t": 2})
    ds.d.encoding = {"units": "days since 2000-01-01", "calendar": calendar, "dtype": "i8"}
    path = tmp_path / "z.zarr"
    zx.to_zarrx(ds, path, compute=False).compute()
    for engine in ("zarr", "zarrx"):
        np.testing.assert_array_equal(read(path, engine).d.values, times)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("fill", [None, -1])
@pytest.mark.parametrize("how", ["append", "region", "delayed"])
def test_dask_blocks_of_nat_alone_are_written_to_times_stored_in_days(tmp_path, fmt, fill, how):
    # (the reference date xarray's coders chose, 10:55:13, is no whole day after 1970-01-01:
    # their lazy encoding refused a block of NaT alone, "Times can't be serialized faithfully",
    # a ValueError, where the same values held in memory are written)
    times = np.array(["2000-01-12T10:55:13", "2000-01-13T10:55:13"], dtype="M8[ns]")
    ds = xr.Dataset({"d": ("t", times)})
    path = tmp_path / "z.zarr"
    zx.to_zarrx(ds, path, zarr_format=fmt,
                encoding={} if fill is None else {"d": {"_FillValue": fill}})
    assert read(path, "zarr", decode_times=False).d.attrs["units"] == \
        "days since 2000-01-12 10:55:13"
    nat = xr.Dataset({"d": ("t", np.array(["NaT", "NaT", "2000-01-15T10:55:13"],
                                          dtype="M8[ns]"))}).chunk({"t": 2})
    if how == "append":
        zx.to_zarrx(nat, path, append_dim="t")
        want = np.concatenate([times, nat.d.values])
    else:
        zx.to_zarrx(nat.isel(t=slice(0, 2)), path, region={"t": slice(0, 2)},
                    compute=how == "region")
        if how == "delayed":
            zx.to_zarrx(nat.isel(t=slice(0, 2)), path, region={"t": slice(0, 2)},
                        compute=False).compute()
        want = nat.d.values[:2]
    for engine in ("zarr", "zarrx"):
        np.testing.assert_array_equal(read(path, engine).d.values, want)
    raw = zarrx.open_array(str(path), path="d")[...]
    assert raw[np.isnat(want)].tolist() == [np.iinfo("i8").min if fill is None else fill] * \
        int(np.isnat(want).sum())


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("reader", ["zarr", "zarrx"])
@pytest.mark.parametrize("values", [
    np.array(["2000-01-01", "2000-01-02T12", "NaT"], dtype="datetime64[ns]"),
    np.array([3600, -5, "NaT"], dtype="timedelta64[s]")], ids=["times", "deltas"])
def test_times_read_from_a_datetime64_array_are_written_back(tmp_path, fmt, reader, values):
    # (their NaT fill value, for the integers xarray's coders store them as, was refused:
    # "expected a fill value for int64, found None")
    import zarr

    from xarray_checks import WRITERS
    from test_xarray_random import _documents

    group = zarr.open_group(tmp_path / "src.zarr", mode="w", zarr_format=fmt)
    arr = group.create_array("v", shape=(3,), dtype=values.dtype, chunks=(3,),
                             dimension_names=["t"] if fmt == 3 else None)
    arr[...] = values
    if fmt == 2:
        arr.attrs["_ARRAY_DIMENSIONS"] = ["t"]
    source = read(tmp_path / "src.zarr", reader)
    for writer, write in WRITERS.items():
        write(source, tmp_path / f"{writer}.zarr", zarr_format=fmt)
    assert _documents(tmp_path / "zarrx.zarr") == _documents(tmp_path / "zarr.zarr")
    for engine in ("zarr", "zarrx"):
        back = read(tmp_path / "zarrx.zarr", engine)
        xr.testing.assert_identical(back, read(tmp_path / "zarr.zarr", engine))
        np.testing.assert_array_equal(back.v.values, values)


@pytest.mark.parametrize("dtype", ["bool", "S8", "U3", "datetime64[ns]"])
@pytest.mark.parametrize("values", [
    np.array(["2000-01-01", "2000-01-02"], dtype="datetime64[ns]"),
    np.array([3600, 5], dtype="timedelta64[s]")], ids=["times", "deltas"])
def test_an_encoding_dtype_other_than_numbers_is_refused_for_times(tmp_path, values, dtype):
    # (bool was taken: xarray's coders cast the encoded numbers to it, and neither engine
    # could read the variable back)
    ds = xr.Dataset({"o": ("n", values)})
    msg = (f"to_zarrx: encoding of 'o': dtype {np.dtype(dtype)}: expected the integer or float "
           f"type to store its values as")
    with pytest.raises(zarrx.ArgumentError, match=re.escape(msg)):
        zx.to_zarrx(ds, tmp_path / "z.zarr", encoding={"o": {"dtype": dtype}})
    assert not (tmp_path / "z.zarr").exists()


@pytest.mark.parametrize("lazy", [False, True])
def test_times_needing_cftime_where_it_is_missing_say_so(tmp_path, lazy, monkeypatch):
    # before: xarray's AttributeError ('NoneType' object has no attribute 'num2date') from the
    # graph, naming nothing (values in memory: an ArgumentTypeError naming the variable only)
    import xarray.coding.times as times
    monkeypatch.setattr(times, "cftime", None)     # (as where cftime is not installed)
    ds = xr.Dataset({"when": ("t", np.array(["2262-04-01", "1677-09-22"], "datetime64[ns]"))})
    ds = ds.chunk() if lazy else ds
    enc = {"when": {"units": "hours since 1999-12-31 06:00", "dtype": "i8"}}
    with pytest.raises(zarrx.errors.MissingDependencyError,
                       match=r"^to_zarrx: variable 'when': xarray's CF encoding refused it "
                             r"\(AttributeError: .*num2date.*\); times too far from the "
                             r"reference date to count in nanoseconds are encoded with the "
                             r"cftime package, which is not installed"):
        zx.to_zarrx(ds, tmp_path / "a.zarr", encoding=enc)
