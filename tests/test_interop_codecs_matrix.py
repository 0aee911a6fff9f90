"""Every codec and option zarrx writes, read by zarr-python and by tensorstore.

Each case is written by zarrx (Zarr v3 plain and sharded, and Zarr v2 where the format has the
codec) with a ragged last chunk, and read back by each reader; the values must equal zarrx's
own (and, for lossless codecs, what was written). When a reader lacks a codec, the test checks
that it does refuse the array and skips with the reason.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx import codecs as zc

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

SHAPE, CHUNKS, SHARDS = (7, 5), (3, 2), (6, 4)

TS3_NUMCODECS = "tensorstore's zarr3 driver reads only the v3 core codecs, not numcodecs.*"
TS3_VLEN = "tensorstore's zarr3 driver has no variable-length string or bytes data type"
TS2_FILTERS = "tensorstore's zarr driver reads no v2 filters"
TS2_OBJECT = "tensorstore's zarr driver has no object ('|O') data type"
TS2_ZSTD_CHECKSUM = "tensorstore's zarr driver refuses the zstd compressor's 'checksum' member"


def ts2_no(compressor: str) -> str:
    return f"tensorstore's zarr driver has no {compressor!r} compressor"


@dataclass(frozen=True)
class Case:
    dtype: Any
    v3: dict | None                    # create_array arguments for Zarr v3 (None: not in v3)
    v2: dict | None                    # ... for Zarr v2 (None: v2 has no such codec)
    exact: bool = True                 # lossless: every reader returns what was written
    ts3: str | None = None             # why tensorstore cannot read the v3 array
    ts2: str | None = None             # why tensorstore cannot read the v2 array


def _blosc(cname: str, shuffle: str, **kw: Any) -> Case:
    ints = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}
    return Case("u2" if shuffle == "bitshuffle" else "i4",
                dict(compressors=zc.Blosc(cname, 5, shuffle, **kw)),
                dict(compressors={"id": "blosc", "cname": cname, "clevel": 5,
                                  "shuffle": ints[shuffle], **kw}))


CASES: dict[str, Case] = {
    "bytes-little": Case("f8", dict(compressors=None), dict(compressors=None)),
    "bytes-big": Case(">i4", dict(serializer=zc.Bytes("big"), compressors=None),
                      dict(compressors=None)),
    "bytes-one-byte": Case("u1", dict(compressors=None), dict(compressors=None)),
    "transpose": Case("i2", dict(filters=[zc.Transpose((1, 0))], compressors=None),
                      dict(order="F", compressors=None)),
    "gzip": Case("i4", dict(compressors=zc.Gzip(3)), dict(compressors={"id": "gzip",
                                                                          "level": 3})),
    "zstd": Case("f4", dict(compressors=zc.Zstd(3)), dict(compressors={"id": "zstd",
                                                                          "level": 3})),
    "zstd-checksum": Case("f4", dict(compressors=zc.Zstd(1, checksum=True)),
                          dict(compressors={"id": "zstd", "level": 1, "checksum": True}),
                          ts2=TS2_ZSTD_CHECKSUM),
    "zstd-default": Case("i8", dict(), dict()),
    "blosc-lz4-shuffle": _blosc("lz4", "shuffle"),
    "blosc-zstd-bitshuffle": _blosc("zstd", "bitshuffle"),
    "blosc-blosclz-noshuffle": _blosc("blosclz", "noshuffle"),
    "blosc-zlib-shuffle": _blosc("zlib", "shuffle"),
    "blosc-lz4hc-blocksize": _blosc("lz4hc", "shuffle", blocksize=64),
    "blosc-auto-shuffle": Case("u1", dict(compressors=zc.Blosc("lz4", 5, -1)),
                               dict(compressors={"id": "blosc", "cname": "lz4", "clevel": 5,
                                                 "shuffle": -1, "blocksize": 0})),
    "crc32c": Case("i4", dict(compressors=zc.Crc32c()), dict(compressors={"id": "crc32c"}),
                   ts2=ts2_no("crc32c")),
    "zstd-crc32c": Case("i4", dict(compressors=[zc.Zstd(1), zc.Crc32c()]),
                        dict(filters=[{"id": "zstd", "level": 1}],
                             compressors={"id": "crc32c"}),
                        ts2=TS2_FILTERS),
    "crc32": Case("i4", dict(compressors=[zc.Zstd(1), zc.CRC32()]),
                  dict(compressors={"id": "crc32"}), ts3=TS3_NUMCODECS, ts2=ts2_no("crc32")),
    "adler32-end": Case("u1", dict(compressors=zc.Adler32("end")),
                        dict(compressors={"id": "adler32", "location": "end"}),
                        ts3=TS3_NUMCODECS, ts2=ts2_no("adler32")),
    "fletcher32": Case("i2", dict(compressors=[zc.Zstd(1), zc.Fletcher32()]),
                       dict(filters=[{"id": "zstd", "level": 1}],
                            compressors={"id": "fletcher32"}),
                       ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "jenkins-lookup3": Case("f8", dict(compressors=zc.JenkinsLookup3(initval=5)),
                            dict(compressors={"id": "jenkins_lookup3", "initval": 5,
                                              "prefix": None}),
                            ts3=TS3_NUMCODECS, ts2=ts2_no("jenkins_lookup3")),
    "zlib": Case("i4", dict(compressors=zc.Zlib(1)), dict(compressors={"id": "zlib", "level": 1}),
                 ts3=TS3_NUMCODECS),
    "lz4": Case("i4", dict(compressors=zc.LZ4()), dict(compressors={"id": "lz4"}),
                ts3=TS3_NUMCODECS, ts2=ts2_no("lz4")),
    "bz2": Case("i4", dict(compressors=zc.BZ2(2)), dict(compressors={"id": "bz2", "level": 2}),
                ts3=TS3_NUMCODECS),
    "lzma": Case("i4", dict(compressors=zc.LZMA(preset=1)),
                 dict(compressors={"id": "lzma", "preset": 1}),
                 ts3=TS3_NUMCODECS, ts2=ts2_no("lzma")),
    "shuffle": Case("i4", dict(compressors=[zc.Shuffle(), zc.Zstd(1)]),
                    dict(filters=[{"id": "shuffle", "elementsize": 4}],
                         compressors={"id": "zstd", "level": 1}),
                    ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "delta": Case("i4", dict(filters=[zc.Delta()]), dict(filters=[{"id": "delta",
                                                                    "dtype": "<i4"}]),
                  ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "delta-big-endian": Case(">i4", dict(serializer=zc.Bytes("big"), filters=[zc.Delta()]),
                             dict(filters=[zc.Delta(astype="<i8")]),
                             ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "fixedscaleoffset": Case("f8", dict(filters=[zc.FixedScaleOffset(1, 10, astype="<i4")]),
                             dict(filters=[{"id": "fixedscaleoffset", "offset": 1, "scale": 10,
                                            "dtype": "<f8", "astype": "<i4"}]),
                             exact=False, ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "quantize": Case("f8", dict(filters=[zc.Quantize(2)]),
                     dict(filters=[{"id": "quantize", "digits": 2, "dtype": "<f8"}]),
                     exact=False, ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "bitround": Case("f4", dict(filters=[zc.BitRound(5)]),
                     dict(filters=[{"id": "bitround", "keepbits": 5}]),
                     exact=False, ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "astype": Case("f8", dict(filters=[zc.AsType("<f4")]),
                   dict(filters=[{"id": "astype", "encode_dtype": "<f4"}]),
                   ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "packbits": Case("bool", dict(filters=[zc.PackBits()]), dict(filters=[{"id": "packbits"}]),
                     ts3=TS3_NUMCODECS, ts2=TS2_FILTERS),
    "vlen-utf8": Case(str, dict(), dict(), ts3=TS3_VLEN, ts2=TS2_OBJECT),
    "vlen-bytes": Case(bytes, dict(), dict(), ts3=TS3_VLEN, ts2=TS2_OBJECT),
    "vlen-utf8-gzip": Case(str, dict(compressors=zc.Gzip(1)),
                           dict(compressors={"id": "gzip", "level": 1}),
                           ts3=TS3_VLEN, ts2=TS2_OBJECT),
    "shard-index-start": Case("i4", dict(shards={"shape": SHARDS, "index_location": "start"}),
                              None),
    "dimension-names": Case("i4", dict(dimension_names=("y", "x")),
                            dict(dimension_names=("y", "x"))),
    "key-encoding-v2": Case("i4", dict(chunk_key_encoding={"name": "v2", "separator": "."}),
                            dict(chunk_key_encoding={"name": "v2", "separator": "/"})),
}


def sample(dtype: Any) -> np.ndarray:
    n = int(np.prod(SHAPE))
    if dtype is str:
        return np.array([f"s{i}é" * (i % 3) for i in range(n)], dtype=object).reshape(SHAPE)
    if dtype is bytes:
        return np.array([bytes([i, 255 - i]) * (i % 3) for i in range(n)],
                        dtype=object).reshape(SHAPE)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return (np.arange(n) % 3 == 0).reshape(SHAPE)
    x = (np.arange(n) * 7 % 23).reshape(SHAPE)
    return (x + 0.375).astype(dt) if dt.kind == "f" else x.astype(dt)


def _layouts():
    for name, case in CASES.items():
        if case.v3 is not None:
            if "shards" not in case.v3:
                yield f"v3-{name}", name, 3, False
            yield f"v3-sharded-{name}", name, 3, True
        if case.v2 is not None:
            yield f"v2-{name}", name, 2, False


LAYOUTS = list(_layouts())


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Every layout written once by zarrx: id -> (path, what zarrx reads back)."""
    root = tmp_path_factory.mktemp("matrix")
    out = {}
    for lid, name, fmt, sharded in LAYOUTS:
        case = CASES[name]
        kw = dict(case.v3 if fmt == 3 else case.v2)
        shards = kw.pop("shards", SHARDS) if sharded else None
        path = str(root / f"{lid}.zarr")
        a = zarrx.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=case.dtype,
                               zarr_format=fmt, shards=shards, **kw)
        x = sample(case.dtype)
        a[...] = x
        ours = zarrx.open_array(path, mode="r")[...]
        if case.exact:
            np.testing.assert_array_equal(ours, x)
        else:
            np.testing.assert_allclose(ours, x, rtol=0.05, atol=0.1)   # lossy filters
        out[lid] = (path, ours)
    return out


