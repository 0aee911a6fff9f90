"""Zarr v2 ``.zarray`` / ``.zgroup`` / ``.zattrs``: parse (lowering into the v3-shaped model) and
serialise back.

Lowering of a ``.zarray`` into ``ArrayMeta.codecs``, in order:

1. ``order: "F"`` -> ``transpose`` with order ``[n-1, ..., 0]``, *first*. v2 lays a chunk out in
   Fortran order and hands that flat buffer to the filters; the C-order bytes of the transposed
   chunk are exactly those Fortran-order bytes, so every later stage sees what v2 gave it.
2. ``filters`` -> one ``CodecSpec(name=<id>, configuration=<dict minus id>, v2=True)`` each. For
   ``dtype: "|O"`` the object codec among them (``vlen-utf8``, ``vlen-bytes``, ``vlen-array``,
   ``json2``, ``pickle``, ``msgpack2``) is the array->bytes codec; filters after it act on bytes.
   v2 filters read and write buffers in the dtypes their own configuration names.
3. ``bytes`` with ``endian`` from the dtype's byte order (no configuration for 1-byte types),
   unless an object codec took that place.
4. ``compressor`` -> ``CodecSpec(name=<id>, ..., v2=True)``, last.
"""
from __future__ import annotations

import math
from typing import Any

from zarrx.metadata import json as mjson
from zarrx.metadata._util import Loc
from zarrx.metadata.dtypes import dtype_v2_json, parse_dtype_v2
from zarrx.metadata.fill import fill_json, parse_fill, same_fill
from zarrx.metadata.grid import check_grid, parse_chunk_shape, parse_shape
from zarrx.metadata.model import (ArrayMeta, CodecSpec, DataType, GroupMeta, KeyEncoding,
                                  RegularGrid)

__all__ = ["parse_array_v2", "parse_group_v2", "serialize_v2", "lower_v2", "OBJECT_CODECS",
           "COMPRESSOR_IDS", "attrs_key"]

OBJECT_CODECS = ("vlen-utf8", "vlen-bytes", "vlen-array", "json2", "pickle", "msgpack2")
COMPRESSOR_IDS = ("blosc", "zstd", "zlib", "gzip", "lz4", "bz2", "lzma", "lzf", "pcodec", "zfpy")
ZARRAY_REQUIRED = ("zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value",
                   "order")


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
        raise (loc / "zarr_format").error("2", d["zarr_format"])


def _v2_codec(value: Any, loc: Loc) -> CodecSpec:
    obj = loc.obj(value)
    if "id" not in obj:
        raise loc.fail("missing required field 'id'")
    cid = (loc / "id").str(obj["id"])
    if not cid:
        raise (loc / "id").error("a codec id", cid)
    return CodecSpec(cid, {k: v for k, v in obj.items() if k != "id"}, v2=True, json=value)


def lower_v2(filters: list[CodecSpec], compressor: CodecSpec | None, dt: DataType,
             endian: str | None, order: str, ndim: int, loc: Loc) -> tuple[CodecSpec, ...]:
    """The v3-shaped codec list of a v2 array (see the module docstring)."""
    out: list[CodecSpec] = []
    if order == "F":
        out.append(CodecSpec("transpose", {"order": list(range(ndim - 1, -1, -1))}))
    objects = [i for i, f in enumerate(filters) if f.name in OBJECT_CODECS]
    if dt.variable or dt.numpy.kind == "O":
        if not objects:
            raise (loc / "filters").error(
                "an object codec (vlen-utf8, vlen-bytes, ...) among the filters for dtype '|O'",
                [f.name for f in filters] or None)
        out.extend(filters)
    else:
        if objects:
            raise (loc / "filters" / objects[0]).error(
                "no object codec for a fixed-size dtype", filters[objects[0]].name)
        out.extend(filters)
        out.append(CodecSpec("bytes", {"endian": endian} if endian else {}))
    if compressor is not None:
        out.append(compressor)
    return tuple(out)


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
    fill = parse_fill(d["fill_value"], dt, loc / "fill_value", 2)
    order = d["order"]
    if order not in ("C", "F"):
        raise (loc / "order").error("'C' or 'F'", order)
    raw_filters = d.get("filters")
    fl = loc / "filters"
    filters = [] if raw_filters is None else [
        _v2_codec(f, fl / i) for i, f in enumerate(fl.list(raw_filters, "an array or null"))]
    comp = None if d["compressor"] is None else _v2_codec(d["compressor"], loc / "compressor")
    sep = d.get("dimension_separator", ".")
    if sep is None:
        sep = "."
    if sep not in (".", "/"):
        raise (loc / "dimension_separator").error("'.' or '/'", sep)
    codecs = lower_v2(filters, comp, dt, endian, order, len(shape), loc)
    known = (*ZARRAY_REQUIRED, "filters", "dimension_separator")
    extra = {k: v for k, v in d.items() if k not in known}
    return ArrayMeta(shape=shape, data_type=dt, chunk_grid=grid,
                     key_encoding=KeyEncoding("v2", sep),
                     fill_value=fill, codecs=codecs, chunk_codecs=codecs,
                     attributes=_attrs(zattrs, key), zarr_format=2, extra=extra, json=d)


