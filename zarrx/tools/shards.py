"""Stored objects as the tools see them: the chunks (read units) a stored object holds, and
what is wrong with a shard whose index cannot be used."""
from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from zarrx.codecs._crc32c import crc32c
from zarrx.errors import ShardError
from zarrx.metadata.model import ArrayMeta, KeyEncoding
from zarrx.store.shard_index import IndexFormat

__all__ = ["object_blocks", "inner_blocks", "classify_shard", "read_index"]

MISSING = 2**64 - 1
_INNER = KeyEncoding("default", "/")


def _ratio(meta: ArrayMeta) -> tuple[int, ...]:
    ratio = meta.layout.object_ratio
    return ratio if ratio is not None else (1,) * meta.ndim


def object_blocks(meta: ArrayMeta, coords: tuple[int, ...],
                  cdata: tuple[int, ...]) -> tuple[slice, ...] | None:
    """The block selection (in read units) of the stored object at ``coords``; None when the
    object lies wholly outside the array."""
    sel = []
    for c, r, n in zip(coords, _ratio(meta), cdata):
        start, stop = c * r, min((c + 1) * r, n)
        if start >= stop:
            return None
        sel.append(slice(start, stop))
    return tuple(sel)


def inner_blocks(meta: ArrayMeta, coords: tuple[int, ...],
                 cdata: tuple[int, ...]) -> Iterator[tuple[str, tuple[slice, ...]]]:
    """``(inner chunk key, block selection)`` of each read unit inside the stored object at
    ``coords`` (the key relative to the shard, as zarrx names inner chunks in messages)."""
    region = object_blocks(meta, coords, cdata)
    if region is None:
        return
    ratio = _ratio(meta)
    for unit in itertools.product(*(range(s.start, s.stop) for s in region)):
        local = tuple(u - c * r for u, c, r in zip(unit, coords, ratio))
        yield _INNER.encode(local), tuple(slice(u, u + 1) for u in unit)


def read_index(blob: bytes | memoryview, meta: ArrayMeta) -> tuple[np.ndarray | None, str | None,
                                                                    str | None]:
    """``(entries, kind, detail)`` of the outermost index of a shard: the ``(n, 2)`` entries
    as stored (no range checked), or None with the kind of problem (``torn``, ``corrupt``)."""
    geom = meta.layout.shards[0]
    lv = geom.level
    n, L, size = geom.n_chunks, geom.index_nbytes, len(blob)
    if size < L:
        return None, "torn", (f"{size} bytes, shorter than its {L}-byte shard index "
                              f"({n} entries) at the {lv.index_location}")
    view = memoryview(blob)
    raw = view[size - L:] if lv.index_location == "end" else view[:L]
    body = raw[:16 * n]
    if lv.index_crc32c:
        stored = int.from_bytes(raw[16 * n:16 * n + 4], "little")
        computed = crc32c(body)
        if stored != computed:
            return None, "corrupt", (f"shard index checksum mismatch: stored crc32c "
                                     f"{stored:#010x}, computed {computed:#010x}")
    entries = np.frombuffer(body, dtype=">u8" if lv.index_endian == "big" else "<u8")
    return entries.reshape(n, 2).astype(np.uint64), None, None


def classify_shard(blob: bytes | None, meta: ArrayMeta, key: str) -> tuple[str | None,
                                                                          str | None]:
    """``(kind, detail)`` of a shard whose outermost index cannot be used: ``torn`` (shorter
    than its index or than an entry says), ``corrupt`` (checksum); ``(None, None)`` when the
    index is sound (then its inner chunks are to blame) or the object is gone."""
    if blob is None:
        return None, None
    entries, kind, detail = read_index(blob, meta)
    if entries is None:
        return kind, detail
    size = len(blob)
    for slot, (off, nb) in enumerate(entries.tolist()):
        if off == MISSING and nb == MISSING:
            continue
        if off > size or nb > size - off:
            return "torn", (f"index entry {slot}: bytes [{off}, {off + nb}) extend past the end "
                            f"of the {size}-byte shard")
    try:                                # every other rule of the index, as readers apply them
        IndexFormat(meta.layout.shards[0]).decode_whole(blob, lambda: {"key": key})
    except ShardError as exc:
        return "corrupt", exc.detail
    return None, None
