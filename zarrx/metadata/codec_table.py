"""The codec table: every codec zarrx knows, by the name metadata gives it.

One row per spec name: the codec's kind, the numcodecs id Zarr v2 knows it by (and how its
configuration reads there), the class that runs it (``"module:Class"``, imported on first use by
``zarrx.codecs.registry``) and its validator (:mod:`zarrx.metadata.codec_checks`).

A numcodecs codec (a Zarr v2 ``compressor`` or filter, a ``{"id": ...}`` dict, a numcodecs
object) is *lowered* to the v3 core codec where the two mean exactly the same thing — ``zstd``,
``gzip``, ``crc32c`` (checksum at the end), ``vlen-utf8``, ``vlen-bytes`` — and to
``numcodecs.<id>`` otherwise. numcodecs ``blosc`` stays ``numcodecs.blosc``: its shuffle is an
integer (-1: automatic) and it has no ``typesize``, so its encoding depends on the buffer it is
handed. Lowering fills in numcodecs' own defaults where a v3 reader would assume another one
(``shuffle``'s ``elementsize`` is 4 in numcodecs, the item size in v3).
"""
from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zarrx.errors import UnknownCodecError
from zarrx.metadata import codec_checks as ck
from zarrx.metadata import numcodecs_ids
from zarrx.metadata import codec_checks_cast as ckc
from zarrx.metadata._util import Loc, short
from zarrx.metadata.model import CodecSpec

__all__ = ["A2A", "A2B", "B2B", "CodecInfo", "codec_info", "codec_kind", "check_codec", "whole_numbers",
           "register", "known_names", "lower_numcodecs", "numcodecs_json", "unknown_codec",
           "builtin_impls"]

