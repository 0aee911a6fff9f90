"""Fuzz shards: a sharded array read and written over a MemoryStore whose shard object is the
input, and the shard index kernels on their own.

The first byte chooses. Below 0x80, its low 4 bits pick one of ``CONFIGS`` (index at the start
or the end, with or without crc32c, compressed or variable-length inner chunks, nested shards, a
big-endian index) and bits 4-5 one of ``OPS``: the shard's inner chunks are read as stored
(whole and by suffix), or the array is read whole, or written (whole inner chunks, or part of
one) and reread; the rest of the input is the shard ``c/0/0`` of that array. From 0x80 the input drives ``decode_index``, ``encode_index``,
``stored_crc`` and ``locate`` directly (see ``_kernels``).
"""
from __future__ import annotations

import functools
import json

from _common import expected, fuzz, instrumented

with instrumented(__name__ == "__main__"):
    import numpy as np

    import zarrx
    from zarrx.layout import chunk_source
    from zarrx.metadata import parse_v3
    from zarrx.store import ByteRange, MemoryStore
    from zarrx.store import _shard_index as kernels

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}


def sharding(chunk_shape: list, codecs: list, *, location: str = "end", crc: bool = True,
             index_bytes: dict = LE) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk_shape, "codecs": codecs,
        "index_codecs": [index_bytes, CRC] if crc else [index_bytes],
        "index_location": location}}


def array(data_type: str, fill: object, codecs: list) -> bytes:
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [8, 8], "data_type": data_type,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs, "attributes": {}}).encode()


ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
GZIP = {"name": "gzip", "configuration": {"level": 1}}
#: (name, zarr.json): every array is 8x8 in 4x4 shards; the input is shard c/0/0
CONFIGS = [
    ("u1-end-crc", array("uint8", 0, [sharding([2, 2], [LE])])),
    ("u1-start-crc", array("uint8", 0, [sharding([2, 2], [LE], location="start")])),
    ("u1-end", array("uint8", 0, [sharding([2, 2], [LE], crc=False)])),
    ("u1-start", array("uint8", 0, [sharding([2, 2], [LE], location="start", crc=False)])),
    ("u2-zstd", array("uint16", 7, [sharding([2, 2], [LE, ZSTD])])),
    ("f4-crc32c", array("float32", "NaN", [sharding([2, 4], [LE, CRC], location="start")])),
    ("u1-nested", array("uint8", 0, [sharding([2, 2], [sharding([1, 1], [LE])])])),
    ("string", array("string", "", [sharding([2, 2], [{"name": "vlen-utf8"}])])),
    ("i2-big-gzip", array("int16", -1, [sharding([4, 2], [BE, GZIP], index_bytes=BE)])),
]
#: the values written into inner chunks of the fuzzed shard
VALUES = {"uint8": 200, "uint16": 513, "float32": 1.5, "string": "ab", "int16": -300}


