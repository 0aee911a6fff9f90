"""v3 codec lists: parse each codec spec, check the chain's order, validate each configuration
(with the codec's one validator, :mod:`zarrx.metadata.codec_checks`) and lower
``sharding_indexed`` into ``ShardLevel``s.

Codecs zarrx does not know are kept as given, so the document still opens; the codec pipeline
raises ``CodecError`` naming them when a chunk is read or written.
"""
from __future__ import annotations

import json
from typing import Any

from zarrx.metadata._jsonscan import plain
from zarrx.metadata._util import INT64_MAX, Loc, name_and_configuration
from zarrx.metadata.codec_table import (A2A, A2B, B2B, check_codec, codec_kind,
                                        whole_numbers)
from zarrx.metadata.model import CodecSpec, DataType, ShardLevel, index_size

__all__ = ["parse_codec", "parse_codecs_v3", "codec_json", "permutation", "read_codec_places"]

MAX_CODECS = 64


def parse_codec(value: Any, loc: Loc) -> CodecSpec:
    """One codec: a name string or ``{"name", "configuration"?, "must_understand"?}``."""
    if isinstance(value, str):
        name, conf, mu = value, {}, True
    else:
        obj = loc.obj(value)
        name, conf = name_and_configuration(obj, loc)
        mu = obj.get("must_understand", True)
        if not isinstance(mu, bool):
            (loc / "must_understand").bool(mu)          # raises
    if not name:
        raise (loc / "name").error("a codec name", name)
    if name == "sharding_indexed":
        conf = _check_sharding(conf, loc / "configuration")
    else:
        conf = whole_numbers(conf, check_codec(name, conf, loc / "configuration"))
    return CodecSpec(name, conf, must_understand=mu, json=value)


def _check_sharding(conf: dict[str, Any], cl: Loc) -> dict[str, Any]:
    cl.keys(conf, ("chunk_shape", "codecs", "index_codecs"), ("index_location",))
    shape = (cl / "chunk_shape").list(conf["chunk_shape"], "an array of positive integers")
    ints = [(cl / "chunk_shape" / i).int(c, 1, INT64_MAX) for i, c in enumerate(shape)]
    (cl / "codecs").list(conf["codecs"])
    (cl / "index_codecs").list(conf["index_codecs"])
    if conf.get("index_location", "end") not in ("start", "end"):
        raise (cl / "index_location").error("'start' or 'end'", conf["index_location"])
    return whole_numbers(conf, {"chunk_shape": ints})


def permutation(order: Any, ndim: int) -> tuple[int, ...]:
    """A transpose codec's ``order`` (a list, or "C" / "F") for ``ndim`` dimensions."""
    if order == "C":
        return tuple(range(ndim))
    if order == "F":
        return tuple(range(ndim - 1, -1, -1))
    return tuple(order)


def _check_chain(specs: list[CodecSpec], dt: DataType, loc: Loc) -> None:
    """array->array*, exactly one array->bytes, bytes->bytes* (as far as kinds are known)."""
    if not specs:
        raise loc.error("at least one codec (an array->bytes codec such as 'bytes')", [])
    if len(specs) > MAX_CODECS:
        raise loc.found(f"at most {MAX_CODECS} codecs", f"{len(specs)} codecs")
    stage, a2b_at, unknown = 0, -1, False
    for i, s in enumerate(specs):
        kind = codec_kind(s.name)
        if kind is None:
            unknown = True
            continue
        if kind == A2A and stage > 0:
            raise (loc / i).error(f"a bytes->bytes codec after {specs[a2b_at].name!r}",
                                  s.name)
        if kind == A2B:
            if stage > 0:
                raise (loc / i).error(f"one array->bytes codec only (after "
                                      f"{specs[a2b_at].name!r})", s.name)
            stage, a2b_at = 1, i
        if kind == B2B and stage == 0:
            raise (loc / i).error("an array->bytes codec (such as 'bytes') before "
                                  "bytes->bytes codecs", s.name)
    if a2b_at < 0 and not unknown:
        raise loc.error("an array->bytes codec (such as 'bytes')", [s.name for s in specs])
    if a2b_at >= 0:
        a2b = specs[a2b_at].name
        if dt.variable and a2b in ("bytes",):
            want = "'vlen-bytes'" if dt.name in ("bytes", "variable_length_bytes") \
                else "'vlen-utf8'"
            raise (loc / a2b_at).error(f"{want} for the variable-length type {dt.name!r}", a2b)
        if not dt.variable and a2b in ("vlen-utf8", "vlen-bytes"):
            raise (loc / a2b_at).error(f"'bytes' for the fixed-size type "
                                       f"{dt.name!r}", a2b)


