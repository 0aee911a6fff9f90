"""What zarr-python 3 and tensorstore write, zarrx reads identically; what zarrx writes, they
read identically (NaN-aware, bit-exact)."""
from __future__ import annotations

import numpy as np
import pytest
import tensorstore as ts
import zarr
from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec, Crc32cCodec

import zarrx
from zarrx.codecs import Blosc, Crc32c, Gzip, Zstd
from sample_data import sample

LAYOUTS = {
    "regular": ((12, 9), (4, 3)),
    "ragged": ((13, 10), (4, 3)),
    "1d": ((17,), (5,)),
    "3d": ((5, 6, 7), (2, 3, 4)),
    "0d": ((), ()),
    "zero-size": ((0, 4), (2, 2)),
}
DTYPES = ["bool", "int8", "uint16", "int32", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]
ZP_CHAINS = {
    "raw": dict(compressors=None),
    "zstd": dict(compressors=ZstdCodec(level=3)),
    "gzip": dict(compressors=GzipCodec(level=2)),
    "blosc": dict(compressors=BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")),
    "crc32c": dict(compressors=[ZstdCodec(level=1), Crc32cCodec()]),
    "raw-crc32c": dict(compressors=[Crc32cCodec()]),
}
ZX_CHAINS = {
    "raw": None,
    "zstd": [Zstd(level=3)],
    "gzip": [Gzip(level=2)],
    "blosc": [Blosc(cname="lz4", clevel=5, shuffle="shuffle")],
    "crc32c": [Zstd(level=1), Crc32c()],
    "raw-crc32c": [Crc32c()],
}


def data(shape, dtype, seed=1):
    return sample(shape, dtype, seed, with_nan=True)


def same(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    assert a.tobytes() == b.tobytes() or np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("chain", list(ZP_CHAINS))
@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_zarr_python_writes_we_read(tmp_path, fmt, chain, layout):
    shape, chunks = LAYOUTS[layout]
    if fmt == 2 and chain in ("crc32c", "raw-crc32c"):
        pytest.skip("v2 has one compressor")
    p = str(tmp_path / "a.zarr")
    kw = dict(ZP_CHAINS[chain])
    if fmt == 2:
        import numcodecs
        comp = {"raw": None, "zstd": numcodecs.Zstd(level=3), "gzip": numcodecs.GZip(level=2),
                "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)}[chain]
        kw = dict(compressors=comp)
    a = data(shape, "float32")
    if shape:
        kw["chunks"] = chunks
    z = zarr.create_array(p, shape=shape, dtype="f4", zarr_format=fmt, fill_value=0, **kw)
    z[...] = a
    same(zarrx.open_array(p, mode="r")[...], a)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("chain", list(ZX_CHAINS))
@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_we_write_zarr_python_reads(tmp_path, fmt, chain, layout):
    shape, chunks = LAYOUTS[layout]
    if fmt == 2 and chain in ("crc32c", "raw-crc32c"):
        pytest.skip("v2 has one compressor")
    p = str(tmp_path / "a.zarr")
    a = data(shape, "float64")
    z = zarrx.create_array(p, shape=shape, chunks=chunks, dtype="f8", zarr_format=fmt,
                           fill_value=0, compressors=ZX_CHAINS[chain])
    z[...] = a
    same(zarr.open_array(p, mode="r")[...], a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_dtypes_both_ways_zarr_python(tmp_path, fmt, dtype):
    a = data((7, 5), dtype)
    p1, p2 = str(tmp_path / "zp.zarr"), str(tmp_path / "zx.zarr")
    z = zarr.create_array(p1, shape=a.shape, chunks=(3, 2), dtype=dtype, zarr_format=fmt)
    z[...] = a
    same(zarrx.open_array(p1, mode="r")[...], a)
    w = zarrx.create_array(p2, shape=a.shape, chunks=(3, 2), dtype=dtype, zarr_format=fmt)
    w[...] = a
    same(zarr.open_array(p2, mode="r")[...], a)


def _ts_spec(path, fmt):
    return {"driver": "zarr3" if fmt == 3 else "zarr", "kvstore": {"driver": "file", "path": path}}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_tensorstore_both_ways(tmp_path, fmt, dtype):
    a = data((9, 6), dtype)
    p1, p2 = str(tmp_path / "ts.zarr"), str(tmp_path / "zx.zarr")
    spec = _ts_spec(p1, fmt)
    if fmt == 3:
        spec["metadata"] = {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
                            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                       {"name": "zstd", "configuration": {"level": 1}}]}
    else:
        spec["metadata"] = {"chunks": [4, 4], "compressor": {"id": "zstd", "level": 1}}
    t = ts.open(spec, create=True, dtype=np.dtype(dtype).name if dtype != "bool" else "bool",
                shape=a.shape).result()
    t[...] = a
    same(zarrx.open_array(p1, mode="r")[...], a)
    w = zarrx.create_array(p2, shape=a.shape, chunks=(4, 4), dtype=dtype, zarr_format=fmt)
    w[...] = a
    same(ts.open(_ts_spec(p2, fmt)).result().read().result(), a)


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_v2_fortran_order_and_big_endian(tmp_path, fmt):
    p = str(tmp_path / "f.zarr")
    a = data((6, 7), ">i4")
    if fmt == 2:
        z = zarr.create_array(p, shape=a.shape, chunks=(4, 3), dtype=">i4", zarr_format=2,
                              order="F")
    else:
        from zarr.codecs import BytesCodec, TransposeCodec
        z = zarr.create_array(p, shape=a.shape, chunks=(4, 3), dtype="i4", zarr_format=3,
                              filters=[TransposeCodec(order=(1, 0))],
                              serializer=BytesCodec(endian="big"))
    z[...] = a
    got = zarrx.open_array(p, mode="r")[...]
    np.testing.assert_array_equal(got, a)


def test_v2_structured_both_ways(tmp_path):
    dt = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "S3")])
    a = np.zeros(7, dt)
    a["a"] = np.arange(7)
    a["b"] = np.linspace(0, 1, 7)
    a["c"] = [b"x", b"yy", b"zzz", b"", b"a", b"b", b"c"]
    p1, p2 = str(tmp_path / "zx.zarr"), str(tmp_path / "zp.zarr")
    z = zarrx.create_array(p1, shape=(7,), dtype=dt, chunks=(3,), zarr_format=2)
    z[...] = a
    np.testing.assert_array_equal(zarr.open_array(p1, mode="r")[...], a)
    zp = zarr.create_array(p2, shape=(7,), dtype=dt, chunks=(3,), zarr_format=2)
    zp[...] = a
    np.testing.assert_array_equal(zarrx.open_array(p2, mode="r")[...], a)


