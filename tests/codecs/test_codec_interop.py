"""Bit-exactness against numcodecs and zarr-python (test oracles only), both ways."""
from __future__ import annotations

import json

import numpy as np
import pytest

from zarrx.codecs.plan import CodecPipeline
from zarrx.errors import CodecError
from zarrx.metadata import parse_array_v2
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_table import lower_numcodecs
from zarrx.metadata.model import CodecSpec

numcodecs = pytest.importorskip("numcodecs")

SHAPE = (4, 6)


def ramp(dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return (np.arange(24) % 3 == 0).reshape(SHAPE)
    if dt.kind in "OU":
        words = ["alpha", "beta", "", "gamma", "δέλτα"]
        return np.array([words[i % 5] for i in range(24)], dtype=dtype).reshape(SHAPE)
    x = (np.arange(24) * 7 % 23).reshape(SHAPE) + (0.125 if dt.kind == "f" else 0)
    return x.astype(dtype)


def v2_specs(filters, compressor, dtype: np.dtype) -> list[CodecSpec]:
    """Our lowering of a v2 filters/compressor pair (through a .zarray document)."""
    if dtype.hasobject and not any(f.codec_id.startswith("vlen") for f in filters):
        # an object array whose filter makes numbers (categorize): no object codec in v2
        return [lower_numcodecs(f.get_config(), Loc("t")) for f in filters] + \
            [CodecSpec("bytes")]
    zarray = {"zarr_format": 2, "shape": list(SHAPE), "chunks": list(SHAPE),
              "dtype": "|O" if dtype.hasobject else dtype.str, "fill_value": None, "order": "C",
              "filters": [f.get_config() for f in filters] or None,
              "compressor": None if compressor is None else compressor.get_config()}
    return list(parse_array_v2(zarray, None, ".zarray").codecs)


def nc_encode(x: np.ndarray, filters, compressor) -> bytes:
    buf = x
    for f in filters:
        buf = f.encode(buf)
    if compressor is not None:
        buf = compressor.encode(buf)
    return bytes(np.ascontiguousarray(buf).view(np.uint8).reshape(-1)) \
        if isinstance(buf, np.ndarray) else bytes(buf)


def nc_decode(data: bytes, filters, compressor, like: np.ndarray) -> np.ndarray:
    buf = compressor.decode(data) if compressor is not None else data
    for f in reversed(filters):
        buf = f.decode(buf)
    if like.dtype.hasobject:
        return np.asarray(buf, dtype=object).reshape(like.shape)
    return np.frombuffer(bytes(np.ascontiguousarray(buf).view(np.uint8).reshape(-1)) if
                         isinstance(buf, np.ndarray) else bytes(buf),
                         dtype=like.dtype).reshape(like.shape)


nc = numcodecs
CASES = {
    # id: (dtype, filters, compressor, exact)
    "zlib": ("<i4", [], nc.Zlib(level=1), True),
    "gzip": ("<f8", [], nc.GZip(level=5), True),
    "zstd": ("<u2", [], nc.Zstd(level=3), True),
    "zstd-checksum": ("<f4", [], nc.Zstd(level=1, checksum=True), True),
    "blosc-lz4-shuffle": ("<f8", [], nc.Blosc("lz4", 5, nc.Blosc.SHUFFLE), True),
    "blosc-zstd-bitshuffle": ("<i2", [], nc.Blosc("zstd", 3, nc.Blosc.BITSHUFFLE), True),
    "blosc-auto-u1": ("|u1", [], nc.Blosc("blosclz", 5, nc.Blosc.AUTOSHUFFLE), True),
    "blosc-auto-i8": ("<i8", [], nc.Blosc("zlib", 1, nc.Blosc.AUTOSHUFFLE), True),
    "blosc-noshuffle-blocksize": ("<f4", [], nc.Blosc("lz4hc", 9, nc.Blosc.NOSHUFFLE,
                                                      blocksize=256), True),
    "lz4": ("<i8", [], nc.LZ4(acceleration=1), True),
    "bz2": ("<i4", [], nc.BZ2(level=9), True),
    "lzma": ("<f8", [], nc.LZMA(preset=1), True),
    "crc32c": ("<u4", [], nc.CRC32C(), True),
    "crc32c-start": ("<u4", [], nc.CRC32C(location="start"), True),
    "crc32": ("<i4", [], nc.CRC32(), True),
    "crc32-end": ("<f8", [], nc.CRC32(location="end"), True),
    "adler32": ("|u1", [], nc.Adler32(), True),
    "adler32-end": ("<i2", [], nc.Adler32(location="end"), True),
    "fletcher32": ("<i2", [], nc.Fletcher32(), True),
    "jenkins-lookup3": ("<f4", [], nc.JenkinsLookup3(), True),
    "jenkins-lookup3-initval": ("<u8", [], nc.JenkinsLookup3(initval=2**32 - 5), True),
    "big-endian-zstd": (">f8", [], nc.Zstd(level=1), True),
    "shuffle-filter": ("<i4", [nc.Shuffle(elementsize=4)], nc.Zlib(1), True),
    "delta": ("<i4", [nc.Delta(dtype="<i4")], nc.Zstd(1), True),
    "delta-astype": ("<i8", [nc.Delta(dtype="<i8", astype="<i2")], nc.Zstd(1), True),
    # a filter's output is stored in the byte order its declared type has, not the array's
    "delta-astype-other-order": (">i4", [nc.Delta(dtype=">i4", astype="<i8")], None, True),
    "delta-u1-astype": ("|u1", [nc.Delta(dtype="|u1", astype="<i2")], nc.Zstd(1), True),
    "astype-other-order": (">f8", [nc.AsType(encode_dtype="<f4", decode_dtype=">f8")], None,
                           True),
    "fixedscaleoffset-big": ("<f8", [nc.FixedScaleOffset(offset=1, scale=10, dtype="<f8",
                                                         astype=">i4")], None, False),
    "fixedscaleoffset": ("<f8", [nc.FixedScaleOffset(offset=1.5, scale=100, dtype="<f8",
                                                     astype="<i4")], nc.Zlib(1), False),
    "fixedscaleoffset-u1": ("<f4", [nc.FixedScaleOffset(offset=0, scale=10, dtype="<f4",
                                                        astype="|u1")], None, False),
    "quantize": ("<f8", [nc.Quantize(digits=2, dtype="<f8")], nc.Zstd(1), False),
    "quantize-astype": ("<f8", [nc.Quantize(digits=1, dtype="<f8", astype="<f4")], None, False),
    "bitround-f4": ("<f4", [nc.BitRound(keepbits=4)], nc.Zstd(1), False),
    "bitround-f8": ("<f8", [nc.BitRound(keepbits=11)], None, False),
    "astype": ("<f8", [nc.AsType(encode_dtype="<f4", decode_dtype="<f8")], nc.Zlib(1), True),
    "packbits": ("|b1", [nc.PackBits()], nc.Zlib(1), True),
    "categorize": ("|O", [nc.Categorize(["alpha", "beta", "gamma", "δέλτα"], dtype="|O"),
                          ], None, False),
    "delta-then-shuffle": ("<i4", [nc.Delta(dtype="<i4"), nc.Shuffle(4)], nc.Zlib(1), True),
    "vlen-utf8": ("|O", [nc.VLenUTF8()], nc.Zstd(1), True),
    "vlen-bytes": ("|O", [nc.VLenBytes()], nc.Blosc("lz4", 5), True),
}


def sample(case: str) -> np.ndarray:
    dtype = CASES[case][0]
    x = ramp(dtype)
    if case == "vlen-bytes":
        x = np.array([s.encode() for s in x.reshape(-1)], dtype=object).reshape(SHAPE)
    return x


@pytest.mark.parametrize("case", list(CASES))
def test_numcodecs_encoded_decodes_identically(case) -> None:
    dtype, filters, compressor, _ = CASES[case]
    x = sample(case)
    data = nc_encode(x, filters, compressor)
    dt = np.dtype(dtype)
    plan = CodecPipeline.resolve(v2_specs(filters, compressor, dt), dt.newbyteorder("="),
                                 SHAPE, key="v2")
    ours = plan.decode_new(data, key="v2/0.0")
    theirs = nc_decode(data, filters, compressor, x)
    assert ours.dtype == theirs.dtype.newbyteorder("=") or ours.dtype.hasobject
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("case", list(CASES))
def test_we_encode_numcodecs_decodes(case) -> None:
    dtype, filters, compressor, exact = CASES[case]
    x = sample(case)
    dt = np.dtype(dtype)
    plan = CodecPipeline.resolve(v2_specs(filters, compressor, dt), dt.newbyteorder("="),
                                 SHAPE, key="v2")
    data = plan.encode(x.astype(dt.newbyteorder("=")) if not dt.hasobject else x)
    theirs = nc_decode(data, filters, compressor, x)
    np.testing.assert_array_equal(theirs, plan.decode_new(data))
    if exact:
        np.testing.assert_array_equal(theirs, x)
    if compressor is None or compressor.codec_id in ("lz4", "bz2", "crc32c", "crc32", "adler32",
                                                     "fletcher32", "jenkins_lookup3"):
        # deterministic codecs with identical parameters give identical bytes (DEFLATE, zstd
        # and blosc streams may legitimately differ between library versions and backends)
        assert data == nc_encode(x, filters, compressor)


@pytest.mark.parametrize("case", ["zlib", "zstd", "blosc-lz4-shuffle", "lz4", "bz2", "delta",
                                  "fixedscaleoffset", "quantize", "bitround-f4", "packbits",
                                  "astype", "crc32c", "crc32-end", "adler32", "fletcher32",
                                  "jenkins-lookup3-initval"])
def test_numcodecs_v3_names(case) -> None:
    """zarr-python writes numcodecs codecs in v3 as ``numcodecs.<id>`` with the config."""
    dtype, filters, compressor, _ = CASES[case]
    dt = np.dtype(dtype)
    def named(codec) -> CodecSpec:
        cfg = codec.get_config()
        return CodecSpec("numcodecs." + cfg.pop("id"), cfg)
    specs = [*map(named, filters), CodecSpec("bytes", {"endian": "little"}),
             *([named(compressor)] if compressor is not None else [])]
    x = sample(case)
    plan = CodecPipeline.resolve(specs, dt, SHAPE)
    np.testing.assert_array_equal(plan.decode_new(nc_encode(x, filters, compressor)),
                                  nc_decode(nc_encode(x, filters, compressor), filters,
                                            compressor, x))


# -- zarr-python written chunks ---------------------------------------------------------------
zarr = pytest.importorskip("zarr")


def _specs_v3(doc: dict) -> list[CodecSpec]:
    return [CodecSpec(c["name"], c.get("configuration", {})) for c in doc["codecs"]]


ZARR_V3 = {
    "bytes-gzip": dict(dtype="int32",
                       compressors=[{"name": "gzip", "configuration": {"level": 4}}]),
    "zstd-checksum": dict(dtype="float64", compressors=[
        {"name": "zstd", "configuration": {"level": 2, "checksum": True}}]),
    "blosc": dict(dtype="uint16", compressors=[
        {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle",
                                            "typesize": 2, "blocksize": 0}}]),
    "big-endian-crc32c": dict(dtype="float32", serializer={"name": "bytes", "configuration":
                                                           {"endian": "big"}},
                              compressors=[{"name": "crc32c"}]),
    "transpose": dict(dtype="int16", filters=[{"name": "transpose",
                                               "configuration": {"order": [1, 0]}}],
                      compressors=None),
    "strings": dict(dtype=str, compressors=[{"name": "zstd", "configuration": {"level": 0}}]),
}


