"""Every codec and codec chain round-trips over every data type it accepts."""
from __future__ import annotations

import numpy as np
import pytest

from zarrx.codecs.plan import CodecPipeline
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_table import lower_numcodecs
from zarrx.metadata.model import CodecSpec as S

LE = S("bytes", {"endian": "little"})
BE = S("bytes", {"endian": "big"})

DTYPES = {
    "bool": "?", "int8": "i1", "int16": "i2", "int32": "i4", "int64": "i8", "uint8": "u1",
    "uint16": "u2", "uint32": "u4", "uint64": "u8", "float16": "f2", "float32": "f4",
    "float64": "f8", "complex64": "c8", "complex128": "c16", "datetime64ns": "M8[ns]",
    "timedelta64s": "m8[s]", "bytes5": "S5", "unicode3": "U3", "void4": "V4",
    "struct": [("a", "i2"), ("b", "f8")],
}


def blosc(cname: str, shuffle: str, typesize: int = 4) -> S:
    return S("blosc", {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": typesize,
                       "blocksize": 0})


# chains of array->bytes + bytes->bytes codecs applicable to every fixed-size data type
CHAINS = {
    "bytes-le": [LE],
    "bytes-be": [BE],
    "transpose-bytes": [S("transpose", {"order": [1, 0, 2]}), BE],
    "transpose-identity": [S("transpose", {"order": [0, 1, 2]}), LE],
    "gzip": [LE, S("gzip", {"level": 5})],
    "zstd": [LE, S("zstd", {"level": 0, "checksum": False})],
    "zstd-checksum-be": [BE, S("zstd", {"level": 3, "checksum": True})],
    "blosc-lz4-shuffle": [LE, blosc("lz4", "shuffle")],
    "blosc-zstd-bitshuffle": [LE, blosc("zstd", "bitshuffle", 2)],
    "blosc-zlib-noshuffle": [BE, blosc("zlib", "noshuffle", 1)],
    "crc32c": [LE, S("crc32c")],
    "crc32c-zstd": [LE, S("crc32c"), S("zstd", {"level": 1, "checksum": False})],
    "transpose-zstd-crc32c": [S("transpose", {"order": [2, 0, 1]}), BE,
                              S("zstd", {"level": 1, "checksum": False}), S("crc32c")],
    "numcodecs.zlib": [LE, S("numcodecs.zlib", {"level": 1})],
    "numcodecs.lz4": [LE, S("numcodecs.lz4", {"acceleration": 1})],
    "numcodecs.bz2": [LE, S("numcodecs.bz2", {"level": 1})],
    "numcodecs.lzma": [LE, S("numcodecs.lzma", {"format": 1, "check": -1, "preset": None,
                                                "filters": None})],
    "numcodecs.shuffle": [LE, S("numcodecs.shuffle", {"elementsize": None})],
    "numcodecs.shuffle-gzip": [BE, S("numcodecs.shuffle", {}), S("gzip", {"level": 1})],
    "numcodecs.blosc-auto": [LE, S("numcodecs.blosc", {"cname": "lz4", "clevel": 5,
                                                       "shuffle": -1, "blocksize": 0})],
    "numcodecs.shuffle-zlib": [LE, S("numcodecs.shuffle", {"elementsize": 4}),
                               S("numcodecs.zlib", {"level": 1})],
}
SHAPE = (3, 4, 5)


