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


@pytest.mark.parametrize("make", ["create", "open_array"])
def test_v2_variable_length_bytes_default_fill_value_in_every_creation_call(tmp_path,
                                                                           make) -> None:
    kw = dict(shape=(3,), chunks=(1,), zarr_format=2)
    for lib, dtype, name in ((zarrx, bytes, "zx"), (zarr, None, "zp")):
        path = str(tmp_path / name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dt = dtype or zarr.dtype.VariableLengthBytes()
            if make == "create":
                lib.create(store=path, dtype=dt, **kw)
            else:
                lib.open_array(path, mode="w", dtype=dt, **kw)
    assert json.loads((tmp_path / "zx" / ".zarray").read_text())["fill_value"] == \
        json.loads((tmp_path / "zp" / ".zarray").read_text())["fill_value"] == ""


def test_zarr_python_unit_less_big_endian_times_are_read_as_stored(tmp_path) -> None:
    """zarr-python 3.1 stores unit-less times of a v2 '>m8' array little-endian (numpy casts
    them between byte orders without swapping): zarrx reads the stored big-endian items, as
    zarr-python reads them back; what zarrx writes zarr-python reads as written."""
    theirs, ours = str(tmp_path / "zp.zarr"), str(tmp_path / "zx.zarr")
    x = np.array([1, 2], "i8").view("m8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(theirs, shape=(2,), chunks=(2,), dtype=">m8", zarr_format=2,
                              compressors=None, fill_value=np.timedelta64(0))
        a[:] = x
        as_read = a[...].view("i8").tolist()
    assert (tmp_path / "zp.zarr" / "0").read_bytes() == x.view("i8").astype("<i8").tobytes()
    assert zarrx.open_array(theirs, mode="r")[...].view("i8").tolist() == as_read \
        == [1 << 56, 2 << 56]
    z = zarrx.create_array(ours, shape=(2,), chunks=(2,), dtype=">m8", zarr_format=2,
                           compressors=None, fill_value=np.timedelta64(0))
    z[:] = x
    assert (tmp_path / "zx.zarr" / "0").read_bytes() == x.view("i8").astype(">i8").tobytes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.open_array(ours, mode="r")[...].view("i8").tolist() == [1, 2]


@pytest.mark.parametrize("fmt", [2, 3])
def test_bytes_fill_value_ending_in_zero_bytes_is_kept_in_chunks(tmp_path, fmt) -> None:
    """zarr-python 3.1 stores the cells it does not write, in a chunk it writes, as a
    ``bytes`` fill value without its trailing zero bytes (b"a\\x00" as b"a"): zarrx reads
    them as stored, and keeps the whole fill value in the chunks it writes."""
    theirs, ours = str(tmp_path / "zp.zarr"), str(tmp_path / "zx.zarr")
    value = np.array([b"x"], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(theirs, shape=(2,), chunks=(2,), zarr_format=fmt,
                              dtype=zarr.dtype.VariableLengthBytes(), fill_value=b"a\x00")
        a[1:2] = value
    assert list(zarrx.open_array(theirs, mode="r")[...]) == list(a[...]) == [b"a", b"x"]
    z = zarrx.create_array(ours, shape=(2,), chunks=(2,), dtype=bytes, fill_value=b"a\x00",
                           zarr_format=fmt)
    z[1:2] = value
    assert list(z[...]) == list(zarr.open_array(ours, mode="r")[...]) == [b"a\x00", b"x"]
