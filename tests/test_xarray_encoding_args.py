"""Encoding values ``to_zarrx`` takes as xarray's writer takes them, compared with what engine
"zarr" stores for the same encoding."""
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
