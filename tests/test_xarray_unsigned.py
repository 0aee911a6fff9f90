"""The CF ``_Unsigned`` encoding key (netCDF's unsigned data in signed integers, and the
reverse), written by ``to_zarrx`` as engine "zarr" writes it, and read back by either engine."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from xarray_checks import WRITERS, read  # noqa: E402

from zarrx.errors import ArgumentError  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

CASES = {
    # unsigned values stored in signed bytes: 200 is stored as -56
    "true": (np.array([1.0, np.nan, 200.0]),
             {"dtype": "i1", "_Unsigned": "true", "_FillValue": 255}),
    "packed": (np.array([1.0, np.nan, 400.0]),
               {"dtype": "u1", "scale_factor": 2.0, "_FillValue": 255, "_Unsigned": "true"}),
    "false": (np.array([1, -2, 100], dtype="i1"), {"_Unsigned": "false", "_FillValue": -1}),
}


def _write(writer, ds, path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        WRITERS[writer](ds, path, **kw)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_unsigned_encoding_is_written_as_engine_zarr_writes_it(tmp_path, fmt, case):
    # to_zarrx refused the key ("unexpected keys ['_Unsigned']")
    values, enc = CASES[case]
    ds = xr.Dataset({"v": ("x", values)})
    for writer in WRITERS:
        _write(writer, ds, tmp_path / f"{writer}.zarr", encoding={"v": dict(enc)},
               zarr_format=fmt)
    expected = read(tmp_path / "zarr.zarr", "zarr")
    for engine in ("zarr", "zarrx"):
        got = read(tmp_path / "zarrx.zarr", engine)
        xr.testing.assert_identical(got, expected)
        assert got.v.encoding["_Unsigned"] == enc["_Unsigned"]
        assert got.v.encoding["dtype"] == expected.v.encoding["dtype"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_dataset_read_with_unsigned_is_written_back_and_appended_to(tmp_path, fmt):
    # its values (200 read from the stored -56) were refused as not fitting int8
    ds = xr.Dataset({"v": ("x", np.array([1.0, np.nan, 200.0]))})
    _write("zarr", ds, tmp_path / "src.zarr", zarr_format=fmt,
           encoding={"v": {"dtype": "i1", "_Unsigned": "true", "_FillValue": -1}})
    opened = read(tmp_path / "src.zarr", "zarrx")
    zx.to_zarrx(opened, tmp_path / "back.zarr", zarr_format=fmt)
    zx.to_zarrx(opened, tmp_path / "back.zarr", append_dim="x")
    for engine in ("zarr", "zarrx"):
        back = read(tmp_path / "back.zarr", engine)
        np.testing.assert_array_equal(back.v.values, [1.0, np.nan, 200.0] * 2)
        assert back.v.encoding["dtype"] == np.dtype("i1")


def test_unsigned_values_out_of_range_are_refused(tmp_path):
    # (xarray's writer wraps 300 to 44)
    ds = xr.Dataset({"v": ("x", np.array([1.0, np.nan, 300.0]))})
    enc = {"v": {"dtype": "i1", "_Unsigned": "true", "_FillValue": 255}}
    msg = "to_zarrx: variable 'v': 300.0 does not fit the stored uint8 values (0 to 255)"
    with pytest.raises(ArgumentError, match=re.escape(msg)):
        zx.to_zarrx(ds, tmp_path / "a.zarr", encoding=enc)
    assert not (tmp_path / "a.zarr" / "v").exists()


def test_unsigned_without_a_fill_value_is_refused(tmp_path):
    # xarray's coders apply it with a fill value only; engine "zarr" refuses the key then
    ds = xr.Dataset({"v": ("x", np.array([1, 2, 200], dtype="u1"))})
    msg = "to_zarrx: encoding of 'v': _Unsigned 'true' needs a _FillValue (or missing_value)"
    with pytest.raises(ArgumentError, match=re.escape(msg)):
        zx.to_zarrx(ds, tmp_path / "a.zarr", encoding={"v": {"dtype": "i1", "_Unsigned": "true"}})
