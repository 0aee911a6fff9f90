"""One validator per codec: the checks a codec configuration passes wherever it comes from (a
stored ``zarr.json`` or ``.zarray``, ``create_array``'s arguments, a codec object built in
Python, a codec plan).

``check_<codec>(conf, loc)`` takes the configuration object and its location and returns the
parsed values (the keyword arguments of the codec class), with defaults filled in. Errors are
raised through ``loc``: a ``MetadataError`` while parsing a document, a ``CodecError`` for codec
objects and plans. Only the configuration is checked here; whether a codec suits the data type
it receives is decided when a plan binds it to one.
"""
from __future__ import annotations

import codecs as text_codecs
import math
from typing import Any

import numpy as np

from zarrx.errors import ZarrError
from zarrx.metadata._util import INT64_MAX, Loc

__all__ = ["BLOSC_CNAMES", "BLOSC_SHUFFLES", "ZSTD_LEVELS", "REQUIRED"]

#: the compressors a blosc codec may name (the v3 blosc codec's list; ``zarrx.codecs._blosc.CNAMES``);
#: whether the c-blosc zarrx is linked with has each (snappy is optional) is checked when a
#: codec is made (``zarrx.codecs.blosc.Blosc``)
BLOSC_CNAMES = ("blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd")
BLOSC_SHUFFLES = ("noshuffle", "shuffle", "bitshuffle")
ZSTD_LEVELS = (-131072, 22)
REQUIRED = object()     # a field without a default


def _get(conf: dict[str, Any], name: str, loc: Loc, default: Any) -> Any:
    if name in conf:
        return conf[name]
    if default is REQUIRED:
        raise loc.fail(f"missing required field {name!r}")
    return default


def _int(conf: dict[str, Any], name: str, loc: Loc, default: Any, lo: int | None = None,
         hi: int | None = None, *, nullable: bool = False) -> Any:
    value = _get(conf, name, loc, default)
    if value is None and (nullable or name not in conf):
        return None
    if type(value) is int and (lo is None or value >= lo) and (hi is None or value <= hi):
        return value
    return (loc / name).int(value, lo, hi)


def _dtype(conf: dict[str, Any], name: str, loc: Loc, default: Any = None) -> np.dtype | None:
    """A numpy dtype string (or dtype object), fixed-size; None when absent or null."""
    value = _get(conf, name, loc, default)
    if value is None or isinstance(value, np.dtype):
        dt = value
    else:
        if not isinstance(value, str):
            raise (loc / name).error("a numpy dtype string such as '<f8'", value)
        try:
            dt = np.dtype(value)
        except (TypeError, ValueError, SyntaxError):   # numpy reads "<08" as a Python literal
            raise (loc / name).error("a numpy dtype string such as '<f8'", value) from None
    if dt is not None and dt.hasobject:
        raise (loc / name).error("a fixed-size dtype (not an object dtype)", value)
    if dt is not None and dt.itemsize == 0:      # no item of it holds a byte ("|S0", "|V0")
        raise (loc / name).error("a fixed-size dtype of at least one byte", value)
    return dt


