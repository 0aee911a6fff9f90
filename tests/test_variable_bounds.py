"""Chunks of variable-length items (vlen-utf8, vlen-bytes, vlen-array) cost what they hold:
a chunk whose layout does not hold its items builds none of them (nor an array of the item
count its metadata claims, json2 and msgpack2 chunks too), and a shard of such chunks
encoded as a whole decodes to at most what one such chunk may (its indexes plus
MAX_VARIABLE_CHUNK), not that per inner chunk."""
from __future__ import annotations

import json
import re
import struct
import tracemalloc
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.codecs import zstd
from zarrx.codecs.objects import VLenArray
from zarrx.codecs.plan import MAX_VARIABLE_CHUNK
from zarrx.codecs.vlen import VLenBytes, VLenUTF8
from zarrx.store import MemoryStore

BIG = 8 << 20


def _broken_after_a_big_item() -> bytes:
    """Two items declared; the first holds BIG bytes, the second's length is missing."""
    return struct.pack("<II", 2, BIG) + b"a" * BIG


@pytest.mark.parametrize("codec", [VLenUTF8(), VLenBytes(), VLenArray("u1")],
                         ids=["vlen-utf8", "vlen-bytes", "vlen-array"])
@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "python"])
def test_a_chunk_that_does_not_hold_its_items_builds_none(codec, kernel, monkeypatch):
    if not kernel:
        monkeypatch.setattr("zarrx.codecs.vlen._kernel", lambda: None)
    data = _broken_after_a_big_item()
    out = np.empty(2, dtype=object)
    tracemalloc.start()
    try:
        with pytest.raises(zarrx.CodecError, match=re.escape(
                f"truncated: item 1's length at byte {BIG + 8} overruns the {BIG + 8}-byte "
                f"chunk")):
            codec.decode_into(data, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < BIG // 4, peak        # before: the first item was built (BIG bytes)
    assert out.tolist() == [None, None]


def test_a_broken_string_chunk_read_costs_no_items(tmp_path):
    z = zarrx.create_array(str(tmp_path / "s.zarr"), shape=(2,), chunks=(2,), dtype=str,
                           compressors=None, zarr_format=3)
    (tmp_path / "s.zarr" / "c").mkdir()
    (tmp_path / "s.zarr" / "c" / "0").write_bytes(_broken_after_a_big_item())
    tracemalloc.start()
    try:
        with pytest.raises(zarrx.CodecError, match=r"chunk 'c/0'.*vlen-utf8: truncated"):
            z[:]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < BIG + BIG // 2, peak      # the stored bytes, once: no item built from them


@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "python"])
def test_valid_chunks_still_decode(kernel, monkeypatch):
    if not kernel:
        monkeypatch.setattr("zarrx.codecs.vlen._kernel", lambda: None)
    items = ["", "é\x00x", "\U0001F600" * 3, "a" * 1000]
    for codec, values in [(VLenUTF8(), items), (VLenBytes(), [s.encode() for s in items])]:
        out = np.empty(4, dtype=object)
        codec.decode_into(codec.encode(np.array(values, dtype=object)), out)
        assert out.tolist() == values


def _whole_shard_strings() -> zarrx.Array:
    zarr = pytest.importorskip("zarr")
    store = zarr.storage.MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(store, shape=(16,), chunks=(16,), dtype=str,
                          serializer=zarr.codecs.ShardingCodec(
                              chunk_shape=(4,), codecs=[zarr.codecs.VLenUTF8Codec()]),
                          compressors=[zarr.codecs.ZstdCodec()])[:] = [str(i) for i in range(16)]
    return zarrx.open_array(store, mode="r+")


def test_a_whole_shard_of_strings_decodes_to_at_most_one_variable_chunk():
    z = _whole_shard_strings()
    assert z[:].tolist() == [str(i) for i in range(16)]
    frame = zstd.compress(bytes(64 << 20), 1)          # about 2 KB each
    z.store.set("c/0", frame * 17)                    # 1088 MiB of zeros in 35 KB
    index = 4 * 16 + 4
    with pytest.raises(zarrx.CodecError, match=re.escape(
            f"shard 'c/0': zstd header claims {17 * (64 << 20)} decoded bytes, more than the "
            f"limit of {MAX_VARIABLE_CHUNK + index}")):
        z[:]              # before: the limit was 4 GiB and the shard was decoded (1 GiB)


