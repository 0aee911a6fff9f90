"""Stored objects as the tools see them: the chunks (read units) a stored object holds (those a
shard stores, from its index), whether a shard reads whole, and what is wrong with a shard whose
index cannot be used."""
from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from zarrx import layout
from zarrx.chunk_io import codec_plan
from zarrx.codecs._crc32c import crc32c
from zarrx.errors import ShardError, ZarrError
from zarrx.metadata.model import ArrayMeta, KeyEncoding
from zarrx.shard_objects import encoded_objects
from zarrx.size_limits import shard_limit
from zarrx.store import Store
from zarrx.store.base import Versioned
from zarrx.store.chunks import check_whole_read, parse_chunk_key
from zarrx.store.shard_index import IndexFormat
from zarrx.store.sharded import ShardedChunks

__all__ = ["object_blocks", "inner_blocks", "stored_inner_blocks", "classify_shard",
           "read_index", "one_level", "shard_reads_whole", "get_shard"]

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


def _stored_units(meta: ArrayMeta, entries: np.ndarray) -> np.ndarray:
    """The ``(m, ndim)`` coordinates inside the shard (array axes) of the inner chunks that the
    index ``entries`` of one level of sharding holds, in the order of :func:`inner_blocks`."""
    geom = meta.layout.shards[0]
    slots = np.flatnonzero(entries[:, 0] != MISSING)
    local = np.unravel_index(slots, geom.per_shard) if geom.per_shard else ()
    inv = range(meta.ndim) if geom.perm is None else np.argsort(geom.perm)
    units = np.stack([local[int(i)] for i in inv], axis=-1) if meta.ndim else \
        np.zeros((slots.size, 0), dtype=np.int64)
    if geom.perm is not None and units.size:            # slots run in the codec's axis order
        units = units[np.lexsort(units.T[::-1])]
    return units.reshape(slots.size, meta.ndim)


def stored_inner_blocks(meta: ArrayMeta, coords: tuple[int, ...], cdata: tuple[int, ...],
                        entries: np.ndarray) -> Iterator[tuple[str, tuple[slice, ...]]]:
    """:func:`inner_blocks` of the inner chunks the shard at ``coords`` (one level of sharding,
    index ``entries``) holds: the others read as the fill value."""
    units = _stored_units(meta, entries) + np.asarray(coords, dtype=np.int64) * \
        np.asarray(_ratio(meta), dtype=np.int64)
    inside = np.all(units < np.asarray(cdata, dtype=np.int64), axis=1)
    origin = [c * r for c, r in zip(coords, _ratio(meta))]
    for unit in units[inside].tolist():
        local = tuple(u - o for u, o in zip(unit, origin))
        yield _INNER.encode(local), tuple(slice(u, u + 1) for u in unit)


def one_level(meta: ArrayMeta) -> bool:
    """Whether the array's stored objects are shards of one level of regular inner chunks."""
    return len(meta.layout.shards) == 1 and meta.layout.read_shape is not None


def get_shard(store: Store, meta: ArrayMeta, path: str, key: str) -> Versioned | None:
    """The shard ``key`` of the array at ``path`` as readers see it (decoded when encoded
    whole) and its generation, or None when it is not stored. A shard longer than any shard of
    the array can be is read only up to one byte past that and refused with a CodecError
    naming its size and the limit (as readers refuse it), never read whole; unless its index
    is valid and its inner chunks within their limit, when it is given packed without the
    unused bytes (read as its index and chunks; on a store where ranges cost whole reads, a zip
    archive, once that cost is known to be bounded, see ``check_whole_read``)."""
    objects = encoded_objects(store, meta, path)
    lim = shard_limit(meta, path)
    if objects is store and store.ranges_read_whole:
        check_whole_read(store, key, lim, path)     # a zip entry costing too much to read
    got = objects.get_versioned(key, lim.head)
    if got is not None and len(got[0]) > lim.nbytes and objects is store:
        # unused bytes between its inner chunks (a writer updating it in place left them): its
        # index and inner chunks, read as ranges of that version, packed without gaps
        source = layout.chunk_source(store, path, meta)
        prefix = f"{path}/" if path else ""
        coords = parse_chunk_key(key[len(prefix):], meta.key_encoding, meta.ndim)
        if isinstance(source, ShardedChunks) and coords is not None and key.startswith(prefix):
            blob = source.compact(coords, got[1])
            return None if blob is None else (blob, got[1])
    if got is not None and len(got[0]) > lim.nbytes:
        size = store.getsize(key) if objects is store else None
        raise lim.error(size if size is not None and size > lim.nbytes else None).at(
            array=path, key=key)
    return got


def shard_reads_whole(store: Store, meta: ArrayMeta, path: str, key: str) -> bool:
    """Whether the shard ``key`` of the array at ``path`` (one level of sharding) is sound: its
    index as readers check it, and every inner chunk it holds decodes. The work is done over the
    decoded index (an inner chunk not stored costs nothing), and is no laxer than reading the
    shard: False when anything fails (or the shard is not of one level)."""
    if not one_level(meta):
        return False
    try:
        got = get_shard(store, meta, path, key)
        if got is None:
            return True
        blob = memoryview(got[0])
        entries = IndexFormat(meta.layout.shards[0]).decode_whole(blob, lambda: {"key": key})
        stored = entries[entries[:, 0] != MISSING]
        plan = codec_plan(meta, meta.layout.read_shape, path)
        if plan.raw and not plan.b2b:                   # the stored bytes are the values
            return bool(np.all(stored[:, 1] == plan.nbytes))
        for off, nb in stored.tolist():
            plan.decode_new(blob[off:off + nb])
    except ZarrError:
        return False
    return True


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
    for j in range(int(lv.index_crc32c) - 1, -1, -1):     # the outermost first, as decoded
        stored = int.from_bytes(raw[16 * n + 4 * j:16 * n + 4 * j + 4], "little")
        computed = crc32c(raw[:16 * n + 4 * j])
        if stored != computed:
            return None, "corrupt", (f"shard index checksum mismatch: stored crc32c "
                                     f"{stored:#010x}, computed {computed:#010x}")
    words = np.frombuffer(body, dtype=">u8" if lv.index_endian == "big" else "<u8")
    at = IndexFormat(geom).word_at
    if at is not None:
        words = words[at]
    return words.reshape(n, 2).astype(np.uint64), None, None


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
    offs, sizes = entries[:, 0], entries[:, 1]
    with np.errstate(over="ignore"):                # size - off wraps only where off > size
        past = ~((offs == MISSING) & (sizes == MISSING)) & \
            ((offs > size) | (sizes > np.uint64(size) - offs))
    if past.any():
        slot = int(np.argmax(past))
        off, nb = int(offs[slot]), int(sizes[slot])
        return "torn", (f"index entry {slot}: bytes [{off}, {off + nb}) extend past the end "
                        f"of the {size}-byte shard")
    try:                                # every other rule of the index, as readers apply them
        IndexFormat(meta.layout.shards[0]).decode_whole(blob, lambda: {"key": key})
    except ShardError as exc:
        return "corrupt", exc.detail
    return None, None