@pytest.mark.parametrize("case", list(ZARR_V3))
def test_zarr_python_v3_chunks(case) -> None:
    import warnings
    kw = dict(ZARR_V3[case])
    store = zarr.storage.MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(store, shape=(6, 10), chunks=(3, 5), zarr_format=3, **kw)
        if kw["dtype"] is str:
            a[:] = np.array([f"s{i}é" * (i % 4) for i in range(60)]).reshape(6, 10)
        else:
            a[:] = (np.arange(60) * 3).reshape(6, 10).astype(kw["dtype"])
    doc = json.loads(store._store_dict["zarr.json"].to_bytes())
    raw = store._store_dict["c/1/1"].to_bytes()
    dtype = np.dtype(object) if kw["dtype"] is str else np.dtype(kw["dtype"])
    plan = CodecPipeline.resolve(_specs_v3(doc), dtype, (3, 5), key="zp")
    ours = plan.decode_new(raw)
    np.testing.assert_array_equal(ours.astype(object) if dtype.hasobject else ours,
                                  np.asarray(a[3:6, 5:10]).astype(dtype))
    # and zarr-python reads what we encode
    store._store_dict["c/1/1"] = type(store._store_dict["c/1/1"]).from_bytes(
        plan.encode(np.asarray(ours)[::-1].copy()))
    np.testing.assert_array_equal(np.asarray(a[3:6, 5:10]).astype(dtype), ours[::-1])


