"""Stored configurations of the codecs zarrx runs through numcodecs that their libraries do
not survive: a zfpy fixed rate giving a block fewer bits than its sign and exponent (zfp
writes past its buffer: the process crashes) or more than its header holds (the values read
back are wrong) is refused before zfp is called; a pcodec configuration that makes pcodec's
Rust code panic (pyo3's PanicException, a BaseException) is a CodecError."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError
from zarrx.store import MemoryStore

pytest.importorskip("numcodecs")


def _array(codec: dict, dtype: str = "float64", ndim: int = 1):
    store = MemoryStore()
    store.set("zarr.json", json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [20] * ndim, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8] * ndim}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [codec]}).encode())
    return zarrx.open_array(store, mode="r+")


_ZFP_RATES = r'''
import json, sys
import numpy as np
import zarrx
from zarrx.errors import CodecError
from zarrx.store import MemoryStore
for rate, dtype in json.loads(sys.argv[1]):
    store = MemoryStore()
    store.set("zarr.json", json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [20], "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
        "codecs": [{"name": "numcodecs.zfpy", "configuration": {"mode": 2, "rate": rate}}]}
        ).encode())
    a = zarrx.open_array(store, mode="r+")
    try:
        a[:] = np.arange(20)
    except CodecError as exc:
        print(rate, dtype, "CodecError", str(exc).split(": ", 2)[-1][:90], flush=True)
    else:
        print(rate, dtype, "written", flush=True)
'''


def test_zfpy_rates_zfp_cannot_encode_refused():
    pytest.importorskip("zfpy")
    cases = [[0, "float64"], [1, "float32"], [2.75, "float64"], [1e9, "float64"],
             [3, "float64"], [2.25, "float32"], [-1, "float64"], [8192, "float64"]]
    run = subprocess.run([sys.executable, "-c", _ZFP_RATES, json.dumps(cases)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.returncode, run.stdout, run.stderr[-2000:])
    got = run.stdout.splitlines()
    refused = [line.split(" CodecError ") for line in got[:4]]
    assert [r[0] for r in refused] == ["0 float64", "1 float32", "2.75 float64",
                                       "1000000000.0 float64"], got
    assert refused[0][1].startswith("rate 0: zfp encodes a 1-d array of float64 at a rate "
                                    "from 2.875 to 8192.12 bits a value"), got
    assert refused[1][1].startswith("rate 1: zfp encodes a 1-d array of float32 at a rate "
                                    "from 2.125 to"), got
    assert got[4:] == ["3 float64 written", "2.25 float32 written", "-1 float64 written",
                       "8192 float64 written"]


def test_zfpy_rate_bounds_follow_the_chunk_dimensions():
    """(checked without calling zfp: a rate it cannot take would crash the test process)"""
    from zarrx.codecs.zfp_stream import check_rate
    with pytest.raises(CodecError, match=r"rate 0\.5: zfp encodes a 2-d array of float64 at a "
                       r"rate from 0\.71875 to 2048\.03 bits a value \(12 to 32768 bits a "
                       r"block of 16 values\)"):
        check_rate("numcodecs.zfpy", {"mode": 2, "rate": 0.5}, np.dtype("f8"), 2)
    check_rate("numcodecs.zfpy", {"mode": 2, "rate": 0.75}, np.dtype("f8"), 2)
    check_rate("numcodecs.zfpy", {"mode": 4, "rate": 0}, np.dtype("f8"), 2)   # not used
    with pytest.raises(CodecError, match=r"rate 200: zfp encodes a 4-d array of int32 at a "
                       r"rate from 0\.00195312 to 128\.002"):
        check_rate("numcodecs.zfpy", {"mode": 2, "rate": 200}, np.dtype("i4"), 4)
    check_rate("numcodecs.zfpy", {"mode": 2, "rate": 0.25}, np.dtype("i4"), 4)


def test_pcodec_panic_is_a_codec_error():
    pytest.importorskip("pcodec")
    a = _array({"name": "numcodecs.pcodec", "configuration": {"equal_pages_up_to": 0}})
    with pytest.raises(CodecError, match=r"numcodecs\.pcodec: numcodecs encode failed: "
                       r"PanicException: attempt to divide by zero"):
        a[:] = np.arange(20.0)
    a = _array({"name": "numcodecs.pcodec", "configuration": {"level": 8}})
    a[:] = np.arange(20.0)          # the process goes on
    np.testing.assert_array_equal(a[:], np.arange(20.0))


def test_pcodec_decodes_into_the_chunk_size(monkeypatch):
    """A pcodec stream whose header claims millions of values more than the chunk holds is
    refused without decoding them: pcodec decodes into an array of the chunk's size
    (``simple_decompress``, which allocates what the stream claims, is not called)."""
    pytest.importorskip("pcodec")
    from pcodec import standalone
    a = zarrx.create_array(MemoryStore(), shape=(1000,), chunks=(1000,), dtype="f8",
                           serializer={"name": "numcodecs.pcodec"}, compressors=None)
    a[:] = np.arange(1000.0)
    stream = bytes(a.store.get("c/0"))
    at = stream.find((999).to_bytes(3, "little"), 0, 24)    # the count of values, less one
    if at < 0:
        pytest.skip("this pcodec version stores the count of values otherwise")

    def refuse(*args, **kwargs):
        raise AssertionError("simple_decompress called")

    monkeypatch.setattr(standalone, "simple_decompress", refuse)
    np.testing.assert_array_equal(a[:], np.arange(1000.0))
    a.store.set("c/0", stream[:at + 2] + b"\xff" + stream[at + 3:])  # 16,712,680 values
    with pytest.raises(CodecError, match=r"chunk 'c/0': numcodecs\.pcodec: numcodecs decode "
                       r"returned more items of float64; expected 1000 \(a chunk of shape "
                       r"\(1000,\)\)"):
        a[:]
