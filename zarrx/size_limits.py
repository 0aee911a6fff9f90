"""How many bytes a stored chunk or shard of an array may hold, worked out from its metadata.

A stored object longer than any encoding of what it holds is corrupt (or not a chunk at all),
and reading it whole to find that out costs what the object is long: a 2 GiB file where a
1 KiB chunk belongs. Readers therefore fetch at most one byte more than the limit and refuse
a longer object unread, naming its key, its size and the limit.

The limit of a read unit (a chunk, or an inner chunk of a shard) is its codec chain's worst
case (:attr:`~zarrx.codecs.plan.CodecPipeline.stored_limit`): exactly the chunk's bytes for
``bytes``, 4 more per checksum, each compressor's own bound (``ZSTD_compressBound``, blosc's
16-byte header, zlib's ``deflateBound``...). Chunks whose size depends on their values are
bounded by the largest such chunk decoded (``MAX_VARIABLE_CHUNK``). A shard holds its index
and at most one read unit's limit per slot (an inner shard's, when nested), and a shard
encoded as a whole takes at most its codecs' bound of that. Decoding a shard encoded as a whole
holds all of it in memory at once: when its inner chunks' size depends on their values, its
decoded size is bounded by its indexes plus ``MAX_VARIABLE_CHUNK`` in all, as one such chunk
is, not by that per slot (a 100 KB zstd shard of 4 string chunks could otherwise decode to
4 GiB).
"""
from __future__ import annotations

from collections.abc import Sequence

from zarrx.codecs.base import BytesToBytesCodec
from zarrx.codecs.plan import MAX_VARIABLE_CHUNK, CodecPipeline, stored_bound
from zarrx.errors import CodecError, ZarrError
from zarrx.metadata.codecs import read_codec_places
from zarrx.metadata.model import ArrayMeta, RegularGrid
from zarrx.store.chunks import SizeLimit

__all__ = ["read_plan", "check_fill", "fill_through", "unit_limit", "shard_limit", "decoded_shard_limit", "encoded_limit",
           "MAX_OBJECT"]

MAX_OBJECT = (1 << 63) - 1  # no object is larger


def read_plan(meta: ArrayMeta, shape: tuple[int, ...], key: str) -> CodecPipeline:
    """The codec plan of the read units of ``shape`` of the array ``meta`` at ``key`` (named
    in messages): raises when zarrx cannot read them (a codec it lacks, a configuration it
    refuses for these chunks)."""
    v2 = meta.v2_codecs
    codecs = meta.layout.read_codecs
    places = None if v2 is not None else read_codec_places(meta.codecs, len(codecs))
    return CodecPipeline.resolve(codecs, meta.data_type, shape, key=key,
                                 where=None if v2 is None else v2.where,
                                 names=None if places is None else
                                 [f"{key or '/'} {p}" for p in places])


def check_fill(meta: ArrayMeta, key: str) -> None:
    """Raise (MetadataError) when the fill value of ``meta`` cannot pass its value codecs:
    checked when an array is created (the spec asks it of writers); an array stored with one
    is read, its unwritten chunks as its fill value, as zarr-python reads them."""
    plan = read_plan(meta, _largest_unit(meta), key)
    if meta.fill_value is not None:
        fill_through(plan, meta.fill_value, key)


def fill_through(plan: CodecPipeline, fill: object, key: str) -> object:
    """The fill value as the value codecs (``scale_offset``, ``cast_value``) hand it on,
    stage by stage (a transpose keeps it; other array->array codecs end the walk): a
    MetadataError when a stage cannot encode it, or (``cast_value``) it does not decode back
    to itself, as the spec requires of a fill value."""
    for st in plan.a2a:
        codec = st.codec
        if codec.name == "transpose":
            continue
        if not hasattr(codec, "encode_fill"):
            break
        fill = codec.encode_fill(fill, st.dtype, f"{key or '/'} {codec.name}")
    return fill


