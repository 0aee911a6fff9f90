"""Every codec numcodecs registers and every codec zarr-python 3 writes, read by zarrx.

Each codec writes a small array (ragged edge chunks) at ``a`` in a group; zarrx must read the
values zarr-python reads, or refuse the array with a ZarrError naming the codec and the array.
The lists of codecs come from numcodecs' registry and zarr-python's codec modules: a codec
either gains a case here or the test listing them fails.
"""
from __future__ import annotations

import importlib.util
import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import zarrx

numcodecs = pytest.importorskip("numcodecs")
zarr = pytest.importorskip("zarr")
import zarr.codecs as zc  # noqa: E402
import zarr.dtype  # noqa: E402
import zarr.codecs.numcodecs as zn  # noqa: E402
from numcodecs.registry import codec_registry  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

nc = numcodecs
SHAPE, CHUNKS = (5, 7), (3, 4)
# numcodecs codecs registered only when their Python package is installed: id -> package
OPTIONAL = {"zfpy": "zfpy", "pcodec": "pcodec"}


def _values(kind: str) -> np.ndarray:
    n = SHAPE[0] * SHAPE[1]
    if kind == "str":
        return np.array([f"s{i}" * (i % 3) for i in range(n)], dtype=object).reshape(SHAPE)
    if kind == "bytes":
        return np.array([b"b%d" % i * (1 + i % 3) for i in range(n)], dtype=object).reshape(SHAPE)
    if kind == "arrays":
        out = np.empty(SHAPE, dtype=object)
        for i in range(n):
            out.flat[i] = np.arange(i % 4, dtype="<i4")
        return out
    dt = np.dtype(kind)
    if dt.kind == "b":
        return (np.arange(n) % 3 == 0).reshape(SHAPE)
    if dt.kind == "U":
        return np.array(["ab", "cd", "ef", "ab", "cd"] * 7, dtype=dt).reshape(SHAPE)
    return (np.arange(n).reshape(SHAPE) * 3 % 17 + (0.25 if dt.kind == "f" else 0)).astype(dt)


ZDTYPE = {"str": str, "bytes": zarr.dtype.VariableLengthBytes()}


@dataclass(frozen=True)
class Case:
    kind: str                          # _values' kind: a numpy dtype, "str", "bytes", "arrays"
    codecs: Callable[[], dict] | None  # create_array arguments (None: zarr-python cannot write)
    raw: Any = None                    # v2 only: the numcodecs codec a .zarray is written with
    #                                    (its name in numcodecs, or its configuration alone)
    refused: str | None = None         # zarrx refuses it: the codec id its message names
    needs: str | None = None           # the Python package the codec needs to encode


V2: dict[str, Case] = {
    "adler32": Case("i4", lambda: dict(compressors=nc.Adler32())),
    "astype": Case("f8", lambda: dict(filters=[nc.AsType("f4", "f8")])),
    "base64": Case("i4", lambda: dict(compressors=nc.Base64())),     # run by numcodecs
    "bitround": Case("f4", lambda: dict(filters=[nc.BitRound(6)])),
    "blosc": Case("i4", lambda: dict(compressors=nc.Blosc("zstd", 3, nc.Blosc.BITSHUFFLE))),
    "bz2": Case("i4", lambda: dict(compressors=nc.BZ2(5))),
    "categorize": Case("<U2", lambda: dict(filters=[nc.Categorize(["ab", "cd", "ef"], "<U2",
                                                                  astype="u1")])),
    "crc32": Case("i4", lambda: dict(compressors=nc.CRC32())),
    "crc32c": Case("i4", lambda: dict(compressors=nc.CRC32C())),
    "delta": Case("i2", lambda: dict(filters=[nc.Delta("<i2", astype="<i4")])),
    "fixedscaleoffset": Case("f8", lambda: dict(filters=[nc.FixedScaleOffset(1, 10, "<f8",
                                                                             "<i2")])),
    "fletcher32": Case("i4", lambda: dict(compressors=nc.Fletcher32())),
    "gzip": Case("i4", lambda: dict(compressors=nc.GZip(5))),
    "jenkins_lookup3": Case("i4", lambda: dict(compressors=nc.JenkinsLookup3())),
    # zarr-python 3.1.6 has no data type for these object codecs: written with numcodecs
    "json2": Case("str", None, raw=nc.JSON()),
    "lz4": Case("i4", lambda: dict(compressors=nc.LZ4())),
    "lzma": Case("i4", lambda: dict(compressors=nc.LZMA())),
    "msgpack2": Case("str", None, raw="MsgPack", needs="msgpack"),
    "packbits": Case("bool", lambda: dict(filters=[nc.PackBits()])),
    "pickle": Case("str", None, raw=nc.Pickle(), refused="pickle"),
    "quantize": Case("f8", lambda: dict(filters=[nc.Quantize(2, "<f8")])),
    "shuffle": Case("i4", lambda: dict(filters=[nc.Shuffle(4)])),
    "vlen-array": Case("arrays", None, raw=nc.VLenArray("<i4")),
    "vlen-bytes": Case("bytes", lambda: dict(filters=[nc.VLenBytes()])),
    "vlen-utf8": Case("str", lambda: dict(filters=[nc.VLenUTF8()])),
    "zlib": Case("i4", lambda: dict(compressors=nc.Zlib(1))),
    "zstd": Case("i4", lambda: dict(compressors=nc.Zstd(3, checksum=True))),
    # registered only with their packages; run by numcodecs (array->bytes)
    "zfpy": Case("f8", lambda: dict(compressors=nc.ZFPY(mode=4, tolerance=-1, rate=-1,
                                                        precision=-1)), needs="zfpy"),
    "pcodec": Case("f8", lambda: dict(compressors=nc.PCodec(level=8)), needs="pcodec"),
}