def test_zarr_python_numcodecs_v3_names() -> None:
    import warnings
    from zarr.codecs import numcodecs as zn
    store = zarr.storage.MemoryStore()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(store, shape=(8,), chunks=(8,), dtype="float64", zarr_format=3,
                              filters=[zn.Delta(dtype="<f8"), zn.BitRound(keepbits=10)],
                              compressors=[zn.Shuffle(elementsize=8), zn.Zlib(level=1)])
        a[:] = np.linspace(0, 1, 8)
    doc = json.loads(store._store_dict["zarr.json"].to_bytes())
    assert [c["name"] for c in doc["codecs"]][0] == "numcodecs.delta"
    plan = CodecPipeline.resolve(_specs_v3(doc), "f8", (8,))
    np.testing.assert_array_equal(plan.decode_new(store._store_dict["c/0"].to_bytes()), a[:])


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", ["<i4", ">f8", "|u1", "|O"])
def test_zarr_python_v2_chunks(order, dtype) -> None:
    import warnings
    store = zarr.storage.MemoryStore()
    kw = {"filters": [numcodecs.VLenUTF8()]} if dtype == "|O" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(store, shape=(4, 6), chunks=(4, 6), dtype=str if dtype == "|O"
                              else dtype, zarr_format=2, order=order,
                              compressors=numcodecs.Zstd(level=1), **kw)
        x = ramp(dtype) if dtype != "|O" else ramp("|O")
        a[:] = x
    meta = parse_array_v2(store._store_dict[".zarray"].to_bytes(), None, ".zarray")
    dt = np.dtype(object) if dtype == "|O" else np.dtype(dtype)
    specs = list(meta.codecs)
    plan = CodecPipeline.resolve(specs, dt.newbyteorder("=") if not dt.hasobject else dt,
                                 (4, 6), key="v2")
    raw = store._store_dict["0.0"].to_bytes()
    np.testing.assert_array_equal(plan.decode_new(raw), x)
    assert plan.encode(x.astype(plan.dtype) if not dt.hasobject else x) == raw or \
        np.array_equal(plan.decode_new(plan.encode(x if dt.hasobject else x.astype(plan.dtype))), x)


