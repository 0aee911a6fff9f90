"""Zarr v2 ``.zarray`` / ``.zgroup`` / ``.zattrs``: parse (lowering into the v3-shaped model) and
serialise back.

Lowering of a ``.zarray`` into ``ArrayMeta.codecs``, in order:

1. ``order: "F"`` -> ``transpose`` with order ``[n-1, ..., 0]``, *first*. v2 lays a chunk out in
   Fortran order and hands that flat buffer to the filters; the C-order bytes of the transposed
   chunk are exactly those Fortran-order bytes, so every later stage sees what v2 gave it.
2. every numcodecs codec (filters, compressor) -> its v3 spec (``codec_table.lower_numcodecs``:
   ``zstd``, ``gzip``, ``crc32c``, ``vlen-*`` keep their v3 core names, anything else becomes
   ``numcodecs.<id>``). For ``dtype: "|O"`` the object codec among the filters (``vlen-utf8``,
   ``vlen-bytes``, ...) is the array->bytes codec; filters that begin with ``categorize`` and
   hold no object codec (strings stored as integer codes) are followed by ``bytes`` instead.
   ``json2`` and ``msgpack2`` store a chunk in the array's own axis order whatever ``order``
   says: with ``order: "F"`` a second ``transpose`` undoes the first before them.
3. ``bytes`` with ``endian`` from the dtype's byte order (no configuration for 1-byte types),
   unless an object codec took that place; after array->array filters that declare their
   output type (``delta``'s ``astype``, ``astype``'s ``encode_dtype``, ...), that type's byte
   order, in which numcodecs hands their output on. Filters that work on bytes (``shuffle``, ``zlib`` used
   as a filter...) come after it: v2 handed them the chunk's memory in its stored byte order,
   which is what ``bytes`` produces. The filters before the first such filter stay before it.
4. the compressor, last.

The filters and compressor as read are kept (``ArrayMeta.v2_codecs``) and written back as they
were; an array built without them gets them from its codec list (``numcodecs_json``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from zarrx.errors import MetadataValidationError
from zarrx.metadata import json as mjson
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_table import A2A, A2B, B2B, codec_kind, lower_numcodecs, numcodecs_json
from zarrx.metadata.codecs import MAX_CODECS, permutation
from zarrx.metadata.dtypes import dtype_v2_json, parse_dtype_v2
from zarrx.metadata.fill import fill_json, parse_fill, same_fill
from zarrx.metadata.grid import check_grid, parse_chunk_shape, parse_shape
from zarrx.metadata.model import (ArrayMeta, CodecSpec, DataType, GroupMeta, KeyEncoding,
                                  RegularGrid, V2Codecs, register_node_dict)

__all__ = ["parse_array_v2", "parse_group_v2", "serialize_v2", "lower_v2", "OBJECT_CODECS",
           "attrs_key", "v2_codecs_of", "filtered_endian", "bytes_filters_at",
           "nczarr_dimension_names"]

OBJECT_CODECS = ("vlen-utf8", "vlen-bytes", "vlen-array", "json2", "pickle", "msgpack2")
ZARRAY_REQUIRED = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value",
                   "order")
#: object codecs whose items are Python objects of any kind (not only strings or bytes)
ANY_OBJECTS = ("numcodecs.vlen-array", "numcodecs.json2", "numcodecs.msgpack2")
#: object codecs that store a chunk as nested lists in its own axis order
NESTED_LISTS = ("numcodecs.json2", "numcodecs.msgpack2")


def nczarr_dimension_names(meta: ArrayMeta) -> list[str] | None:
    """The dimension names netCDF-C's NCZarr format records in a Zarr v2 array's ``.zarray``:
    the last component of each fully qualified name in ``_NCZARR_ARRAY.dimrefs`` (``"/sub/n"``
    names ``n``), as xarray reads them when the ``_ARRAY_DIMENSIONS`` attribute is missing
    (netCDF-C 4.9.1 and later spell the field ``_nczarr_array``); None when there is no such
    field (or it is not a list of names)."""
    refs = meta.extra.get("_NCZARR_ARRAY", meta.extra.get("_nczarr_array"))
    refs = refs.get("dimrefs") if isinstance(refs, dict) else None
    if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
        return None
    return [r.rsplit("/", 1)[-1] for r in refs]


def attrs_key(key: str) -> str:
    """The ``.zattrs`` key next to a ``.zarray`` / ``.zgroup`` key."""
    for suffix in (".zarray", ".zgroup"):
        at = key.rfind(suffix)
        if at >= 0:
            return key[:at] + ".zattrs" + key[at + len(suffix):]
    return key + " .zattrs"


def _attrs(zattrs: Any, key: str) -> dict[str, Any]:
    if zattrs is None:
        return {}
    return dict(mjson.load(zattrs, attrs_key(key), allow_nonfinite=True))


def _format2(d: dict[str, Any], loc: Loc) -> None:
    if "zarr_format" not in d:
        raise loc.fail("missing required field 'zarr_format'")
    if d["zarr_format"] != 2 or isinstance(d["zarr_format"], bool):
        raise (loc / "zarr_format").error("2", d["zarr_format"], MetadataValidationError)


def _object_codec(spec: CodecSpec) -> bool:
    return spec.name in OBJECT_CODECS or spec.name in {f"numcodecs.{c}" for c in OBJECT_CODECS}


def _categorized(filters: list[CodecSpec]) -> bool:
    """Whether the filters of a ``|O`` array begin with ``categorize`` and hold no object
    codec: zarr-python 2 writes such arrays (its strings stored as integer codes), and the
    chunk then has the fixed size of the codes."""
    return bool(filters) and filters[0].name == "numcodecs.categorize" and \
        not any(_object_codec(f) for f in filters)


def lower_v2(filters: list[CodecSpec], compressor: CodecSpec | None, dt: DataType,
             endian: str | None, order: str, ndim: int, loc: Loc
             ) -> tuple[tuple[CodecSpec, ...], tuple[str, ...]]:
    """The v3-shaped codec list of a v2 array (see the module docstring), and where in the
    document each of its codecs comes from."""
    out: list[CodecSpec] = []
    where: list[str] = []
    flt = [str(loc / "filters" / i) for i in range(len(filters))]
    if order == "F":
        out.append(CodecSpec("transpose", {"order": list(range(ndim - 1, -1, -1))}))
        where.append(str(loc / "order"))
    objects = [i for i, f in enumerate(filters) if _object_codec(f)]
    if (dt.variable or dt.numpy.kind == "O") and not _categorized(filters):
        if not objects:
            raise (loc / "filters").error(
                "an object codec (vlen-utf8, vlen-bytes, ...) among the filters for dtype '|O'",
                [f.name for f in filters] or None)
        if order == "F" and any(f.name in NESTED_LISTS for f in filters):
            # json2 / msgpack2 store the chunk as nested lists in the array's own axis order
            # (ndarray.tolist()), whatever its memory layout: a second transpose undoes the
            # first and hands them the chunk so
            out.append(out[0])
            where.append(str(loc / "order"))
        out.extend(filters)
        where.extend(flt)
    else:
        if objects:
            raise (loc / "filters" / objects[0]).error(
                "no object codec for a fixed-size dtype", filters[objects[0]].name)
        a2b = next((i for i, f in enumerate(filters) if codec_kind(f.name) == A2B), None)
        if a2b is not None:     # a filter encoding arrays (pcodec, zfpy) serialises the chunk
            _array_filters_before(filters, a2b, loc / "filters" / a2b)
            out.extend(filters)
            where.extend(flt)
            if compressor is not None:
                out.append(compressor)
                where.append(str(loc / "compressor"))
            return tuple(out), tuple(where)
        at = bytes_filters_at(filters, loc)
        out.extend(filters[:at])
        endian = filtered_endian(filters[:at], endian, loc)
        if compressor is not None and codec_kind(compressor.name) == A2B:
            # a compressor that encodes arrays (pcodec, zfpy) serialises the chunk itself
            _array_filters_before(filters, len(filters), loc / "compressor",
                                  f"compressor {_id(compressor)!r}")
            out.append(compressor)
            where.extend([*flt, str(loc / "compressor")])
            return tuple(out), tuple(where)
        out.append(CodecSpec("bytes", {"endian": endian} if endian else {}))
        out.extend(filters[at:])
        where.extend([*flt[:at], str(loc / "dtype"), *flt[at:]])
    if compressor is not None:
        out.append(compressor)
        where.append(str(loc / "compressor"))
    return tuple(out), tuple(where)


def _array_filters_before(filters: list[CodecSpec], at: int, loc: Loc, what: str = "") -> None:
    """Refuse (at ``loc``) filters before ``at``, a codec that encodes arrays (pcodec, zfpy),
    that do not hand it an array, and after it filters that do not work on bytes (unknown
    codecs are left to be refused when a chunk is first read)."""
    what = what or f"filters[{at}] {_id(filters[at])!r}"
    for i, f in enumerate(filters):
        kind = codec_kind(f.name)
        if kind is None:
            continue
        if i < at and kind != A2A:
            raise loc.fail(f"{what} encodes arrays, but filters[{i}] {_id(f)!r} hands it "
                           f"bytes; expected only filters that work on arrays before it")
        if i > at and kind != B2B:
            raise loc.fail(f"{what} encodes arrays into bytes, but filters[{i}] {_id(f)!r} "
                           f"after it works on arrays; expected only filters that work on "
                           f"bytes after it")


def bytes_filters_at(filters: list[CodecSpec], loc: Loc,
                     kinds: list[str | None] | None = None) -> int:
    """Where the filters that work on bytes begin (``shuffle``, ``zlib`` used as a filter...):
    the index of the first, ``len(filters)`` if none. An array filter (``delta``...) after one
    is refused through ``loc`` (the document or argument holding ``filters``): numcodecs would
    view those bytes as the filter's declared type, which a chunk's codec chain cannot do.
    ``kinds`` gives each filter's kind when its name alone may not tell (codec objects)."""
    kinds = kinds or [codec_kind(f.name) for f in filters]
    at = next((i for i, k in enumerate(kinds) if k == B2B), len(filters))
    for i in range(at + 1, len(filters)):
        if kinds[i] == A2A:
            raise (loc / "filters" / i).fail(
                f"array filter {_id(filters[i])!r} after filters[{at}] {_id(filters[at])!r}, "
                f"which works on bytes; expected the filters that work on arrays (delta, "
                f"fixedscaleoffset, quantize, ...) before those that work on bytes (shuffle, "
                f"checksums, compressors)")
    return at


