"""A new variable whose encoding packs its numbers into integers (``dtype``, ``scale_factor``,
``add_offset``): refused when they do not fit, where xarray's writer (and zarrx before) stored
them wrapped (400 K packed by 0.01 into int16 read back as -255.36 K) or NaN as 0, as values
appended to such a variable are refused."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

from xarray_checks import read  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("values, enc, message", [
    ([280.0, 400.0], {"dtype": "int16", "scale_factor": 0.01},
     "a value packed by scale_factor/add_offset to 40000.0 does not fit the stored int16 "
     "values (-32768 to 32767)"),
    ([1.0, 70000.0], {"dtype": "int16"}, "70000.0 does not fit the stored int16 values "
                                         "(-32768 to 32767)"),
    ([1, -1], {"dtype": "uint8"}, "-1 does not fit the stored uint8 values (0 to 255)"),
    ([1.0, np.nan], {"dtype": "int16", "scale_factor": 0.1},
     "NaN cannot be stored in the stored int16 values, which have no _FillValue"),
])
def test_new_numbers_their_packing_cannot_hold_are_refused(tmp_path, fmt, lazy, values, enc,
                                                           message):
    ds = xr.Dataset({"v": ("n", np.array(values))})
    ds.v.encoding = enc
    with pytest.raises(zarrx.ArgumentError, match=re.escape(f"to_zarrx: variable 'v': {message}")):
        zx.to_zarrx(ds.chunk(n=1) if lazy else ds, tmp_path / "z.zarr", zarr_format=fmt)


@pytest.mark.parametrize("lazy", [False, True])
def test_new_numbers_their_packing_holds_are_written(tmp_path, lazy):
    ds = xr.Dataset({"v": ("n", np.array([280.25, np.nan, 300.5]))})
    ds.v.encoding = {"dtype": "int16", "scale_factor": 0.01, "add_offset": 280.0,
                     "_FillValue": -32768}
    zx.to_zarrx(ds.chunk(n=1) if lazy else ds, tmp_path / "z.zarr")
    np.testing.assert_allclose(read(tmp_path / "z.zarr", "zarrx").v.values, ds.v.values)
    assert zarrx.open_array(tmp_path / "z.zarr", path="v")[...].tolist() == [25, -32768, 2050]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_dtype_the_coders_refuse_is_named_for_numbers_and_times(tmp_path, lazy):
    for values in (np.array([1.0, 2.5]), np.array(["2000-01-01", "2000-01-02"], "M8[ns]")):
        ds = xr.Dataset({"v": ("n", values)})
        ds.v.encoding = {"dtype": "nope", "units": "days since 2000-01-01"}
        with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
                "to_zarrx: variable 'v': xarray's CF encoding refused it (TypeError: data type "
                "'nope' not understood)")):
            zx.to_zarrx(ds.chunk(n=1) if lazy else ds, tmp_path / "z.zarr")