A2A, A2B, B2B = "array->array", "array->bytes", "bytes->bytes"
Check = Callable[[dict[str, Any], Loc], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class CodecInfo:
    """One codec. ``impl`` is ``"module:Class"`` (or a registered class); ``check`` is None for
    codecs whose class checks its own configuration (``sharding_indexed``, registered codecs)."""

    name: str
    kind: str
    impl: str | type
    check: Check | None
    numcodecs_id: str | None = None
    #: the configuration as numcodecs spells it (None: the same)
    to_numcodecs: Callable[[dict[str, Any]], dict[str, Any]] | None = None


def _zstd_v2(conf: dict[str, Any]) -> dict[str, Any]:
    # numcodecs omits a false checksum; tensorstore's zarr v2 driver refuses the member
    out = {k: conf[k] for k in ("level",) if k in conf}
    return {**out, "checksum": True} if conf.get("checksum") else out


def _blosc_v2(conf: dict[str, Any]) -> dict[str, Any]:
    shuffle = conf.get("shuffle", "shuffle")
    return {"cname": conf.get("cname", "lz4"), "clevel": conf.get("clevel", 5),
            "shuffle": ck.BLOSC_SHUFFLES.index(shuffle) if shuffle in ck.BLOSC_SHUFFLES
            else shuffle, "blocksize": conf.get("blocksize", 0)}


def _checksum_v2(conf: dict[str, Any]) -> dict[str, Any]:
    # numcodecs' default location, "start", is left out as numcodecs leaves it out: numcodecs
    # before the location parameter refuses the field
    return {k: v for k, v in conf.items() if (k, v) != ("location", "start")}


def _astype_v2(conf: dict[str, Any]) -> dict[str, Any]:
    # numcodecs' configuration names the stored type always, zarr-python's v3 one only when
    # given: a v2 document has it, equal to the input type when not given
    astype = conf.get("astype", conf.get("dtype"))
    return {**conf, "astype": astype} if astype is not None else conf


def _m(module: str, cls: str) -> str:
    return f"zarrx.codecs.{module}:{cls}"


_BUILTIN: dict[str, CodecInfo] = {c.name: c for c in (
    # v3 core and registered extensions
    CodecInfo("bytes", A2B, _m("bytes_", "Bytes"), ck.check_bytes),
    CodecInfo("transpose", A2A, _m("transpose", "Transpose"), ck.check_transpose),
    CodecInfo("vlen-utf8", A2B, _m("vlen", "VLenUTF8"), ck.check_none, "vlen-utf8"),
    CodecInfo("vlen-bytes", A2B, _m("vlen", "VLenBytes"), ck.check_none, "vlen-bytes"),
    CodecInfo("sharding_indexed", A2B, _m("sharding", "ShardingIndexed"), None),
    CodecInfo("gzip", B2B, _m("deflate", "Gzip"), ck.check_gzip, "gzip"),
    CodecInfo("zstd", B2B, _m("zstd", "Zstd"), ck.check_zstd, "zstd", _zstd_v2),
    CodecInfo("blosc", B2B, _m("blosc", "Blosc"), ck.check_blosc, "blosc", _blosc_v2),
    CodecInfo("crc32c", B2B, _m("crc32c", "Crc32c"), ck.check_none, "crc32c"),
    CodecInfo("scale_offset", A2A, _m("scale_offset", "ScaleOffset"), ckc.check_scale_offset),
    CodecInfo("cast_value", A2A, _m("cast_value", "CastValue"), ckc.check_cast_value),
    # numcodecs codecs, as zarr-python names them in v3 metadata
    CodecInfo("numcodecs.gzip", B2B, _m("deflate", "Gzip"), ck.check_numcodecs_gzip, "gzip"),
    CodecInfo("numcodecs.zlib", B2B, _m("deflate", "Zlib"), ck.check_zlib, "zlib"),
    CodecInfo("numcodecs.zstd", B2B, _m("zstd", "Zstd"), ck.check_numcodecs_zstd, "zstd"),
    CodecInfo("numcodecs.blosc", B2B, _m("blosc", "Blosc"), ck.check_numcodecs_blosc, "blosc"),
    CodecInfo("numcodecs.crc32c", B2B, _m("crc32c", "Crc32c"), ck.check_numcodecs_crc32c,
              "crc32c"),
    CodecInfo("numcodecs.crc32", B2B, _m("checksum", "CRC32"), ck.check_crc32, "crc32",
              _checksum_v2),
    CodecInfo("numcodecs.adler32", B2B, _m("checksum", "Adler32"), ck.check_crc32, "adler32",
              _checksum_v2),
    CodecInfo("numcodecs.fletcher32", B2B, _m("checksum", "Fletcher32"), ck.check_none,
              "fletcher32"),
    CodecInfo("numcodecs.jenkins_lookup3", B2B, _m("checksum", "JenkinsLookup3"),
              ck.check_jenkins_lookup3, "jenkins_lookup3"),
    CodecInfo("numcodecs.lz4", B2B, _m("lz4", "LZ4"), ck.check_lz4, "lz4"),
    CodecInfo("numcodecs.bz2", B2B, _m("stdlib", "BZ2"), ck.check_bz2, "bz2"),
    CodecInfo("numcodecs.lzma", B2B, _m("stdlib", "LZMA"), ck.check_lzma, "lzma"),
    CodecInfo("numcodecs.shuffle", B2B, _m("shuffle", "Shuffle"), ck.check_shuffle, "shuffle"),
    CodecInfo("numcodecs.delta", A2A, _m("delta", "Delta"), ck.check_delta, "delta",
              _astype_v2),
    CodecInfo("numcodecs.fixedscaleoffset", A2A, _m("scaleoffset", "FixedScaleOffset"),
              ck.check_fixedscaleoffset, "fixedscaleoffset", _astype_v2),
    CodecInfo("numcodecs.quantize", A2A, _m("scaleoffset", "Quantize"), ck.check_quantize,
              "quantize", _astype_v2),
    CodecInfo("numcodecs.bitround", A2A, _m("scaleoffset", "BitRound"), ck.check_bitround,
              "bitround"),
    CodecInfo("numcodecs.astype", A2A, _m("astype", "AsType"), ck.check_astype, "astype"),
    CodecInfo("numcodecs.packbits", A2A, _m("packbits", "PackBits"), ck.check_none, "packbits"),
    CodecInfo("numcodecs.categorize", A2A, _m("categorize", "Categorize"), ck.check_categorize,
              "categorize"),
    # numcodecs object codecs of Zarr v2 object arrays
    CodecInfo("numcodecs.vlen-array", A2B, _m("objects", "VLenArray"), ck.check_vlen_array,
              "vlen-array"),
    CodecInfo("numcodecs.json2", A2B, _m("objects", "JSON"), ck.check_json2, "json2"),
    CodecInfo("numcodecs.msgpack2", A2B, _m("objects", "MsgPack"), ck.check_msgpack2,
              "msgpack2"),
)}

# numcodecs id -> (v3 core name, when the configuration means the same there, that config)
_CORE: dict[str, tuple[str, Callable[[dict], bool], Callable[[dict], dict]]] = {
    "zstd": ("zstd", lambda c: set(c) <= {"level", "checksum"}, ck.numcodecs_zstd),
    "gzip": ("gzip", lambda c: set(c) <= {"level"},
             lambda c: ck.numcodecs_gzip({"level": c.get("level", 1)})),
    "crc32c": ("crc32c", lambda c: c in ({}, {"location": "end"}), lambda c: {}),
    "vlen-utf8": ("vlen-utf8", lambda c: not c, dict),
    "vlen-bytes": ("vlen-bytes", lambda c: not c, dict),
}
# numcodecs defaults a v3 reader of ``numcodecs.<id>`` would not assume
_NUMCODECS_DEFAULTS: dict[str, dict[str, Any]] = {"shuffle": {"elementsize": 4}}

_USER: dict[str, CodecInfo] = {}
#: rows made for numcodecs ids zarrx does not build in (see :mod:`numcodecs_ids`)
_PLUGINS: dict[str, CodecInfo] = {}
_PLUGIN_IMPL = {A2B: "zarrx.codecs.numcodecs_plugin:NumcodecsArrayToBytes",
                B2B: "zarrx.codecs.numcodecs_plugin:NumcodecsBytesToBytes"}


def codec_info(name: str) -> CodecInfo | None:
    """The row for a spec name (a registered codec first, a numcodecs id that numcodecs
    knows and zarrx does not build in last), or None."""
    return _USER.get(name) or _BUILTIN.get(name) or _PLUGINS.get(name) or _plugin(name)


def _plugin(name: str) -> CodecInfo | None:
    if not name.startswith("numcodecs.") or not numcodecs_ids.known(name[len("numcodecs."):]):
        return None
    cid = name[len("numcodecs."):]
    kind = numcodecs_ids.kind(cid)
    info = _PLUGINS[name] = CodecInfo(name, kind, _PLUGIN_IMPL[kind], None, cid)
    return info


def builtin_impls() -> set[tuple[str, str]]:
    """``(module, class name)`` of every built-in codec class."""
    return {tuple(c.impl.split(":")) for c in _BUILTIN.values()}  # type: ignore[misc, union-attr]


def codec_kind(name: str) -> str | None:
    info = codec_info(name)
    return None if info is None else info.kind


def check_codec(name: str, conf: dict[str, Any], loc: Loc) -> dict[str, Any] | None:
    """The parsed configuration of codec ``name`` (``loc`` locates ``conf``); None when the
    codec is unknown or checks its own configuration."""
    info = codec_info(name)
    if info is None or info.check is None:
        return None
    return info.check(conf, loc)


def whole_numbers(conf: dict[str, Any], values: dict[str, Any] | None) -> dict[str, Any]:
    """``conf`` with each integral number written with a fraction part (``"level": 3.0``, an
    ``order`` of ``[1.0, 0.0]``, an lzma filter's ``"dict_size": 1048576.0``) that its
    validator read as an integer (``values``, what :func:`check_codec` returned) made that
    integer, at any depth, so codec objects built from it later see integers; ``conf`` itself
    when there is none."""
    if not values:
        return conf
    out = _ints_as_read(conf, values)
    return conf if out is None else out


def _ints_as_read(v: Any, got: Any) -> Any:
    """``v`` with the floats that ``got`` (its value as read, in the same shape) holds as
    ints replaced by them; None when nothing is replaced."""
    if type(v) is float:
        return got if type(got) is int else None
    if isinstance(v, dict) and isinstance(got, dict):
        pairs = ((k, _ints_as_read(x, got[k])) for k, x in v.items() if k in got)
    elif isinstance(v, list) and isinstance(got, (list, tuple)) and len(got) == len(v):
        pairs = ((i, _ints_as_read(x, y)) for i, (x, y) in enumerate(zip(v, got)))
    else:
        return None
    out: Any = None
    for k, x in pairs:
        if x is not None:
            out = out if out is not None else (dict(v) if isinstance(v, dict) else list(v))
            out[k] = x
    return out


def register(name: str, cls: type, kind: str) -> None:
    """A user codec class under ``name``; it takes precedence over a built-in one."""
    _USER[name] = CodecInfo(name, kind, cls, None)


def known_names() -> list[str]:
    return sorted(set(_BUILTIN) | set(_USER))


def _strip(name: str) -> str:
    return name[len("numcodecs."):] if name.startswith("numcodecs.") else name


def _close(name: str, names: list[str]) -> list[str]:
    """Up to three known names like ``name`` (``numcodecs.`` prefixes aside), those with the
    prefix ``name`` has (or lacks) first."""
    pre = name.startswith("numcodecs.")
    scored = []
    for n in names:
        m = difflib.SequenceMatcher(None, _strip(name), _strip(n))
        # the cheap upper bounds first: ratio() is quadratic in a long (hostile) name
        if m.real_quick_ratio() >= 0.6 and m.quick_ratio() >= 0.6:
            score = m.ratio()
            if score >= 0.6:
                scored.append((score, n.startswith("numcodecs.") == pre, n))
    out: list[str] = []
    for _, _, n in sorted(scored, key=lambda t: (-t[0], not t[1], t[2])):
        if _strip(n) not in map(_strip, out):
            out.append(n)
    return out[:3]


def unknown_codec(name: str, where: str = "", *, array: str = "", numcodecs: bool = False,
                  cls: type[UnknownCodecError] = UnknownCodecError) -> UnknownCodecError:
    """``UnknownCodecError`` (a ``CodecError``; ``cls``, a subclass of it) for an unknown
    codec (``where``: a location prefix; ``array``: the array's path), suggesting the closest
    known names."""
    if numcodecs:
        names = sorted({i.numcodecs_id for i in _BUILTIN.values() if i.numcodecs_id} |
                       {n[len("numcodecs."):] for n in _USER if n.startswith("numcodecs.")})
        what = "numcodecs codec id"
    else:
        names, what = known_names(), "codec"
    ctx = f" in array {array!r}" if array else ""
    cid = _strip(name) if numcodecs or name.startswith("numcodecs.") else None
    package = numcodecs_ids.PACKAGES.get(cid) if cid is not None else None
    if package is not None:
        needs = f"numcodecs {package}" if numcodecs_ids._registry() is None else package
        return cls(f"{where}numcodecs codec {cid!r}{ctx} needs the package {package!r}, "
                   f"which is not installed (numcodecs registers the codec only when "
                   f"{package} imports): pip install {needs}")
    close = _close(name, names)
    hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
    return cls(f"{where}unknown {what} {short(name)}{ctx}; {hint}known {what}s: "
               f"{', '.join(names)}")


def lower_numcodecs(value: Any, loc: Loc, *, known_only: bool = False) -> CodecSpec:
    """A numcodecs codec object (``{"id": ..., <configuration>}``) as a v3 codec spec, its
    configuration checked. An unknown id gives ``numcodecs.<id>`` unchecked, or (``known_only``)
    a ``CodecError`` suggesting close ids."""
    obj = loc.obj(value)
    if "id" not in obj:
        raise loc.fail("missing required field 'id'")
    cid = (loc / "id").str(obj["id"])
    if not cid:
        raise (loc / "id").error("a codec id", cid)
    conf = {k: v for k, v in obj.items() if k != "id"}
    core = _CORE.get(cid)
    if core is not None and core[1](conf):
        name, conf = core[0], core[2](conf)
    else:
        name, conf = f"numcodecs.{cid}", {**_NUMCODECS_DEFAULTS.get(cid, {}), **conf}
    info = codec_info(name)
    if info is None and known_only:
        raise unknown_codec(cid, f"{loc / 'id'}: ", numcodecs=True)
    if info is not None and info.check is not None:
        conf = whole_numbers(conf, info.check(conf, loc))
    return CodecSpec(name, conf)


def numcodecs_json(spec: CodecSpec, loc: Loc) -> dict[str, Any]:
    """The numcodecs form (``{"id": ..., ...}``, as Zarr v2 metadata holds it) of a codec."""
    info = codec_info(spec.name)
    conf = dict(spec.configuration)
    if info is not None and info.to_numcodecs is not None:
        conf = info.to_numcodecs(conf)
    if spec.name.startswith("numcodecs."):
        return {"id": spec.name[len("numcodecs."):], **conf}
    if info is None or info.numcodecs_id is None:
        raise loc.error("a codec with a Zarr v2 (numcodecs) form", spec.name)
    return {"id": info.numcodecs_id, **conf}
