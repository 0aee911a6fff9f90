"""A fill value crosses formats bit for bit or not at all: Zarr v2 writes every NaN as "NaN",
so a v3 NaN with a payload is refused there rather than lost; a fill value of -0.0 stays -0.0;
``verify`` compares fill values bit for bit and tells -0.0 from 0.0 in the data."""
from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

import numpy as np
import pytest

import zarrx
from zarrx.tools.compare import fill_mismatch
from zarrx.tools.convert import convert
from zarrx.tools.compare import mismatch, same_values

PAYLOAD = np.frombuffer(bytes.fromhex("0100c07f"), "<f4")[0]         # the NaN 0x7fc00001
REFUSAL = (".zarray fill_value: Zarr v2 can write only the NaN 0x7fc00000 (\"NaN\"), found "
           "the float32 NaN 0x7fc00001, which it would lose; give another fill value "
           "(fill_value=np.nan, or --fill-value nan) or keep Zarr v3")


def _bits(x) -> bytes:
    return np.asarray(x).tobytes()


@pytest.fixture
def payload_v3(tmp_path):
    z = zarrx.create_array(str(tmp_path / "src.zarr"), shape=(4,), chunks=(2,), dtype="f4",
                           fill_value=PAYLOAD, zarr_format=3)
    z[:2] = 1
    assert json.loads((tmp_path / "src.zarr" / "zarr.json").read_text())["fill_value"] \
        == "0x7fc00001"
    return z


def test_convert_to_v2_refuses_a_nan_fill_value_with_a_payload(tmp_path, payload_v3):
    out = subprocess.run([sys.executable, "-m", "zarrx", "convert", "src.zarr", "v2.zarr",
                          "--zarr-format", "2", "--verify"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr      # what --zarr-format 2 asks for
    assert REFUSAL in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "v2.zarr").exists()


def test_convert_to_v2_with_a_plain_nan_fill_value_asked_for(tmp_path, payload_v3):
    report = convert(str(tmp_path / "src.zarr"), str(tmp_path / "v2.zarr"), zarr_format=2,
                     fill_value=float("nan"), verify=True)
    assert report.ok, str(report)
    b = zarrx.open_array(str(tmp_path / "v2.zarr"))
    assert _bits(b.fill_value) == _bits(np.float32(np.nan))
    np.testing.assert_array_equal(b[:], [1, 1, np.nan, np.nan])


@pytest.mark.parametrize("how", ["from_array", "full_like", "empty_like", "create_array"])
def test_python_conversions_to_v2_refuse_a_nan_fill_value_with_a_payload(tmp_path,
                                                                         payload_v3, how):
    dst = str(tmp_path / "v2.zarr")
    make = {
        "from_array": lambda: zarrx.from_array(dst, data=payload_v3, zarr_format=2),
        "full_like": lambda: zarrx.full_like(payload_v3, store=dst, zarr_format=2),
        "empty_like": lambda: zarrx.empty_like(payload_v3, store=dst, zarr_format=2),
        "create_array": lambda: zarrx.create_array(dst, shape=(4,), dtype="f4",
                                                   fill_value=PAYLOAD, zarr_format=2),
    }[how]
    with pytest.raises(zarrx.MetadataError, match=re.escape(REFUSAL)):
        make()
    assert not (tmp_path / "v2.zarr" / ".zarray").exists()


def test_v3_keeps_the_payload_through_like(tmp_path, payload_v3):
    b = zarrx.full_like(payload_v3, store=str(tmp_path / "like.zarr"))
    assert _bits(zarrx.open_array(str(tmp_path / "like.zarr")).fill_value) == _bits(PAYLOAD)
    assert b.metadata.zarr_format == 3


def test_a_minus_zero_fill_value_is_not_taken_for_zero(tmp_path):
    src = zarrx.create_array(str(tmp_path / "neg.zarr"), shape=(4,), chunks=(2,), dtype="f8",
                             fill_value=-0.0, zarr_format=3)
    src[:2] = 5                 # cells 2 and 3 never stored: they read as -0.0
    report = convert(str(tmp_path / "neg.zarr"), str(tmp_path / "out.zarr"), fill_value=0.0,
                     verify=True)
    assert report.ok, str(report)
    got = zarrx.open_array(str(tmp_path / "out.zarr"))[:]
    assert np.signbit(got).tolist() == [False, False, True, True]


def test_a_minus_zero_fill_value_survives_conversion_to_v2(tmp_path):
    zarrx.create_array(str(tmp_path / "neg.zarr"), shape=(4,), chunks=(2,), dtype="f8",
                       fill_value=-0.0, zarr_format=3)
    assert convert(str(tmp_path / "neg.zarr"), str(tmp_path / "v2.zarr"), zarr_format=2,
                   verify=True).ok
    assert np.signbit(zarrx.open_array(str(tmp_path / "v2.zarr")).fill_value)


def test_verify_compares_the_stored_fill_value_bit_for_bit(tmp_path):
    meta = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(2,), dtype="f8",
                              fill_value=0.0).metadata
    store = zarrx.store.LocalStore(str(tmp_path / "a.zarr"))
    assert fill_mismatch(store, "", meta, "/") is None
    minus = dataclasses.replace(meta, fill_value=np.float64(-0.0))
    assert fill_mismatch(store, "", minus, "/") == \
        "/: fill values differ: expected -0.0, the destination reads 0.0"