def _id(spec: CodecSpec) -> str:
    """The numcodecs id of a lowered codec."""
    return spec.name[len("numcodecs."):] if spec.name.startswith("numcodecs.") else spec.name


def _byte_order(declared: Any) -> str | None:
    """``"little"``, ``"big"`` or None (one byte, no order, or no numpy type) of a declared
    numcodecs dtype."""
    if not isinstance(declared, str) or not _numpy_name(declared):
        return None                # a type numpy does not name: the codec checks report it
    dt = np.dtype(declared)
    order = dt.str[0]              # '<', '>' or '|' (numpy spells the native order '=')
    if order == "|" or dt.itemsize <= 1 or dt.kind in "SVb":
        return None
    return "little" if order == "<" else "big"


def filtered_endian(filters: list[CodecSpec], endian: str | None, loc: Loc | None = None
                    ) -> str | None:
    """The byte order of what the array->array filters hand on, from ``endian``, the order
    of the data the first one receives: a numcodecs filter views its input as its declared
    type (``dtype`` or ``decode_dtype``) and returns its declared output type (``astype`` or
    ``encode_dtype``, else ``dtype``) in that type's byte order, which v2 stores as it is; a
    filter declaring none keeps its input's. With ``loc``, a filter declaring an input byte
    order other than the one it receives is refused: numcodecs reinterprets the bytes then,
    which zarrx does not reproduce."""
    for i, f in enumerate(filters):
        conf = f.configuration
        key = next((k for k in ("dtype", "decode_dtype") if isinstance(conf.get(k), str)), None)
        given = _byte_order(conf[key]) if key is not None else None
        if loc is not None and given is not None and endian is not None and given != endian:
            want = np.dtype(conf[key]).newbyteorder("<" if endian == "little" else ">").str
            raise (loc / "filters" / i / key).error(
                f"{want!r}, the byte order of the data the filter receives", conf[key])
        one_byte = key is not None and _numpy_name(conf[key]) and np.dtype(conf[key]).itemsize == 1
        if loc is not None and endian == "big" and f.name == "numcodecs.delta" and one_byte:
            raise (loc / "filters" / i / key).error(
                "a type of more than one byte: delta would read the big-endian bytes of the data "
                "it receives one by one, which zarrx does not reproduce", conf[key])
        out = next((conf[k] for k in ("astype", "encode_dtype", "dtype")
                    if isinstance(conf.get(k), str)), None)
        if out is not None and _numpy_name(out):
            endian = _byte_order(out)
    return endian


