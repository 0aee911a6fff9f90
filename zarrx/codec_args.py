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

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrx.codecs.base import Codec, V2Place
from zarrx.codecs.plan import complete_specs
from zarrx.codecs.registry import lookup
from zarrx.errors import ArgumentError, ArgumentTypeError, CodecError
from zarrx.metadata._util import Loc, short
from zarrx.metadata.codec_table import (A2A, A2B, B2B, check_codec, codec_kind,
                                        lower_numcodecs, unknown_codec)
from zarrx.metadata.codecs import codec_json, permutation
from zarrx.metadata.dtype_input import resolve_dtype
from zarrx.metadata.dtypes import category
from zarrx.metadata.model import ArrayMeta, CodecSpec, DataType
from zarrx.metadata.v2 import bytes_filters_at, filtered_endian

__all__ = ["build_codecs", "as_codec", "split_codecs", "array_codecs"]

Arg = CodecSpec | Codec

WHERE = "create_array"


_WANT = ("a codec: a zarrx.codecs object such as zarrx.codecs.Zstd(), a zarr.codecs or "
         "numcodecs codec object, or a codec dict")


def _plain(obj: Any) -> Any:
    """A zarr-python ``to_dict()`` as JSON: tuples as lists, enums as their values."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    value = getattr(obj, "value", obj)        # enum.Enum members (zarr-python's Endian...)
    return value if isinstance(value, (str, int, float, bool, type(None))) else obj


# what zarr-python's codec classes fill in when a user leaves a field out ({"name": "gzip"}):
# metadata documents must spell these out, arguments need not
_USER_DEFAULTS = {"bytes": {"endian": "little"},        # as zarrx's BytesCodec() too
                  "gzip": {"level": 5},
                  "blosc": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle"},
                  "zstd": {"level": 0, "checksum": False}}


def as_codec(obj: Any, where: str) -> Arg:
    """A codec argument as a codec object (checked when it was made) or a v3 codec spec (known,
    its configuration checked)."""
    loc = Loc(WHERE, where, error=CodecError)
    if isinstance(obj, Codec):
        return obj
    if isinstance(obj, type):
        raise ArgumentTypeError(f"{loc}: expected a codec object, found the class "
                                f"{obj.__module__}.{obj.__name__}; pass an instance, such as "
                                f"{obj.__name__}()")
    if isinstance(obj, CodecSpec):
        spec = obj
    elif hasattr(obj, "to_dict") and callable(obj.to_dict) and not isinstance(obj, Mapping) \
            and not hasattr(obj, "get_config"):
        return _from_zarr_python(obj, where)
    elif isinstance(obj, Mapping) and "name" in obj:
        loc.keys(dict(obj), ("name",), ("configuration", "must_understand"))
        name = (loc / "name").str(obj["name"])
        conf = (loc / "configuration").obj(obj.get("configuration", {}))
        conf = {**_USER_DEFAULTS.get(name, {}), **conf}
        spec = CodecSpec(name, dict(conf),
                         must_understand=(loc / "must_understand").bool(
                             obj.get("must_understand", True)))
    elif isinstance(obj, Mapping) and "id" in obj:
        spec = lower_numcodecs(dict(obj), loc, known_only=True)
    elif hasattr(obj, "get_config") and callable(obj.get_config):     # a numcodecs codec
        spec = lower_numcodecs(dict(obj.get_config()), loc, known_only=True)
    else:
        raise ArgumentTypeError(f"{loc}: expected {_WANT}, found {type(obj).__name__} {obj!r}")
    if spec.name == "sharding_indexed":
        from zarrx.codecs.sharding import ShardingIndexed
        conf = dict(spec.configuration)
        if "chunk_shape" not in conf:
            raise (loc / "configuration").fail("missing required field 'chunk_shape'")
        return ShardingIndexed(**conf)
    if lookup(spec.name) is None:
        raise unknown_codec(spec.name, f"{loc}: ")
    check_codec(spec.name, spec.configuration, loc / "configuration")
    return spec


def _from_zarr_python(obj: Any, where: str) -> Arg:
    """A zarr-python codec object, through its ``to_dict()``. Fields it leaves to be chosen
    from the array (blosc ``typesize`` and ``shuffle`` when not given) are left to zarrx's
    codec class defaults the same way."""
    doc = _plain(obj.to_dict())
    open_fields = getattr(obj, "_tunable_attrs", None) or ()
    conf = doc.get("configuration") if isinstance(doc, dict) else None
    if open_fields and isinstance(conf, dict):
        conf = {k: v for k, v in conf.items() if k not in open_fields}
        cls = lookup(doc.get("name", ""))
        if cls is not None:
            try:
                return cls(**conf)
            except TypeError:
                pass
        doc = {**doc, "configuration": conf}
    return as_codec(doc, where)


def _kind(c: Arg) -> str | None:
    return c.kind if isinstance(c, Codec) else codec_kind(c.name)


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
    specs = list(meta.chunk_codecs)
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


def _listify(arg: Any) -> list:
    if arg is None:
        return []
    if isinstance(arg, (Mapping, CodecSpec, Codec, type)) or hasattr(arg, "get_config") \
            or hasattr(arg, "to_dict"):
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
    if dt.itemsize <= 1 and dt.numpy.fields is None or kind in ("fixed_bytes", "raw"):
        # (bytes and raw bytes have no byte order: no endian, as zarr-python writes them)
        return CodecSpec("bytes", {})
    return CodecSpec("bytes", {"endian": endian or "little"})


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
                 order: str = "C", at: str = "serializer") -> tuple[dict[str, Any], Any]:
    """``(codec arguments of make_array_meta, grid chunks)``: v3 ``{"codecs": [...]}``, v2
    ``{"filters": [...], "compressor": ...}``; the grid's chunks are the shard shape when
    ``shards`` is given. Messages name a sharding ``serializer`` and what is inside it by
    their place ``at`` (``serializer``, or inside it when nested)."""
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
    if ser is not None and ser.name == "sharding_indexed":
        chunks, shards, flt, ser, comp, index_codecs = _unshard(
            ser, chunks, shards, flt, compressors, zarr_format, at)
        if ser.name == "sharding_indexed":
            return _nested(dtype, chunks, shards, flt, ser, comp, index_codecs, order, at)
        inside = f"{at}.configuration"
    elif _auto(compressors):
        comp = [CodecSpec("zstd", {"level": 0, "checksum": False})]
    else:
        comp = [as_codec(c, f"compressors[{i}]") for i, c in enumerate(_listify(compressors))]
        if v3:
            comp = [_placed(c, "compressors", f"compressors[{i}]") for i, c in enumerate(comp)]
    if ser is None:
        ser = _serializer(dt, endian)
        if v3 and ser.name == "bytes" and not ser.configuration and \
                filtered_endian([f.to_spec() if isinstance(f, Codec) else f for f in flt], None):
            ser = CodecSpec("bytes", {"endian": "little"})   # filters make multi-byte items
    probe = _probe_shape(chunks, len(shape))
    if zarr_format == 2:
        return _v2(dt, flt, ser, comp, shards, probe, order, endian), chunks
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
            raise ArgumentTypeError(f"create_array: shards['shape']: expected a tuple of ints, "
                                    f"found {short(shards['shape'])}")
        index_location = shards.get("index_location", "end")
        if index_location not in ("start", "end"):
            raise ArgumentError(f"create_array: shards['index_location']: expected 'start' or "
                                f"'end', found {short(index_location)}")
    elif _int_tuple(shards, len(shape)) is not None:
        shard_shape, index_location = _int_tuple(shards, len(shape)), "end"
    else:                                   # a TypeError, as in zarr-python
        raise ArgumentTypeError(f"create_array: shards: expected a tuple of ints, "
                                f"{{'shape': ..., 'index_location': ...}}, 'auto' or None, "
                                f"found {short(shards)}")
    if _int_tuple(chunks) is None:          # chunks of several lengths along an axis
        raise ArgumentTypeError(f"create_array: chunks: the inner chunks of a sharded array "
                                f"have one length per axis (a tuple of ints), found "
                                f"{short(chunks)}")
    if len(shard_shape) != len(shape) or len(chunks) != len(shape):
        raise ArgumentError(f"create_array: shards {shard_shape} and chunks {tuple(chunks)} "
                            f"must have one entry per dimension of shape {shape}")
    for ax, (s, c) in enumerate(zip(shard_shape, chunks)):
        # a shard length of 0 (no shards) only along an axis of length 0, as zarr-python
        # creates it; the inner chunks are positive, being what a shard is cut into
        if inside is not None and s % c:
            raise ArgumentError(f"{WHERE} {inside}.chunk_shape[{ax}]: expected a divisor of "
                                f"the shard size {s} along axis {ax} (shard shape "
                                f"{tuple(shard_shape)}), found {c}")
        if c <= 0 or s < (shape[ax] > 0) or s % c:
            raise ArgumentError(f"create_array: shards[{ax}]={s} must be a positive multiple "
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


def _int_tuple(value: Any, ndim: int | None = None) -> tuple[int, ...] | None:
    """``value`` (a sequence or numpy array of ints; with ``ndim``, also one int for every
    axis, as zarr-python takes ``shards=4`` and as ``chunks=`` takes an int) as a tuple of
    ints, else None."""
    if ndim is not None and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),) * ndim
    if isinstance(value, (str, bytes, Mapping)):
        return None
    try:
        items = tuple(value)
    except TypeError:
        return None
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        return None
    return tuple(int(v) for v in items)


def _nested(dtype: Any, chunks: Any, shards: Any, flt: list, ser: Any, comp: list,
            index_codecs: list, order: str, at: str) -> tuple[dict[str, Any], Any]:
    """Nested sharding: the inner ``sharding_indexed`` serializer (in the outer one's codecs,
    at ``at``, after transposes only) built as ``create_array`` builds one for chunks of the
    outer shard's inner chunk shape as those transposes leave it, then wrapped in the outer."""
    before = [f.to_spec() if isinstance(f, Codec) else f for f in flt]
    if comp or any(f.name != "transpose" for f in before):
        raise ArgumentError(f"{WHERE} {at}.configuration.codecs: an inner sharding codec may "
                            f"follow transposes only (found {len(flt)} array->array codecs "
                            f"({', '.join(f.name for f in before)}) and {len(comp)} "
                            f"bytes->bytes codecs beside it)")
    seen = tuple(chunks)
    for i, f in enumerate(before):
        perm = permutation(f.configuration["order"], len(seen))
        if sorted(perm) != list(range(len(seen))):
            raise ArgumentError(f"{WHERE} {at}.configuration.codecs[{i}].configuration.order: "
                                f"expected a permutation of {len(seen)} dimensions, found "
                                f"{list(perm)}")
        seen = tuple(seen[o] for o in perm)
    inner, _ = build_codecs(dtype=dtype, shape=seen, chunks=seen, shards=None, filters="auto",
                            serializer=ser, compressors="auto", zarr_format=3, order=order,
                            at=f"{at}.configuration.codecs[{len(flt)}]")
    sharding = CodecSpec("sharding_indexed", {
        "chunk_shape": list(chunks),
        "codecs": [codec_json(s) for s in (*before, *inner["codecs"])],
        "index_codecs": index_codecs,
        "index_location": shards["index_location"],
    })
    return {"codecs": [sharding]}, tuple(shards["shape"])


