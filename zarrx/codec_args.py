"""Turn ``create_array``'s codec arguments (``filters``, ``serializer``, ``compressors``,
``shards``) into the codecs of the new array's metadata.

Each argument takes codec objects (``zarrx.codecs.Zstd(level=3)``), zarr-python's codec objects
(``zarr.codecs.ZstdCodec(level=3)``), v3 dicts (``{"name": "zstd", "configuration": {...}}``),
numcodecs-style dicts (``{"id": "zstd", "level": 3}``) or numcodecs codec objects; ``"auto"``
picks zarr-python 3's defaults (zstd level 0, the ``bytes`` serializer, or ``vlen-utf8`` /
``vlen-bytes`` for variable-length types). A ``sharding_indexed`` serializer
(``zarrx.codecs.ShardingCodec``) is the same as ``shards=``: the array's chunks become shards
of its ``chunk_shape``.

``array_codecs`` goes the other way: an array's filters, serializer and compressors as codec
objects, as zarr-python's ``Array.filters`` / ``serializer`` / ``compressors`` report them.

Everything is checked before anything is written: an unknown codec is refused with the closest
known names, each configuration passes its codec's validator, and the whole chain is bound to
the chunks it will see, so the metadata holds complete configurations (blosc ``typesize``, a
filter's ``dtype``...).
"""
from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrx.codec_inputs import WHERE, Arg, as_codec
from zarrx.codec_inputs import int_tuple as _int_tuple
from zarrx.codec_inputs import is_auto as _auto
from zarrx.codec_inputs import kind_of as _kind
from zarrx.codec_inputs import listify as _listify
from zarrx.codecs.base import Codec, V2Place
from zarrx.codecs.plan import complete_specs
from zarrx.codecs.registry import lookup
from zarrx.errors import ArgumentError, ArgumentTypeError, CodecError
from zarrx.metadata._util import Loc, short
from zarrx.metadata.codec_table import A2A, A2B, B2B, codec_kind, lower_numcodecs
from zarrx.metadata.codecs import ELEMENTWISE, codec_json
from zarrx.metadata.dtype_input import resolve_dtype
from zarrx.metadata.dtypes import category
from zarrx.metadata.model import ArrayMeta, CodecSpec, DataType
from zarrx.metadata.v2 import bytes_filters_at, filtered_endian
from zarrx.shard_args import nested_shards, transposed_shards, unshard

__all__ = ["build_codecs", "as_codec", "split_codecs", "array_codecs"]


_ARG_OF = {A2A: "filters", A2B: "serializer", B2B: "compressors"}


def _placed(c: Arg, arg: str, where: str) -> Arg:
    """``c`` if its kind belongs in ``arg`` (filters: array->array, serializer: array->bytes,
    compressors: bytes->bytes), else an error saying which argument takes it."""
    kind = _kind(c)
    if kind is not None and _ARG_OF[kind] != arg:
        what = _what(c)
        article = "a" if kind == B2B else "an"
        raise ArgumentTypeError(f"{WHERE} {where}: {what} is {article} {kind} codec; pass it "
                                f"in {_ARG_OF[kind]}=, not {arg}=")
    return c


def split_codecs(codecs: Any, where: str = WHERE) -> dict[str, Any]:
    """A v3 codec list (zarr-python's ``codecs=``) as ``filters``, ``serializer`` and
    ``compressors`` arguments, by each codec's kind; a codec out of the order array->array*,
    one array->bytes, bytes->bytes* is refused naming its place in the list (``where``: the
    function taking it)."""
    items = [as_codec(c, f"codecs[{i}]") for i, c in enumerate(_listify(codecs))]
    kinds = [_kind(c) for c in items]
    if A2B not in kinds:
        raise ArgumentError(f"{where} codecs: expected exactly one array->bytes codec (such as "
                            f"'bytes'), found none in {items!r}")
    at = kinds.index(A2B)
    rank = {A2A: 0, A2B: 1, B2B: 2}
    for i, kind in enumerate(kinds):
        if kind is None or i == at:
            continue
        if kind == A2B:
            raise ArgumentError(f"{where} codecs[{i}]: expected one array->bytes codec only, "
                                f"found a second one, {_what(items[i])} (after codecs[{at}])")
        if (rank[kind] < 1) != (i < at):
            article = "a" if kind == B2B else "an"
            raise ArgumentTypeError(f"{where} codecs[{i}]: {_what(items[i])} is {article} "
                                    f"{kind} codec, {'after' if i > at else 'before'} the "
                                    f"array->bytes codec codecs[{at}]; expected array->array "
                                    f"codecs, then one array->bytes codec, then bytes->bytes "
                                    f"codecs")
    return {"filters": items[:at], "serializer": items[at], "compressors": items[at + 1:]}