def _numpy_name(declared: str) -> bool:
    try:
        np.dtype(declared)
    except (TypeError, ValueError, OverflowError, MemoryError):
        return False
    return True


def _object_dtype(dt: DataType, filters: list[CodecSpec]) -> DataType:
    """``|O`` holds strings, bytes or any Python objects, as its object codec says."""
    if dt.numpy.kind != "O":
        return dt
    names = {f.name for f in filters}
    kind = "bytes" if "vlen-bytes" in names else "object" if names & set(ANY_OBJECTS) \
        else "string"
    return DataType(kind, dt.numpy, variable=True, json=dt._json)


def parse_array_v2(zarray: bytes | str | dict, zattrs: bytes | str | dict | None, key: str
                   ) -> ArrayMeta:
    """A ``.zarray`` (and its ``.zattrs``, or None) read from store key ``key``."""
    d = mjson.load(zarray, key, allow_nonfinite=True)
    loc = Loc(key)
    _format2(d, loc)
    for name in ZARRAY_REQUIRED:
        if name not in d:
            raise loc.fail(f"missing required field {name!r}")
    shape = parse_shape(d["shape"], loc / "shape")
    chunks = parse_chunk_shape(d["chunks"], shape, loc / "chunks")
    dt, endian = parse_dtype_v2(d["dtype"], loc / "dtype")
    grid = RegularGrid(chunks)
    check_grid(grid, shape, dt.itemsize, loc / "chunks")
    order = d["order"]
    if order not in ("C", "F"):
        raise (loc / "order").error("'C' or 'F'", order)
    raw_filters = d.get("filters")
    fl = loc / "filters"
    raw_filters = None if raw_filters is None else fl.list(raw_filters, "an array or null")
    if raw_filters is not None and len(raw_filters) > MAX_CODECS:   # before checking each
        raise fl.found(f"at most {MAX_CODECS} filters", f"{len(raw_filters)} filters")
    filters = [lower_numcodecs(f, fl / i) for i, f in enumerate(raw_filters or ())]
    comp = None if d["compressor"] is None else lower_numcodecs(d["compressor"],
                                                                  loc / "compressor")
    dt = _object_dtype(dt, filters)
    fill = parse_fill(d["fill_value"], dt, loc / "fill_value", 2, endian)
    sep = d.get("dimension_separator", ".")
    if sep is None:
        sep = "."
    if sep not in (".", "/"):
        raise (loc / "dimension_separator").error("'.' or '/'", sep)
    codecs, where = lower_v2(filters, comp, dt, endian, order, len(shape), loc)
    known = (*ZARRAY_REQUIRED, "filters", "dimension_separator")
    extra = {k: v for k, v in d.items() if k not in known}
    v2 = V2Codecs(None if raw_filters is None else tuple(raw_filters), d["compressor"], where)
    return ArrayMeta(shape=shape, data_type=dt, chunk_grid=grid,
                     key_encoding=KeyEncoding("v2", sep),
                     fill_value=fill, codecs=codecs, chunk_codecs=codecs,
                     attributes=_attrs(zattrs, key), zarr_format=2, extra=extra, v2_codecs=v2,
                     json=d)


