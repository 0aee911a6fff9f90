"""numcodecs codecs zarrx does not build in (pcodec, zfpy) are read and written through
numcodecs: what zarr-python writes reads the same in zarrx, and what zarrx writes is what
zarr-python writes (metadata and chunk bytes)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
znc = pytest.importorskip("zarr.codecs.numcodecs")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _need(cid: str) -> None:
    from numcodecs.registry import codec_registry
    if cid not in codec_registry:
        pytest.skip(f"numcodecs has no {cid!r} codec here: install the {cid} package "
                    f"(it is in zarrx's test extras)")


# (codec id, dtype, shape, chunks)
CASES = [
    ("pcodec", "float64", (10, 7), (4, 4)),
    ("pcodec", "int32", (13,), (5,)),
    ("pcodec", "uint16", (6, 5, 3), (4, 2, 2)),
    ("pcodec", "float32", (9, 9), (9, 2)),
    ("pcodec", "int64", (3, 11), (2, 4)),
    ("zfpy", "float64", (10, 7), (4, 4)),
    ("zfpy", "float32", (5, 6, 7), (2, 4, 3)),
    ("zfpy", "int32", (17,), (8,)),
    ("zfpy", "int64", (4, 4), (3, 3)),
]
IDS = [f"{c}-{d}-{'x'.join(map(str, s))}" for c, d, s, _ in CASES]


def _values(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    n = int(np.prod(shape))
    rng = np.random.default_rng(n)
    if np.dtype(dtype).kind == "f":
        return (np.cumsum(rng.normal(size=n)) * 10).astype(dtype).reshape(shape)
    return rng.integers(0, 1000, size=n).astype(dtype).reshape(shape)


def _v3_codec(cid: str) -> object:
    # zfpy's mode 3: fixed precision, lossless at full precision for integers and floats alike
    return znc.PCodec(level=5) if cid == "pcodec" else znc.ZFPY(mode=3, precision=64)


def _v2_codec(cid: str) -> object:
    return numcodecs.PCodec(level=5) if cid == "pcodec" else \
        numcodecs.ZFPY(mode=3, precision=64)


def _stored(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("zarr.json", ".zarray", ".zattrs")}


def _zarr_python(path: Path, fmt: int, cid: str, dtype: str, shape, chunks, data, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        codec = {"serializer": _v3_codec(cid)} if fmt == 3 else \
            {"compressors": _v2_codec(cid)}
        a = zarr.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype,
                              zarr_format=fmt, fill_value=0, **codec, **kw)
        a[...] = data
    return a


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("cid,dtype,shape,chunks", CASES, ids=IDS)
def test_zarr_python_writes_zarrx_reads(tmp_path, fmt, cid, dtype, shape, chunks):
    _need(cid)
    data = _values(dtype, shape)
    a = _zarr_python(tmp_path / "a", fmt, cid, dtype, shape, chunks, data)
    z = zarrx.open_array(str(tmp_path / "a"), mode="r")
    got = z[...]
    want = a[...]
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, data, rtol=0.01, atol=3)     # zfp may round
    # a partial read across edge chunks
    sel = tuple(slice(1, None, 2) for _ in shape)
    np.testing.assert_array_equal(z[sel], want[sel])


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("cid,dtype,shape,chunks", CASES, ids=IDS)
def test_zarrx_writes_what_zarr_python_writes(tmp_path, fmt, cid, dtype, shape, chunks):
    _need(cid)
    data = _values(dtype, shape)
    _zarr_python(tmp_path / "zp", fmt, cid, dtype, shape, chunks, data)
    codec = {"serializer": _v3_codec(cid)} if fmt == 3 else {"compressors": _v2_codec(cid)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarrx.create_array(str(tmp_path / "zx"), shape=shape, chunks=chunks, dtype=dtype,
                               zarr_format=fmt, fill_value=0, **codec)
    z[...] = data
    back = zarr.open_array(str(tmp_path / "zx"), mode="r")
    np.testing.assert_array_equal(back[...], zarr.open_array(str(tmp_path / "zp"))[...])
    doc = "zarr.json" if fmt == 3 else ".zarray"
    ours = json.loads((tmp_path / "zx" / doc).read_text())
    theirs = json.loads((tmp_path / "zp" / doc).read_text())
    assert ours == theirs
    assert _stored(tmp_path / "zx") == _stored(tmp_path / "zp")


def test_numcodecs_object_as_v3_serializer(tmp_path):
    """A bare numcodecs object (zarr-python takes only its v3 wrapper there) is written with
    numcodecs' whole configuration, which zarr-python reads."""
    _need("pcodec")
    data = _values("int32", (20,))
    z = zarrx.create_array(str(tmp_path / "a"), shape=(20,), chunks=(8,), dtype="int32",
                           serializer=numcodecs.PCodec(level=2), compressors=None)
    z[:] = data
    doc = json.loads((tmp_path / "a" / "zarr.json").read_text())
    conf = numcodecs.PCodec(level=2).get_config()
    del conf["id"]
    assert doc["codecs"] == [{"name": "numcodecs.pcodec", "configuration": conf}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a"))[:], data)


def _inner(shard: bytes, n: int) -> list[bytes]:
    """The inner chunks of a shard (index at the end, with its crc32c), in index order."""
    index = np.frombuffer(shard[-4 - 16 * n:-4], "<u8").reshape(n, 2)
    return [shard[o:o + k] for o, k in index.tolist()]


@pytest.mark.parametrize("writer", ["zarr-python", "zarrx"])
def test_sharded_with_pcodec_inside(tmp_path, writer):
    _need("pcodec")
    data = _values("float32", (21, 10))
    kw = dict(shape=data.shape, chunks=(4, 5), shards=(8, 10), dtype="float32",
              fill_value=0, serializer=znc.PCodec(level=4), compressors=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "zp"), **kw)[...] = data
        if writer == "zarrx":
            z = zarrx.create_array(str(tmp_path / "zx"), **kw)
            z[...] = data
            assert json.loads((tmp_path / "zx" / "zarr.json").read_text()) == \
                json.loads((tmp_path / "zp" / "zarr.json").read_text())
            ours, theirs = _stored(tmp_path / "zx"), _stored(tmp_path / "zp")
            assert ours.keys() == theirs.keys()
            for key in ours:        # zarr-python lays inner chunks out in any order
                assert _inner(ours[key], 4) == _inner(theirs[key], 4)
            np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "zx"))[...], data)
    z = zarrx.open_array(str(tmp_path / ("zx" if writer == "zarrx" else "zp")), mode="r")
    np.testing.assert_array_equal(z[...], data)
    np.testing.assert_array_equal(z[3:17, 2:9], data[3:17, 2:9])