# zarr-python's v3 codecs: zarr.codecs (core) and zarr.codecs.numcodecs (numcodecs.<id>)
V3: dict[str, Case] = {
    **{name: Case("i4", lambda name=name: dict(compressors=[getattr(zn, name)()]))
       for name in ("BZ2", "CRC32", "CRC32C", "LZ4", "LZMA", "Adler32", "Blosc", "Fletcher32",
                    "GZip", "JenkinsLookup3", "Zlib", "Zstd")},
    "Shuffle": Case("i4", lambda: dict(compressors=[zn.Shuffle(), zn.Zstd(level=1)])),
    "AsType": Case("f8", lambda: dict(filters=[zn.AsType(encode_dtype="f4",
                                                         decode_dtype="f8")])),
    "BitRound": Case("f4", lambda: dict(filters=[zn.BitRound(keepbits=6)])),
    "Delta": Case("i4", lambda: dict(filters=[zn.Delta(dtype="<i4", astype="<i8")])),
    "FixedScaleOffset": Case("f8", lambda: dict(filters=[zn.FixedScaleOffset(
        offset=1, scale=10, dtype="<f8", astype="<i2")])),
    "PackBits": Case("bool", lambda: dict(filters=[zn.PackBits()])),
    "Quantize": Case("f8", lambda: dict(filters=[zn.Quantize(digits=2, dtype="<f8")])),
    "ZFPY": Case("f8", lambda: dict(serializer=zn.ZFPY(mode=4, tolerance=-1, rate=-1,
                                                       precision=-1)), needs="zfpy"),
    "PCodec": Case("f8", lambda: dict(serializer=zn.PCodec()), needs="pcodec"),
    "BloscCodec": Case("u2", lambda: dict(compressors=[zc.BloscCodec(cname="lz4",
                                                                     shuffle="bitshuffle")])),
    "BytesCodec": Case(">i4", lambda: dict(serializer=zc.BytesCodec(endian="big"))),
    "Crc32cCodec": Case("i4", lambda: dict(compressors=[zc.Crc32cCodec()])),
    "GzipCodec": Case("i4", lambda: dict(compressors=[zc.GzipCodec(level=3)])),
    "ShardingCodec": Case("i4", lambda: dict(shards=(6, 8), compressors=[zc.ZstdCodec()])),
    "TransposeCodec": Case("i2", lambda: dict(filters=[zc.TransposeCodec(order=(1, 0))])),
    "VLenBytesCodec": Case("bytes", lambda: dict(serializer=zc.VLenBytesCodec())),
    "VLenUTF8Codec": Case("str", lambda: dict(serializer=zc.VLenUTF8Codec())),
    "ZstdCodec": Case("i4", lambda: dict(compressors=[zc.ZstdCodec(level=2, checksum=True)])),
}
# zarr.codecs names that are not codecs (enumerations) or are another name of a listed codec
NOT_CODECS = {"BloscCname", "BloscShuffle", "Endian", "ShardingCodecIndexLocation"}
ALIASES = {"Blosc": "BloscCodec", "Crc32c": "Crc32cCodec", "Gzip": "GzipCodec",
           "Zstd": "ZstdCodec", "Bytes": "BytesCodec", "Transpose": "TransposeCodec",
           "Sharding": "ShardingCodec", "VLenBytes": "VLenBytesCodec",
           "VLenUTF8": "VLenUTF8Codec"}


