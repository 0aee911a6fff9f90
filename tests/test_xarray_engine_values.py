"""Engine "zarrx" against engine "zarr" (the oracle) on stores that zarr-python and xarray's
writer make as a matter of course, value by value, dtype and encoding included."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

from xarray_checks import WRITERS, read  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


@pytest.mark.parametrize("dtype", ["c8", "c16"])
@pytest.mark.parametrize("fill", [0j, 1 + 1j, complex(np.nan, 0)], ids=["zero", "one", "nan"])
def test_complex_v2_fill_value_masks_as_with_engine_zarr(tmp_path, dtype, fill):
    # a Zarr v2 complex array has a fill value (zarr-python's default is 0j), which both
    # engines read as the CF _FillValue: a numpy complex64, no Python complex
    path = str(tmp_path / "c.zarr")
    g = zarr.open_group(path, mode="w", zarr_format=2)
    a = g.create_array("c", shape=(3,), dtype=dtype, chunks=(2,), fill_value=fill,
                       attributes={"_ARRAY_DIMENSIONS": ["x"]})
    a[...] = np.array([1 + 1j, 0, 2j], dtype=dtype)
    want, got = read(path, "zarr"), read(path, "zarrx")
    xr.testing.assert_identical(got, want)
    assert got.c.dtype == want.c.dtype
    np.testing.assert_equal(got.c.encoding["_FillValue"], want.c.encoding["_FillValue"])


@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_complex_fill_value_round_trip(tmp_path, writer, fmt):
    ds = xr.Dataset({"c": ("x", np.array([1 + 1j, 0, 2j], dtype="c8"))})
    path = str(tmp_path / "c.zarr")
    WRITERS[writer](ds, path, zarr_format=fmt, encoding={"c": {"_FillValue": 0j}})
    want, got = read(path, "zarr"), read(path, "zarrx")
    xr.testing.assert_identical(got, want)
    assert np.isnan(got.c.values[1])