def _unshard(sharding: Any, chunks: Any, shards: Any, flt: list, compressors: Any,
             zarr_format: int, at: str) -> tuple[Any, Any, list, Arg, list, list]:
    """A ``sharding_indexed`` serializer (named ``at`` in messages) as the arguments
    ``shards=`` takes: ``(inner chunks, shard shape, filters, serializer, compressors, index
    codecs)`` from its configuration."""
    where = f"{WHERE} {at}"
    if zarr_format != 3:
        raise ArgumentError(f"{where}: sharding needs zarr_format=3 (Zarr v2 has no sharding)")
    if shards is not None:
        raise ArgumentError(f"{where}: pass shards= or a sharding serializer, not both")
    if flt:
        raise ArgumentError(f"{where}: with a sharding serializer, put the array->array "
                            f"codecs in its codecs=, not in filters=")
    if not _auto(compressors) and _listify(compressors):
        raise ArgumentError(f"{where}: a shard cannot be compressed as a whole (byte ranges "
                            f"into it must map onto stored bytes); put the compressors in the "
                            f"sharding codec's codecs=")
    conf = sharding.configuration()
    inner = [as_codec(c, f"{at}.configuration.codecs[{i}]")
             for i, c in enumerate(conf["codecs"])]
    kinds = [_kind(c) for c in inner]
    if A2B not in kinds:
        raise ArgumentError(f"{where}.configuration.codecs: expected exactly one array->bytes "
                            f"codec (such as 'bytes'), found none in {inner!r}")
    k = kinds.index(A2B)
    index = [codec_json(c.to_spec() if isinstance(c, Codec) else c)
             for c in (as_codec(c, f"{at}.configuration.index_codecs[{i}]")
                       for i, c in enumerate(conf["index_codecs"]))]
    shard_shape = {"shape": tuple(chunks), "index_location": conf["index_location"]}
    return (tuple(conf["chunk_shape"]), shard_shape, inner[:k], inner[k], inner[k + 1:], index)


