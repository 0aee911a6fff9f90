"""``cast_value`` and ``scale_offset`` against exact models (Python integers and fractions),
on values hypothesis draws: integer extremes, ties, values past a type's range."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.codecs import CastValue, ScaleOffset
from zarrx.errors import CodecError

MODES = ["nearest-even", "towards-zero", "towards-positive", "towards-negative",
         "nearest-away"]
INTS = {"int8": (-2**7, 2**7 - 1), "uint8": (0, 2**8 - 1), "int16": (-2**15, 2**15 - 1),
        "int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1), "uint64": (0, 2**64 - 1)}


def round_model(x: Fraction, mode: str) -> int:
    lo = math.floor(x)
    if lo == x:
        return lo
    hi = lo + 1
    if mode == "towards-negative":
        return lo
    if mode == "towards-positive":
        return hi
    if mode == "towards-zero":
        return lo if x > 0 else hi
    d = x - lo
    if d != Fraction(1, 2):
        return hi if d > Fraction(1, 2) else lo
    if mode == "nearest-away":
        return hi if x > 0 else lo
    return lo if lo % 2 == 0 else hi


def range_model(v: int, lo: int, hi: int, oor: str | None) -> int | None:
    if lo <= v <= hi:
        return v
    if oor == "clamp":
        return hi if v > hi else lo
    if oor == "wrap":
        return (v - lo) % (hi - lo + 1) + lo
    return None


floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.integers(-2**70, 2**70).map(lambda i: i / 2),            # ties
    st.integers(-2**66, 2**66).map(float))


@settings(max_examples=300, deadline=None)
@given(x=st.lists(floats, min_size=1, max_size=8), target=st.sampled_from(sorted(INTS)),
       mode=st.sampled_from(MODES), oor=st.sampled_from([None, "clamp", "wrap"]))
def test_float_to_integer_matches_the_model(x, target, mode, oor):
    lo, hi = INTS[target]
    want = [range_model(round_model(Fraction(v), mode), lo, hi, oor) for v in x]
    codec = CastValue(data_type=target, rounding=mode, out_of_range=oor)
    if None in want:
        with pytest.raises(CodecError, match="is out of the range of " + target):
            codec.encode(np.array(x))
    else:
        assert [int(v) for v in codec.encode(np.array(x))] == want


@settings(max_examples=300, deadline=None)
@given(data=st.data(), source=st.sampled_from(sorted(INTS)), target=st.sampled_from(sorted(INTS)),
       oor=st.sampled_from([None, "clamp", "wrap"]))
def test_integer_to_integer_matches_the_model(data, source, target, oor):
    slo, shi = INTS[source]
    x = data.draw(st.lists(st.integers(slo, shi), min_size=1, max_size=8))
    lo, hi = INTS[target]
    want = [range_model(v, lo, hi, oor) for v in x]
    codec = CastValue(data_type=target, out_of_range=oor)
    if None in want:
        with pytest.raises(CodecError, match="is out of the range of " + target):
            codec.encode(np.array(x, dtype=source))
    else:
        assert [int(v) for v in codec.encode(np.array(x, dtype=source))] == want


def _neighbours_ok(x: Fraction, got: float, mode: str, dtype: str) -> bool:
    """``got`` is the ``mode`` rounding of ``x`` among the finite values of ``dtype``."""
    g = Fraction(got)
    t = np.array(got, dtype=dtype)
    up = Fraction(float(np.nextafter(t, np.array(np.inf, dtype))))
    down = Fraction(float(np.nextafter(t, np.array(-np.inf, dtype))))
    if g == x:
        return True
    if mode == "towards-negative":
        return g < x < up
    if mode == "towards-positive":
        return down < x < g
    if mode == "towards-zero":
        return (g < x < up) if x > 0 else (down < x < g)
    other = up if g < x else down
    if abs(x - g) != abs(x - other):
        return abs(x - g) < abs(x - other)
    if mode == "nearest-away":
        return abs(g) > abs(other)
    return int(t.view(np.uint32 if dtype == "float32" else np.uint64)) % 2 == 0


@settings(max_examples=300, deadline=None)
@given(x=st.lists(st.one_of(st.integers(-2**63, 2**63 - 1),
                            st.integers(2**53 - 8, 2**53 + 8),
                            st.integers(2**63 - 4096, 2**63 - 1)), min_size=1, max_size=8),
       mode=st.sampled_from(MODES), target=st.sampled_from(["float32", "float64"]))
def test_int64_to_float_rounds_exactly(x, mode, target):
    got = CastValue(data_type=target, rounding=mode).encode(np.array(x, dtype=np.int64))
    for v, g in zip(x, got.tolist()):
        assert _neighbours_ok(Fraction(v), g, mode, target), (v, g, mode)


@settings(max_examples=300, deadline=None)
@given(x=st.lists(st.one_of(st.integers(0, 2**64 - 1),
                            st.integers(2**64 - 4096, 2**64 - 1),
                            st.integers(2**63 - 4096, 2**63 + 4096)), min_size=1, max_size=8),
       mode=st.sampled_from(MODES), target=st.sampled_from(["float32", "float64"]))
def test_uint64_to_float_rounds_exactly(x, mode, target):
    got = CastValue(data_type=target, rounding=mode).encode(np.array(x, dtype=np.uint64))
    for v, g in zip(x, got.tolist()):
        assert _neighbours_ok(Fraction(v), g, mode, target), (v, g, mode)


@settings(max_examples=200, deadline=None)
@given(x=st.lists(st.floats(-1e30, 1e30, allow_nan=False), min_size=1, max_size=8),
       mode=st.sampled_from(MODES))
def test_float64_to_float32_rounds_exactly(x, mode):
    got = CastValue(data_type="float32", rounding=mode).encode(np.array(x))
    for v, g in zip(x, got.tolist()):
        assert _neighbours_ok(Fraction(v), g, mode, "float32"), (v, g, mode)
        assert math.copysign(1, g) == math.copysign(1, v) or g != 0


@settings(max_examples=300, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(sorted(INTS)))
def test_integer_scale_offset_matches_exact_arithmetic(data, dtype):
    lo, hi = INTS[dtype]
    x = data.draw(st.lists(st.integers(lo, hi), min_size=1, max_size=8))
    offset = data.draw(st.integers(lo, hi))
    scale = data.draw(st.integers(max(lo, -5), min(hi, 5)).filter(bool))
    codec = ScaleOffset(offset=offset, scale=scale)
    steps = [(v - offset, (v - offset) * scale) for v in x]
    if any(not (lo <= s <= hi) for pair in steps for s in pair):
        with pytest.raises(CodecError, match="is out of the range of " + dtype):
            codec.encode(np.array(x, dtype=dtype))
        return
    enc = codec.encode(np.array(x, dtype=dtype))
    assert [int(v) for v in enc] == [p for _, p in steps]
    dec = codec.decode(enc, np.dtype(dtype), enc.shape)
    assert [int(v) for v in dec] == x