def test_v2_filters_before_pcodec(tmp_path):
    """A v2 array filter (delta) hands its array to the pcodec compressor."""
    _need("pcodec")
    data = _values("int64", (30,))
    kw = dict(shape=(30,), chunks=(7,), dtype="int64", zarr_format=2, fill_value=0,
              filters=[numcodecs.Delta(dtype="<i8")], compressors=numcodecs.PCodec())
    zarr.create_array(str(tmp_path / "zp"), **kw)[...] = data
    z = zarrx.create_array(str(tmp_path / "zx"), **kw)
    z[...] = data
    assert json.loads((tmp_path / "zx" / ".zarray").read_text()) == \
        json.loads((tmp_path / "zp" / ".zarray").read_text())
    assert _stored(tmp_path / "zx") == _stored(tmp_path / "zp")
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "zp"))[...], data)


@pytest.mark.parametrize("layout", ["order-F", "pcodec-filter"])
def test_v2_pcodec_layouts_both_ways(tmp_path, layout):
    """pcodec with ``order: "F"``, and pcodec as a filter followed by a bytes filter and a
    compressor (zarr-python 2's way of chaining them): zarrx writes what zarr-python writes
    and each reads the other's."""
    _need("pcodec")
    data = _values("int32", (10, 7))
    kw = dict(shape=(10, 7), chunks=(4, 4), dtype="int32", zarr_format=2, fill_value=0)
    if layout == "order-F":
        kw.update(order="F", compressors=numcodecs.PCodec())
    else:
        kw.update(filters=[numcodecs.Delta("<i4"), numcodecs.PCodec(), numcodecs.CRC32()],
                  compressors=numcodecs.Zstd(1))
    zarr.create_array(str(tmp_path / "zp"), **kw)[...] = data
    z = zarrx.create_array(str(tmp_path / "zx"), **kw)
    z[...] = data
    assert json.loads((tmp_path / "zx" / ".zarray").read_text()) == \
        json.loads((tmp_path / "zp" / ".zarray").read_text())
    assert _stored(tmp_path / "zx") == _stored(tmp_path / "zp")
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "zp"))[...], data)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "zx"))[...], data)


def test_zarrx_codecs_numcodecs_has_every_zarr_python_name(tmp_path):
    import zarrx.codecs.numcodecs as xnc
    names = {n for n in znc.__all__ if not n.startswith("_")}
    assert names <= set(xnc.__all__)
    _need("zfpy")
    kw = dict(shape=(6, 5), chunks=(4, 4), dtype="float64", fill_value=0)
    data = _values("float64", (6, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "zp"), serializer=znc.ZFPY(mode=4, tolerance=0.01),
                          **kw)[...] = data
    z = zarrx.create_array(str(tmp_path / "zx"), serializer=xnc.ZFPY(mode=4, tolerance=0.01),
                           **kw)
    z[...] = data
    assert json.loads((tmp_path / "zx" / "zarr.json").read_text()) == \
        json.loads((tmp_path / "zp" / "zarr.json").read_text())
    assert _stored(tmp_path / "zx") == _stored(tmp_path / "zp")