def parse_group_v2(zgroup: bytes | str | dict, zattrs: bytes | str | dict | None, key: str
                   ) -> GroupMeta:
    """A ``.zgroup`` (and its ``.zattrs``, or None). Fields other than ``zarr_format`` (such as
    the ``consolidated_metadata`` zarr-python writes there) are kept in ``extra``."""
    d = mjson.load(zgroup, key, allow_nonfinite=True)
    _format2(d, Loc(key))
    extra = {k: v for k, v in d.items() if k != "zarr_format"}
    return GroupMeta(attributes=_attrs(zattrs, key), zarr_format=2, extra=extra, json=d)


# -- serialise ---------------------------------------------------------------------------------
def _split(meta: ArrayMeta, loc: Loc) -> tuple[str, list[CodecSpec], CodecSpec | None, str | None]:
    """``(order, filters, compressor, endian)`` of a v2 array's codec list: a leading
    ``F``-order transpose, array->array codecs and an object codec as filters, ``bytes`` (its
    endian), then bytes->bytes codecs as filters with the last one as the compressor."""
    cs = list(meta.codecs)
    order = "C"
    rev = tuple(range(meta.ndim - 1, -1, -1))
    if cs and cs[0].name == "transpose":
        if permutation(cs[0].configuration.get("order"), meta.ndim) != rev:
            raise (loc / "codecs" / 0).error(f"a transpose with order {list(rev)} (order 'F')",
                                             cs[0].configuration)
        order, cs = "F", cs[1:]
    at = next((i for i, c in enumerate(cs) if c.name == "bytes" or _object_codec(c)), None)
    if at is None:
        at = next((i for i, c in enumerate(cs) if codec_kind(c.name) == A2B
                   and c.name.startswith("numcodecs.")), None)
        if at is not None:          # an array->bytes numcodecs codec: the compressor, or
            return order, cs[:-1], cs[-1], None     # a filter before bytes->bytes codecs
        raise (loc / "codecs").error("a 'bytes' codec or an object codec", [c.name for c in cs])
    endian = cs[at].configuration.get("endian") if cs[at].name == "bytes" else None
    filters = cs[:at] + ([cs[at]] if cs[at].name != "bytes" else []) + cs[at + 1:]
    comp = filters.pop() if len(cs) > at + 1 else None
    return order, filters, comp, endian