def _what(c: Arg) -> str:
    """A codec as messages name it: its class, or its spec name."""
    return type(c).__name__ if isinstance(c, Codec) else repr(c.name)


def array_codecs(meta: ArrayMeta) -> dict[str, Any]:
    """An array's ``filters`` and ``compressors`` (tuples) and ``serializer``, as codec objects
    (a ``CodecSpec`` for a codec without a class here): the codecs of one chunk (the inner
    chunk when sharded). Zarr v2 arrays report their ``.zarray`` filters and compressor and
    no serializer, as zarr-python does."""
    if meta.zarr_format == 2 and meta.v2_codecs is not None:
        v2 = meta.v2_codecs
        loc = Loc("array metadata")
        flt = tuple(_object(lower_numcodecs(dict(f), loc)) for f in v2.filters or ())
        comp = () if v2.compressor is None else (_object(lower_numcodecs(dict(v2.compressor),
                                                                         loc)),)
        return {"filters": flt, "serializer": None, "compressors": comp}
    # the value codecs before a sharding codec run on each inner chunk too (zarr-python
    # reports them as the filters)
    specs = [c for level in meta.shard_levels for c in level.outer_codecs
             if c.name in ELEMENTWISE] + list(meta.chunk_codecs)
    kinds = [codec_kind(s.name) for s in specs]
    at = kinds.index(A2B) if A2B in kinds else len(specs)
    return {"filters": tuple(_object(s) for s in specs[:at]),
            "serializer": _object(specs[at]) if at < len(specs) else None,
            "compressors": tuple(_object(s) for s in specs[at + 1:])}


def _object(spec: CodecSpec) -> Arg:
    cls = lookup(spec.name)
    if cls is None:
        return spec
    try:
        return cls.from_spec(spec, where="array codecs")
    except (CodecError, ValueError):
        return spec


def _serializer(dt: DataType, endian: str | None) -> CodecSpec:
    kind = category(dt)
    if kind in ("string", "bytes"):
        return CodecSpec("vlen-utf8" if kind == "string" else "vlen-bytes", {})
    if dt.itemsize <= 1 and dt.numpy.fields is None or kind in ("fixed_bytes", "raw"):
        # (bytes and raw bytes have no byte order: no endian, as zarr-python writes them)
        return CodecSpec("bytes", {})
    return CodecSpec("bytes", {"endian": endian or "little"})


def _cast_to(flt: list[Any], dt: DataType) -> DataType:
    """The data type the ``bytes`` serializer receives when the last filter changing it is a
    ``cast_value`` (a 1-byte target is serialised without an ``endian``, as zarr-python
    writes it); ``dt`` otherwise."""
    for f in reversed(flt):
        spec = f.to_spec() if isinstance(f, Codec) else f
        if spec.name == "cast_value":
            from zarrx.metadata.dtypes import parse_dtype_v3
            return parse_dtype_v3(spec.configuration["data_type"], Loc(WHERE))
        if any(k in spec.configuration for k in _DTYPE_FIELDS):
            break
    return dt


_DTYPE_FIELDS = ("dtype", "astype", "encode_dtype", "decode_dtype")


