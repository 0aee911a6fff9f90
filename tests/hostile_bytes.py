"""Arrays of every kernel-backed codec and their stored objects made hostile, for
tests/test_sanitized_fuzz.py.

``CASES`` names a small array per codec chain (Zarr v2 numcodecs compressors, filters and object
codecs; Zarr v3 chains, shards with the index at either end, nested shards); :func:`seeded` writes
it through zarrx. :func:`mutants` yields hostile versions of a stored object: bit flips,
truncations, extensions, 4- and 8-byte fields set to 0, -1, 2^31, 2^63 and their neighbours,
with a shard's index entries pointed anywhere (its crc32c made to match, so the entries reach
the checks behind it), and trailing crc32c checksums made to match their mutated payloads.
"""
from __future__ import annotations

import json
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import zarrx
from zarrx.codecs._crc32c import crc32c
from zarrx.store import MemoryStore

SHAPE = (7, 6)
CHUNKS = [4, 4]


@dataclass(frozen=True)
class Case:
    fmt: int
    dtype: str                              # numpy dtype of the values ("O" + kind for objects)
    codecs: Any                             # v2: (compressor, filters); v3: the codecs list
    shard: tuple = ()                       # v3: the shard layouts, outermost first (see _sharded)
    crc_tail: bool = False                  # the chain ends in a crc32c of the bytes before it
    fill: Any = 0
    extra: dict = field(default_factory=dict)


def _blosc(cname: str, shuffle: int) -> dict:
    return {"id": "blosc", "cname": cname, "clevel": 5, "shuffle": shuffle, "blocksize": 0}


_LE = {"name": "bytes", "configuration": {"endian": "little"}}
_ZSTD3 = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
_CRC = {"name": "crc32c"}


def _sharding(inner: list, chunk: list, location: str, crc: bool) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk, "codecs": inner, "index_location": location,
        "index_codecs": [_LE, _CRC] if crc else [_LE]}}