@pytest.mark.parametrize("dtype", ["i4", "f8", "M8[s]", "S3", "U2", str, bytes, "i4,f4"])
def test_a_v2_null_fill_value_converts_to_what_its_cells_read_as(tmp_path, dtype):
    """Zarr v3 has no null: the destination's fill value is what zarrx reads the source's
    unstored cells as (zeros, NaT, ""). verify reported "fill values differ: expected 0, the
    destination reads 0" for every such array, and exited 1; and chunks never stored were
    copied as the fill value, block by block."""
    src = zarrx.create_array(str(tmp_path / "src.zarr"), shape=(40,), chunks=(2,),
                             dtype=dtype, zarr_format=2, fill_value=None)
    src[:2] = src[:2]                                   # one chunk stored (of what reads)
    assert json.loads((tmp_path / "src.zarr" / ".zarray").read_text())["fill_value"] is None
    for fmt in (3, 2):
        out = tmp_path / f"v{fmt}.zarr"
        report = convert(str(tmp_path / "src.zarr"), str(out), zarr_format=fmt, verify=True)
        assert report.ok, str(report)
        assert report.arrays[0].blocks == 1              # only the stored one was copied
        got = zarrx.open_array(str(out))
        assert got[...].tobytes() == src[...].tobytes() if got.dtype.kind not in "OT" \
            else got[...].tolist() == src[...].tolist()


@pytest.mark.parametrize("dtype", ["<f2", ">f4", "<f8", "<c8", ">c16"])
def test_verify_tells_minus_zero_from_zero_and_any_nan_from_nan(dtype):
    a = np.zeros((2, 3), dtype)
    swapped = a.astype(a.dtype.newbyteorder("S"))
    assert same_values(a, swapped)
    b = swapped.copy()
    b[1, 2] = -0.0
    assert not same_values(a, b)
    assert mismatch("/x", (slice(0, 2), slice(0, 3)), a, b).startswith(
        "/x[0:2, 0:3]: 1 values differ; first at (1, 2)")
    nan = np.full((2, 3), np.nan, dtype)
    other = nan.copy()
    other.real = -other.real                    # a NaN of another sign; imaginary parts kept
    assert same_values(nan, other)              # a NaN chunk is not stored under a NaN fill
    assert same_values(np.array([PAYLOAD]), np.array([np.nan], "f4"))


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8"])
def test_a_plain_nan_of_either_sign_is_a_v2_fill_value(tmp_path, dtype):
    """0.0 / 0.0 makes the plain NaN with its sign set: written as "NaN", as zarr-python writes
    it (only a payload is refused)."""
    minus = -np.array(np.nan, dtype)
    assert np.signbit(minus)
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(2,), dtype=dtype, fill_value=minus,
                           zarr_format=2)
    assert json.loads((tmp_path / "a.zarr" / ".zarray").read_text())["fill_value"] == "NaN"
    assert np.isnan(z[:]).all()


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"])
def test_verify_takes_a_nan_of_an_ml_float_type_for_the_nan_it_is(tmp_path, name):
    """numpy files most ml_dtypes floats under kind "V", where ``==`` takes a NaN for no value:
    ``verify`` reported a block holding NaN as differing ("source nan, destination nan") and
    exited 1. They are compared as floats now: bit for bit, a NaN equal to any NaN."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    nd = np.dtype(getattr(ml_dtypes, name))
    src = zarrx.create_array(str(tmp_path / "src.zarr"), shape=(6,), chunks=(2,), dtype=name,
                             fill_value=float("nan"))
    src[:4] = np.array([1, np.nan, 4, 0.5], nd)
    report = convert(str(tmp_path / "src.zarr"), str(tmp_path / "v2.zarr"), zarr_format=2,
                     verify=True)
    assert report.ok, str(report)
    a = np.array([1.0, np.nan, 4.0], nd)
    assert same_values(a, a.copy())
    assert not same_values(a, np.array([1.0, np.nan, 2.0], nd))
    if name != "float8_e8m0fnu":                    # it has no sign
        assert not same_values(np.array([0.0], nd), np.array([-0.0], nd))
        assert mismatch("/x", (slice(0, 1),), np.array([0.0], nd), np.array([-0.0], nd)) == \
            "/x[0:1]: 1 values differ; first at (0,): source 0, destination -0"