# -- zstd frames without a content size (streamed writers) -----------------------------------
def _zstd_stream(data: bytes) -> bytes:
    import shutil
    import subprocess
    exe = shutil.which("zstd")
    if exe is None:
        pytest.skip("the zstd command-line tool is not installed")
    out = subprocess.run([exe, "-q", "-c", "-"], input=data, capture_output=True, check=True).stdout
    from zarrx.codecs import _zstd
    assert _zstd.content_size(out) is None          # streamed: no content-size field
    return out


def test_zstd_frame_without_content_size() -> None:
    x = np.arange(5000, dtype="<f8")
    plan = CodecPipeline.resolve([CodecSpec("bytes", {"endian": "little"}),
                                  CodecSpec("zstd", {"level": 0, "checksum": False})],
                                 "f8", x.shape)
    np.testing.assert_array_equal(plan.decode_new(_zstd_stream(x.tobytes())), x)


def test_zstd_frame_without_content_size_variable() -> None:
    words = np.array(["w" * (i % 50) for i in range(3000)], dtype=object)
    plan = CodecPipeline.resolve([CodecSpec("vlen-utf8"),
                                  CodecSpec("zstd", {"level": 0, "checksum": False})],
                                 "O", words.shape)
    raw = numcodecs.VLenUTF8().encode(words)
    np.testing.assert_array_equal(plan.decode_new(_zstd_stream(bytes(raw))), words)