CASES: dict[str, Case] = {
    "v2-blosc-lz4": Case(2, "<f8", (_blosc("lz4", 1), None)),
    "v2-blosc-zstd-bit": Case(2, "<i4", (_blosc("zstd", 2), None)),
    "v2-blosc-blosclz": Case(2, "<u2", (_blosc("blosclz", 0), None)),
    "v2-blosc-zlib": Case(2, "<f4", (_blosc("zlib", 1), None)),
    "v2-lz4": Case(2, "<i4", ({"id": "lz4", "acceleration": 1}, None)),
    "v2-zstd": Case(2, "<i8", ({"id": "zstd", "level": 1, "checksum": True}, None)),
    "v2-gzip": Case(2, "<i4", ({"id": "gzip", "level": 1}, None)),
    "v2-zlib": Case(2, "<i4", ({"id": "zlib", "level": 1}, None)),
    "v2-bz2": Case(2, "<i4", ({"id": "bz2", "level": 1}, None)),
    "v2-lzma": Case(2, "<i4", ({"id": "lzma", "format": 1, "check": -1, "preset": None,
                                "filters": None}, None)),
    "v2-fletcher32": Case(2, "<i4", ({"id": "fletcher32"}, None)),
    "v2-jenkins": Case(2, "<i4", ({"id": "jenkins_lookup3", "initval": 0, "prefix": None},
                                  None)),
    "v2-shuffle-zlib": Case(2, "<i4", ({"id": "zlib", "level": 1},
                                       [{"id": "shuffle", "elementsize": 4}])),
    "v2-raw": Case(2, "<i4", (None, None)),
    "v2-raw-F": Case(2, "<f8", (None, None), extra={"order": "F"}),
    "v3-raw-big": Case(3, ">u2", [{"name": "bytes", "configuration": {"endian": "big"}}]),
    "v2-categorize": Case(2, "<U2", (None, [{"id": "categorize", "labels": ["ab", "cd", "ef"],
                                             "dtype": "<U2", "astype": "|u1"}]), fill=""),
    "v2-packbits": Case(2, "|b1", (None, [{"id": "packbits"}]), fill=False),
    "v2-delta": Case(2, "<i2", ({"id": "zlib", "level": 1},
                                [{"id": "delta", "dtype": "<i2", "astype": "<i4"}])),
    "v2-fixedscaleoffset": Case(2, "<f8", (None, [{"id": "fixedscaleoffset", "offset": 1,
                                                   "scale": 10, "dtype": "<f8",
                                                   "astype": "<i2"}])),
    "v2-quantize": Case(2, "<f8", (None, [{"id": "quantize", "digits": 2, "dtype": "<f8",
                                           "astype": "<f8"}])),
    "v2-astype": Case(2, "<f8", (None, [{"id": "astype", "encode_dtype": "<f4",
                                         "decode_dtype": "<f8"}])),
    "v2-bitround": Case(2, "<f4", ({"id": "zstd", "level": 1}, [{"id": "bitround",
                                                                  "keepbits": 6}])),
    "v2-vlen-utf8": Case(2, "Ostr", (None, [{"id": "vlen-utf8"}]), fill=""),
    "v2-vlen-bytes": Case(2, "Obytes", ({"id": "zstd", "level": 1}, [{"id": "vlen-bytes"}]),
                          fill=None),
    "v2-vlen-array": Case(2, "Oarray", (None, [{"id": "vlen-array", "dtype": "<i4"}]),
                          fill=None),
    "v2-json2": Case(2, "Ojson", (None, [{"id": "json2"}]), fill=None),
    "v2-msgpack2": Case(2, "Ojson", (None, [{"id": "msgpack2"}]), fill=None),
    "v3-bool": Case(3, "|b1", [_LE], fill=False),
    "v3-zstd-crc": Case(3, "<u4", [_LE, _ZSTD3, _CRC], crc_tail=True),
    "v3-transpose-gzip": Case(3, "<i2", [{"name": "transpose", "configuration": {
        "order": [1, 0]}}, {"name": "bytes", "configuration": {"endian": "big"}},
        {"name": "gzip", "configuration": {"level": 1}}]),
    "v3-blosc": Case(3, "<f8", [_LE, {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 8, "blocksize": 0}}]),
    "v3-vlen-utf8": Case(3, "Ostr", [{"name": "vlen-utf8"}, _ZSTD3], fill=""),
    "v3-vlen-bytes": Case(3, "Obytes", [{"name": "vlen-bytes"}], fill=""),
    "v3-shard-end-crc": Case(3, "<i4", [], shard=(([2, 2], "end", True),), fill=-1),
    "v3-shard-start": Case(3, "<i2", [], shard=(([2, 4], "start", False),)),
    "v3-shard-zstd": Case(3, "<f4", [_ZSTD3], shard=(([4, 2], "end", True),)),
    "v3-shard-nested": Case(3, "<u2", [], shard=(([4, 4], "end", True), ([2, 2], "start",
                                                                         True))),
    "v3-shard-nested-zstd": Case(3, "<i8", [_ZSTD3], shard=(([4, 4], "start", False),
                                                            ([2, 2], "end", True))),
    "v3-shard-vlen": Case(3, "Ostr", [{"name": "vlen-utf8"}], shard=(([2, 2], "end", True),),
                          fill=""),
}


def values(case: Case, shape: tuple = SHAPE) -> np.ndarray:
    n = int(np.prod(shape))
    i = np.arange(n)
    if case.dtype.startswith("O"):
        kind = case.dtype[1:]
        out = np.empty(n, dtype=object)
        for k in range(n):
            out[k] = {"str": "s\u00e9" * (k % 3), "bytes": b"b%d" % k * (k % 3),
                      "array": np.arange(k % 4, dtype="<i4"),
                      "json": ["a", k, {"b": [1, None]}, None, 2.5][k % 5]}[kind]
        return out.reshape(shape)
    dt = np.dtype(case.dtype)
    if dt.kind == "b":
        return (i % 3 == 0).reshape(shape)
    if dt.kind == "U":
        return np.resize(np.array(["ab", "cd", "ef"], dtype=dt), n).reshape(shape)
    return (i * 3 % 17 + (0.25 if dt.kind == "f" else 0)).astype(dt).reshape(shape)


def _dtype_field(case: Case) -> Any:
    if case.dtype.startswith("O"):
        return "|O" if case.fmt == 2 else "string" if case.dtype == "Ostr" else "bytes"
    if case.fmt == 2:
        return case.dtype
    return {"|b1": "bool"}.get(case.dtype, np.dtype(case.dtype).newbyteorder("=").name)


def _v3_codecs(case: Case) -> list:
    if not case.shard:
        return case.codecs
    inner = case.codecs if case.codecs and case.codecs[0]["name"].startswith("vlen") \
        else [_LE, *case.codecs]
    for chunk, location, crc in reversed(case.shard):
        inner = [_sharding(inner, chunk, location, crc)]
    return inner


