"""A stored chunk of the wrong size in an array whose chunks are transposed before the ``bytes``
codec (a Zarr v2 array of order "F", a ``transpose`` codec, also inside or before sharding) is
refused naming its key and the chunk shape the array declares, with the transposed shape it is
stored in beside it: never that shape alone, which the user never declared. Every read path
words it the same: a chunk read alone, a box of many chunks decoded together, picked points, the
read before a partial write, and a chunk large enough to have its size checked before its buffer
is allocated."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.codecs import BytesCodec, Crc32c, ShardingCodec, Transpose
from zarrx.errors import CodecError
from zarrx.store import MemoryStore

SHAPE, CHUNKS = (16, 4, 10), (4, 2, 5)        # 16 chunks (or inner chunks) of 320 bytes
SHARD_SLOTS = 16


def _create(layout: str, store: MemoryStore, shape: tuple[int, ...],
            chunks: tuple[int, ...]) -> zarrx.Array:
    kw = dict(shape=shape, dtype="f8", compressors=None)
    rev = tuple(reversed(range(len(shape))))
    if layout == "v2-order-F":
        return zarrx.create_array(store, chunks=chunks, zarr_format=2, order="F", **kw)
    if layout == "v3-transpose":
        return zarrx.create_array(store, chunks=chunks, filters=[Transpose(order=rev)], **kw)
    if layout == "transpose-in-shard":
        return zarrx.create_array(store, chunks=chunks, shards=shape,
                                  filters=[Transpose(order=rev)], **kw)
    assert layout == "transpose-before-shard"     # the shard is transposed, then cut
    return zarrx.create_array(store, chunks=shape, filters=[Transpose(order=rev)],
                              serializer=ShardingCodec(chunk_shape=chunks[::-1],
                                                       codecs=[BytesCodec()]), **kw)


def _damage(layout: str, store: MemoryStore, how: str) -> None:
    """The first chunk (inner chunk) 8 bytes shorter or longer than its 320."""
    def changed(b: bytes) -> bytes:
        return b[:-8] if how == "truncated" else b + b"\0" * 8

    if layout.startswith("v2") or layout == "v3-transpose":
        key = "0.0.0" if layout.startswith("v2") else "c/0/0/0"
        store.set(key, changed(store.get(key)))
        return
    blob = store.get("c/0/0/0")                    # the one shard; slot 0 is rewritten
    size = 16 * SHARD_SLOTS + 4
    entries = np.frombuffer(blob[-size:-4], "<u8").reshape(SHARD_SLOTS, 2).copy()
    parts = [blob[int(o):int(o) + int(n)] for o, n in entries]
    parts[0] = changed(parts[0])
    out = bytearray()
    for i, part in enumerate(parts):
        entries[i] = (len(out), len(part))
        out += part
    index = entries.astype("<u8").tobytes()
    store.set("c/0/0/0", bytes(out + index + Crc32c().encode(index)[-4:]))


WHERE = {"v2-order-F": "array '/' chunk '0.0.0'", "v3-transpose": "array '/' chunk 'c/0/0/0'",
         "transpose-in-shard": "array '/' shard 'c/0/0/0' inner chunk 'c/0/0/0'",
         "transpose-before-shard": "array '/' shard 'c/0/0/0' inner chunk 'c/0/0/0'"}

READS = {
    "chunk-alone": lambda z: z[:4, :2, :5],
    "many-chunks": lambda z: z[...],
    "points": lambda z: z.vindex[[0, 4, 8, 12, 0, 4], [0, 2, 0, 2, 1, 3], [0, 5, 0, 5, 9, 9]],
    "partial-write": lambda z: z.__setitem__((0, 0, 0), 1.0),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("read", list(READS))
@pytest.mark.parametrize("how", ["truncated", "extended"])
@pytest.mark.parametrize("layout", list(WHERE))
def test_a_transposed_chunk_of_the_wrong_size_is_named_by_its_declared_shape(
        layout, how, read, threads) -> None:
    store = MemoryStore()
    _create(layout, store, SHAPE, CHUNKS)[...] = np.arange(np.prod(SHAPE)).reshape(SHAPE)
    _damage(layout, store, how)
    if how == "truncated":
        want = ("expected 320 bytes for a chunk of shape (4, 2, 5) (stored transposed as "
                "(5, 2, 4)) and data type float64, found 312")
    else:                                   # refused by the chunk's stored-size limit, unread
        kind = "an inner chunk" if "shard" in layout else "a chunk"
        chain = "transpose -> bytes"
        want = (f"328 bytes stored, more than the 320 bytes {kind} of shape (4, 2, 5) and "
                f"data type float64 encoded by {chain} can take")
    z = zarrx.open_array(store, mode="r+")
    with zarrx.config.set(threads=threads), pytest.raises(CodecError) as info:
        READS[read](z)
    assert str(info.value) == f"{WHERE[layout]}: {want}"


@pytest.mark.parametrize("read", ["whole", "part", "partial-write"])
@pytest.mark.parametrize("layout", ["v2-order-F", "v3-transpose"])
def test_a_large_transposed_chunk_cut_short_is_named_by_its_declared_shape(layout, read) -> None:
    """A chunk of over 1 MiB read in part (or updated in part) has its stored size checked
    before its buffer is allocated; read whole, it is decoded into the output."""
    shape = (64, 32, 80)                      # 1,310,720 bytes of float64
    store = MemoryStore()
    _create(layout, store, shape, shape)[...] = 1.0
    key = "0.0.0" if layout.startswith("v2") else "c/0/0/0"
    store.set(key, store.get(key)[:-8])
    z = zarrx.open_array(store, mode="r+")
    with pytest.raises(CodecError) as info:
        if read == "whole":
            z[...]
        elif read == "part":
            z[:2]
        else:
            z[0, 0, 0] = 2.0
    assert str(info.value) == (
        f"{WHERE[layout]}: expected 1310720 bytes for a chunk of shape (64, 32, 80) (stored "
        f"transposed as (80, 32, 64)) and data type float64, found 1310712")


def test_a_chunk_in_array_order_keeps_its_message() -> None:
    store = MemoryStore()
    z = zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype="f8", compressors=None)
    z[...] = 1.0
    store.set("c/0/0/0", store.get("c/0/0/0")[:-8])
    for read in READS.values():
        with pytest.raises(CodecError) as info:
            read(z)
        assert str(info.value) == ("array '/' chunk 'c/0/0/0': expected 320 bytes for a chunk "
                                   "of shape (4, 2, 5) and data type float64, found 312")