def test_v2_shuffle_default_elementsize() -> None:
    x = np.arange(10, dtype="<i8")
    zarray = {"zarr_format": 2, "shape": [10], "chunks": [10], "dtype": "<i8", "fill_value": 0,
              "order": "C", "filters": [{"id": "shuffle"}], "compressor": None}
    plan = CodecPipeline.resolve(parse_array_v2(zarray, None, ".zarray").codecs, "i8", x.shape)
    assert plan.encode(x) == bytes(numcodecs.Shuffle().encode(x))


# -- tensorstore written chunks ----------------------------------------------------------------
@pytest.mark.parametrize("codecs", [
    [{"name": "bytes", "configuration": {"endian": "little"}},
     {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
    [{"name": "transpose", "configuration": {"order": [1, 0]}},
     {"name": "bytes", "configuration": {"endian": "big"}},
     {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle",
                                         "typesize": 4, "blocksize": 0}},
     {"name": "crc32c"}],
    [{"name": "bytes", "configuration": {"endian": "little"}},
     {"name": "gzip", "configuration": {"level": 6}}],
], ids=["zstd", "transpose-be-blosc-crc32c", "gzip"])
def test_tensorstore_v3_chunks(codecs) -> None:
    ts = pytest.importorskip("tensorstore")
    x = (np.arange(40, dtype="<i4") * 97).reshape(5, 8)
    spec = {"driver": "zarr3", "kvstore": {"driver": "memory"},
            "metadata": {"shape": [5, 8], "chunk_grid": {"name": "regular", "configuration":
                                                         {"chunk_shape": [5, 8]}},
                         "data_type": "int32", "codecs": codecs}}
    arr = ts.open(spec, create=True).result()
    arr.write(x).result()
    raw = arr.kvstore.read("c/0/0").result().value
    plan = CodecPipeline.resolve([CodecSpec(c["name"], c.get("configuration", {}))
                                  for c in codecs], "i4", (5, 8))
    np.testing.assert_array_equal(plan.decode_new(bytes(raw)), x)
    arr.kvstore.write("c/0/0", plan.encode(x[::-1].copy())).result()
    np.testing.assert_array_equal(arr.read().result(), x[::-1])


@pytest.mark.parametrize("codec", [nc.CRC32(), nc.Adler32(location="end"), nc.Fletcher32(),
                                   nc.JenkinsLookup3(initval=7)],
                         ids=["crc32", "adler32", "fletcher32", "jenkins_lookup3"])
def test_checksums_of_every_length_match_numcodecs(codec) -> None:
    """Every tail length of the 16-bit (fletcher32) and 12-byte (lookup3) blocks, odd sizes
    (what a compressor before the checksum leaves) and sums that wrap."""
    spec = lower_numcodecs(codec.get_config(), Loc("t"))
    plan = CodecPipeline.resolve([CodecSpec("bytes"), spec], "u1", (1,))
    ours = plan.b2b[0].codec
    rng = np.random.default_rng(3)
    for n in [*range(1, 40), 359, 360, 361, 720, 721, 100_001]:
        for data in (rng.integers(0, 256, n, dtype=np.uint8), np.full(n, 255, np.uint8)):
            encoded = ours.encode(data)
            assert encoded == bytes(codec.encode(data)), n
            assert bytes(ours.decode(encoded, n, n)) == data.tobytes()
    corrupt = bytearray(ours.encode(bytes(range(10))))
    corrupt[6] ^= 1
    with pytest.raises(CodecError, match=rf"^{codec.codec_id} checksum mismatch: stored "
                                         rf"0x[0-9a-f]{{8}}, computed 0x[0-9a-f]{{8}}$"):
        ours.decode(bytes(corrupt), 10, 10)