def document(case: Case, shape: tuple = SHAPE, chunks: list = CHUNKS) -> tuple[str, bytes]:
    """The metadata key and document of ``case`` (an array of ``shape`` in ``chunks``; a
    sharded one in shards of 8 x 8)."""
    if case.fmt == 2:
        compressor, filters = case.codecs
        doc = {"zarr_format": 2, "shape": list(shape), "chunks": list(chunks),
               "dtype": _dtype_field(case), "compressor": compressor,
               "fill_value": case.fill, "order": case.extra.get("order", "C"),
               "filters": filters}
        return ".zarray", json.dumps(doc).encode()
    outer = [8, 8] if case.shard else list(chunks)
    doc = {"zarr_format": 3, "node_type": "array", "shape": list(shape),
           "data_type": _dtype_field(case),
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": outer}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": case.fill, "codecs": _v3_codecs(case)}
    return "zarr.json", json.dumps(doc).encode()


def seeded(case: Case, shape: tuple = SHAPE, chunks: list = CHUNKS) -> dict[str, bytes]:
    """The stored objects (metadata included) of ``case`` with :func:`values` written."""
    key, doc = document(case, shape, chunks)
    store = MemoryStore({key: doc})
    a = zarrx.open_array(store, mode="r+")
    a[...] = values(case, shape)
    return {k: bytes(store.get(k)) for k in store.list()}


# ---------------------------------------------------------------------------------------------
# mutations

FIELD_VALUES = [0, 1, 0x7F, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 1 << 31 | 1,
                1 << 63, (1 << 63) - 1, (1 << 64) - 1, (1 << 64) - 2, 1 << 32]


_SEEDED: dict[tuple, dict[str, bytes]] = {}


def seeded_once(name: str, shape: tuple, chunks: list) -> dict[str, bytes]:
    """:func:`seeded` of ``CASES[name]``, made once per name, shape and chunks (do not change
    the dict returned: copy it)."""
    key = (name, tuple(shape), tuple(chunks))
    if key not in _SEEDED:
        _SEEDED[key] = seeded(CASES[name], shape, chunks)
    return _SEEDED[key]


def same_values(x: Any, y: Any) -> bool:
    """Whether two read results hold the same values: shapes equal, NaN equal to NaN, object
    items compared by their repr."""
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape:
        return False
    if x.dtype.kind == "O" or y.dtype.kind == "O":
        return repr(x.tolist()) == repr(y.tolist())
    return np.array_equal(x, y, equal_nan=x.dtype.kind in "fc")


def _put(b: bytearray, at: int, width: int, v: int, order: str = "<") -> None:
    if 0 <= at <= len(b) - width:
        fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[width]
        b[at:at + width] = struct.pack(order + fmt, v & ((1 << 8 * width) - 1))


def _field_value(rng: random.Random, n: int) -> int:
    return rng.choice(FIELD_VALUES + [n, n + 1, n - 1, n * 2, rng.randrange(0, 1 << 32)])


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    """One hostile version of ``data``: flips, cuts, growths or lying size fields."""
    b = bytearray(data)
    kind = rng.randrange(7)
    if kind == 0 and b:                                 # bit flips
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif kind == 1:                                     # truncation
        del b[rng.randint(0, max(len(b) - 1, 0)):]
    elif kind == 2:                                     # extension
        b += bytes(rng.randrange(256) for _ in range(rng.choice([1, 3, 4, 16, 100])))
    elif kind in (3, 4) and b:                          # a size field (header or trailer)
        width = rng.choice([1, 2, 4, 8])
        at = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, len(b) - 4, len(b) - 8,
                         rng.randrange(len(b))])
        _put(b, at, width, _field_value(rng, len(b)), rng.choice("<>"))
    elif kind == 5 and b:                               # a run of bytes set to one value
        i = rng.randrange(len(b))
        b[i:i + rng.randint(1, 16)] = bytes([rng.choice([0, 0xFF, 0x80])]) * rng.randint(1, 16)
    else:                                               # splice a piece of itself elsewhere
        if len(b) > 2:
            i, j = sorted(rng.sample(range(len(b)), 2))
            b[rng.randrange(len(b)):] = b[i:j]
    return bytes(b)


EXTREMES = [0, -1, 1, 2, 3, 255, 256, 2**31 - 1, 2**31, 2**32, 2**53, 2**63 - 1, 2**63, 2**64,
            -2**63, 1.5, 1e308, "", "x", None, True, [], {}]