def _level(lo: int, hi: int, default: Any) -> Any:
    def check(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
        if default is REQUIRED:
            loc.keys(conf, ("level",))
        else:
            loc.keys(conf, (), ("level",))
        return {"level": _int(conf, "level", loc, default, lo, hi)}
    return check


# -- array->bytes ------------------------------------------------------------------------------
def check_bytes(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``endian``: "little" or "big"; absent for data types without a byte order."""
    loc.keys(conf, (), ("endian",))
    endian = conf.get("endian")
    if endian is None and "endian" not in conf:
        return {"endian": None}
    if type(endian) is str and endian in ("little", "big"):
        return {"endian": endian}
    return {"endian": (loc / "endian").choice(endian, ("little", "big"))}


def check_none(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """Codecs without configuration (v3 ``crc32c``, ``vlen-*``, ``numcodecs.packbits``)."""
    loc.keys(conf, ())
    return {}


# -- array->array ------------------------------------------------------------------------------
def check_transpose(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``order``: a permutation of the dimensions, or "C" / "F" (early v3 drafts)."""
    loc.keys(conf, ("order",))
    order = conf["order"]
    ol = loc / "order"
    if isinstance(order, str):
        return {"order": ol.choice(order, ("C", "F"), "a permutation of the dimensions")}
    items = ol.list(order, "a permutation of the dimensions")
    for i, o in enumerate(items):
        (ol / i).int(o, 0, 63)
    perm = tuple(int(o) for o in items)
    if sorted(perm) != list(range(len(perm))):
        raise ol.error("a permutation of the dimensions", list(perm))
    return {"order": perm}


def check_delta(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    loc.keys(conf, (), ("dtype", "astype"))
    return {"dtype": _dtype(conf, "dtype", loc), "astype": _dtype(conf, "astype", loc)}


def _finite(value: Any, loc: Loc, what: str = "a finite number") -> float | int:
    """A number a float64 holds (an integer of any size within its range), not NaN or an
    infinity: numcodecs computes with it as one."""
    number = loc.number(value)
    try:
        if math.isfinite(float(number)):
            return number
    except OverflowError:
        pass
    raise loc.error(what, value)


def check_fixedscaleoffset(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    loc.keys(conf, ("offset", "scale"), ("dtype", "astype"))
    scale = _finite(conf["scale"], loc / "scale", "a finite non-zero number")
    if scale == 0:
        raise (loc / "scale").error("a finite non-zero number", scale)
    return {"offset": _finite(conf["offset"], loc / "offset"), "scale": scale,
            "dtype": _dtype(conf, "dtype", loc), "astype": _dtype(conf, "astype", loc)}


def check_quantize(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    loc.keys(conf, ("digits",), ("dtype", "astype"))
    out = {"digits": (loc / "digits").int(conf["digits"], -300, 300),
           "dtype": _dtype(conf, "dtype", loc), "astype": _dtype(conf, "astype", loc)}
    for name in ("dtype", "astype"):
        if out[name] is not None and out[name].kind != "f":
            raise (loc / name).error("a floating point dtype", conf[name])
    return out


def check_bitround(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    loc.keys(conf, ("keepbits",))
    return {"keepbits": (loc / "keepbits").int(conf["keepbits"], 0)}


def check_astype(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    loc.keys(conf, ("encode_dtype",), ("decode_dtype",))
    return {"encode_dtype": _dtype(conf, "encode_dtype", loc, REQUIRED),
            "decode_dtype": _dtype(conf, "decode_dtype", loc)}


def check_categorize(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    loc.keys(conf, ("labels",), ("dtype", "astype"))
    labels = (loc / "labels").list(conf["labels"], "a list of strings")
    for i, s in enumerate(labels):
        (loc / "labels" / i).str(s)
    dtype = conf.get("dtype", "|O")
    try:
        dt = np.dtype((loc / "dtype").str(dtype) if not isinstance(dtype, np.dtype) else dtype)
    except (TypeError, ValueError, SyntaxError):
        dt = None
    if dt is None or dt.kind not in "UO":
        raise (loc / "dtype").error("a unicode or object dtype ('<U8', '|O')", dtype)
    astype = _dtype(conf, "astype", loc, "|u1")         # None: a null in the document
    if astype is None or astype.kind not in "iu" or len(labels) >= np.iinfo(astype).max:
        raise (loc / "astype").error(f"an integer dtype that can count {len(labels)} labels",
                                     conf.get("astype", "|u1"))
    return {"labels": list(labels), "dtype": dt, "astype": astype}


# -- numcodecs object codecs (array->bytes) -----------------------------------------------------
def check_vlen_array(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``dtype``: the fixed-size type of every item's elements."""
    loc.keys(conf, ("dtype",))
    return {"dtype": _dtype(conf, "dtype", loc, REQUIRED)}


_JSON_FLAGS = {"skipkeys": False, "ensure_ascii": True, "check_circular": True,
               "allow_nan": True, "sort_keys": True, "strict": True}


def check_json2(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """numcodecs ``JSON``: ``encoding`` (a Python text codec), the ``json`` flags, ``indent``
    (null or a count), ``separators`` (null or two strings; null: numcodecs' default for the
    ``indent``)."""
    loc.keys(conf, (), ("encoding", *_JSON_FLAGS, "indent", "separators"))
    out: dict[str, Any] = {k: (loc / k).bool(conf[k]) if k in conf else v
                           for k, v in _JSON_FLAGS.items()}
    encoding = (loc / "encoding").str(conf.get("encoding", "utf-8"))
    try:
        text_codecs.lookup(encoding)
        "".encode(encoding)         # a codec that is not a text encoding (rot13, base64)
        b"".decode(encoding)
    except (LookupError, ValueError):
        raise (loc / "encoding").error("a text encoding such as 'utf-8'", encoding) from None
    out["encoding"] = encoding
    out["indent"] = _int(conf, "indent", loc, None, 0, 1 << 16, nullable=True)
    seps = conf.get("separators")
    if seps is None:
        seps = [",", ":"] if out["indent"] is None else [", ", ": "]
    items = (loc / "separators").list(seps, "two strings: the item and key separators")
    if len(items) != 2:
        raise (loc / "separators").error("two strings: the item and key separators", seps)
    out["separators"] = [(loc / "separators" / i).str(v) for i, v in enumerate(items)]
    return out


def check_msgpack2(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """numcodecs ``MsgPack``: the flags ``use_single_float``, ``use_bin_type``, ``raw``."""
    flags = {"use_single_float": False, "use_bin_type": True, "raw": False}
    loc.keys(conf, (), tuple(flags))
    return {k: (loc / k).bool(conf[k]) if k in conf else v for k, v in flags.items()}


# -- bytes->bytes ------------------------------------------------------------------------------
check_gzip = _level(0, 9, REQUIRED)                   # v3 core: level required
_check_gzip_level = _level(-1, 9, 1)                  # numcodecs GZip(level=1); -1: zlib's


def numcodecs_gzip(conf: dict[str, Any]) -> dict[str, Any]:
    """numcodecs ``gzip``'s level as the v3 ``gzip`` codec spells it: -1 (zlib's default, which
    numcodecs hands on to the gzip module) is level 6."""
    return {**conf, "level": 6} if conf.get("level") == -1 and type(conf["level"]) is int \
        else conf


def check_numcodecs_gzip(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """numcodecs ``GZip``: ``level`` -1..9 (default 1; -1 is read as 6, what it means)."""
    _check_gzip_level(conf, loc)
    return _check_gzip_level(numcodecs_gzip(conf), loc)
check_zlib = _level(-1, 9, 1)                         # numcodecs Zlib(level=1); -1: zlib default
check_bz2 = _level(1, 9, 1)


def check_zstd(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``level`` and ``checksum``; both may be omitted on read (writers vary): 0 and false."""
    loc.keys(conf, (), ("level", "checksum"))
    level = _int(conf, "level", loc, 0, *ZSTD_LEVELS)
    checksum = conf.get("checksum", False)
    if not isinstance(checksum, bool):
        (loc / "checksum").bool(checksum)               # raises
    return {"level": level, "checksum": checksum}


def numcodecs_zstd(conf: dict[str, Any]) -> dict[str, Any]:
    """numcodecs ``zstd``'s level as the v3 ``zstd`` codec spells it: numcodecs hands any level
    on to libzstd, which takes one outside its range as the nearest end of it."""
    level = conf.get("level")
    if type(level) is not int:
        return conf
    return {**conf, "level": min(max(level, ZSTD_LEVELS[0]), ZSTD_LEVELS[1])}


def check_numcodecs_zstd(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """numcodecs ``Zstd``: as ``zstd``, any integer level taken as libzstd takes it."""
    return check_zstd(numcodecs_zstd(conf), loc)


def _blosc(conf: dict[str, Any], loc: Loc, shuffles: tuple[Any, ...], defaults: bool
           ) -> dict[str, Any]:
    d = None if defaults else REQUIRED
    loc.keys(conf, () if defaults else ("cname", "clevel", "shuffle"),
             ("cname", "clevel", "shuffle", "typesize", "blocksize"))
    cname = (loc / "cname").choice(
        _get(conf, "cname", loc, "lz4" if defaults else d), BLOSC_CNAMES,
        f"one of the blosc compressors ({', '.join(BLOSC_CNAMES)})")
    shuffle = (loc / "shuffle").choice(_get(conf, "shuffle", loc, 1 if defaults else d),
                                       shuffles)
    return {"cname": cname, "clevel": _int(conf, "clevel", loc, 5 if defaults else d, 0, 9),
            "shuffle": shuffle,
            # blosc shuffles items of up to 255 bytes and compresses wider ones unshuffled;
            # zarr-python writes the item size, however wide. The v3 spec ignores the typesize
            # of "noshuffle", so 0 is taken there too (blosc is then given 1)
            "typesize": _int(conf, "typesize", loc, None, 0 if shuffle == "noshuffle" else 1,
                             2**31 - 1),
            # numcodecs takes any blocksize, a non-positive one meaning automatic
            "blocksize": _int(conf, "blocksize", loc, 0, -INT64_MAX - 1 if defaults else 0,
                              INT64_MAX)}


def check_blosc(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """v3 ``blosc``: cname, clevel, shuffle (a name) required; typesize, blocksize optional."""
    return _blosc(conf, loc, BLOSC_SHUFFLES, False)


#: the shuffle of a numcodecs ``Blosc`` as GDAL writes it when given its BLOSC_SHUFFLE creation
#: option (the option's text, compared without case as GDAL does): its numcodecs value
GDAL_BLOSC_SHUFFLES = {"none": 0, "0": 0, "byte": 1, "1": 1, "bit": 2, "2": 2}


def check_numcodecs_blosc(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """numcodecs ``Blosc``: integer shuffle (-1 automatic), numcodecs' defaults. A shuffle
    written as GDAL writes it ("NONE", "BYTE", "BIT", or the number as text) is taken as its
    number."""
    shuffle = conf.get("shuffle")
    if isinstance(shuffle, str) and shuffle.lower() in GDAL_BLOSC_SHUFFLES:
        conf = {**conf, "shuffle": GDAL_BLOSC_SHUFFLES[shuffle.lower()]}
    elif type(shuffle) is float:    # numcodecs keeps Blosc(shuffle=1.0), which zarr-python writes
        conf = {**conf, "shuffle": (loc / "shuffle").int(shuffle, -1, 2, "one of -1, 0, 1, 2")}
    return _blosc(conf, loc, (-1, 0, 1, 2), True)


def _checksum_location(default: str) -> Any:
    """numcodecs' 32-bit checksums: ``location`` "start" or "end" (numcodecs' default varies)."""
    def check(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
        loc.keys(conf, (), ("location",))
        return {"location": (loc / "location").choice(conf.get("location", default),
                                                      ("start", "end"))}
    return check


check_numcodecs_crc32c = _checksum_location("end")
check_crc32 = _checksum_location("start")     # numcodecs crc32 and adler32


def check_jenkins_lookup3(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``initval`` (a 32-bit seed, default 0); ``prefix`` only null (numcodecs keeps it as an
    array, which has no JSON form)."""
    loc.keys(conf, (), ("initval", "prefix"))
    if conf.get("prefix") is not None:
        raise (loc / "prefix").error("null (a prefix has no JSON form in numcodecs)",
                                     conf["prefix"])
    return {"initval": _int(conf, "initval", loc, 0, 0, 2**32 - 1), "prefix": None}


def check_lz4(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    loc.keys(conf, (), ("acceleration",))
    return {"acceleration": _int(conf, "acceleration", loc, 1, -2**31, 2**31 - 1)}   # a C int


#: lzma integrity checks: -1 (the format's default), none, CRC-32, CRC-64, SHA-256
LZMA_CHECKS = (-1, 0, 1, 4, 10)
LZMA_PRESET_EXTREME = 0x80000000
_LZMA_OPTIONS = ("preset", "dict_size", "lc", "lp", "pb", "mode", "nice_len", "mf", "depth")
#: the filters of Python's lzma module by id (``lzma.FILTER_*``), with the options each takes
LZMA_FILTERS: dict[int, tuple[str, tuple[str, ...]]] = {
    0x4000000000000001: ("LZMA1", _LZMA_OPTIONS), 0x21: ("LZMA2", _LZMA_OPTIONS),
    0x03: ("DELTA", ("dist",)),
    **{i: (n, ("start_offset",)) for i, n in ((0x04, "X86"), (0x05, "POWERPC"), (0x06, "IA64"),
                                              (0x07, "ARM"), (0x08, "ARMTHUMB"), (0x09, "SPARC"))},
}


def _lzma_filter(f: Any, loc: Loc) -> dict[str, Any]:
    """One filter specifier of an lzma chain: a known ``id`` and the options of that filter."""
    loc.obj(f)
    if "id" not in f:
        raise loc.fail("missing required field 'id'")
    fid = _whole(f["id"], loc / "id")
    if not isinstance(fid, int) or isinstance(fid, bool) or fid not in LZMA_FILTERS:
        known = ", ".join(f"{n} ({i})" for i, (n, _) in LZMA_FILTERS.items())
        raise (loc / "id").error(f"an lzma filter id: {known}", fid)
    loc.keys(f, ("id",), LZMA_FILTERS[fid][1])
    return {k: fid if k == "id" else (loc / k).int(v, 0, 2**32 - 1) for k, v in f.items()}


def _whole(value: Any, loc: Loc) -> Any:
    """``value``, or the integer a stored document's float (``33.0``, ``-1.0``) stands for, as
    :meth:`Loc.int` reads it (in stored documents only, below 2**53): for settings checked
    against a set of integers."""
    if type(value) is float:
        try:
            return loc.int(value)
        except ZarrError:
            pass
    return value


def check_lzma(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``format`` 1 (xz), 2 (alone) or 3 (raw); ``check`` (xz only); ``preset`` 0..9 (optionally
    with ``PRESET_EXTREME``) or ``filters`` (a filter chain: required for raw streams; for xz and
    alone ones, the chain they are written with, which the stream records), as Python's lzma
    module takes them. ``delta``, which GDAL writes
    (the distance of the delta filter it puts before LZMA2 in each xz stream, where the stream
    records it), is checked and left out: xz streams decode without it, and are written
    without a delta filter."""
    if "delta" in conf:
        (loc / "delta").int(conf["delta"], 1, 256)
        conf = {k: v for k, v in conf.items() if k != "delta"}
    loc.keys(conf, (), ("format", "check", "preset", "filters"))
    fmt = _int(conf, "format", loc, 1, 1, 3)
    check = (loc / "check").choice(_whole(conf.get("check", -1), loc / "check"), LZMA_CHECKS,
                                   "-1 (the default) or an lzma.CHECK_* value: 0 (none), 1 "
                                   "(CRC-32), 4 (CRC-64) or 10 (SHA-256)")
    if fmt != 1 and check not in (-1, 0):
        raise (loc / "check").error(f"-1 or 0 (none) for format {fmt} (only format 1, xz, "
                                    f"has integrity checks)", check)
    preset = _int(conf, "preset", loc, None, 0, 2**32 - 1, nullable=True)
    if preset is not None and preset & ~LZMA_PRESET_EXTREME > 9:
        raise (loc / "preset").error("0..9, optionally with lzma.PRESET_EXTREME", preset)
    filters = conf.get("filters")
    if filters is not None:
        fl = loc / "filters"
        filters = [_lzma_filter(f, fl / i) for i, f in enumerate(fl.list(filters,
                                                                      "a list of objects or null"))]
        if not filters:          # the lzma module's "Internal error", writing or reading
            raise fl.error("1 to 4 filters, the last LZMA1 or LZMA2, or null", conf["filters"])
        lz = (0x4000000000000001, 0x21)
        for i, f in enumerate(filters):
            last = i == len(filters) - 1
            if (f["id"] in lz) != last:
                want = "LZMA1 or LZMA2 (the last filter of a chain compresses)" if last else \
                    "a DELTA or BCJ filter before the last one"
                raise (fl / i / "id").error(want, f["id"])
        if len(filters) > 4:
            raise fl.error("at most 4 filters", conf["filters"])
        # the chains the lzma module writes in each container: an xz stream ends in LZMA2, an
        # alone stream is LZMA1 alone (both record it, so they decode without the chain)
        if fmt == 1 and filters[-1]["id"] != 0x21:
            raise (fl / (len(filters) - 1) / "id").error(
                "LZMA2 (33) as the last filter for format 1 (xz)", filters[-1]["id"])
        if fmt == 2 and (len(filters) != 1 or filters[0]["id"] != lz[0]):
            raise fl.error("a single LZMA1 filter for format 2 (alone)", conf["filters"])
        if preset is not None:
            raise (loc / "preset").error("null when filters are given (each filter takes its "
                                         "own preset)", preset)
    if fmt == 3 and not filters:
        raise (loc / "filters").error("a list of filters for format 3 (raw)", conf.get("filters"))
    return {"format": fmt, "check": check, "preset": preset, "filters": filters}


def check_shuffle(conf: dict[str, Any], loc: Loc) -> dict[str, Any]:
    """``elementsize``; absent or null: the item size of the serialised chunk."""
    loc.keys(conf, (), ("elementsize",))
    return {"elementsize": _int(conf, "elementsize", loc, None, 0, nullable=True)}