@pytest.mark.parametrize("dtype,filters", [
    (">i4", [{"id": "delta", "dtype": ">i4", "astype": "<i8"}]),
    ("|u1", [{"id": "delta", "dtype": "|u1", "astype": "<i2"}]),
    ("<f8", [{"id": "fixedscaleoffset", "offset": 1, "scale": 10, "dtype": "<f8",
              "astype": ">i4"}]),
], ids=["delta-big-to-little", "delta-u1-to-i2", "fixedscaleoffset-to-big"])
def test_v2_filter_output_byte_order_both_ways(tmp_path, dtype, filters):
    """numcodecs stores a filter's output in the byte order of the type it declares."""
    import numcodecs
    p = str(tmp_path / "f.zarr")
    a = data((6, 7), dtype)
    a = np.round(a, 1) if a.dtype.kind == "f" else a
    z = zarr.create_array(p, shape=a.shape, chunks=(4, 3), dtype=dtype, zarr_format=2,
                          filters=[numcodecs.get_codec(f) for f in filters], compressors=None)
    z[...] = a
    ours = zarrx.open_array(p, mode="r+")
    same(ours[...], z[...].astype(ours.dtype))
    ours[1:4, 2:6] = a[1:4, 2:6][::-1]
    same(zarr.open_array(p, mode="r")[...].astype(ours.dtype), ours[...])


@pytest.mark.filterwarnings("ignore::UserWarning")      # zarr-python: numcodecs in v3
@pytest.mark.parametrize("fmt", [2, 3])
def test_numcodecs_blosc_with_a_negative_blocksize_reads_and_writes(tmp_path, fmt):
    """numcodecs takes any blocksize (a non-positive one is automatic) and zarr-python writes
    it as given: zarrx reads such an array, writes it, and keeps the document's value."""
    import numcodecs
    from zarr.codecs.numcodecs import Blosc as NumcodecsBlosc
    path = str(tmp_path / "a")
    compressor = numcodecs.Blosc(blocksize=-5) if fmt == 2 else NumcodecsBlosc(blocksize=-5)
    z = zarr.create_array(path, shape=(100,), chunks=(10,), dtype="i4", zarr_format=fmt,
                          compressors=compressor)
    z[:] = np.arange(100, dtype="i4")
    a = zarrx.open_array(path, mode="r+")
    assert a[:].tolist() == list(range(100))
    a[:] = np.arange(100, dtype="i4")[::-1]
    assert zarr.open_array(path)[:].tolist() == list(range(99, -1, -1))
    doc = a.metadata.json["compressor"] if fmt == 2 else \
        a.metadata.json["codecs"][1]["configuration"]
    assert doc["blocksize"] == -5