def mutate_document(rng: random.Random, data: bytes) -> bytes:
    """A metadata document whose numbers (shape, chunks, codec settings: type sizes, block
    sizes, element sizes, keepbits, digits...) or other values lie: one of them replaced by an
    extreme value or another type, or a list cut or grown."""
    doc = json.loads(data)
    spots: list = []

    def walk(node: Any) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if k in ("zarr_format", "node_type", "name", "id"):
                continue
            spots.append((node, k))
            if isinstance(v, (dict, list)):
                walk(v)

    walk(doc)
    for _ in range(rng.randint(1, 2)):
        node, k = rng.choice(spots)
        v = node[k]
        if isinstance(v, list) and v and rng.random() < 0.4:
            node[k] = v[:-1] if rng.random() < 0.5 else v + [rng.choice(v)]
        else:
            node[k] = rng.choice(EXTREMES)
    return json.dumps(doc).encode()


def _fix_crc(b: bytearray, start: int, end: int) -> None:
    """Make the crc32c in ``b[end - 4:end]`` match ``b[start:end - 4]``."""
    if end - 4 >= start >= 0 and end <= len(b):
        b[end - 4:end] = struct.pack("<I", crc32c(bytes(b[start:end - 4])))


def mutate_shard(rng: random.Random, data: bytes, layouts: tuple, n_total: list) -> bytes:
    """A hostile shard: index entries pointing anywhere (inside the shard, into the index,
    past the end, overlapping, half missing), the index checksum made to match; with a nested
    layout, the same done to one of the inner shards, in place."""
    (chunk, location, crc), rest = layouts[0], layouts[1:]
    n = int(np.prod([-(-n // c) for n, c in zip(n_total, chunk)]))   # inner chunks
    ilen = 16 * n + (4 if crc else 0)
    b = bytearray(data)
    if len(b) < ilen:
        return mutate_bytes(rng, data)
    base = len(b) - ilen if location == "end" else 0
    entries = [struct.unpack_from("<QQ", b, base + 16 * i) for i in range(n)]
    if rest and rng.random() < 0.5:                     # go down into an inner shard
        present = [(o, nb) for o, nb in entries if o != (1 << 64) - 1 and o + nb <= len(b)]
        if present:
            o, nb = rng.choice(present)
            inner = mutate_shard(rng, bytes(b[o:o + nb]), rest, chunk)
            if len(inner) == nb:
                b[o:o + nb] = inner
                return bytes(b)
            b = b[:o] + bytearray(inner) + b[o + nb:]   # entries after it now lie
            return bytes(b)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(n)
        off, nb = entries[i]
        choice = rng.randrange(8)
        if choice == 0:
            off = rng.randrange(0, len(b) + 8)
        elif choice == 1:
            nb = rng.randrange(0, len(b) + 8)
        elif choice == 2:
            off, nb = entries[rng.randrange(n)]         # two entries share bytes
        elif choice == 3:
            off = base + rng.randrange(ilen)           # into the index itself
        elif choice == 4:
            off = (1 << 64) - 1                         # half a missing-chunk sentinel
        elif choice == 5:
            nb = rng.choice(FIELD_VALUES)
        elif choice == 6:
            off, nb = rng.choice(FIELD_VALUES), rng.choice(FIELD_VALUES)
        else:
            nb = max(nb - rng.randint(1, 8), 0)         # a chunk cut short
        _put(b, base + 16 * i, 8, off)
        _put(b, base + 16 * i + 8, 8, nb)
    if crc:
        _fix_crc(b, base, base + ilen)
    return bytes(b)


def mutants(rng: random.Random, case: Case, key: str, data: bytes) -> Iterator[bytes]:
    """Hostile versions of the stored object ``key`` of ``case`` (a chunk or a shard)."""
    while True:
        if case.shard and rng.random() < 0.6:
            yield mutate_shard(rng, data, case.shard, [8, 8])
            continue
        out = bytearray(mutate_bytes(rng, data))
        if case.crc_tail and rng.random() < 0.7:
            _fix_crc(out, 0, len(out))
        if case.codecs and isinstance(case.codecs, tuple) and case.codecs[0] and \
                case.codecs[0].get("id") == "blosc" and rng.random() < 0.5:
            _put(out, 12, 4, len(out))                  # cbytes matches: reach c-blosc
        yield bytes(out)
