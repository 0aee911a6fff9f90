"""Types narrower than their byte (``int2``, ``int4``, ``uint4``, ``float4_e2m1fn``...): the
``bytes`` codec stores each item in one byte whose upper bits readers ignore (zarr-extensions).
tensorstore sets them (it sign-extends an ``int4``: -2 is stored as ``0xfe``) where ml_dtypes,
and so zarrx, holds ``0x0e``. zarrx read those bytes as they were: values were right, but a
chunk holding only the fill value was taken for another (so it was kept), and ``zarrx check``
reported the cells tensorstore filled outside the array's shape as stale data. Decoding now
clears the upper bits."""
from __future__ import annotations

import gzip
import json
import struct

import numpy as np
import pytest

import zarrx
from zarrx.tools.check import check

ml_dtypes = pytest.importorskip("ml_dtypes", reason="the sub-byte types come from ml_dtypes")

NARROW = {"int2": 0x03, "uint2": 0x03, "int4": 0x0F, "uint4": 0x0F, "float4_e2m1fn": 0x0F,
          "float6_e2m3fn": 0x3F, "float6_e3m2fn": 0x3F}
BYTES = [{"name": "bytes"}]
SHARD = [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [16], "codecs": [{"name": "bytes"}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]
GZIP_T = [{"name": "transpose", "configuration": {"order": [0]}}, {"name": "bytes"},
          {"name": "gzip", "configuration": {"level": 1}}]


def _np(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name))


@pytest.mark.parametrize("codecs", [BYTES, SHARD], ids=["chunk", "shard"])
@pytest.mark.parametrize("name", list(NARROW))
def test_upper_bits_another_writer_set_are_ignored(tmp_path, name, codecs) -> None:
    """Every byte value reads as its low bits, through plain chunks and shards."""
    raw = bytes(range(0, 256, 17))                   # 0x00, 0x11, ... 0xff
    assert len(raw) == 16
    doc = {"zarr_format": 3, "node_type": "array", "shape": [16], "data_type": name,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}
    (tmp_path / "c").mkdir()
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    (tmp_path / "c" / "0").write_bytes(raw + (struct.pack("<QQ", 0, 16) if codecs is SHARD
                                              else b""))
    got = zarrx.open_array(str(tmp_path), mode="r")
    want = bytes(b & NARROW[name] for b in raw)
    assert got[...].tobytes() == want
    assert got[3:9].tobytes() == want[3:9]
    assert got.oindex[[15, 0]].tobytes() == want[15:16] + want[:1]


def test_upper_bits_are_ignored_behind_other_codecs(tmp_path) -> None:
    z = zarrx.create_array(str(tmp_path / "a"), shape=(16,), chunks=(16,), dtype="int4",
                           serializer=GZIP_T[1], compressors=GZIP_T[2:], filters=GZIP_T[:1])
    z[...] = np.arange(-8, 8).astype(_np("int4"))
    path = tmp_path / "a" / "c" / "0"
    stored = bytearray(gzip.decompress(path.read_bytes()))
    for i in range(16):
        stored[i] |= 0xF0                              # set every upper bit
    path.write_bytes(gzip.compress(bytes(stored)))
    got = zarrx.open_array(str(tmp_path / "a"), mode="r")[...]
    assert got.tobytes() == np.arange(-8, 8).astype(_np("int4")).tobytes()


@pytest.mark.parametrize("codecs", [BYTES, SHARD], ids=["chunk", "shard"])
@pytest.mark.parametrize("name,fill", [("int4", -2), ("int2", -1), ("float4_e2m1fn", -1.5)])
def test_arrays_tensorstore_writes_check_clean_and_drop_fill_chunks(tmp_path, name, fill,
                                                                    codecs) -> None:
    """tensorstore fills the cells outside the array's shape with its sign-extended fill
    value; zarrx check found them stale ("a grow would read them back"), and a chunk zarrx
    then made all fill was kept rather than deleted."""
    ts = pytest.importorskip("tensorstore", reason="tensorstore writes the arrays")
    nd = _np(name)
    path = tmp_path / "a.zarr"
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
    t = ts.open({**spec, "metadata": {
        "shape": [13], "data_type": name, "fill_value": fill, "codecs": codecs,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16]}}}},
        create=True).result()
    t[:2] = np.array([1, 0], nd)
    assert check(str(path)).findings == []
    z = zarrx.open_array(str(path), mode="r+")
    assert z[...].tobytes() == np.array([1, 0] + [fill] * 11, nd).tobytes()
    z[:2] = np.array(fill, nd)
    assert not (path / "c" / "0").exists()
    assert ts.open(spec).result().read().result().astype(np.float32).tolist() == [fill] * 13
