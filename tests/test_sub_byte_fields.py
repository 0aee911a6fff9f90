"""Fields narrower than their byte (``int4``, ``float4_e2m1fn``... inside a structured type, at
any depth, subarrays included) read from their low bits, as the plain types do
(tests/test_interop_sub_byte.py): the upper bits of their byte are ignored by readers. zarrx read
them as stored, so a field holding ``0xfe`` compared equal to ``-2`` but its bytes did not:
a chunk of the fill value was kept, and a copy carried the bits on. Fill values given as bit
patterns (``"0xfe"`` for ``int4``) or base64 read the same way."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest

import zarrx

ml_dtypes = pytest.importorskip("ml_dtypes", reason="the sub-byte types come from ml_dtypes")
I4 = np.dtype(ml_dtypes.int4)
F4 = np.dtype(ml_dtypes.float4_e2m1fn)

# (dtype, the mask of one item's bytes)
TYPES = {
    "int4,i2": (np.dtype([("a", I4), ("b", "<i2")]), [0x0F, 0xFF, 0xFF]),
    "u1,f4e2m1": (np.dtype([("a", "u1"), ("b", F4)]), [0xFF, 0x0F]),
    "nested": (np.dtype([("s", [("x", "u1"), ("y", np.dtype(ml_dtypes.uint2))]), ("t", I4)]),
               [0xFF, 0x03, 0x0F]),
}
# Zarr v2 (zarr-python 2, tensorstore's zarr driver) keeps subarray fields
SUBARRAY = (np.dtype([("a", I4, (3,)), ("b", "u1")]), [0x0F, 0x0F, 0x0F, 0xFF])


def _stored_key(path, fmt: int):
    return path / ("0" if fmt == 2 else "c/0")


def _cases():
    for name, (dt, mask) in TYPES.items():
        for fmt in (2, 3):
            yield pytest.param(dt, mask, fmt, id=f"{name}-v{fmt}")
    yield pytest.param(*SUBARRAY, 2, id="subarray-v2")


@pytest.mark.parametrize("dt,mask,fmt", list(_cases()))
def test_upper_bits_of_narrow_fields_are_ignored(tmp_path, dt, mask, fmt):
    path = tmp_path / "a.zarr"
    z = zarrx.create_array(str(path), shape=(4,), chunks=(4,), dtype=dt, compressors=None,
                           zarr_format=fmt)
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 256, size=4 * dt.itemsize, dtype=np.uint8)
    _stored_key(path, fmt).parent.mkdir(exist_ok=True)
    _stored_key(path, fmt).write_bytes(raw.tobytes())
    want = (raw.reshape(4, -1) & np.array(mask, np.uint8)).tobytes()
    got = zarrx.open_array(str(path), mode="r")
    assert got[...].tobytes() == want
    assert got[1:3].tobytes() == want[dt.itemsize:3 * dt.itemsize]
    assert got.oindex[[3]].tobytes() == want[3 * dt.itemsize:]
    assert z[...].tobytes() == want


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_chunk_of_the_fill_value_with_upper_bits_set_is_dropped(tmp_path, fmt):
    """A chunk another writer filled with sign-extended fill values is all fill value: a
    write that leaves it so deletes it (write_empty_chunks=False)."""
    dt = TYPES["int4,i2"][0]
    path = tmp_path / "a.zarr"
    fill = np.array((-2, 7), dtype=dt)[()]
    z = zarrx.create_array(str(path), shape=(4,), chunks=(2,), dtype=dt, compressors=None,
                           zarr_format=fmt, fill_value=fill,
                           config={"write_empty_chunks": False})
    z[:] = np.array([(1, 1)] * 4, dtype=dt)
    key = _stored_key(path, fmt)
    key.write_bytes(b"\xfe\x07\x00" * 2)                # the fill value, sign-extended
    z = zarrx.open_array(str(path), mode="r+", config={"write_empty_chunks": False})
    assert z[:2].tobytes() == b"\x0e\x07\x00" * 2
    z[0] = fill                                         # unchanged: all fill value
    assert not key.exists()


@pytest.mark.parametrize("fmt", [2, 3])
def test_fill_values_with_upper_bits_set_read_as_their_value(tmp_path, fmt):
    dt = TYPES["int4,i2"][0]
    z = zarrx.create_array(str(tmp_path / "a"), shape=(2,), chunks=(2,), dtype=dt,
                           zarr_format=fmt)
    doc_path = tmp_path / "a" / (".zarray" if fmt == 2 else "zarr.json")
    doc = json.loads(doc_path.read_text())
    doc["fill_value"] = base64.b64encode(b"\xfe\x07\x00").decode()
    if fmt == 3:                                        # the v3 structured type: base64 too
        assert doc["data_type"]["name"] == "structured"
    doc_path.write_text(json.dumps(doc))
    z = zarrx.open_array(str(tmp_path / "a"), mode="r")
    assert np.array(z.fill_value, dtype=dt).tobytes() == b"\x0e\x07\x00"
    assert z[...].tobytes() == b"\x0e\x07\x00" * 2


@pytest.mark.parametrize("name,spelled,bits", [("int4", "0xfe", 0x0E),
                                               ("float4_e2m1fn", "0xff", 0x0F),
                                               ("uint2", "0xff", 0x03)])
def test_bit_pattern_fill_values_of_narrow_types_read_as_their_value(tmp_path, name, spelled,
                                                                     bits):
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": name,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": spelled,
           "codecs": [{"name": "bytes"}]}
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    z = zarrx.open_array(str(tmp_path), mode="r+", config={"write_empty_chunks": False})
    assert np.array(z.fill_value, dtype=z.dtype).view(np.uint8) == bits
    assert z[...].tobytes() == bytes([bits]) * 4
    z[:2] = np.frombuffer(bytes([bits]) * 2, dtype=z.dtype)
    assert not (tmp_path / "c" / "0").exists()


def test_tensorstore_struct_fields_of_narrow_types_interoperate(tmp_path):
    ts = pytest.importorskip("tensorstore", reason="tensorstore writes the array")
    spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path)}}
    t = ts.open({**spec, "field": "a", "metadata": {
        "shape": [4], "chunks": [4], "dtype": [["a", "int4"], ["b", "<i2"]],
        "compressor": None}}, create=True).result()
    t[:] = np.array([-2, 1, 7, -8]).astype(I4)
    z = zarrx.open_array(str(tmp_path), mode="r+")
    assert z["a"].astype(np.int8).tolist() == [-2, 1, 7, -8]
    z[1] = np.array((-1, 5), dtype=z.dtype)
    got = ts.open({**spec, "field": "a"}).result().read().result()
    assert got.astype(np.int8).tolist() == [-2, -1, 7, -8]


@pytest.mark.parametrize("name", sorted(TYPES))
def test_shards_of_small_zstd_inner_chunks_ignore_the_upper_bits_too(tmp_path, name):
    """A whole shard of small inner chunks is decoded many chunks at a time
    (zarrx.shard_read); the mask of a structured item applies item by item there too (it
    raised numpy's ValueError 'The truth value of an array ... is ambiguous')."""
    dt, mask = TYPES[name]
    raw_dt = np.dtype([(f"f{i}", "u1") for i in range(dt.itemsize)])
    kw = dict(shape=(8, 8), chunks=(2, 2), shards=(8, 8), zarr_format=3,
              compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 256, size=(8, 8, dt.itemsize), dtype=np.uint8)
    zarrx.create_array(str(tmp_path / "raw"), dtype=raw_dt, **kw)[...] = \
        raw.view(raw_dt)[..., 0]
    zarrx.create_array(str(tmp_path / "typed"), dtype=dt, **kw)
    (tmp_path / "raw" / "zarr.json").write_bytes((tmp_path / "typed" / "zarr.json").read_bytes())
    got = zarrx.open_array(str(tmp_path / "raw"), mode="r")
    want = raw & np.array(mask, np.uint8)
    assert got[...].tobytes() == want.tobytes()
    assert got[2:5, 1:7].tobytes() == want[2:5, 1:7].tobytes()
