"""The arithmetic of numcodecs' delta and fixedscaleoffset filters on integer data: values are
never changed silently by an overflow of the data's own type, and nothing but a CodecError
comes out of a configuration numcodecs' own arithmetic fails on."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError
from zarrx.store import MemoryStore

numcodecs = pytest.importorskip("numcodecs")


def _array(dtype: str, filt: dict, n: int) -> zarrx.Array:
    return zarrx.create_array(MemoryStore(), shape=(n,), chunks=(n,), dtype=dtype,
                              filters=[filt], compressors=None, zarr_format=2, fill_value=0)


def _fso(dtype: str, astype: str, offset, scale) -> dict:
    return {"id": "fixedscaleoffset", "offset": offset, "scale": scale, "dtype": dtype,
            "astype": astype}


# (data type, astype, offset, scale, values): numcodecs computes (x - offset) * scale in the
# data's own type, which wraps (int16: (1 - 1000) * 100 = -99900 becomes 31172) or raises
# OverflowError (an offset the type cannot hold)
FSO_CASES = {
    "i2-wraps": ("<i2", "<i4", 1000, 100, [1, 2, 3, -32768, 32767]),
    "i2-offset-beyond-int16": ("<i2", "<i4", 40000, 1, [1, -32768, 32767]),
    "u1-negative-offset": ("|u1", "<u2", -7, 2, [0, 5, 255]),
    "u2-float-scale": ("<u2", "<i4", 70000, 0.5, [0, 65534, 12]),
    "i8-big": ("<i8", "<i8", -2**40, 2**20, [-2**20, 2**21, 0]),
}


@pytest.mark.parametrize("case", list(FSO_CASES))
def test_fixedscaleoffset_on_integers_does_not_wrap(case) -> None:
    dtype, astype, offset, scale, values = FSO_CASES[case]
    a = np.array(values, dtype=dtype)
    z = _array(dtype, _fso(dtype, astype, offset, scale), len(values))
    z[...] = a
    np.testing.assert_array_equal(z[...], a)
    # what is stored is the exact (x - offset) * scale, which numcodecs decodes back
    stored = np.frombuffer(z.store.get("0"), dtype=astype)
    want = [(int(v) - offset) * scale for v in values]
    assert stored.tolist() == want
    dec = numcodecs.FixedScaleOffset(offset, scale, dtype, astype).decode(stored)
    np.testing.assert_array_equal(np.asarray(dec).view(dtype), a)


def test_fixedscaleoffset_matches_numcodecs_where_numcodecs_does_not_wrap() -> None:
    rng = np.random.default_rng(7)
    for dtype, astype, offset, scale in [("<i2", "<i2", 3, 2), ("<u2", "<u4", 10, 3),
                                         ("<i4", "<f8", -5, 0.25), ("<i4", "<i2", 1.5, 10),
                                         ("<f4", "<i2", 100, 10), ("<f8", "<u2", 0.5, 3.3)]:
        a = rng.integers(-100, 100, 50) if dtype[1] in "if" else rng.integers(10, 200, 50)
        a = a.astype(dtype)
        z = _array(dtype, _fso(dtype, astype, offset, scale), a.size)
        z[...] = a
        want = numcodecs.FixedScaleOffset(offset, scale, dtype, astype).encode(a)
        assert z.store.get("0") == np.asarray(want).tobytes(), (dtype, astype, offset, scale)


@pytest.mark.parametrize("field,value", [("offset", 10**400), ("scale", 10**400),
                                         ("offset", float("nan")), ("scale", float("inf"))])
def test_fixedscaleoffset_refuses_numbers_a_float_cannot_hold(field, value) -> None:
    filt = {**_fso("<i4", "<i4", 0, 1), field: value}
    what = "a finite non-zero number" if field == "scale" else "a finite number"
    with pytest.raises(CodecError, match=re.escape(f"filters[0].{field}: expected {what}")):
        _array("<i4", filt, 3)


# (data type, astype, values) whose differences an integer astype cannot hold: numcodecs
# stores them cast (the chunk then decodes to other values) or raises OverflowError / ValueError
DELTA_LOSSY = {
    "i4-to-i1-difference": ("<i4", "|i1", [5, 6, 7, 1000], "the difference between items 2 "
                            "and 3, 993,"),
    "i4-to-i1-first": ("<i4", "|i1", [1000, 1001], "the first value, 1000,"),
    "u4-to-i2": ("<u4", "<i2", [0, 2986063374], "the difference between items 0 and 1, "
                 "2986063374,"),
    "f8-to-i2-fraction": ("<f8", "<i2", [1.0, 2.5], "the difference between items 0 and 1, 1.5,"),
    "f8-to-i2-nan": ("<f8", "<i2", [1.0, 2.0, float("nan")], "the difference between items 1 "
                     "and 2, nan,"),
    "i8-to-f4": ("<i8", "<f4", [0, 2**40 + 1], "the difference between items 0 and 1, "
                 "1099511627777,"),
}


@pytest.mark.parametrize("case", list(DELTA_LOSSY))
def test_delta_refuses_differences_its_astype_loses(case) -> None:
    dtype, astype, values, what = DELTA_LOSSY[case]
    z = _array(dtype, {"id": "delta", "dtype": dtype, "astype": astype}, len(values))
    msg = (f"numcodecs.delta: {what} is not held exactly by astype {np.dtype(astype).str} "
           f"(data type {np.dtype(dtype).str})")
    with pytest.raises(CodecError, match=re.escape(msg)):
        z[...] = np.array(values, dtype=dtype)


# differences that wrap modulo the width of an integer astype at least as wide decode back
DELTA_LOSSLESS = {
    "i2-to-u2": ("<i2", "<u2", [-30000, 30000, 5, -7]),
    "u1-to-i1": ("|u1", "|i1", [0, 255, 3, 200]),
    "i2-to-i4": ("<i2", "<i4", [-30000, 30000, -30000]),
    "i4-to-i1-small-steps": ("<i4", "|i1", [3, 5, -100, -120]),
    "f8-to-i2-integral": ("<f8", "<i2", [1.0, -4.0, 300.0]),
}


@pytest.mark.parametrize("case", list(DELTA_LOSSLESS))
def test_delta_writes_what_decodes_back_as_numcodecs_does(case) -> None:
    dtype, astype, values = DELTA_LOSSLESS[case]
    a = np.array(values, dtype=dtype)
    z = _array(dtype, {"id": "delta", "dtype": dtype, "astype": astype}, len(values))
    z[...] = a
    np.testing.assert_array_equal(z[...], a)
    assert z.store.get("0") == np.asarray(numcodecs.Delta(dtype, astype).encode(a)).tobytes()