def parse_group_v2(zgroup: bytes | str | dict, zattrs: bytes | str | dict | None, key: str
                   ) -> GroupMeta:
    """A ``.zgroup`` (and its ``.zattrs``, or None). Fields other than ``zarr_format`` (such as
    the ``consolidated_metadata`` zarr-python writes there) are kept in ``extra``."""
    d = mjson.load(zgroup, key, allow_nonfinite=True)
    _format2(d, Loc(key))
    extra = {k: v for k, v in d.items() if k != "zarr_format"}
    return GroupMeta(attributes=_attrs(zattrs, key), zarr_format=2, extra=extra, json=d)


# -- serialise ---------------------------------------------------------------------------------
def _codec_v2_json(spec: CodecSpec, loc: Loc) -> dict[str, Any]:
    if not spec.v2:
        raise loc.error("a v2 (numcodecs) codec", spec.name)
    j = spec.json
    if isinstance(j, dict) and j.get("id") == spec.name and \
            {k: v for k, v in j.items() if k != "id"} == spec.configuration:
        return j
    return {"id": spec.name, **spec.configuration}


def _unlower(meta: ArrayMeta, src: dict[str, Any], loc: Loc
             ) -> tuple[str, list[CodecSpec], CodecSpec | None, str | None]:
    cs = list(meta.codecs)
    order = "C"
    rev = list(range(meta.ndim - 1, -1, -1))
    if cs and cs[0].name == "transpose" and not cs[0].v2:
        if cs[0].configuration.get("order") != rev:
            raise (loc / "codecs" / 0).error(f"a transpose with order {rev} (order 'F')",
                                             cs[0].configuration)
        order = "F"
        cs = cs[1:]
    at = next((i for i, c in enumerate(cs) if (c.name == "bytes" and not c.v2)
               or (c.v2 and c.name in OBJECT_CODECS)), None)
    if at is None:
        raise (loc / "codecs").error("a 'bytes' codec or an object codec",
                                     [c.name for c in cs])
    endian = cs[at].configuration.get("endian") if cs[at].name == "bytes" else None
    before, a2b, after = cs[:at], cs[at], cs[at + 1:]
    filters = list(before) + ([a2b] if a2b.name != "bytes" else [])
    comp = None
    if after:
        has_comp = src.get("compressor") is not None if "compressor" in src \
            else after[-1].name in COMPRESSOR_IDS
        if has_comp:
            comp = after[-1]
            after = after[:-1]
        filters += after
    return order, filters, comp, endian


def serialize_v2(meta: ArrayMeta | GroupMeta) -> dict[str, dict[str, Any]]:
    """``{".zarray" or ".zgroup": {...}, ".zattrs": {...}}`` (``.zattrs`` only when attributes
    are not empty)."""
    src = meta.json if isinstance(meta.json, dict) and meta.json.get("zarr_format") == 2 else {}
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
    order, filters, comp, endian = _unlower(meta, src, loc)
    fv = fill_json(meta.fill_value, meta.data_type, 2)
    if "fill_value" in src and not (isinstance(src["fill_value"], float)
                                    and not math.isfinite(src["fill_value"])):
        try:
            old = parse_fill(src["fill_value"], meta.data_type, Loc("k"), 2)
            if same_fill(old, meta.fill_value, meta.data_type):
                fv = src["fill_value"]
        except ValueError:
            pass
    d: dict[str, Any] = {
        "shape": list(meta.shape), "chunks": list(meta.chunk_grid.chunk_shape),
        "dtype": dtype_v2_json(meta.data_type, endian), "fill_value": fv, "order": order,
        "filters": [_codec_v2_json(f, loc / "filters" / i) for i, f in enumerate(filters)]
        or ([] if src.get("filters") == [] else None),
    }
    if "dimension_separator" in src or not src or meta.key_encoding.separator != ".":
        d["dimension_separator"] = meta.key_encoding.separator
    d["compressor"] = None if comp is None else _codec_v2_json(comp, loc / "compressor")
    d["zarr_format"] = 2
    d.update(meta.extra)
    if src:
        d = {**{k: d[k] for k in src if k in d}, **d}
    return d
