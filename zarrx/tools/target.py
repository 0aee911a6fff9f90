"""The destination of a conversion: ``create_array`` arguments from a source array and the
changes asked for (format, chunks, shards, codecs, fill value).

Whatever is not changed is kept: the data type and its byte order, the codec chain of a chunk
(filters, serializer, compressors), the fill value, the attributes, the dimension names and,
within a format, the chunk key encoding (v2's ``dimension_separator``).
Between formats:

- numcodecs codecs that a core v3 codec expresses exactly become that codec in v3 (numcodecs
  ``blosc`` becomes ``blosc`` with its shuffle named and its ``typesize`` set), and core codecs
  become their numcodecs form in v2;
- v3 ``dimension_names`` become the ``_ARRAY_DIMENSIONS`` attribute in v2 (the convention of
  xarray), and the other way round (names given to some dimensions only, which that attribute
  cannot hold, are refused); a v2 array without that attribute whose ``.zarray`` names
  its dimensions as netCDF-C's NCZarr does (``_NCZARR_ARRAY.dimrefs``, a field not kept) gets
  those names as ``dimension_names`` in v3 and as ``_ARRAY_DIMENSIONS`` in v2;
- v2 has no sharding: a sharded array's inner chunks become the chunks, unless other chunks are
  asked for; a chain v2 cannot hold (two compressors, say) is an error that names the codec
  options to pass instead.

In a hierarchy, a chunk or shard shape applies to the arrays of its number of dimensions; the
others keep theirs (:func:`for_rank`).
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.creation import create_array
from zarrx.errors import FillValueError, ZarrError
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_checks import GDAL_BLOSC_SHUFFLES
from zarrx.metadata.dtype_input import resolve_dtype
from zarrx.metadata.make import coerce_fill
from zarrx.metadata.codec_table import A2A, A2B, B2B, codec_kind
from zarrx.metadata.dtypes import dtype_v3_json
from zarrx.metadata.model import CodecSpec, RectilinearGrid
from zarrx.metadata.v2 import nczarr_dimension_names

__all__ = ["KEEP", "Changes", "target_arguments", "planned_array", "refused_changes",
           "DIMS_ATTR", "SHAPES", "shape_rank", "for_rank"]

DIMS_ATTR = "_ARRAY_DIMENSIONS"
_BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


#: "keep what the source has" (the default of every change)
KEEP: Any = _Keep()


@dataclass(frozen=True)
class Changes:
    """What a conversion changes; :data:`KEEP` keeps the source's.

    ``zarr_format``: 2 or 3; ``chunks``: the (inner) chunk shape; ``shards``: the shard shape,
    or None for no sharding; ``compressors``, ``filters``, ``serializer``: as
    :func:`zarrx.create_array` takes them; ``fill_value``: the new fill value."""

    zarr_format: Any = KEEP
    chunks: Any = KEEP
    shards: Any = KEEP
    compressors: Any = KEEP
    filters: Any = KEEP
    serializer: Any = KEEP
    fill_value: Any = KEEP


#: the changes that are a shape, one length per dimension
SHAPES = ("chunks", "shards")


def shape_rank(value: Any) -> int | None:
    """The number of dimensions of a chunk or shard shape asked for; None for :data:`KEEP`,
    None (no sharding) and what is not a list or tuple (refused with the array's rank)."""
    return len(value) if isinstance(value, (list, tuple)) else None


def for_rank(changes: Changes, ndim: int) -> tuple[Changes, list[str]]:
    """``changes`` for an array of ``ndim`` dimensions in a hierarchy, and the names of the
    shapes left out: a chunk or shard shape with another number of dimensions does not apply
    to it, so the array keeps its own (as :data:`KEEP` does)."""
    other = [name for name in SHAPES
             if shape_rank(getattr(changes, name)) not in (None, ndim)]
    return replace(changes, **{name: KEEP for name in other}), other


def _split(specs: tuple[CodecSpec, ...], where: str) -> tuple[list, CodecSpec, list]:
    """``(filters, serializer, compressors)`` of a chunk's codec chain."""
    kinds = [codec_kind(s.name) for s in specs]
    if None in kinds:
        raise ZarrError(f"{where}: the codec {specs[kinds.index(None)].name!r} is unknown to "
                        f"zarrx, which cannot read the chunks to convert them (zarrx copy "
                        f"copies them as stored)")
    if kinds.count(A2B) != 1:
        raise ZarrError(f"{where}: cannot read the codec chain {[s.name for s in specs]}: "
                        f"expected one array->bytes codec")
    at = kinds.index(A2B)
    before, after = list(specs[:at]), list(specs[at + 1:])
    if any(k != A2A for k in kinds[:at]) or any(k != B2B for k in kinds[at + 1:]):
        raise ZarrError(f"{where}: cannot read the codec chain {[s.name for s in specs]}")
    return before, specs[at], after


def _to_core(spec: CodecSpec, itemsize: int) -> CodecSpec:
    """A numcodecs codec as the core v3 codec meaning the same, where there is one."""
    conf = dict(spec.configuration)
    if spec.name == "numcodecs.blosc":
        shuffle = conf.get("shuffle", 1)
        if isinstance(shuffle, str):                  # as GDAL writes it
            shuffle = GDAL_BLOSC_SHUFFLES.get(shuffle.lower(), shuffle)
        if shuffle == -1:
            shuffle = 2 if itemsize == 1 else 1
        if shuffle not in (0, 1, 2):
            return spec
        out = {"cname": conf.get("cname", "lz4"), "clevel": conf.get("clevel", 5),
               "shuffle": _BLOSC_SHUFFLES[shuffle], "blocksize": conf.get("blocksize", 0),
               "typesize": itemsize}
        return CodecSpec("blosc", out)
    if spec.name in ("numcodecs.zstd", "numcodecs.gzip"):
        return CodecSpec(spec.name[len("numcodecs."):], conf)
    return spec


def _codec_name(codec: Any) -> str:
    """The name of a codec as a conversion is given it (a CodecSpec, a dict, a codec)."""
    if isinstance(codec, CodecSpec):
        return codec.name
    if isinstance(codec, dict):
        return str(codec.get("name", codec.get("id", codec)))
    return str(getattr(codec, "codec_id", None) or type(codec).__name__)


def _is_reversal(spec: CodecSpec, ndim: int) -> bool:
    return spec.name == "transpose" and \
        list(spec.configuration.get("order", ())) == list(range(ndim))[::-1]


def target_arguments(src: Array, changes: Changes, where: str) -> dict[str, Any]:
    """Keyword arguments of :func:`zarrx.create_array` for the converted ``src``."""
    meta = src.metadata
    fmt = meta.zarr_format if changes.zarr_format is KEEP else changes.zarr_format
    if isinstance(fmt, (bool, np.bool_)) or not isinstance(fmt, (int, np.integer)) \
            or fmt not in (2, 3):           # an array would compare element by element
        raise ZarrError(f"{where}: zarr_format: expected 2 or 3, found {fmt!r}")
    fmt = int(fmt)
    filters, serializer, compressors = _split(meta.layout.read_codecs, where)
    itemsize = meta.data_type.itemsize
    order = "C"
    if fmt == 3:
        compressors = [_to_core(c, itemsize) for c in compressors]
    elif filters and _is_reversal(filters[0], meta.ndim):
        # v2 writes a reversed axis order as "F"; with fewer than two axes that reorders
        # nothing, and a Zarr v2 source's own "F" is kept
        filters = filters[1:]
        order = "F" if meta.ndim > 1 or (meta.zarr_format == 2 and src.order == "F") else "C"
    endian = serializer.configuration.get("endian") if serializer.name == "bytes" else None
    dtype: Any = meta.data_type.numpy
    size = dtype.itemsize
    if meta.data_type.variable:
        dtype = "bytes" if serializer.name == "vlen-bytes" else "string"
    elif fmt == 3 and meta.zarr_format == 3:
        dtype = dtype_v3_json(meta.data_type)   # as named: r16 stays r16, struct stays struct
    elif endian == "big" and size > 1:
        dtype = dtype.newbyteorder(">")
    if endian is not None:
        serializer = CodecSpec("bytes", {"endian": endian} if size > 1 else {})
    kw: dict[str, Any] = {
        "shape": meta.shape, "dtype": dtype, "zarr_format": fmt, "order": order,
        "filters": filters if changes.filters is KEEP else changes.filters,
        "compressors": compressors if changes.compressors is KEEP else changes.compressors,
        "serializer": serializer if changes.serializer is KEEP else changes.serializer,
        "fill_value": meta.fill_value if changes.fill_value is KEEP else changes.fill_value,
    }
    chosen = kw["compressors"]
    if fmt == 2 and isinstance(chosen, (list, tuple)) and len(chosen) > 1:
        origin = " in the source's chain" if changes.compressors is KEEP else " given"
        raise ZarrError(f"{where}: Zarr v2 takes at most one compressor, found {len(chosen)}"
                        f"{origin} ({', '.join(_codec_name(c) for c in chosen)}); pass one "
                        f"with --compressor (compressors=), or --compressor none")
    moved = [f for f in (kw["filters"] or ()) if _codec_name(f).lower() == "transpose"]
    if fmt == 2 and moved:
        origin = " in the source's chain" if changes.filters is KEEP else " given"
        raise ZarrError(f"{where}: Zarr v2 has no transpose filter (it stores chunks in C or F "
                        f"order only), found {len(moved)}{origin}; drop the filters with "
                        f"--filter none (filters=[]), which changes no value, or write Zarr v3 "
                        f"(--zarr-format 3)")
    if fmt == meta.zarr_format:         # another format takes its own default chunk keys
        kw["chunk_key_encoding"] = meta.key_encoding
    kw.update(_grid(src, changes, fmt, where))
    levels = meta.layout.shards
    if fmt == 3 and kw["shards"] is not None and levels:
        # the shard index stays where the source keeps it (at the start suits readers that
        # stream a shard); its own codecs become the default ones
        kw["shards"] = {"shape": tuple(kw["shards"]),
                        "index_location": levels[0].level.index_location}
    attrs = dict(meta.attributes)
    dims = meta.dimension_names
    if meta.zarr_format == 2 and DIMS_ATTR not in attrs:
        nczarr = nczarr_dimension_names(meta)           # the .zarray field is not kept
        dims = tuple(nczarr) if nczarr is not None and len(nczarr) == meta.ndim else None
    if fmt == 3:
        stored = attrs.pop(DIMS_ATTR, None) if meta.zarr_format == 2 else None
        if dims is None and isinstance(stored, list) and len(stored) == meta.ndim \
                and all(isinstance(d, str) for d in stored):
            dims = tuple(stored)
        elif stored is not None:
            attrs[DIMS_ATTR] = stored
        kw["dimension_names"] = dims
    elif dims is not None and DIMS_ATTR not in attrs and all(isinstance(d, str) for d in dims):
        attrs[DIMS_ATTR] = list(dims)
    elif dims is not None and DIMS_ATTR not in attrs and any(isinstance(d, str) for d in dims):
        unnamed = [i for i, d in enumerate(dims) if not isinstance(d, str)]
        raise ZarrError(f"{where}: Zarr v2 cannot hold the dimension names {dims!r}: its "
                        f"{DIMS_ATTR} attribute names every dimension, and dimension"
                        f"{'s' if len(unnamed) > 1 else ''} {', '.join(map(str, unnamed))} "
                        f"{'have' if len(unnamed) > 1 else 'has'} no name; write Zarr v3 "
                        f"(--zarr-format 3), which keeps them")
    kw["attributes"] = attrs
    return kw


def planned_array(src: Array, changes: Changes, where: str) -> tuple[dict[str, Any], Array]:
    """The :func:`zarrx.create_array` arguments of the converted ``src`` and the array they
    make in memory: everything is checked, nothing is written."""
    from zarrx.store import MemoryStore
    kw = target_arguments(src, changes, where)
    if changes.fill_value is not KEEP:      # named with the type it is to be a value of
        dt, _ = resolve_dtype(kw["dtype"], kw["zarr_format"])
        coerce_fill(changes.fill_value, dt, kw["zarr_format"],
                    Loc(f"{where}: fill_value", f"for its type {src.dtype}", FillValueError))
    try:
        return kw, create_array(MemoryStore(), **kw)
    except ZarrError as exc:                # a change the array cannot take: say which
        raise exc.at(array=src.name)


def refused_changes(src: Array, changes: Changes, where: str) -> tuple[str, ...]:
    """The names of the changes that ``src`` cannot take, once :func:`planned_array` refused
    them: those refused on their own, else all that were given (refused together); none when
    the source is refused unchanged (the fault is then the source's)."""
    def refused(attempt: Changes) -> bool:
        try:
            planned_array(src, attempt, where)
        except ZarrError:
            return True
        return False

    given = [f.name for f in fields(Changes) if getattr(changes, f.name) is not KEEP]
    if not given or refused(Changes()):
        return ()
    alone = [name for name in given if refused(Changes(**{name: getattr(changes, name)}))]
    return tuple(alone or given)


def _grid(src: Array, changes: Changes, fmt: int, where: str) -> dict[str, Any]:
    meta = src.metadata
    if isinstance(meta.chunk_grid, RectilinearGrid):
        if changes.chunks is KEEP and fmt == 2:
            raise ZarrError(f"{where}: a rectilinear chunk grid has no Zarr v2 form; pass "
                            f"chunks (--chunks)")
        read = None
    else:
        read = meta.layout.read_shape
    chunks = read if changes.chunks is KEEP else _shape(changes.chunks, meta.ndim, "chunks", where)
    if changes.shards is KEEP:
        shards = src.shards if fmt == 3 else None
        if shards is not None and chunks is not None and \
                any(s % c for s, c in zip(shards, chunks)):
            shards = None if changes.chunks is KEEP else _fit(shards, chunks)
    elif changes.shards is None:
        shards = None
    else:
        shards = _shape(changes.shards, meta.ndim, "shards", where)
        if fmt == 2:
            raise ZarrError(f"{where}: Zarr v2 has no sharding; drop the shard shape "
                            f"(--shards none), or write Zarr v3 (--zarr-format 3)")
    if chunks is None:
        chunks = meta.chunk_grid.chunk_sizes     # type: ignore[union-attr]
    return {"chunks": chunks, "shards": shards}


def _fit(shards: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[int, ...]:
    """The shard shape rounded up to whole chunks."""
    return tuple(-(-s // c) * c for s, c in zip(shards, chunks))


def _shape(value: Any, ndim: int, what: str, where: str) -> tuple[int, ...]:
    try:
        out = tuple(int(v) for v in value)
        ok = len(out) == ndim and all(v > 0 for v in out) and \
            all(not isinstance(v, (bool, float)) for v in value)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ZarrError(f"{where}: {what}: expected {ndim} positive ints, found {value!r}")
    return out