def sample(dtype: np.dtype, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    n = int(np.prod(shape))
    raw = np.random.default_rng(n).integers(0, 256, n * dtype.itemsize, dtype=np.uint8)
    a = raw.view(dtype).reshape(shape).copy()
    if dtype.kind == "f" or dtype.kind == "c":
        a[np.isnan(a)] = 0        # NaN payloads compare unequal; keep the check simple
    if dtype.kind == "b":
        a = (raw[:n] % 2 == 1).reshape(shape)
    if dtype.kind == "U":
        a = np.array(["", "a", "µb", "xyz"] * n, dtype=dtype)[:n].reshape(shape)
    if dtype.names:
        a["b"][np.isnan(a["b"])] = 0
    return a


def check(plan: CodecPipeline, x: np.ndarray) -> None:
    enc = plan.encode(x, key="a/c/0")
    assert isinstance(enc, bytes)
    if plan.max_encoded_size is not None:
        assert len(enc) <= plan.max_encoded_size
    out = np.full(x.shape, 0, dtype=plan.dtype) if not plan.dtype.hasobject \
        else np.empty(x.shape, dtype=object)
    plan.decode(enc, out, key="a/c/0")
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(plan.decode_new(memoryview(enc)), x)


@pytest.mark.parametrize("chain", list(CHAINS.values()), ids=list(CHAINS))
@pytest.mark.parametrize("dtype", list(DTYPES.values()), ids=list(DTYPES))
def test_chain_round_trip(dtype, chain) -> None:
    dt = np.dtype(dtype)
    plan = CodecPipeline.resolve(chain, dt, SHAPE, key="a")
    check(plan, sample(dt))


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("chain", ["bytes-be", "transpose-zstd-crc32c", "blosc-lz4-shuffle"])
def test_any_input_layout(chain, layout) -> None:
    plan = CodecPipeline.resolve(CHAINS[chain], "i4", SHAPE)
    x = sample(np.dtype("i4"))
    src = {"C": x, "F": np.asfortranarray(x),
           "strided": np.repeat(x, 2, axis=2)[:, :, ::2]}[layout]
    assert plan.decode_new(plan.encode(src)).tolist() == x.tolist()


@pytest.mark.parametrize("shape", [(), (0,), (1,), (7,), (2, 0, 3), (1, 1, 1, 1)],
                         ids=["0d", "empty", "one", "seven", "zero-axis", "4d-ones"])
@pytest.mark.parametrize("chain", ["bytes-le", "gzip", "zstd", "blosc-lz4-shuffle", "crc32c",
                                   "numcodecs.lz4", "numcodecs.bz2"])
def test_odd_shapes(chain, shape) -> None:
    plan = CodecPipeline.resolve(CHAINS[chain], "f8", shape)
    check(plan, np.arange(int(np.prod(shape)), dtype="f8").reshape(shape))


STRINGS = np.array([["", "a", "héllo", "日本語"], ["x" * 300, "\0nul", "b", "end"]], dtype=object)
BLOBS = np.array([[b"", b"\x00\xff", b"abc", b"x" * 70000], [b"1", b"22", b"333", b""]],
                 dtype=object)
VLEN_CHAINS = {
    "plain": [],
    "zstd": [S("zstd", {"level": 0, "checksum": False})],
    "gzip-crc32c": [S("gzip", {"level": 1}), S("crc32c")],
    "blosc": [blosc("lz4", "shuffle", 1)],
    "lz4": [S("numcodecs.lz4", {"acceleration": 1})],
    "bz2": [S("numcodecs.bz2", {"level": 1})],
}


@pytest.mark.parametrize("compressors", list(VLEN_CHAINS.values()), ids=list(VLEN_CHAINS))
@pytest.mark.parametrize("codec", ["vlen-utf8", "vlen-bytes"])
@pytest.mark.parametrize("transpose", [False, True], ids=["c-order", "transposed"])
def test_vlen_round_trip(codec, compressors, transpose) -> None:
    x = STRINGS if codec == "vlen-utf8" else BLOBS
    pre = [S("transpose", {"order": [1, 0]})] if transpose else []
    plan = CodecPipeline.resolve([*pre, S(codec), *compressors], "O", x.shape)
    assert plan.max_encoded_size is None
    check(plan, x)


# -- array->array filters over the data types each accepts ----------------------------------
FLOATS = ["f2", "f4", "f8"]
NUMERIC = ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", *FLOATS]


def _filter_cases():
    for dt in NUMERIC:
        yield "delta", dt, {"dtype": np.dtype(dt).str}, True
        yield "astype-f8", dt, {"encode_dtype": "<f8", "decode_dtype": np.dtype(dt).str}, \
            dt not in ("i8", "u8")
    for dt in ("i2", "i4", "u2", "f4", "f8"):
        yield "fixedscaleoffset", dt, {"offset": 3, "scale": 1, "dtype": np.dtype(dt).str,
                                       "astype": np.dtype(dt).str}, True
    for dt in FLOATS:
        yield "quantize", dt, {"digits": 3, "dtype": np.dtype(dt).str}, False
        yield "bitround", dt, {"keepbits": 6}, False


FILTER_CASES = list(_filter_cases())


@pytest.mark.parametrize("name,dtype,config,exact", FILTER_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in FILTER_CASES])
@pytest.mark.parametrize("form", ["numcodecs", "v3"])
def test_filter_round_trip(name, dtype, config, exact, form) -> None:
    codec_id = name.split("-")[0]
    spec = lower_numcodecs({"id": codec_id, **config}, Loc("t")) if form == "numcodecs" \
        else S(f"numcodecs.{codec_id}", config)
    x = (np.arange(60) % 50).astype(dtype).reshape(SHAPE)
    plan = CodecPipeline.resolve([spec, LE, S("zstd", {"level": 1, "checksum": False})],
                                 dtype, SHAPE)
    y = plan.decode_new(plan.encode(x))
    assert y.dtype == np.dtype(dtype) and y.shape == SHAPE
    if exact:
        np.testing.assert_array_equal(y, x)
    else:
        np.testing.assert_allclose(y, x, rtol=2e-2)


@pytest.mark.parametrize("shape", [(1,), (8,), (3, 5), (2, 2, 2)], ids=str)
def test_packbits_round_trip(shape) -> None:
    x = (np.arange(int(np.prod(shape))) % 3 == 0).reshape(shape)
    for spec in (lower_numcodecs({"id": "packbits"}, Loc("t")), S("numcodecs.packbits")):
        plan = CodecPipeline.resolve([spec, S("bytes"), S("gzip", {"level": 1})], "?", shape)
        check(plan, x)


@pytest.mark.parametrize("dtype", ["|O", "<U5"])
def test_categorize_round_trip(dtype) -> None:
    labels = ["ab", "cde", "f"]
    x = np.array(["ab", "f", "ab", "cde", "f", "cde"], dtype=dtype).reshape(2, 3)
    spec = S("numcodecs.categorize", {"labels": labels, "dtype": dtype, "astype": "|u1"})
    if dtype == "|O":
        plan = CodecPipeline.resolve([spec, S("bytes")], "O", (2, 3))
    else:
        plan = CodecPipeline.resolve([spec, S("bytes")], dtype, (2, 3))
    check(plan, x)
