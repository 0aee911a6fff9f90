"""v3 codec lists: parse each codec spec, check the chain's order, validate the configuration of
the codecs the spec defines, and lower ``sharding_indexed`` into ``ShardLevel``s.

Codecs outside the spec's own set (``numcodecs.*`` and other extensions) are kept as given; the
codec pipeline resolves them (and raises ``CodecError`` for names it does not know).
"""
from __future__ import annotations

from typing import Any

from zarrx.metadata._util import INT64_MAX, Loc
from zarrx.metadata.model import CodecSpec, DataType, ShardLevel

__all__ = ["parse_codec", "parse_codecs_v3", "codec_json", "KIND"]

KIND = {"transpose": "a2a", "bytes": "a2b", "vlen-utf8": "a2b", "vlen-bytes": "a2b",
        "sharding_indexed": "a2b", "zstd": "b2b", "gzip": "b2b", "blosc": "b2b", "crc32c": "b2b"}
BLOSC_CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib")
BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
MAX_CODECS = 64


def parse_codec(value: Any, loc: Loc) -> CodecSpec:
    """One codec: a name string or ``{"name", "configuration"?, "must_understand"?}``."""
    if isinstance(value, str):
        name, conf, mu = value, {}, True
    else:
        obj = loc.obj(value)
        loc.keys(obj, ("name",), ("configuration", "must_understand"))
        name = (loc / "name").str(obj["name"])
        conf = (loc / "configuration").obj(obj.get("configuration", {}))
        mu = (loc / "must_understand").bool(obj.get("must_understand", True))
    if not name:
        raise (loc / "name").error("a codec name", name)
    _validate(name, conf, loc / "configuration")
    return CodecSpec(name, conf, must_understand=mu, json=value)


def _validate(name: str, conf: dict[str, Any], cl: Loc) -> None:
    if name == "bytes":
        cl.keys(conf, (), ("endian",))
        if "endian" in conf and conf["endian"] not in ("little", "big"):
            raise (cl / "endian").error("'little' or 'big'", conf["endian"])
    elif name in ("crc32c", "vlen-utf8", "vlen-bytes"):
        cl.keys(conf, ())
    elif name == "transpose":
        cl.keys(conf, ("order",))
        order = (cl / "order").list(conf["order"], "a permutation of the dimensions")
        for i, o in enumerate(order):
            (cl / "order" / i).int(o, 0, 63)
        if sorted(order) != list(range(len(order))):
            raise (cl / "order").error("a permutation of the dimensions", order)
    elif name == "zstd":          # level optional on read (0, the library default), as writers vary
        cl.keys(conf, (), ("level", "checksum"))
        if "level" in conf:
            (cl / "level").int(conf["level"], -131072, 22)
        if "checksum" in conf:
            (cl / "checksum").bool(conf["checksum"])
    elif name == "gzip":
        cl.keys(conf, ("level",))
        (cl / "level").int(conf["level"], 0, 9)
    elif name == "blosc":
        cl.keys(conf, ("cname", "clevel", "shuffle"), ("typesize", "blocksize"))
        if conf["cname"] not in BLOSC_CNAMES:
            raise (cl / "cname").error(f"one of {', '.join(BLOSC_CNAMES)}", conf["cname"])
        (cl / "clevel").int(conf["clevel"], 0, 9)
        if conf["shuffle"] not in BLOSC_SHUFFLES:
            raise (cl / "shuffle").error(f"one of {', '.join(BLOSC_SHUFFLES)}", conf["shuffle"])
        if "typesize" in conf:
            (cl / "typesize").int(conf["typesize"], 1, 255)
        if "blocksize" in conf:
            (cl / "blocksize").int(conf["blocksize"], 0, INT64_MAX)
    elif name == "sharding_indexed":
        cl.keys(conf, ("chunk_shape", "codecs", "index_codecs"), ("index_location",))
        shape = (cl / "chunk_shape").list(conf["chunk_shape"], "an array of positive integers")
        for i, c in enumerate(shape):
            (cl / "chunk_shape" / i).int(c, 1, INT64_MAX)
        (cl / "codecs").list(conf["codecs"])
        (cl / "index_codecs").list(conf["index_codecs"])
        if conf.get("index_location", "end") not in ("start", "end"):
            raise (cl / "index_location").error("'start' or 'end'", conf["index_location"])