def _same(theirs: Any, ours: np.ndarray) -> None:
    theirs = np.asarray(theirs)
    if ours.dtype.hasobject:
        assert theirs.shape == ours.shape
        assert [v if not isinstance(v, np.generic) else v.item() for v in theirs.ravel()] == \
            list(ours.ravel())
    else:
        assert theirs.dtype == ours.dtype.newbyteorder(theirs.dtype.byteorder) or \
            theirs.dtype.newbyteorder("=") == ours.dtype
        assert theirs.tobytes() == ours.astype(theirs.dtype).tobytes()


@pytest.mark.parametrize("lid,name,fmt,sharded", LAYOUTS, ids=[lay[0] for lay in LAYOUTS])
def test_zarr_python_reads(written, lid, name, fmt, sharded) -> None:
    path, ours = written[lid]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_array(path, mode="r", zarr_format=fmt)[...]
    _same(theirs, ours)


def _ts_open(path: str, fmt: int) -> Any:
    spec = {"driver": "zarr3" if fmt == 3 else "zarr", "kvstore": {"driver": "file",
                                                                   "path": path}}
    return ts.open(spec, open=True, read=True).result()


@pytest.mark.parametrize("lid,name,fmt,sharded", LAYOUTS, ids=[lay[0] for lay in LAYOUTS])
def test_tensorstore_reads(written, lid, name, fmt, sharded) -> None:
    path, ours = written[lid]
    reason = CASES[name].ts3 if fmt == 3 else CASES[name].ts2
    if reason is not None:
        with pytest.raises(ValueError):       # it does refuse it, rather than misread it
            _ts_open(path, fmt)
        pytest.skip(reason)
    _same(_ts_open(path, fmt).read().result(), ours)