def _largest_unit(meta: ArrayMeta) -> tuple[int, ...]:
    """The read unit's shape; for a rectilinear grid, the longest chunk along each axis."""
    shape = meta.layout.read_shape
    if shape is not None:
        return shape
    grid = meta.chunk_grid
    assert not isinstance(grid, RegularGrid)
    return tuple(max((s for s, _ in sizes.runs()), default=0) if hasattr(sizes, "runs")
                 else max(sizes, default=0) for sizes in grid.chunk_sizes)  # type: ignore[attr-defined]


def _chain(meta: ArrayMeta) -> str:
    return " -> ".join(c.name for c in meta.layout.read_codecs)


def _error(found: int | None, limit: int, what: str, noun: str = "chunk") -> ZarrError:
    stored = f"{found} bytes stored" if found is not None else "more bytes stored"
    err = CodecError(f"{stored}, more than the {limit} bytes {what}")
    err.key_noun = noun
    return err


def unit_limit(meta: ArrayMeta, key: str) -> SizeLimit:
    """The limit of one stored read unit of ``meta`` (the array at ``key``)."""
    shape = _largest_unit(meta)
    plan = read_plan(meta, shape, key)
    limit = plan.stored_limit
    if plan.raw and not plan.b2b:   # stored as its bytes alone: any other size is wrong
        return SizeLimit(limit, lambda found: plan.wrong_size(
            found if found is not None else f"more than {limit}"))  # type: ignore[arg-type]
    dtype = meta.data_type.numpy
    kind = "an inner chunk" if meta.layout.sharded else "a chunk"
    what = (f"{kind} of shape {shape} and data type {dtype} encoded by {_chain(meta)} can take"
            + (f" (its size depends on its values: at most {plan.variable_limit} bytes "
               f"serialised)" if plan.max_encoded_size is None else ""))
    return SizeLimit(limit, lambda found: _error(found, limit, what))


def _shard_size(meta: ArrayMeta, unit: int) -> tuple[int, int]:
    """A shard's size with read units of at most ``unit`` bytes, and its slots' size."""
    size = slot = unit
    for grid in reversed(meta.layout.shards):
        slot = size
        size = min(grid.index_nbytes + grid.n_chunks * size, MAX_OBJECT)
    return size, slot


def shard_limit(meta: ArrayMeta, key: str) -> SizeLimit:
    """The limit of one shard object of ``meta`` as it is stored (without whole-shard codecs):
    its index and, in every slot, the largest stored inner chunk (an inner shard, when
    nested)."""
    layout = meta.layout
    size, slot = _shard_size(meta, unit_limit(meta, key).nbytes)
    outer = layout.shards[0]
    inner = "inner shards" if len(layout.shards) > 1 else "inner chunks"
    what = (f"a shard can take: its {outer.index_nbytes}-byte index and {outer.n_chunks} "
            f"{inner} of at most {slot} bytes each")
    return SizeLimit(size, lambda found: _error(found, size, what, "shard"))


def decoded_shard_limit(meta: ArrayMeta, key: str) -> int:
    """The most bytes a shard of ``meta`` encoded as a whole may decode to: as
    :func:`shard_limit`, but at most its indexes and ``MAX_VARIABLE_CHUNK`` when the size of
    its inner chunks depends on their values (the decoded shard is held whole)."""
    size = shard_limit(meta, key).nbytes
    if read_plan(meta, _largest_unit(meta), key).max_encoded_size is not None:
        return size
    return min(size, _shard_size(meta, 0)[0] + MAX_VARIABLE_CHUNK)


def encoded_limit(codecs: Sequence[BytesToBytesCodec], decoded: int) -> SizeLimit:
    """The limit of a shard stored encoded by ``codecs`` (whole-shard codecs, in encode order)
    that decodes to at most ``decoded`` bytes."""
    size = min(stored_bound(codecs, decoded), MAX_OBJECT)
    names = " -> ".join(c.name for c in codecs)
    what = f"a shard of at most {decoded} bytes encoded by {names} can take"
    return SizeLimit(size, lambda found: _error(found, size, what, "shard"))