def _check_chain(specs: list[CodecSpec], dt: DataType, loc: Loc) -> None:
    """array->array*, exactly one array->bytes, bytes->bytes* (as far as kinds are known)."""
    if not specs:
        raise loc.error("at least one codec (an array->bytes codec such as 'bytes')", [])
    if len(specs) > MAX_CODECS:
        raise loc.found(f"at most {MAX_CODECS} codecs", f"{len(specs)} codecs")
    stage, a2b_at, unknown = 0, -1, False
    for i, s in enumerate(specs):
        kind = KIND.get(s.name)
        if kind is None:
            unknown = True
            continue
        if kind == "a2a" and stage > 0:
            raise (loc / i).error(f"a bytes->bytes codec after {specs[a2b_at].name!r}",
                                  s.name)
        if kind == "a2b":
            if stage > 0:
                raise (loc / i).error(f"one array->bytes codec only (after "
                                      f"{specs[a2b_at].name!r})", s.name)
            stage, a2b_at = 1, i
        if kind == "b2b" and stage == 0:
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
    specs = [parse_codec(v, loc / i) for i, v in enumerate(items)]
    _check_chain(specs, dt, loc)
    return specs


def _index_codecs(value: Any, loc: Loc) -> tuple[bool, str]:
    """``(crc32c, endian)`` of a shard index encoding. The spec allows any fixed-size encoding;
    zarrx reads and writes ``bytes`` (either byte order) optionally followed by ``crc32c``."""
    items = loc.list(value)
    specs = [parse_codec(v, loc / i) for i, v in enumerate(items)]
    names = [s.name for s in specs]
    endian = specs[0].configuration.get("endian", "little") if specs else None
    if names not in (["bytes"], ["bytes", "crc32c"]) or endian not in ("little", "big"):
        raise loc.error("[bytes] or [bytes, crc32c] (either byte order): the shard index must "
                        "be fixed-size", value)
    return len(names) == 2, endian


def parse_codecs_v3(value: Any, dt: DataType, chunk_shape: tuple[int, ...], loc: Loc
                    ) -> tuple[tuple[CodecSpec, ...], tuple[ShardLevel, ...],
                               tuple[CodecSpec, ...]]:
    """``(codecs, shard_levels, chunk_codecs)`` for an array whose grid chunks (shards) have
    ``chunk_shape``."""
    specs = parse_codec_list(value, dt, loc)
    levels, inner = _lower(specs, chunk_shape, dt, loc)
    return tuple(specs), levels, inner


def _lower(specs: list[CodecSpec], shape: tuple[int, ...], dt: DataType, loc: Loc
           ) -> tuple[tuple[ShardLevel, ...], tuple[CodecSpec, ...]]:
    at = next((i for i, s in enumerate(specs) if s.name == "sharding_indexed"), -1)
    for i, s in enumerate(specs):
        if s.name == "transpose" and len(s.configuration["order"]) != len(shape):
            raise (loc / i / "configuration" / "order").error(
                f"a permutation of {len(shape)} dimensions", s.configuration["order"])
    if at < 0:
        return (), tuple(specs)
    if at + 1 < len(specs):
        raise (loc / (at + 1)).fail(
            f"expected no codec after 'sharding_indexed', found {specs[at + 1].name!r}: byte "
            "ranges into a shard must map 1:1 onto stored bytes (put bytes->bytes codecs in "
            "the sharding codec's 'codecs' instead)")
    seen = shape
    for s in specs[:at]:
        if s.name == "transpose":
            seen = tuple(seen[o] for o in s.configuration["order"])
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
    crc, endian = _index_codecs(conf["index_codecs"], cl / "index_codecs")
    inner_specs = parse_codec_list(conf["codecs"], dt, cl / "codecs")
    sub, chunk = _lower(inner_specs, inner, dt, cl / "codecs")
    level = ShardLevel(inner, conf.get("index_location", "end"), crc,
                       outer_codecs=tuple(specs[:at]), index_endian=endian)
    return (level, *sub), chunk


def codec_json(spec: CodecSpec) -> Any:
    """The v3 JSON of a codec (as read when still equivalent, else canonical)."""
    if spec.json is not None:
        try:
            again = parse_codec(spec.json, Loc("codec"))
        except ValueError:
            again = None
        if again is not None and again == spec:
            return spec.json
    out: dict[str, Any] = {"name": spec.name}
    if spec.configuration or spec.name in ("vlen-utf8", "vlen-bytes"):
        out["configuration"] = spec.configuration
    if not spec.must_understand:
        out["must_understand"] = False
    return out