def v2_codecs_of(filters: list[CodecSpec], compressor: CodecSpec | None, loc: Loc) -> V2Codecs:
    """The ``.zarray`` filters and compressor of codec specs (their numcodecs forms)."""
    return V2Codecs(tuple(numcodecs_json(f, loc / "filters" / i) for i, f in enumerate(filters))
                    or None,
                    None if compressor is None else numcodecs_json(compressor, loc / "compressor"))


def serialize_v2(meta: ArrayMeta | GroupMeta) -> dict[str, dict[str, Any]]:
    """``{".zarray" or ".zgroup": {...}, ".zattrs": {...}}`` (``.zattrs`` only when attributes
    are not empty)."""
    src = meta._json if isinstance(meta._json, dict) and meta._json.get("zarr_format") == 2 else {}
    if isinstance(meta, GroupMeta):
        out: dict[str, dict[str, Any]] = {".zgroup": {"zarr_format": 2, **meta.extra}}
    else:
        out = {".zarray": _zarray(meta, src)}
    if meta.attributes:
        out[".zattrs"] = meta.attributes
    return out


def _zarray(meta: ArrayMeta, src: dict[str, Any]) -> dict[str, Any]:
    loc = Loc(".zarray")
    if not isinstance(meta.chunk_grid, RegularGrid):
        raise (loc / "chunks").error("a regular chunk grid (v2 has no other)",
                                     type(meta.chunk_grid).__name__)
    if meta.shard_levels:
        raise (loc / "codecs").error("no sharding (v2 has none)", "sharding_indexed")
    if meta.key_encoding.name != "v2":
        raise (loc / "dimension_separator").error("the 'v2' chunk key encoding",
                                                  meta.key_encoding.name)
    order, filters, comp, endian = _split(meta, loc)
    v2 = meta.v2_codecs or v2_codecs_of(filters, comp, loc)
    fv = fill_json(meta.fill_value, meta.data_type, 2, endian)
    if "fill_value" in src and not (isinstance(src["fill_value"], float)
                                    and not math.isfinite(src["fill_value"])):
        try:
            old = parse_fill(src["fill_value"], meta.data_type, Loc("k"), 2, endian)
            if same_fill(old, meta.fill_value, meta.data_type):
                fv = src["fill_value"]
        except ValueError:
            pass
    d: dict[str, Any] = {
        "shape": list(meta.shape), "chunks": list(meta.chunk_grid.chunk_shape),
        "dtype": dtype_v2_json(meta.data_type, endian), "fill_value": fv, "order": order,
        "filters": None if v2.filters is None else list(v2.filters),
    }
    if "dimension_separator" in src or not src or meta.key_encoding.separator != ".":
        d["dimension_separator"] = meta.key_encoding.separator
    d["compressor"] = v2.compressor
    d["zarr_format"] = 2
    d.update(meta.extra)
    if src:
        d = {**{k: d[k] for k in src if k in d}, **d}
    return d


def _node_dict(meta: ArrayMeta | GroupMeta) -> dict[str, Any]:
    """zarr-python's ``to_dict()`` of a v2 node: an array's ``.zarray`` with its
    ``attributes``; a group's ``attributes``, ``zarr_format`` and ``node_type``, and the
    entries of its consolidated metadata (``.zmetadata``) as zarr-python adds them, a
    ``consolidated_metadata`` object of the v3 form."""
    if isinstance(meta, GroupMeta):
        out = {"attributes": meta.attributes, "zarr_format": 2, "node_type": "group"}
        if meta.consolidated is not None:
            out["consolidated_metadata"] = meta.consolidated_metadata.to_dict()
        return out
    return {**serialize_v2(meta)[".zarray"], "attributes": meta.attributes}


register_node_dict(2, _node_dict)
