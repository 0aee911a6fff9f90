"""Cases found by a random interop round against zarr-python 3.1 (its data type registry end
to end) and tensorstore (codec chains, sharding, both writing into one array)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")


def test_v2_variable_length_bytes_default_fill_value_is_empty_bytes(tmp_path) -> None:
    """A Zarr v2 ``bytes`` array created without a fill value gets ``""`` (b""), as
    zarr-python 3.1 writes it, so chunks holding only b"" are left out as in zarr-python
    (before, ``null``: every chunk written was stored)."""
    ours, theirs = str(tmp_path / "zx.zarr"), str(tmp_path / "zp.zarr")
    z = zarrx.create_array(ours, shape=(3,), chunks=(1,), dtype=bytes, zarr_format=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(theirs, shape=(3,), chunks=(1,), zarr_format=2,
                              dtype=zarr.dtype.VariableLengthBytes())
    for arr in (z, a):
        arr[:] = np.array([b"", b"x", b""], dtype=object)
    assert json.loads((tmp_path / "zx.zarr" / ".zarray").read_text())["fill_value"] == \
        json.loads((tmp_path / "zp.zarr" / ".zarray").read_text())["fill_value"] == ""
    assert z.fill_value == b""
    assert z.nchunks_initialized == a.nchunks_initialized == 1
    assert list(zarr.open_array(ours, mode="r")[...]) == [b"", b"x", b""]
    # fill_value=None still means null (undefined), as in zarr-python
    n = zarrx.create_array(str(tmp_path / "null.zarr"), shape=(3,), chunks=(1,), dtype=bytes,
                           zarr_format=2, fill_value=None)
    assert n.fill_value is None
