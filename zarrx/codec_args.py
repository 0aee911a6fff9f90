"""Turn ``create_array``'s codec arguments (``filters``, ``serializer``, ``compressors``,
``shards``) into the codecs of the new array's metadata.

Each argument takes codec objects (``zarrx.codecs.Zstd(level=3)``), v3 dicts
(``{"name": "zstd", "configuration": {...}}``), numcodecs-style dicts (``{"id": "zstd",
"level": 3}``) or numcodecs codec objects; ``"auto"`` picks zarr-python 3's defaults (zstd level
0, the ``bytes`` serializer, or ``vlen-utf8`` / ``vlen-bytes`` for variable-length types).

Everything is checked before anything is written: an unknown codec is refused with the closest
known names, each configuration passes its codec's validator, and the whole chain is bound to
the chunks it will see, so the metadata holds complete configurations (blosc ``typesize``, a
filter's ``dtype``...).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrx.codecs.base import Codec
from zarrx.codecs.plan import complete_specs
from zarrx.codecs.registry import lookup
from zarrx.errors import CodecError, ZarrError
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_table import (B2B, check_codec, codec_kind, lower_numcodecs,
                                        unknown_codec)
from zarrx.metadata.codecs import codec_json
from zarrx.metadata.dtypes import category, resolve_dtype
from zarrx.metadata.model import CodecSpec, DataType

__all__ = ["build_codecs", "as_codec"]

Arg = CodecSpec | Codec

WHERE = "create_array"


def as_codec(obj: Any, where: str) -> Arg:
    """A codec argument as a codec object (checked when it was made) or a v3 codec spec (known,
    its configuration checked)."""
    loc = Loc(WHERE, where, error=CodecError)
    if isinstance(obj, Codec):
        return obj
    if isinstance(obj, CodecSpec):
        spec = obj
    elif isinstance(obj, Mapping) and "name" in obj:
        loc.keys(dict(obj), ("name",), ("configuration", "must_understand"))
        name = (loc / "name").str(obj["name"])
        conf = (loc / "configuration").obj(obj.get("configuration", {}))
        spec = CodecSpec(name, dict(conf),
                         must_understand=(loc / "must_understand").bool(
                             obj.get("must_understand", True)))
    elif isinstance(obj, Mapping) and "id" in obj:
        spec = lower_numcodecs(dict(obj), loc, known_only=True)
    elif hasattr(obj, "get_config") and callable(obj.get_config):     # a numcodecs codec
        spec = lower_numcodecs(dict(obj.get_config()), loc, known_only=True)
    else:
        raise loc.error("a codec object or codec dict", obj)
    if lookup(spec.name) is None:
        raise unknown_codec(spec.name, f"{loc}: ")
    check_codec(spec.name, spec.configuration, loc / "configuration")
    return spec


def _kind(c: Arg) -> str | None:
    return c.kind if isinstance(c, Codec) else codec_kind(c.name)


def _listify(arg: Any) -> list:
    if arg is None:
        return []
    if isinstance(arg, (Mapping, CodecSpec, Codec)) or hasattr(arg, "get_config"):
        return [arg]
    if isinstance(arg, Sequence) and not isinstance(arg, (str, bytes)):
        return list(arg)
    return [arg]


def _auto(arg: Any) -> bool:
    return isinstance(arg, str) and arg == "auto"


def _serializer(dt: DataType, endian: str | None) -> CodecSpec:
    kind = category(dt)
    if kind in ("string", "bytes"):
        return CodecSpec("vlen-utf8" if kind == "string" else "vlen-bytes", {})
    if dt.itemsize <= 1 and dt.numpy.fields is None:
        return CodecSpec("bytes", {})
    return CodecSpec("bytes", {"endian": endian or "little"})


_DTYPE_FIELDS = ("dtype", "astype", "encode_dtype", "decode_dtype")


def _stored_order(specs: list[CodecSpec], n_filters: int, ser: Arg) -> list[CodecSpec]:
    """The array->array filters' dtypes in the stored byte order (big-endian when the ``bytes``
    codec is): numcodecs filters view their input as the dtype they declare, so zarr-python
    and numcodecs read them right only then."""
    endian = getattr(ser, "endian", None) if isinstance(ser, Codec) else \
        ser.configuration.get("endian")
    if ser.name != "bytes" or endian != "big":
        return specs
    out = []
    for i, spec in enumerate(specs):
        if i < n_filters and spec.name.startswith("numcodecs."):
            conf = {k: np.dtype(v).newbyteorder(">").str
                    if k in _DTYPE_FIELDS and isinstance(v, str) else v
                    for k, v in spec.configuration.items()}
            spec = CodecSpec(spec.name, conf, must_understand=spec.must_understand)
        out.append(spec)
    return out


def _probe_shape(chunks: Any, ndim: int) -> tuple[int, ...]:
    """A chunk shape to bind codecs to (rectilinear grids: the first chunk's)."""
    out = []
    for c in (chunks if isinstance(chunks, Sequence) else ()):
        while isinstance(c, Sequence) and not isinstance(c, (str, bytes)) and c:
            c = c[0]
        out.append(int(c) if isinstance(c, (int, np.integer)) and c > 0 else 1)
    return tuple(out) if len(out) == ndim else (1,) * ndim


def build_codecs(*, dtype: Any, shape: tuple[int, ...], chunks: Any, shards: Any, filters: Any,
                 serializer: Any, compressors: Any, zarr_format: int,
                 order: str = "C") -> tuple[dict[str, Any], Any]:
    """``(codec arguments of make_array_meta, grid chunks)``: v3 ``{"codecs": [...]}``, v2
    ``{"filters": [...], "compressor": ...}``; the grid's chunks are the shard shape when
    ``shards`` is given."""
    dt, endian = resolve_dtype(dtype, zarr_format)
    if zarr_format == 2:
        endian = endian or "little"
    flt = [] if _auto(filters) else \
        [as_codec(f, f"filters[{i}]") for i, f in enumerate(_listify(filters))]
    if _auto(compressors):
        comp = [CodecSpec("zstd", {"level": 0, "checksum": False})]
    else:
        comp = [as_codec(c, f"compressors[{i}]") for i, c in enumerate(_listify(compressors))]
    ser = _serializer(dt, endian) if _auto(serializer) else as_codec(serializer, "serializer")
    probe = _probe_shape(chunks, len(shape))
    if zarr_format == 2:
        return _v2(dt, flt, ser, comp, shards, probe, order, endian), chunks
    inner = _stored_order(list(complete_specs([*flt, ser, *comp], dt, probe, key=WHERE)),
                          len(flt), ser)
    if shards is None:
        return {"codecs": inner}, chunks
    if isinstance(shards, Mapping):
        shard_shape = tuple(shards["shape"])
        index_location = shards.get("index_location", "end")
    else:
        shard_shape, index_location = tuple(shards), "end"
    if len(shard_shape) != len(shape) or len(chunks) != len(shape):
        raise ZarrError(f"create_array: shards {shard_shape} and chunks {tuple(chunks)} must have "
                        f"one entry per dimension of shape {shape}")
    for ax, (s, c) in enumerate(zip(shard_shape, chunks)):
        if c <= 0 or s <= 0 or s % c:
            raise ZarrError(f"create_array: shards[{ax}]={s} must be a positive multiple of "
                            f"chunks[{ax}]={c}")
    sharding = CodecSpec("sharding_indexed", {
        "chunk_shape": list(chunks),
        "codecs": [codec_json(s) for s in inner],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": index_location,
    })
    return {"codecs": [sharding]}, shard_shape


def _v2(dt: DataType, flt: list[Arg], ser: Arg, comp: list[Arg], shards: Any,
        probe: tuple[int, ...], order: str, endian: str) -> dict[str, Any]:
    """Zarr v2: the filters (an object codec among them for variable-length types) and one
    compressor, completed as the v3-shaped chain they are lowered to."""
    if shards is not None:
        raise ZarrError("create_array: shards= needs zarr_format=3 (Zarr v2 has no sharding)")
    if len(comp) > 1:
        raise ZarrError(f"create_array: Zarr v2 takes at most one compressor, found {len(comp)}")
    vlen = ("vlen-utf8", "vlen-bytes")
    objects = [f for f in flt if f.name in vlen]
    if ser.name in vlen or objects:
        ser = ser if ser.name in vlen else objects[0]
    flt = [f for f in flt if f.name not in vlen]
    if dt.variable and ser.name not in vlen:
        raise ZarrError(f"create_array: a variable-length data type needs the serializer "
                        f"vlen-utf8 or vlen-bytes in Zarr v2, found {ser.name!r}")
    # v2 filters that work on bytes run after serialisation (see zarrx.metadata.v2)
    at = next((i for i, f in enumerate(flt) if _kind(f) == B2B), len(flt))
    chain = [*flt[:at], ser, *flt[at:], *comp]
    if order == "F":
        probe = probe[::-1]
    done = _stored_order(list(complete_specs(chain, dt, probe, key=WHERE)), at,
                         CodecSpec("bytes", {"endian": endian or "little"}))
    filters = done[:at] + ([done[at]] if dt.variable else []) + done[at + 1:at + 1 + len(flt) - at]
    return {"filters": filters, "compressor": done[-1] if comp else None}