def test_a_whole_shard_of_strings_under_the_limit_reads(tmp_path):
    z = _whole_shard_strings()
    z[:4] = ["x" * (1 << 20)] * 4
    assert [len(s) for s in z[:5]] == [1 << 20] * 4 + [1]


def _v2_object_array(filters: list[dict], chunk: bytes, items: int) -> zarrx.Array:
    doc = {"zarr_format": 2, "shape": [1], "chunks": [items], "dtype": "|O",
           "filters": filters, "compressor": None, "fill_value": None, "order": "C"}
    return zarrx.open_array(MemoryStore({".zarray": json.dumps(doc).encode(), "0": chunk}))


HUGE = 1 << 26          # items a chunk of the metadata claims: 512 MiB of object pointers


@pytest.mark.parametrize("filters, chunk, message", [
    ([{"id": "vlen-utf8"}], b"\x01\x00\x00\x00\x01\x00\x00\x00a",
     f"vlen-utf8: header claims 1 items, expected {HUGE}"),
    ([{"id": "vlen-bytes"}], b"\x00\x00\x00\x00", f"vlen-bytes: header claims 0 items, "
                                                  f"expected {HUGE}"),
    ([{"id": "vlen-array", "dtype": "<i2"}], b"\x01\x00\x00\x00\x00\x00\x00\x00",
     f"numcodecs.vlen-array: header claims 1 items, expected {HUGE}"),
    ([{"id": "json2"}], b'["a", "|O", [1]]',
     f"numcodecs.json2: the chunk's document holds at most 5 values, fewer than the {HUGE} "
     f"items of a chunk of shape ({HUGE},)"),
    ([{"id": "msgpack2"}], b"\x93\xa1a\xa2|O\x91\x01",
     f"numcodecs.msgpack2: the chunk's document holds at most 5 values, fewer than the "
     f"{HUGE} items of a chunk of shape ({HUGE},)"),
], ids=["vlen-utf8", "vlen-bytes", "vlen-array", "json2", "msgpack2"])
def test_a_small_chunk_of_a_huge_chunk_shape_costs_no_array_of_its_items(filters, chunk,
                                                                          message):
    pytest.importorskip("msgpack")
    z = _v2_object_array(filters, chunk, HUGE)
    tracemalloc.start()
    try:
        with pytest.raises(zarrx.CodecError, match=re.escape(f"chunk '0': {message}")):
            z[:]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak     # before: an array of HUGE objects first (512 MiB)


def test_a_chunk_past_the_variable_limit_is_refused_on_write_not_stored_unreadable():
    from zarrx.codecs.plan import CodecPipeline
    plan = CodecPipeline.resolve([VLenUTF8(), zstd.Zstd()], "O", (2,), variable_limit=100)
    fits = np.array(["x" * 42, "y" * 42], dtype=object)           # 4 + 2 * (4 + 42) = 96
    out = np.empty(2, dtype=object)
    plan.decode(plan.encode(fits), out)
    assert out.tolist() == fits.tolist()
    with pytest.raises(zarrx.CodecError, match=re.escape(
            "vlen-utf8: the chunk's items take 104 bytes serialised, more than the 100 bytes "
            "a reader decodes for a chunk of variable-length items: use smaller chunks")):
        plan.encode(np.array(["x" * 46, "y" * 46], dtype=object))    # before: written


def test_a_whole_shard_past_its_decoded_limit_is_refused_on_write():
    from zarrx.shard_objects import EncodedObjects
    store = MemoryStore()
    objects = EncodedObjects(store, (zstd.Zstd(),), 100, "a")
    objects.set("a/c/0", b"x" * 100)
    assert objects.get("a/c/0") == b"x" * 100
    with pytest.raises(zarrx.CodecError, match=re.escape(
            "a shard of 101 bytes, more than the 100 bytes a shard of this array may decode "
            "to")):
        objects.set("a/c/1", b"x" * 101)                # before: stored, then unreadable
    assert store.get("a/c/1") is None