def _v2(dt: DataType, flt: list[Arg], ser: Arg, comp: list[Arg], shards: Any,
        probe: tuple[int, ...], order: str, endian: str) -> dict[str, Any]:
    """Zarr v2: the filters (an object codec among them for variable-length types) and one
    compressor, completed as the v3-shaped chain they are lowered to."""
    if shards is not None:
        raise ArgumentError("create_array: shards= needs zarr_format=3 (Zarr v2 has no sharding)")
    if len(comp) > 1:
        raise ArgumentTypeError(f"create_array: Zarr v2 takes at most one compressor, found "
                                f"{len(comp)}")
    vlen = ("vlen-utf8", "vlen-bytes")
    objects = [f for f in flt if f.name in vlen]
    if ser.name in vlen or objects:
        ser = ser if ser.name in vlen else objects[0]
    flt = [f for f in flt if f.name not in vlen]
    if dt.variable and ser.name not in vlen:
        raise ArgumentError(f"create_array: a variable-length data type needs the serializer "
                            f"vlen-utf8 or vlen-bytes in Zarr v2, found {ser.name!r}")
    spec = ser.to_spec() if isinstance(ser, Codec) else ser
    wanted = (spec.configuration or {}).get("endian") if spec.name == "bytes" else None
    if wanted is not None and dt.itemsize > 1 and wanted != endian:
        raise ArgumentError(f"create_array: serializer: the bytes codec's endian {wanted!r} "
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
    chain = [*flt[:at], ser, *flt[at:], *comp]
    if order == "F":
        probe = probe[::-1]
    names = [V2Place(n) for n in _names(at, len(flt) - at, len(comp))]
    done = _stored_order(list(complete_specs(chain, dt, probe, key=WHERE, names=names)), at,
                         CodecSpec("bytes", {"endian": endian or "little"}))
    filters = done[:at] + ([done[at]] if dt.variable else []) + done[at + 1:at + 1 + len(flt) - at]
    return {"filters": filters, "compressor": done[-1] if comp else None}