def parse_codec_list(value: Any, dt: DataType, loc: Loc) -> list[CodecSpec]:
    items = loc.list(value)
    if len(items) > MAX_CODECS:     # before checking each: a hostile list may hold millions
        raise loc.found(f"at most {MAX_CODECS} codecs", f"{len(items)} codecs")
    specs = [parse_codec(v, loc / i) for i, v in enumerate(items)]
    _check_chain(specs, dt, loc)
    return specs


def _index_codecs(value: Any, ndim: int, loc: Loc) -> tuple[int, str, tuple[int, ...] | None]:
    """``(crc32c checksums, endian, transpose order)`` of a shard index encoding. The spec
    allows any fixed-size encoding; zarrx reads and writes an optional ``transpose`` of the
    ``(*inner chunks per shard, 2)`` index array, then ``bytes`` (either byte order), then any
    number of ``crc32c`` (each checksums all the bytes before it), as zarr-python and
    tensorstore do. The order is None when there is no transpose or it keeps the axes."""
    want = ("an optional transpose, bytes (either byte order), then crc32c checksums: the "
            "shard index must be fixed-size")
    items = loc.list(value)
    if len(items) > MAX_CODECS:     # before checking each: a hostile list may hold millions
        raise loc.found(f"at most {MAX_CODECS} codecs", f"{len(items)} codecs")
    specs = [parse_codec(v, loc / i) for i, v in enumerate(items)]
    names = [s.name for s in specs]
    order = None
    if names[:1] == ["transpose"]:
        order = permutation(specs[0].configuration["order"], ndim + 1)
        if sorted(order) != list(range(ndim + 1)):
            raise (loc / 0 / "configuration" / "order").error(
                f"a permutation of {ndim + 1} dimensions (the index is an array of the inner "
                f"chunks per shard along each of {ndim} axes, by 2 words)",
                specs[0].configuration["order"])
        if order == tuple(range(ndim + 1)):
            order = None
        specs, names = specs[1:], names[1:]
    endian = specs[0].configuration.get("endian", "little") if specs else None
    if names[:1] != ["bytes"] or any(n != "crc32c" for n in names[1:]) or \
            endian not in ("little", "big"):
        raise loc.error(want, value)
    return len(names) - 1, endian, order


_PARSED_CHAINS: dict[tuple, tuple] = {}
_PARSED_CHAINS_MAX = 256


def _chain_key(value: Any, dt: DataType, chunk_shape: tuple[int, ...]) -> tuple | None:
    """The cache key of a codec list: its ``repr`` when it is plain JSON (which ``repr`` spells
    unambiguously), else its canonical JSON; None when it is neither."""
    try:
        text = ("repr", repr(value)) if plain(value) else \
            ("json", json.dumps(value, sort_keys=True))
    except (TypeError, ValueError, RecursionError):   # ValueError: an int of too many digits
        return None
    return (text, dt, chunk_shape)


def parse_codecs_v3(value: Any, dt: DataType, chunk_shape: tuple[int, ...], loc: Loc
                    ) -> tuple[tuple[CodecSpec, ...], tuple[ShardLevel, ...],
                               tuple[CodecSpec, ...]]:
    """``(codecs, shard_levels, chunk_codecs)`` for an array whose grid chunks (shards) have
    ``chunk_shape``. A chain parsed before for the same data type and chunk shape is reused
    (the arrays of a hierarchy mostly share one): results are never modified, and only chains
    that parsed are remembered, so every error is raised with its own location."""
    ck = _chain_key(value, dt, chunk_shape)
    if ck is not None:
        hit = _PARSED_CHAINS.get(ck)
        if hit is not None:
            return hit
    specs = parse_codec_list(value, dt, loc)
    levels, inner = _lower(specs, chunk_shape, dt, loc)
    out = (tuple(specs), levels, inner)
    if ck is not None:
        if len(_PARSED_CHAINS) >= _PARSED_CHAINS_MAX:
            _PARSED_CHAINS.clear()
        _PARSED_CHAINS[ck] = out
    return out