# -- every configuration zarrx writes is complete per its codec's specification ----------------
REQUIRED = {
    "bytes": {"endian"}, "transpose": {"order"}, "gzip": {"level"},
    "zstd": {"level", "checksum"}, "crc32c": set(),
    "blosc": {"cname", "clevel", "shuffle", "typesize", "blocksize"},
    "sharding_indexed": {"chunk_shape", "codecs", "index_codecs", "index_location"},
    "vlen-utf8": set(), "vlen-bytes": set(),
    "numcodecs.delta": {"dtype"}, "numcodecs.fixedscaleoffset": {"offset", "scale", "dtype"},
    "numcodecs.quantize": {"digits", "dtype"}, "numcodecs.astype": {"encode_dtype",
                                                                    "decode_dtype"},
    "numcodecs.shuffle": {"elementsize"},
    "numcodecs.crc32": {"location"}, "numcodecs.adler32": {"location"},
    "numcodecs.jenkins_lookup3": {"initval"},
}


def _codecs(codecs: list[dict], dtype: np.dtype):
    for c in codecs:
        yield c, dtype
        if c["name"] == "sharding_indexed":
            yield from _codecs(c["configuration"]["codecs"], dtype)
            yield from _codecs(c["configuration"]["index_codecs"], np.dtype("u8"))