def _names(before: int, after: int, compressors: int) -> list[str]:
    """How messages name the codecs of ``[*filters, serializer, *compressors]`` as given:
    by the argument each came in (``before`` filters ahead of the serializer, ``after`` v2
    byte filters behind it)."""
    return [*(f"{WHERE} filters[{i}]" for i in range(before)), f"{WHERE} serializer",
            *(f"{WHERE} filters[{before + i}]" for i in range(after)),
            *(f"{WHERE} compressors[{i}]" for i in range(compressors))]


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
                 order: str = "C", at: str = "serializer",
                 what: str = "create_array") -> tuple[dict[str, Any], Any]:
    """``(codec arguments of make_array_meta, grid chunks)``: v3 ``{"codecs": [...]}``, v2
    ``{"filters": [...], "compressor": ...}``; the grid's chunks are the shard shape when
    ``shards`` is given. Messages name a sharding ``serializer`` and what is inside it by
    their place ``at`` (``serializer``, or inside it when nested), and the function called
    ``what``."""
    dt, endian = resolve_dtype(dtype, zarr_format)
    if zarr_format == 2:
        endian = endian or "little"
    v3 = zarr_format == 3
    flt = [] if _auto(filters) else \
        [as_codec(f, f"filters[{i}]") for i, f in enumerate(_listify(filters))]
    if v3:
        flt = [_placed(f, "filters", f"filters[{i}]") for i, f in enumerate(flt)]
    ser = None if _auto(serializer) else _placed(as_codec(serializer, "serializer"),
                                                 "serializer", "serializer")
    index_codecs = None
    inside = None           # where the codecs are, when they come from a sharding serializer
    if ser is not None and ser.name == "sharding_indexed" and flt and v3:
        return transposed_shards(dtype, shape, chunks, shards, flt, ser, compressors, order, at,
                                 build=functools.partial(build_codecs, what=what))
    if ser is not None and ser.name == "sharding_indexed":
        chunks, shards, flt, ser, comp, index_codecs = unshard(
            ser, chunks, shards, flt, compressors, zarr_format, at)
        if ser.name == "sharding_indexed":
            return nested_shards(dtype, chunks, shards, flt, ser, comp, index_codecs, order, at,
                                 build=functools.partial(build_codecs, what=what))
        inside = f"{at}.configuration"
    elif _auto(compressors):
        comp = [CodecSpec("zstd", {"level": 0, "checksum": False})]
    else:
        comp = [as_codec(c, f"compressors[{i}]") for i, c in enumerate(_listify(compressors))]
        if v3:
            comp = [_placed(c, "compressors", f"compressors[{i}]") for i, c in enumerate(comp)]
    if ser is None:
        ser = _serializer(_cast_to(flt, dt), endian)
        if v3 and ser.name == "bytes" and not ser.configuration and \
                filtered_endian([f.to_spec() if isinstance(f, Codec) else f for f in flt], None):
            ser = CodecSpec("bytes", {"endian": "little"})   # filters make multi-byte items
    probe = _probe_shape(chunks, len(shape))
    if zarr_format == 2:
        return _v2(dt, flt, ser, comp, shards, probe, order, endian, what), chunks
    names = _names(len(flt), 0, len(comp)) if inside is None else \
        [f"{WHERE} {inside}.codecs[{i}]" for i in range(len(flt) + 1 + len(comp))]
    inner = _stored_order(list(complete_specs([*flt, ser, *comp], dt, probe, key=WHERE,
                                              names=names)),
                          len(flt), ser)
    if shards is None:
        return {"codecs": inner}, chunks
    if isinstance(shards, str) and shards == "auto" \
            and all(isinstance(c, (int, np.integer)) for c in chunks):
        # zarr-python's rule: two chunks per shard along every axis holding more than eight
        shard_shape = tuple(c * 2 if s // max(c, 1) > 8 else c for s, c in zip(shape, chunks))
        index_location = "end"
    elif isinstance(shards, Mapping) and "shape" in shards:
        shard_shape = _int_tuple(shards["shape"], len(shape))   # type: ignore[assignment]
        if shard_shape is None:             # a TypeError, as for shards= itself
            raise ArgumentTypeError(f"{what}: shards['shape']: expected a tuple of ints, "
                                    f"found {short(shards['shape'])}")
        index_location = shards.get("index_location", "end")
        if index_location not in ("start", "end"):
            raise ArgumentError(f"{what}: shards['index_location']: expected 'start' or "
                                f"'end', found {short(index_location)}")
    elif _int_tuple(shards, len(shape)) is not None:
        shard_shape, index_location = _int_tuple(shards, len(shape)), "end"
    else:                                   # a TypeError, as in zarr-python
        raise ArgumentTypeError(f"{what}: shards: expected a tuple of ints, "
                                f"{{'shape': ..., 'index_location': ...}}, 'auto' or None, "
                                f"found {short(shards)}")
    if _int_tuple(chunks) is None:          # chunks of several lengths along an axis
        raise ArgumentTypeError(f"{what}: chunks: the inner chunks of a sharded array "
                                f"have one length per axis (a tuple of ints), found "
                                f"{short(chunks)}")
    if len(shard_shape) != len(shape) or len(chunks) != len(shape):
        raise ArgumentError(f"{what}: shards {shard_shape} and chunks {tuple(chunks)} "
                            f"must have one entry per dimension of shape {shape}")
    for ax, (s, c) in enumerate(zip(shard_shape, chunks)):
        # a shard length of 0 (no shards) only along an axis of length 0, as zarr-python
        # creates it; the inner chunks are positive, being what a shard is cut into
        if inside is not None and s % c:
            raise ArgumentError(f"{WHERE} {inside}.chunk_shape[{ax}]: expected a divisor of "
                                f"the shard size {s} along axis {ax} (shard shape "
                                f"{tuple(shard_shape)}), found {c}")
        if c <= 0 or s < (shape[ax] > 0) or s % c:
            raise ArgumentError(f"{what}: shards[{ax}]={s} must be a positive multiple "
                                f"of chunks[{ax}]={c} (or 0 on an axis of length 0, with "
                                f"positive chunks)")
    sharding = CodecSpec("sharding_indexed", {
        "chunk_shape": list(chunks),
        "codecs": [codec_json(s) for s in inner],
        "index_codecs": index_codecs or [{"name": "bytes", "configuration": {"endian": "little"}},
                                         {"name": "crc32c"}],
        "index_location": index_location,
    })
    return {"codecs": [sharding]}, shard_shape


def _v2(dt: DataType, flt: list[Arg], ser: Arg, comp: list[Arg], shards: Any,
        probe: tuple[int, ...], order: str, endian: str, what: str) -> dict[str, Any]:
    """Zarr v2: the filters (an object codec among them for variable-length types) and one
    compressor, completed as the v3-shaped chain they are lowered to."""
    if shards is not None:
        raise ArgumentError(f"{what}: shards= needs zarr_format=3 (Zarr v2 has no sharding)")
    if len(comp) > 1:
        raise ArgumentTypeError(f"{what}: Zarr v2 takes at most one compressor, found "
                                f"{len(comp)}")
    vlen = ("vlen-utf8", "vlen-bytes")        # object codecs: the serializer, given as a filter
    if ser.name not in ("bytes", *vlen) and _kind(ser) == A2B:
        _native_only(dt, endian, "serializer", ser, what)
        if comp:        # before a compressor: Zarr v2 chains it as the last filter
            flt, ser = [*flt, ser], CodecSpec("bytes", {})
    at_a2b = next((i for i, f in enumerate(flt) if _kind(f) == A2B and f.name not in vlen),
                  None)
    if at_a2b is not None or comp and _kind(comp[0]) == A2B and comp[0].name not in vlen:
        # pcodec, zfpy serialise
        arg = "compressors[0]" if at_a2b is None else f"filters[{at_a2b}]"
        given = comp[0] if at_a2b is None else flt[at_a2b]
        if ser.name != "bytes" or (ser.to_spec() if isinstance(ser, Codec) else ser
                                   ).configuration.get("endian") not in (None, endian):
            raise ArgumentError(f"{what}: {arg} {_what(given)} encodes the chunk's array "
                                f"itself: Zarr v2 takes no serializer with it, found "
                                f"{_what(ser)}")
        _native_only(dt, endian, arg, given, what)
        if at_a2b is not None:                  # a filter: the filters after it see bytes
            return _v2_encoding_filter(dt, flt, at_a2b, comp, probe, order)
        ser, comp = comp[0], []
    objects = [f for f in flt if f.name in vlen]
    if ser.name in vlen or objects:
        ser = ser if ser.name in vlen else objects[0]
    flt = [f for f in flt if f.name not in vlen]
    if dt.variable and ser.name not in vlen:
        raise ArgumentError(f"{what}: a variable-length data type needs the serializer "
                            f"vlen-utf8 or vlen-bytes in Zarr v2, found {ser.name!r}")
    spec = ser.to_spec() if isinstance(ser, Codec) else ser
    wanted = (spec.configuration or {}).get("endian") if spec.name == "bytes" else None
    if wanted is not None and dt.itemsize > 1 and wanted != endian:
        raise ArgumentError(f"{what}: serializer: the bytes codec's endian {wanted!r} "
                            f"differs from the byte order of the data type ({endian}); a Zarr "
                            f"v2 array stores its byte order in the data type: pass dtype="
                            f"'{'>' if wanted == 'big' else '<'}{dt.numpy.str[1:]}'")
    # v2 filters that work on bytes run after serialisation (see zarrx.metadata.v2)
    at = bytes_filters_at([f.to_spec() if isinstance(f, Codec) else f for f in flt],
                          Loc(WHERE, error=ArgumentError), [_kind(f) for f in flt])
    if ser.name == "bytes":      # the byte order of what the filters hand on, as v2 reads it
        declared = filtered_endian([f.to_spec() if isinstance(f, Codec) else f
                                    for f in flt[:at]], None)
        if declared is not None:
            ser = CodecSpec("bytes", {"endian": declared})
    a2b_comp = ser.name != "bytes" and _kind(ser) == A2B and ser.name not in vlen
    if a2b_comp and at < len(flt):
        raise ArgumentError(f"{what}: compressors[0] {_what(ser)} encodes arrays, but "
                            f"filters[{at}] {_what(flt[at])} hands it bytes; expected only "
                            f"filters that work on arrays before it")
    chain = [*flt[:at], ser, *flt[at:], *comp]
    if order == "F":
        probe = probe[::-1]
    names = [V2Place(n) for n in _names(at, len(flt) - at, len(comp))]
    done = _stored_order(list(complete_specs(chain, dt, probe, key=WHERE, names=names)), at,
                         CodecSpec("bytes", {"endian": endian or "little"}))
    if a2b_comp:
        return {"filters": done[:at], "compressor": done[at]}
    filters = done[:at] + ([done[at]] if dt.variable else []) + done[at + 1:at + 1 + len(flt) - at]
    return {"filters": filters, "compressor": done[-1] if comp else None}


def _native_only(dt: DataType, endian: str, arg: str, given: Arg, what: str) -> None:
    """Refuse a big-endian Zarr v2 dtype for ``given`` (pcodec, zfpy): numcodecs' codec
    encodes numbers in the machine's order; zarr-python refuses to write such an array, and
    reads the decoded numbers as big-endian bytes."""
    if endian == "big" and dt.numpy.itemsize > 1:
        raise ArgumentError(f"{what}: {arg} {_what(given)} encodes numbers in the machine's "
                            f"byte order, found the big-endian dtype '>{dt.numpy.str[1:]}'; "
                            f"expected a little-endian dtype ('<{dt.numpy.str[1:]}')")


def _v2_encoding_filter(dt: DataType, flt: list[Arg], at: int, comp: list[Arg],
                        probe: tuple[int, ...], order: str) -> dict[str, Any]:
    """Zarr v2 filters whose ``at``-th encodes arrays into bytes (pcodec, zfpy): array
    filters before it, bytes filters after it (the v2 lowering checks the order)."""
    kinds = [_kind(f) for f in flt]
    bad = next((i for i, k in enumerate(kinds) if (k != A2A if i < at else k != B2B and i > at)),
               None)
    if bad is not None:
        raise ArgumentError(f"{WHERE} filters[{bad}]: {_what(flt[bad])} cannot come "
                            f"{'before' if bad < at else 'after'} filters[{at}] "
                            f"{_what(flt[at])}, which encodes arrays into bytes; expected "
                            f"array filters before it and bytes filters after it")
    if order == "F":
        probe = probe[::-1]
    names = [V2Place(f"{WHERE} {arg}[{i}]") for arg, n in (("filters", len(flt)),
                                                          ("compressors", len(comp)))
             for i in range(n)]
    done = list(complete_specs([*flt, *comp], dt, probe, key=WHERE, names=names))
    return {"filters": done[:len(flt)], "compressor": done[-1] if comp else None}