class _Case:
    """One configuration's array over a MemoryStore, kept across inputs: each input replaces
    the shard object, whose new generation is never served a previous input's cached index."""

    def __init__(self, doc: bytes) -> None:
        meta = parse_v3(doc, "zarr.json")
        self.store = MemoryStore({"zarr.json": doc})
        self.array = zarrx.Array(self.store, "", meta)
        self.source = chunk_source(self.store, "", meta)
        per_shard = [s // c for s, c in zip(meta.chunk_grid.chunk_shape, meta.layout.read_shape)]
        self.units = [tuple(int(i) for i in c) for c in np.ndindex(*per_shard)]


@functools.lru_cache(maxsize=None)
def _case(config: int) -> _Case:
    return _Case(CONFIGS[config][1])


def _value(a: zarrx.Array, shape: tuple[int, ...]) -> np.ndarray:
    return np.full(shape, VALUES[_dtype_name(a)], dtype=a.dtype)


def _dtype_name(a: zarrx.Array) -> str:
    return "string" if a.dtype.kind in "OTU" else a.dtype.name


def test_one_input(data: bytes) -> None:
    if not data:
        return
    if data[0] & 0x80:
        _kernels(data)
        return
    case = _case((data[0] & 0x0F) % len(CONFIGS))
    case.store.set("c/0/0", data[1:])
    with zarrx.config.set(threads=1), expected():
        OPS[(data[0] >> 4) & 0x03](case)


def _read_units(case: _Case) -> None:
    """The shard's inner chunks as stored (whole, then their last 3 bytes), not decoded."""
    got = case.source.get_chunks([(c, None) for c in case.units])
    assert len(got) == len(case.units)
    tails = case.source.get_chunks([(c, ByteRange.last(3)) for c in case.units])
    for whole, tail in zip(got, tails):
        assert (whole is None) == (tail is None)
        assert whole is None or bytes(tail) == bytes(whole)[-3:]


def _read(case: _Case) -> None:
    case.array[...]


def _write_chunks(case: _Case) -> None:
    """Two whole inner chunks: the rest of the shard is read and the shard rewritten."""
    a = case.array
    v = _value(a, (4, 2))
    a[:4, :2] = v
    assert (a[:4, :2] == v).all()


def _write_part(case: _Case) -> None:
    """Part of an inner chunk: that chunk is read, merged and rewritten with the shard."""
    a = case.array
    v = _value(a, (1,))
    a[3, 3:4] = v
    assert (a[3, 3:4] == v).all()


#: bits 4-5 of the first byte pick the operation
OPS = [_read_units, _read, _write_chunks, _write_part]


def _kernels(data: bytes) -> None:
    """``data[1]``: entry count (low 4 bits) and rank for ``locate`` (high bits); ``data[2]``
    bit 0: index at the end, 1: crc32c, 2: big-endian, 3: shard size known (``data[3:5]``), high
    bits: chunks per shard; the rest is the index (and the coordinates for ``locate``)."""
    head = data[1:5].ljust(4, b"\0")
    n, flags = head[0] & 0x0F, head[1]
    at_end, crc, big = bool(flags & 1), bool(flags & 2), bool(flags & 4)
    size = int.from_bytes(head[2:4], "little") if flags & 8 else -1
    blob = data[5:]
    entries, status, bad = kernels.decode_index(blob, n, size, at_end, crc, big)
    assert status in range(10) and status != kernels.NEGATIVE_COORD, status
    assert entries.shape == ((0, 2) if status == kernels.BAD_LENGTH else (n, 2)), entries.shape
    assert (bad >= 0) == (status in (kernels.HALF_SENTINEL, kernels.OVERFLOW, kernels.PAST_END,
                                     kernels.OVERLAP_INDEX, kernels.TOO_LARGE)), (status, bad)
    assert kernels.index_nbytes(n, crc) == 16 * n + 4 * crc
    if status == kernels.OK:
        assert kernels.encode_index(entries, crc, big) == bytes(blob)
    with expected():
        kernels.stored_crc(blob, crc)
    rank = 1 + (head[0] >> 4) % 3
    per_shard = np.full(rank, 1 + (flags >> 4) % 4, dtype=np.int64)
    count = len(blob) // (8 * rank)
    coords = np.frombuffer(blob, dtype="<i8", count=count * rank).reshape(count, rank)
    shards, slots, runs, status, bad = kernels.locate(coords, per_shard)
    assert status in (kernels.OK, kernels.NEGATIVE_COORD), status
    if status == kernels.OK:
        assert shards.shape == coords.shape and slots.shape == (count,)
        assert (slots >= 0).all() and (slots < int(np.prod(per_shard))).all()
        assert (np.diff(runs) > 0).all() and (runs < max(count, 1)).all()
    else:
        assert 0 <= bad < count and (coords[bad] < 0).any()


if __name__ == "__main__":
    fuzz(test_one_input)