@pytest.mark.parametrize("lid,name,fmt,sharded", [lay for lay in LAYOUTS if lay[2] == 3],
                         ids=[lay[0] for lay in LAYOUTS if lay[2] == 3])
def test_written_v3_configurations_are_complete(written, lid, name, fmt, sharded) -> None:
    path, ours = written[lid]
    with open(f"{path}/zarr.json") as f:
        doc = json.load(f)
    item = ours.dtype
    for codec, dt in _codecs(doc["codecs"], item):
        conf = codec.get("configuration", {})
        want = set(REQUIRED.get(codec["name"], ()))
        if codec["name"] == "bytes" and dt.itemsize <= 1:
            want.discard("endian")          # the spec makes it optional for 1-byte types
        assert want <= set(conf), (codec, want - set(conf))
        if codec["name"].startswith("numcodecs.") or codec["name"].startswith("vlen"):
            assert "configuration" in codec, codec      # zarr-python requires the member


# -- reading tolerates the optional fields other writers omit -----------------------------------
OMITTED = {   # case -> how its codecs read when a writer leaves out what it may
    "zstd": lambda c: [c[0], {"name": "zstd"}],
    "blosc-lz4-shuffle": lambda c: [c[0], {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle"}}],
    "bytes-one-byte": lambda c: [{"name": "bytes"}],
    "vlen-utf8": lambda c: [{"name": "vlen-utf8"}, *c[1:]],
}


@pytest.mark.parametrize("name", list(OMITTED))
def test_optional_fields_may_be_omitted(written, tmp_path, name) -> None:
    import shutil
    path, ours = written[f"v3-{name}"]
    copy = str(tmp_path / "copy.zarr")
    shutil.copytree(path, copy)
    with open(f"{copy}/zarr.json") as f:
        doc = json.load(f)
    doc["codecs"] = OMITTED[name](doc["codecs"])
    with open(f"{copy}/zarr.json", "w") as f:
        json.dump(doc, f)
    _same(zarrx.open_array(copy, mode="r")[...], ours)
