"""Data types and fill values, continued: byte orders numpy does not cast, fill values given at
creation that the data type cannot hold, and the ``struct`` data type."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [">M8", ">m8"])
def test_v2_unit_less_times_are_stored_big_endian(tmp_path, dtype, order) -> None:
    """numpy casts a unit-less datetime64 / timedelta64 between byte orders without swapping
    its bytes: the chunks of a '>M8' array were stored little-endian and read back as other
    values."""
    path = tmp_path / "t.zarr"
    z = zarrx.create_array(str(path), shape=(3, 2), chunks=(3, 2), dtype=dtype, order=order,
                           zarr_format=2, compressors=None)
    x = np.arange(1, 7, dtype="i8").reshape(3, 2).view(dtype[1:])
    z[...] = x
    stored = (path / "0.0").read_bytes()
    want = (x if order == "C" else x.T).astype(">i8").tobytes()
    assert stored == want
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == x.tolist()
    if dtype == ">m8":       # zarr-python 3.1.6 cannot read a unit-less datetime64 fill value
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert zarr.open_array(str(path), mode="r")[...].tolist() == x.tolist()


@pytest.mark.parametrize("dtype", ["M8", "m8"])
def test_v3_unit_less_times_with_a_big_endian_bytes_codec(tmp_path, dtype) -> None:
    path = tmp_path / "t.zarr"
    z = zarrx.create_array(str(path), shape=(3,), chunks=(3,), dtype=dtype, compressors=None,
                           serializer={"name": "bytes", "configuration": {"endian": "big"}})
    x = np.arange(1, 4, dtype="i8").view(dtype)
    z[...] = x
    assert (path / "c" / "0").read_bytes() == x.view("i8").astype(">i8").tobytes()
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == x.tolist()