def test_every_registered_codec_has_a_case() -> None:
    # numcodecs' own codecs: other packages register theirs when imported (kerchunk's
    # FITSAscii, grib, ...), which zarrx runs through numcodecs as bytes->bytes codecs
    own = {i for i, c in codec_registry.items() if c.__module__.startswith("numcodecs.")}
    assert sorted(own - set(V2)) == []
    assert set(OPTIONAL) <= set(V2)
    numcodecs_v3 = {n for n in dir(zn) if isinstance(getattr(zn, n), type)
                    and issubclass(getattr(zn, n), zn._NumcodecsCodec)
                    and not n.startswith("_")}
    assert sorted(numcodecs_v3 - set(V3)) == []
    core = {n for n in dir(zc) if n[:1].isupper() and n not in NOT_CODECS
            and getattr(zc, n) not in {getattr(zn, m, None) for m in numcodecs_v3}}
    assert sorted({ALIASES.get(n, n) for n in core} - set(V3)) == []


def _has(case: Case) -> bool:
    return case.needs is None or importlib.util.find_spec(case.needs) is not None


def _skip_without(case: Case) -> None:
    """Skip a case whose values cannot be written without a missing package, unless zarrx
    refuses it (then its metadata alone is written)."""
    if not _has(case) and case.refused is None:
        pytest.skip(f"numcodecs' codec needs {case.needs}, which is not installed")


def _raw_codec(case: Case) -> Any:
    return getattr(nc, case.raw)() if isinstance(case.raw, str) else case.raw


def _write_raw_v2(path: Path, case: Case, values: np.ndarray) -> None:
    """The v2 array numcodecs' filter writes, as zarr-python 2 did: .zarray and chunks."""
    codec = _raw_codec(case)
    config = codec if isinstance(codec, dict) else codec.get_config()
    path.mkdir(parents=True)
    (path.parent / ".zgroup").write_text('{"zarr_format": 2}')
    dtype = "|O" if values.dtype.hasobject else values.dtype.str
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": list(SHAPE), "chunks": list(CHUNKS), "dtype": dtype,
        "fill_value": None if values.dtype.hasobject else 0, "order": "C",
        "filters": [config] if values.dtype.hasobject else None,
        "compressor": None if values.dtype.hasobject else config}))
    if isinstance(codec, dict):
        return
    for i in range(2):
        for j in range(2):
            chunk = np.zeros(CHUNKS, dtype=values.dtype)
            sub = values[i * 3:(i + 1) * 3, j * 4:(j + 1) * 4]
            chunk[:sub.shape[0], :sub.shape[1]] = sub
            (path / f"{i}.{j}").write_bytes(bytes(codec.encode(chunk)))


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    if want.dtype.hasobject:
        return got.shape == want.shape and all(
            np.array_equal(a, b) if isinstance(b, np.ndarray) else a == b
            for a, b in zip(got.flat, want.flat))
    return got.dtype == want.dtype and np.array_equal(got, want)


def _check(root: Path, case: Case, want: np.ndarray) -> None:
    if case.refused is not None:
        with pytest.raises(zarrx.ZarrError) as info:
            zarrx.open_group(str(root), mode="r")["a"][...]
        message = str(info.value)
        assert repr(case.refused) in message and ("a/" in message or "'a'" in message), message
        return
    got = zarrx.open_group(str(root), mode="r")["a"][...]
    assert _same(got, want)


@pytest.mark.parametrize("name", list(V2))
def test_zarr_python_v2_codecs(tmp_path, name) -> None:
    case = V2[name]
    _skip_without(case)
    values = _values(case.kind)
    root = tmp_path / "g.zarr"
    if case.codecs is None:
        _write_raw_v2(root / "a", case, values)
        want = values
    else:
        kwargs = {"compressors": None, **case.codecs()}
        group = zarr.open_group(str(root), mode="w", zarr_format=2)
        z = group.create_array("a", shape=SHAPE, chunks=CHUNKS, fill_value=None,
                               dtype=ZDTYPE.get(case.kind, case.kind), **kwargs)
        z[...] = values
        want = zarr.open_group(str(root), mode="r")["a"][...]
    _check(root, case, want)


@pytest.mark.parametrize("name", list(V3))
def test_zarr_python_v3_codecs(tmp_path, name) -> None:
    case = V3[name]
    _skip_without(case)
    values = _values(case.kind)
    root = tmp_path / "g.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = {"compressors": None, **case.codecs()}
        group = zarr.open_group(str(root), mode="w", zarr_format=3)
        z = group.create_array("a", shape=SHAPE, chunks=CHUNKS,
                               dtype=ZDTYPE.get(case.kind, case.kind), **kwargs)
    if _has(case):
        z[...] = values
    want = zarr.open_group(str(root), mode="r")["a"][...] if case.refused is None else None
    _check(root, case, want)