def _lower(specs: list[CodecSpec], shape: tuple[int, ...], dt: DataType, loc: Loc,
           top: bool = True) -> tuple[tuple[ShardLevel, ...], tuple[CodecSpec, ...]]:
    at = next((i for i, s in enumerate(specs) if s.name == "sharding_indexed"), -1)
    for i, s in enumerate(specs):
        if s.name == "transpose" and not isinstance(s.configuration["order"], str) \
                and len(s.configuration["order"]) != len(shape):
            raise (loc / i / "configuration" / "order").error(
                f"a permutation of {len(shape)} dimensions", s.configuration["order"])
    if at < 0:
        return (), tuple(specs)
    after = tuple(specs[at + 1:])
    if after and (not top or any(codec_kind(s.name) != B2B for s in after)):
        bad = next((s for s in after if not top or codec_kind(s.name) != B2B), after[0])
        raise (loc / (at + 1 + after.index(bad))).fail(
            f"expected only bytes->bytes codecs after the outermost 'sharding_indexed', found "
            f"{bad.name!r}" + ("" if top else " after a nested one"))
    seen = shape
    for i, s in enumerate(specs[:at]):
        if s.name in ELEMENTWISE:       # value by value: the same on a shard or its chunks
            continue
        if s.name != "transpose":
            raise (loc / i).fail(f"{s.name!r} before 'sharding_indexed' is not supported: only "
                                 f"a transpose or a codec mapping each value alone "
                                 f"({', '.join(ELEMENTWISE)}) can be applied to a whole "
                                 f"shard, since inner chunks must stay independently "
                                 f"decodable")
        seen = tuple(seen[o] for o in permutation(s.configuration["order"], len(seen)))
    cl = loc / at / "configuration"
    conf = specs[at].configuration
    inner = tuple(conf["chunk_shape"])
    if len(inner) != len(seen):
        raise (cl / "chunk_shape").error(f"{len(seen)} inner chunk sizes (the rank of the "
                                         "array)", conf["chunk_shape"])
    for a, (s, c) in enumerate(zip(seen, inner)):
        if s % c:
            raise (cl / "chunk_shape" / a).error(
                f"a divisor of the shard size {s} along axis {a} (shard shape {list(seen)} "
                "as seen by the sharding codec)", c)
    crc, endian, index_order = _index_codecs(conf["index_codecs"], len(seen),
                                             cl / "index_codecs")
    index_size(tuple(s // c for s, c in zip(seen, inner)), crc, loc / at)
    inner_specs = parse_codec_list(conf["codecs"], dt, cl / "codecs")
    sub, chunk = _lower(inner_specs, inner, dt, cl / "codecs", top=False)
    if _has_float(conf["codecs"]):
        # integral numbers written with a fraction part (``"level": 3.0``) were read as
        # integers; the codec objects made from this spec later get them so
        specs[at] = CodecSpec("sharding_indexed", {**conf, "codecs": [
            _canonical(s) for s in inner_specs]}, must_understand=specs[at].must_understand,
            json=specs[at].json)
    outer = tuple(CodecSpec("transpose", {"order": list(permutation(c.configuration["order"],
                                                                      len(shape)))})
                  if c.name == "transpose" else c for c in specs[:at])   # "C"/"F" spelt out
    level = ShardLevel(inner, conf.get("index_location", "end"), crc, outer_codecs=outer,
                       index_endian=endian, object_codecs=after, index_order=index_order)
    return (level, *sub), chunk


#: array->array codecs that map each value alone, whatever the chunk: before a
#: ``sharding_indexed`` they are applied to each inner chunk instead of the whole shard
ELEMENTWISE = ("scale_offset", "cast_value")


def _has_float(value: Any) -> bool:
    if type(value) is float:
        return True
    if isinstance(value, dict):
        return any(_has_float(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    return False


def read_codec_places(codecs: tuple[CodecSpec, ...], read_codecs: int
                      ) -> tuple[str, ...] | None:
    """Where the codecs a sharded array's inner chunks are read with (``read_codecs`` of them:
    a transpose pushed down from before the outermost ``sharding_indexed``, then the innermost
    codec list) sit in its parsed v3 ``codecs``: ``codecs[0]``, then
    ``codecs[1].configuration.codecs[0]``... None when the array is not sharded."""
    path, items = "codecs", list(codecs)
    names = [s.name for s in codecs]
    pushed = next((f"codecs[{i}]" for i, n in enumerate(names) if n == "transpose"), None)
    values: list[str] = []          # value codecs before a sharding_indexed, outermost first
    while "sharding_indexed" in names:
        at = names.index("sharding_indexed")
        values += [f"{path}[{i}]" for i, n in enumerate(names[:at]) if n in ELEMENTWISE]
        conf = items[at].configuration if isinstance(items[at], CodecSpec) else \
            items[at].get("configuration", {})
        path, items = f"{path}[{at}].configuration.codecs", list(conf["codecs"])
        names = [c if isinstance(c, str) else c.get("name") for c in items]
    if path == "codecs":
        return None
    places = tuple(values) + tuple(f"{path}[{i}]" for i in range(len(items)))
    extra = read_codecs - len(places)
    return (pushed or "codecs",) * extra + places if extra >= 0 else None


def codec_json(spec: CodecSpec) -> Any:
    """The v3 JSON of a codec (as read when still equivalent, else canonical)."""
    if spec._json is not None:
        try:
            again = parse_codec(spec._json, Loc("codec"))
        except ValueError:
            again = None
        if again is not None and again == spec:
            return spec._json
    return _canonical(spec)


def _canonical(spec: CodecSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"name": spec.name}
    if spec.configuration or spec.name in ("vlen-utf8", "vlen-bytes") \
            or spec.name.startswith("numcodecs."):     # zarr-python requires it for these
        out["configuration"] = spec.configuration
    if not spec.must_understand:
        out["must_understand"] = False
    return out
