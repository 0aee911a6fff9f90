"""What the tests of test_xarray_*.py share: the sample Dataset (every kind of variable,
coordinate and attribute) and reading it with engine "zarr" or "zarrx"."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


ENGINE = ZarrxBackendEntrypoint        # the entry point is used by name where it is installed


def sample(n_time=6):
    rng = np.random.default_rng(0)
    temp = rng.normal(280, 5, (n_time, 3, 4)).astype("f4")
    temp[0, 0, 0] = np.nan
    ds = xr.Dataset(
        {"temp": (("time", "y", "x"), temp, {"units": "K", "valid": np.array([1.5, 2.0]),
                                             "count": np.int64(3), "note": "ok"}),
         "count": (("time",), np.arange(n_time, dtype="f4")),
         "label": (("y",), np.array(["a", "bb", "ccc"])),
         "vlen": (("y",), np.array(["α", "", "longer text"], dtype=object)),
         "flag": (("x",), np.array([True, False, True, True])),
         "raw": (("x",), np.array([b"x", b"yy", b"", b"z"]))},
        coords={"time": pd.date_range("2000-01-01", periods=n_time, freq="6h"),
                "y": [10, 20, 30], "x": np.linspace(0, 1, 4),
                "lat": (("y",), np.array([1.0, 2.0, 3.0]))},
        attrs={"title": "sample", "history": ["a", "b"], "version": 2})
    ds["count"][2] = np.nan                     # stored as int16 with -1 for missing
    ds["count"].encoding.update({"dtype": "i2", "_FillValue": -1})
    return ds


def load(path, engine, **kw):
    if engine == "zarr":
        return xr.open_zarr(path, **kw).load()
    return xr.open_dataset(path, engine=ENGINE, **kw).load()
