"""Write a selection of an array: gather, encode, store, one stored object at a time.

A write's chunks are grouped by the stored object (chunk, or shard) that holds them, and each
object is updated once (:meth:`~zarrx.store.chunks.ChunkSource.commit`): full chunks are
encoded without reading anything, partial ones merged into the stored chunk inside the
object's update. Memory: a write holds the encoded chunks of one stored object per thread;
writes are one task per stored object, committed once.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from math import prod
from operator import floordiv, itemgetter
from typing import Any

import numpy as np

from zarrx import _behind, _pool
from zarrx._gather import copy_view, gather_into, gather_many
from zarrx import chunk_io, shard_merge
from zarrx.chunk_io import ArrayIO, _assign, _located, check_count
from zarrx.codecs.plan import CHECK_FIRST_BYTES, CodecPipeline
from zarrx.errors import ZarrError
from zarrx.store._values import GATHER_BATCH, MIN_SIZE, Value, gather_kept, gather_kept_many
from zarrx.store.chunks import PARTIAL
from zarrx.store.update import batched_as_single

__all__ = ["write_from", "gather_size", "encode_views"]


def write_from(io: ArrayIO, projections: Sequence, value: np.ndarray, *, flat: bool = False,
               fields: Any = None) -> None:
    """Store ``value`` (already broadcast to the selection's shape) into the chunks of
    ``projections``, one stored object (chunk, or shard) at a time. Full chunks are encoded
    without reading anything; partial ones are merged into the stored chunk inside the object's
    update (:meth:`ChunkSource.commit`), so concurrent writers never lose each other's updates.
    ``fields`` (a field name or a list of them): only those fields of ``value``'s records are
    stored, merged into the stored records the same way. Every bit of state of the write lives
    in this call. Projections come shard-major for sharded arrays (each shard is updated
    once)."""
    check_count(io, len(projections))
    src = value.reshape(-1) if flat else value
    source = io.source
    write_empty = io.write_empty_chunks
    # raw chunks test for fill while gathering (unless NaN fill: NaNs differ in their bits)
    raw_fill = None if write_empty or io.fill_is_nan else io.fill_bytes
    gather = gather_size(io, flat)
    batched = fields is None and _batches(io, flat, src)
    whole = getattr(source, "store_whole", None) if batched and io.units_per_object == 1 \
        else None
    # the inner chunks of a shard covered in part: merged together (see zarrx.shard_merge)
    together = batched and shard_merge.mergeable(io)

    def full(p: Any, slab: Any) -> Any:
        """The new bytes of a chunk the write covers (None: all fill), or PARTIAL."""
        if not p.full or fields is not None:
            return PARTIAL
        shape = io.shape_of(p.coords)
        plan = io.plan(shape)
        try:
            if slab is not None:            # encode in place, into the shard being assembled
                view = src[p.out_sel]
                if view.shape == shape:
                    dest = slab.view(p.coords)
                    return None if plan.encode_into(view, dest, fill=raw_fill) else dest
            return _encode_one(io, plan, p, shape, None, src, flat, raw_fill)
        except (ZarrError, MemoryError) as exc:
            raise _located(exc, io, p.coords, shape)

    def prepare(obj: tuple[int, ...], projs: list, parallel: bool, made: Any = PARTIAL) -> tuple:
        """The arguments of ``source.commit`` for one stored object, its full chunks encoded.
        ``made``: the new bytes of the object's one chunk, gathered beforehand."""
        slab = None
        if made is not PARTIAL:             # gathered beforehand (a chunk stored on its own)
            values = [made]
        else:
            if gather is not None and len(projs) == io.units_per_object and all(
                    p.full and not _is_border(io, p.coords, io.chunk_shape) for p in projs):
                slab = source.slab(obj, gather)
            values = None
            if slab is None and batched and len(projs) > 1:
                # a batch per thread, encoded together; None: one failed (see below)
                parts = _pool.run_batches(lambda ps: _encode_batch(io, ps, src, raw_fill),
                                          projs, min_batch=2) if parallel \
                    else [_encode_batch(io, projs, src, raw_fill)]
                if None not in parts:
                    values = [full(p, None) if v is PARTIAL else v
                              for p, v in zip(projs, [v for part in parts for v in part])]
            if values is not None:
                pass
            elif parallel and len(projs) > 1:
                values = [v for batch in _pool.run_batches(
                    lambda ps: [full(p, slab) for p in ps], projs, min_batch=2) for v in batch]
            else:
                values = [full(p, slab) for p in projs]

        def finish(j: int, old: Any) -> Any:
            p = projs[j]
            shape = io.shape_of(p.coords)
            try:
                return _encode_one(io, io.plan(shape), p, shape, old, src, flat, raw_fill,
                                   fields)
            except (ZarrError, MemoryError) as exc:
                raise _located(exc, io, p.coords, shape)

        if together:
            finish.many = lambda js, buf, starts, lengths: shard_merge.merge_many(  # type: ignore
                io, [projs[j] for j in js], buf, starts, lengths, src)
        items = [(p.coords, v) for p, v in zip(projs, values)]
        if fields is None and len(projs) < io.units_per_object:
            items += [(c, None) for c in _outside_units(
                io, obj, [p.coords for p in projs if p.full])]
        return obj, items, finish, slab

    def commit(obj: tuple[int, ...], projs: list, parallel: bool, got: Any = PARTIAL) -> None:
        source.commit(*prepare(obj, projs, parallel, got))

    def store_units(units: list) -> None:
        """Update the stored objects of ``units``, each once."""
        def hand_on(i: int) -> tuple | None:
            """The commit of ``units[i]`` for the I/O thread, or None once done here: an object
            with chunks to merge with what is stored (decoding and encoding stay on this
            thread)."""
            args = prepare(*units[i], False)
            if any(v is PARTIAL for _, v in args[1]):
                source.commit(*args)
                return None
            return args

        if len(units) == 1:
            commit(*units[0], True)
        elif whole is not None:
            # small chunks stored on their own: gathered and encoded a batch at a time, and
            # the whole ones stored together (the others one by one, as below)
            step = max(1, min(BATCH_BYTES // io.plan(io.chunk_shape).nbytes,
                              -(-len(units) // _pool.threads())))

            def batch(k: int) -> None:
                part = units[k * step:(k + 1) * step]
                # a chunk written twice (a selection repeating cells: two units of one chunk,
                # or one unit of several projections) keeps the order of its writes, one by one
                if len({obj for obj, _ in part}) < len(part) \
                        or sum(map(len, map(itemgetter(1), part))) > len(part):
                    values = None
                else:
                    projs = [ps[0] for _, ps in part]
                    values = _encode_batch(io, projs, src, raw_fill)
                if values is None:              # encoded one by one: errors found and located
                    for obj, ps in part:
                        commit(obj, ps, False)
                    return
                done = [v is not PARTIAL for v in values]
                if any(done):
                    whole(np.array([p.coords for p, d in zip(projs, done) if d], np.int64),
                          [v for v, d in zip(values, done) if d])
                for (obj, ps), d in zip(part, done):
                    if not d:
                        commit(obj, ps, False)
            _pool.run_shared(batch, -(-len(units) // step))
        elif io.units_per_object == 1 and io.gil_bound and not source.objects.store.parallel_writes:
            for obj, projs in units:            # small raw chunks of a memory or zip store:
                commit(obj, projs, False)       # threads would only take turns on the GIL
        elif (kept := _kept_batches(io, units, flat or fields is not None)) is not None:
            def batch(k: int) -> None:
                lo, hi = kept[k]
                made = _gather_batch(io, units[lo:hi], src, raw_fill)
                for j in range(lo, hi):
                    commit(*units[j], False, made.get(j - lo, PARTIAL))
            _pool.run_shared(batch, len(kept))
        elif _behind.enabled(source.objects.store, len(units), io.object_nbytes):
            # one thread: each object is stored by an I/O thread while the next one is encoded
            _behind.run(hand_on, lambda a: source.commit(*a), len(units))
        else:
            _pool.run_shared(lambda i: commit(*units[i], False), len(units))

    # a batch of objects at a time, of at most MAX_WINDOW chunks (or one object): the
    # projections and encoded chunks of the whole write are never held at once
    for batch in _by_object(io, projections, chunk_io.MAX_WINDOW):
        store_units(batch)


#: the most bytes of chunks gathered and encoded together (see :func:`_encode_batch`)
BATCH_BYTES = 4 << 20


def small_write(io: ArrayIO, nchunks: int) -> bool:
    """Whether a write of ``nchunks`` chunks is too little work for threads (see
    ``chunk_io.PARALLEL_MIN_BYTES``): a regular grid of items holding no Python objects, on a
    store that answers at once and stores a value under the GIL (a memory or zip store: a
    remote store's requests wait, and a local store's files are made outside the GIL, which
    threads overlap)."""
    chunk = io.chunk_shape
    if chunk is None or _pool.threads() <= 1 or io.object_chunks:
        return False
    store = io.source.objects.store
    if store.latency_bound or store.parallel_writes:
        return False
    return nchunks * prod(chunk) * io.dtype.itemsize < chunk_io.PARALLEL_MIN_BYTES


def _batches(io: ArrayIO, flat: bool, src: np.ndarray, laid_out: bool = False) -> bool:
    """Whether the full chunks of a write are gathered and encoded a batch at a time
    (:func:`_encode_batch`): small chunks (under ``MIN_SIZE`` bytes) of a regular grid whose
    codecs :func:`~zarrx.codecs.plan_many.encode_rows` encodes, when a chunk all fill is found
    by its bytes (the fill value is not NaN), on a store that answers at once (memory, local
    files: a remote store overlaps requests with encoding instead). ``laid_out``: codecs
    ``encode_rows`` takes once ``stored_rows`` has laid the chunks out (filters, transposes,
    either byte order) will do."""
    if flat or not io.regular or io.object_chunks or io.fill_is_nan or io.chunk_shape is None:
        return False
    from zarrx.codecs.plan_many import encodes_laid_out, encodes_rows   # load on first use
    store = io.source.objects.store
    if store.latency_bound or not _sets_together(store):
        return False
    plan = io.plan(io.chunk_shape)
    if plan.nbytes >= MIN_SIZE or plan.mask is not None or src.dtype != plan.dtype \
            or not (encodes_laid_out(plan) if laid_out else encodes_rows(plan)):
        return False
    return io.write_empty_chunks or io.fill_bytes is not None


def _sets_together(store: object) -> bool:
    """Whether ``store.set_many`` writes as ``set`` does (the base one calls ``set``; a store
    extending ``set`` alone would see the chunks stored together bypass it)."""
    return batched_as_single(store, "set_many", "set")


def _encode_batch(io: ArrayIO, projs: list, src: np.ndarray, raw_fill: bytes | None
                  ) -> list | None:
    """The new bytes (None: all fill) of each chunk of ``projs`` the write covers in full
    inside the array, gathered into one buffer in one GIL-free section and encoded by each
    codec in one call; PARTIAL for the others (made one by one). None when the encoding
    failed: the caller then makes them one by one, which raises the error about its chunk."""
    shape = io.chunk_shape
    plan = io.plan(shape)                            # type: ignore[arg-type]
    step = BATCH_BYTES // plan.nbytes
    if len(projs) > step:                            # a batch of at most BATCH_BYTES at once
        parts = [_encode_batch(io, projs[a:a + step], src, raw_fill)
                 for a in range(0, len(projs), step)]
        return None if None in parts else [v for part in parts for v in part]
    views = [src[p.out_sel] if p.full else None for p in projs]
    at = [i for i, v in enumerate(views) if v is not None and v.shape == shape]
    # a border chunk's cells past the array's end are not written: its view has the chunk's
    # shape only when the selection repeats cells (``z[[4, 0, 4]]``), made one by one
    ends = [(k, size // n) for k, (n, size) in enumerate(zip(shape, io.meta.shape)) if size % n]
    if ends:
        at = [i for i in at if all(projs[i].coords[k] != e for k, e in ends)]
    out: list = [PARTIAL] * len(projs)
    if not at:
        return out
    made = encode_views(io, [views[i] for i in at], raw_fill)
    if made is None:
        return None
    for i, v in zip(at, made):
        out[i] = v
    return out


def encode_views(io: ArrayIO, views: list[np.ndarray], raw_fill: bytes | None) -> list | None:
    """The new bytes (None: all fill, when ``raw_fill`` is given) of the interior chunks whose
    cells are ``views`` (each of the chunk's shape; a write :func:`_batches` takes), gathered
    into the rows of one buffer in one GIL-free section and encoded by each codec in one call.
    None when the encoding failed."""
    from zarrx.codecs.plan_many import encode_rows
    plan = io.plan(io.chunk_shape)                   # type: ignore[arg-type]
    step = BATCH_BYTES // plan.nbytes
    if len(views) > step:                            # a batch of at most BATCH_BYTES at once
        parts = [encode_views(io, views[a:a + step], raw_fill)
                 for a in range(0, len(views), step)]
        return None if None in parts else [v for part in parts for v in part]  # type: ignore
    crc = plan.gather_crc32c()
    try:
        rows = np.empty((len(views), plan.nbytes + (4 if crc else 0)), np.uint8)
        fills = gather_many(views, list(rows), crc, raw_fill)
        return list(encode_rows(plan, rows, crc, np.array(fills, dtype=bool)))
    except (ZarrError, MemoryError):
        return None


def _kept_batches(io: ArrayIO, units: list, partial: bool) -> list[tuple[int, int]] | None:
    """Ranges of ``units`` (chunks stored on their own) of at most ``GATHER_BATCH`` bytes, at
    least one per thread, when the store keeps values and the chunks are gathered rather than
    encoded (raw, maybe with a CRC-32C) into values of ``MIN_SIZE`` or more: the full ones of
    each range are then gathered in one GIL-free section (see
    :func:`zarrx._gather.gather_many`). None otherwise."""
    if partial or io.units_per_object != 1 or not io.keeps_values or not io.regular \
            or io.fill_is_nan or io.object_chunks:
        return None
    plan = io.plan(io.chunk_shape)                   # type: ignore[arg-type]
    if not plan.raw or plan.gather_size is None or plan.gather_size < MIN_SIZE:
        return None                     # small chunks are kept as bytes, gathered one by one
    n = len(units)
    step = max(1, min(GATHER_BATCH // plan.gather_size, -(-n // _pool.threads())))
    return [(a, min(a + step, n)) for a in range(0, n, step)]


def _gather_batch(io: ArrayIO, units: list, src: np.ndarray,
                  raw_fill: bytes | None) -> dict[int, Any]:
    """The new bytes (None: all fill) of the interior chunks ``units`` cover in full, by their
    index in ``units``, gathered together; :func:`_encode_one` makes the others."""
    shape = io.chunk_shape
    plan = io.plan(shape)                            # type: ignore[arg-type]
    parts, at = [], []
    for j, (_, (p,)) in enumerate(units):
        if p.full and not _is_border(io, p.coords, shape):    # type: ignore[arg-type]
            chunk = src[p.out_sel]
            if chunk.shape == shape and any(chunk.strides):
                parts.append(chunk)
                at.append(j)
    try:
        # ``raw_fill`` is the fill value's bytes unless every chunk is stored (no NaN fill here)
        values = gather_kept_many(parts, plan.gather_crc32c(), raw_fill)
    except (ZarrError, MemoryError) as exc:
        raise _located(exc, io, units[at[0]][1][0].coords, shape)  # type: ignore[arg-type]
    return dict(zip(at, values))


def _by_object(io: ArrayIO, projections: Sequence, limit: int
               ) -> Iterator[list[tuple[tuple[int, ...], list]]]:
    """The projections grouped by the stored object holding their chunk, in order (they come
    shard-major, so each object's chunks are consecutive), in batches of whole objects of at
    most ``limit`` projections (or one object holding more)."""
    ratio = io.object_ratio
    whole = ratio is None or io.units_per_object == 1
    units: list[tuple[tuple[int, ...], list]] = []
    count = 0
    last = None
    for p in projections:
        obj = p.coords if whole else tuple(map(floordiv, p.coords, ratio))
        if whole or obj != last:
            if count >= limit:
                yield units
                units, count = [], 0
            units.append((obj, []))
            last = obj
        units[-1][1].append(p)
        count += 1
    if units:
        yield units


def _outside_units(io: ArrayIO, obj: tuple[int, ...], covered: list[tuple[int, ...]]
                   ) -> list[tuple[int, ...]]:
    """The read units of the stored object ``obj`` lying wholly outside the array, in each
    shard (the object, or one nested in it) at the array's edge all of whose units inside the
    array the write covers in full (``covered``: the coordinates of the units it covers so). They hold no element of the array, so such a
    shard is then written whole, without reading or decoding it, as a border chunk is (and a
    corrupt one is replaced)."""
    spans, chunk = io.meta.layout.shard_major, io.chunk_shape
    if not spans or chunk is None:
        return []
    ends = [-(-n // c) for n, c in zip(io.meta.shape, chunk)]      # read units per axis
    if all((o + 1) * r <= e for o, r, e in zip(obj, spans[0], ends)):
        return []                          # the object lies inside the array
    covered = set(covered)                 # type: ignore[assignment]
    out: set[tuple[int, ...]] = set()
    for span in spans:
        blocks: dict[tuple[int, ...], int] = {}
        for u in covered:
            b = tuple(c // s for c, s in zip(u, span))
            blocks[b] = blocks.get(b, 0) + 1
        for b, n in blocks.items():
            first = [i * s for i, s in zip(b, span)]
            inside = [min(s, e - f) for s, e, f in zip(span, ends, first)]
            if n != prod(inside) or inside == list(span):
                continue                   # partly written, or inside the array
            out.update(tuple(f + u for f, u in zip(first, unit)) for unit in np.ndindex(*span)
                       if any(u >= k for u, k in zip(unit, inside)))
    return sorted(out)


def gather_size(io: ArrayIO, flat: bool) -> int | None:
    """The encoded size of a full, interior chunk when the plan encodes it by one gather
    (raw chunks, optionally a crc32c) and the write may place it in a shard slab; else None."""
    if flat or not io.regular or io.object_chunks or io.fill_is_nan:
        return None
    if io.units_per_object == 1:
        return None
    return io.plan(io.chunk_shape).gather_size       # type: ignore[arg-type]


def _encode_one(io: ArrayIO, plan: CodecPipeline, p: Any, shape: tuple[int, ...], old: Any,
                src: np.ndarray, flat: bool, raw_fill: bytes | None,
                fields: Any = None) -> bytes | None:
    """The bytes to store for one chunk of a write, or None when the chunk is all fill."""
    if p.full and not flat and fields is None and not _is_border(io, p.coords, shape):
        chunk = src[p.out_sel]
        if chunk.shape != shape:
            chunk = io.work_chunk(shape, fill=False)
            _assign(chunk, p.chunk_sel, src, p.out_sel)
        elif plan.raw and any(chunk.strides):
            if io.keeps_values and plan.gather_size is not None:
                return _gather_kept(io, plan, chunk, raw_fill)
            if raw_fill is not None or io.write_empty_chunks:
                return plan.encode_gathered(chunk, fill=raw_fill)     # one copy in all
            data = plan.encode_gathered(chunk)
            return None if io.is_fill(plan.view(data)) else data
        elif any(chunk.strides) and not io.object_chunks:
            if (raw_fill is not None or io.write_empty_chunks) and _by_rows(plan):
                # blosc of shuffled float32/int32: shuffled as read, testing for the fill
                made = plan.b2b[0].codec.encode_rows(chunk, raw_fill)    # type: ignore
                if made is not NotImplemented:
                    return made
            # gather once into a contiguous buffer, testing for the fill value in the same pass;
            # the encoder then reads it there
            view, chunk = chunk, io.work_chunk(shape, fill=False)
            if raw_fill is None:
                copy_view(view, chunk)
            elif gather_into(view, chunk.reshape(-1).view(np.uint8), False, raw_fill):
                return None
            else:
                return plan.encode(chunk)
    elif old is None:
        chunk = io.work_chunk(shape, fill=True)
        _put(chunk, p, src, fields)
    else:
        if plan.nbytes >= CHECK_FIRST_BYTES:   # before a buffer of its size is made
            from zarrx.codecs.plan_check import check_stored
            check_stored(plan, old)
        chunk = io.work_chunk(shape, fill=False)
        plan.decode(old, chunk)
        if chunk.dtype == np.bool_:     # bytes other than 0 and 1 another writer stored
            items = chunk.view(np.uint8)
            np.minimum(items, 1, out=items)
        _put(chunk, p, src, fields)
    if not io.write_empty_chunks and io.is_fill(chunk):
        return None
    return plan.encode(chunk)


def _by_rows(plan: CodecPipeline) -> bool:
    """Whether the plan is the chunk's native bytes then one codec that may encode a chunk
    from its rows in the array (``encode_rows``: blosc)."""
    return not plan.a2a and len(plan.b2b) == 1 and not plan.swap and plan.mask is None \
        and hasattr(plan.b2b[0].codec, "encode_rows") and type(plan.a2b).__name__ == "Bytes"


def _put(chunk: np.ndarray, p: Any, src: np.ndarray, fields: Any) -> None:
    """The cells of ``src`` a projection writes into ``chunk``; only ``fields`` of their
    records when given, the other fields keeping the chunk's values."""
    if fields is None:
        _assign(chunk, p.chunk_sel, src, p.out_sel)
        return
    records = chunk[p.chunk_sel]
    records[fields] = src[p.out_sel][fields]
    chunk[p.chunk_sel] = records


def _gather_kept(io: ArrayIO, plan: CodecPipeline, chunk: np.ndarray,
                 raw_fill: bytes | None) -> bytes | Value | None:
    """A raw chunk gathered straight into what the store keeps as it is (see
    :func:`~zarrx.store._values.gather_kept`: one copy, into reused memory), or None when it is
    all fill."""
    value = gather_kept(chunk, plan.gather_crc32c(), raw_fill)
    if value is not None and raw_fill is None and not io.write_empty_chunks \
            and io.is_fill(plan.view(value)):
        return None
    return value


def _is_border(io: ArrayIO, coords: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether the chunk at ``coords`` reaches past the array's end: its cells there are not
    the selection's, even when a view of the value has the chunk's shape (a selection
    repeating cells, ``z.oindex[[1, 1]]``)."""
    if not io.regular:
        return _rectilinear_border(io, coords)
    for c, n, size in zip(coords, shape, io.meta.shape):
        if (c + 1) * n > size:
            return True
    return False


def _rectilinear_border(io: ArrayIO, coords: tuple[int, ...]) -> bool:
    """:func:`_is_border` of a chunk of a rectilinear grid, whose last chunk along an axis may
    reach past the array's end too."""
    grid = getattr(io, "_edges", None)
    if grid is None:
        from zarrx.chunk_grid import ChunkGridIndex
        sizes = getattr(io.meta.chunk_grid, "chunk_sizes", None)
        if sizes is None or io.units_per_object != 1:
            return False
        grid = io._edges = ChunkGridIndex(io.meta.shape, sizes)    # type: ignore[attr-defined]
    return any(a.inbound_len(k) < a.stored_len(k) for a, k in zip(grid.axes, coords))
