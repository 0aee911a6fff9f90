"""Data types and fill values of every kind zarr-python 3 and tensorstore write, both ways:
what they write zarrx reads (values and fill value, chunks never written included), and what
zarrx writes they read."""
from __future__ import annotations

import base64
import json
import warnings
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.metadata import same_fill

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")
ml_dtypes = pytest.importorskip("ml_dtypes")

SHAPE, CHUNKS = (7, 5), (3, 2)
STRUCT = np.dtype([("a", "<i4"), ("b", "<f8")])
# id: (dtype, fill value, formats zarr-python writes it in)
ZP_CASES: dict[str, tuple[Any, Any, tuple[int, ...]]] = {
    "bool-true": ("bool", True, (2, 3)),
    "int8-min": ("int8", -128, (2, 3)),
    "uint64-max": ("uint64", 2**64 - 1, (2, 3)),
    "float16-inf": ("float16", float("inf"), (2, 3)),
    "float32-nan": ("float32", float("nan"), (2, 3)),
    "float64-minus-inf": ("float64", float("-inf"), (2, 3)),
    "complex64": ("complex64", 1 - 2j, (2, 3)),
    "complex128-nan-inf": ("complex128", complex(float("nan"), float("inf")), (2, 3)),
    "datetime64-ns-nat": ("datetime64[ns]", np.datetime64("NaT"), (2, 3)),
    "datetime64-10s": ("datetime64[10s]", np.datetime64(50, "10s"), (2, 3)),
    "timedelta64-ms": ("timedelta64[ms]", np.timedelta64(5, "ms"), (2, 3)),
    "timedelta64-generic": ("timedelta64", np.timedelta64(3), (2, 3)),   # '<m8', "generic"
    "fixed-bytes": ("S5", b"ab", (2, 3)),
    "fixed-unicode": ("U3", "xy", (2, 3)),
    "raw-bytes": ("V4", None, (2, 3)),
    "structured": (STRUCT, None, (2, 3)),
    "string": (str, "none", (2, 3)),
    "bytes": (bytes, b"", (2, 3)),
}


def sample(dtype: Any) -> np.ndarray:
    n = int(np.prod(SHAPE))
    if dtype is str:
        return np.array([f"é{i}" * (i % 3) for i in range(n)], dtype=object).reshape(SHAPE)
    if dtype is bytes:
        return np.array([bytes([i]) * (i % 3) for i in range(n)], dtype=object).reshape(SHAPE)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return (np.arange(n) % 2 == 0).reshape(SHAPE)
    if dt.kind in "Mm":
        return np.arange(n).astype("i8").view(dt).reshape(SHAPE)
    if dt.kind == "U":
        return np.array([str(i) for i in range(n)], dtype=dt).reshape(SHAPE)
    raw = np.random.default_rng(n).integers(0, 256, n * dt.itemsize, dtype=np.uint8)
    x = raw.view(dt).reshape(SHAPE).copy()
    if dt.kind in "fc":
        x[np.isnan(x)] = 0
    if dt.names:
        x["b"][np.isnan(x["b"])] = 0
    return x


def _write_part(a: Any, x: np.ndarray) -> None:
    a[:4, :3] = x[:4, :3]           # the other chunks are never written: they read as fill


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if want.dtype.hasobject or got.dtype.hasobject or got.dtype.kind == "T":
        assert list(got.astype(object).ravel()) == list(want.astype(object).ravel())
        return
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.tobytes() == want.tobytes() or np.array_equal(got, want, equal_nan=True)


def _fill(value: Any, dtype: Any) -> Any:
    return value if dtype in (str, bytes) or value is None else np.array(value, dtype)[()]


def _zp_cases():
    for name, (dtype, fill, fmts) in ZP_CASES.items():
        for fmt in fmts:
            yield pytest.param(dtype, fill, fmt, id=f"v{fmt}-{name}")


@pytest.mark.parametrize("dtype,fill,fmt", list(_zp_cases()))
def test_zarr_python_writes_we_read(tmp_path, dtype, fill, fmt) -> None:
    path = str(tmp_path / "zp.zarr")
    kw = {} if fill is None else {"fill_value": fill}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zdt = zarr.dtype.VariableLengthBytes() if dtype is bytes else dtype
        a = zarr.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=zdt, zarr_format=fmt,
                              **kw)
        _write_part(a, sample(dtype))
        want = a[...]
        want_fill = a.fill_value
    z = zarrx.open_array(path, mode="r")
    _same(z[...], want)
    if fill is not None:
        assert same_fill(z.fill_value, _fill(want_fill, dtype), z.metadata.data_type)


@pytest.mark.parametrize("dtype,fill,fmt", list(_zp_cases()))
def test_we_write_zarr_python_reads(tmp_path, dtype, fill, fmt) -> None:
    path = str(tmp_path / "zx.zarr")
    kw = {} if fill is None else {"fill_value": fill}
    z = zarrx.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dtype, zarr_format=fmt, **kw)
    _write_part(z, sample(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.open_array(path, mode="r")
        _same(a[...], z[...])
        if fill is not None:
            assert same_fill(_fill(a.fill_value, dtype), z.fill_value, z.metadata.data_type)


def test_v2_variable_length_bytes_with_a_ragged_last_chunk(tmp_path) -> None:
    """Zarr v2 ``bytes`` arrays fill with b"" (a str fill broke the last chunk's encoding)."""
    path = str(tmp_path / "b.zarr")
    z = zarrx.create_array(path, shape=(5,), chunks=(2,), dtype=bytes, zarr_format=2)
    values = np.array([b"a", b"bc", b"", b"\xff", b"z"], dtype=object)
    z[:] = values
    z2 = zarrx.open_array(path, mode="r")
    assert z2.fill_value == b"" and list(z2[:]) == list(values)
    assert z2.metadata.data_type.name == "bytes"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert list(zarr.open_array(path, mode="r")[:]) == list(values)


def test_v3_structured_both_ways(tmp_path) -> None:
    """zarr-python 3 writes a structured type with a bare ``bytes`` codec (no endian)."""
    x = sample(STRUCT)
    p1, p2 = str(tmp_path / "zp.zarr"), str(tmp_path / "zx.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = zarr.create_array(p1, shape=SHAPE, chunks=CHUNKS, dtype=STRUCT, zarr_format=3)
        a[...] = x
    assert zarrx.open_array(p1, mode="r").metadata.chunk_codecs[0].configuration == {}
    _same(zarrx.open_array(p1, mode="r")[...], x)
    z = zarrx.create_array(p2, shape=SHAPE, chunks=CHUNKS, dtype=STRUCT, zarr_format=3)
    z[...] = x
    assert z.metadata.codecs[0].configuration == {"endian": "little"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(zarr.open_array(p2, mode="r")[...], x)


# -- tensorstore ------------------------------------------------------------------------------
TS_CASES = {   # id: (data type name, fill value JSON, formats)
    "bool": ("bool", True, (2, 3)),
    "int4": ("int4", -3, (2, 3)),
    "uint64": ("uint64", 2**64 - 1, (2, 3)),
    "float32-nan": ("float32", "NaN", (3,)),
    "float64-inf": ("float64", "-Infinity", (3,)),
    "complex64": ("complex64", [1.0, "NaN"], (3,)),
    "bfloat16-inf": ("bfloat16", "Infinity", (3,)),
    "float8-e4m3fn": ("float8_e4m3fn", 0.5, (2, 3)),
    "float8-e5m2": ("float8_e5m2", -2.0, (2, 3)),
    "int2": ("int2", -2, (2, 3)),
    "float8-e3m4": ("float8_e3m4", -1.5, (2, 3)),
    "float8-e4m3fnuz": ("float8_e4m3fnuz", 0.25, (2, 3)),
    "float8-e4m3b11fnuz": ("float8_e4m3b11fnuz", -3.0, (2, 3)),
    "float8-e5m2fnuz": ("float8_e5m2fnuz", "NaN", (3,)),
    "float4-e2m1fn": ("float4_e2m1fn", -1.5, (3,)),
    # a number as an e8m0 fill value: see test_float8_e8m0fnu_fill_value_json
    "float8-e8m0fnu-nan": ("float8_e8m0fnu", "NaN", (3,)),
}


def _ts_spec(path: str, fmt: int) -> dict:
    return {"driver": "zarr3" if fmt == 3 else "zarr", "kvstore": {"driver": "file",
                                                                   "path": path}}


def _ts_cases():
    for name, (dtype, fill, fmts) in TS_CASES.items():
        for fmt in fmts:
            yield pytest.param(dtype, fill, fmt, id=f"v{fmt}-{name}")


def _np(dtype: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, dtype)) if hasattr(ml_dtypes, dtype) else np.dtype(dtype)


@pytest.mark.parametrize("dtype,fill,fmt", list(_ts_cases()))
def test_tensorstore_writes_we_read(tmp_path, dtype, fill, fmt) -> None:
    path = str(tmp_path / "ts.zarr")
    spec = _ts_spec(path, fmt)
    if fmt == 3:
        spec["metadata"] = {"chunk_grid": {"name": "regular", "configuration":
                                           {"chunk_shape": list(CHUNKS)}}, "fill_value": fill,
                            "data_type": dtype}
    else:
        spec["metadata"] = {"chunks": list(CHUNKS), "fill_value": fill,
                            "dtype": dtype if dtype.startswith(("bfloat", "float8", "int"))
                            and hasattr(ml_dtypes, dtype) else _np(dtype).str}
    t = ts.open(spec, create=True, shape=SHAPE).result()
    x = (np.arange(35) % 5).reshape(SHAPE).astype(_np(dtype))
    t[:4, :3] = x[:4, :3]
    want = t.read().result()
    z = zarrx.open_array(path, mode="r")
    _same(z[...], want)
    # bit for bit, except for the unused high bits of int2/int4 (tensorstore leaves them clear)
    assert same_fill(z.fill_value, want[-1, -1], z.metadata.data_type) or \
        (dtype in ("int2", "int4") and z.fill_value == want[-1, -1])


@pytest.mark.parametrize("dtype,fill,fmt", list(_ts_cases()))
def test_we_write_tensorstore_reads(tmp_path, dtype, fill, fmt) -> None:
    path = str(tmp_path / "zx.zarr")
    nd = _np(dtype)
    fv = fill if not isinstance(fill, (str, list)) else \
        {"NaN": np.nan, "-Infinity": -np.inf, "Infinity": np.inf}.get(fill, None) \
        if isinstance(fill, str) else complex(1, np.nan)
    z = zarrx.create_array(path, shape=SHAPE, chunks=CHUNKS, dtype=dtype if fmt == 3 else nd,
                           zarr_format=fmt, fill_value=fv)
    x = (np.arange(35) % 5).reshape(SHAPE).astype(nd)
    z[:4, :3] = x[:4, :3]
    got = ts.open(_ts_spec(path, fmt)).result().read().result()
    _same(got, z[...])


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "sharded"])
@pytest.mark.parametrize("dtype", ["bfloat16", "int16", "float32", "complex64", "uint64"])
def test_big_endian_both_ways_with_tensorstore(tmp_path, dtype, sharded) -> None:
    """The bytes codec's ``endian: big`` stores every multi-byte type big-endian, ml_dtypes'
    bfloat16 included (numpy files it under kind ``V`` and cannot mark its byte order)."""
    nd = _np(dtype)
    x = (np.arange(35) % 7 - 3).reshape(SHAPE).astype(nd)
    big = {"name": "bytes", "configuration": {"endian": "big"}}
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(CHUNKS), "codecs": [big],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}] \
        if sharded else [big]
    grid = [6, 4] if sharded else list(CHUNKS)
    a = str(tmp_path / "ts.zarr")
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": a}, "create": True,
                 "metadata": {"shape": list(SHAPE), "data_type": dtype, "codecs": codecs,
                              "chunk_grid": {"name": "regular",
                                             "configuration": {"chunk_shape": grid}}}}).result()
    t[...] = x
    _same(zarrx.open_array(a, mode="r")[...], x)
    b = str(tmp_path / "zx.zarr")
    kw = {"shards": tuple(grid)} if sharded else {}
    z = zarrx.create_array(b, shape=SHAPE, chunks=CHUNKS, dtype=dtype, serializer=big,
                           compressors=None, **kw)
    z[...] = x
    _same(ts.open(_ts_spec(b, 3)).result().read().result(), x)
    if not sharded:                                  # the stored bytes themselves
        stored = (tmp_path / "zx.zarr" / "c" / "0" / "0").read_bytes()
        want = (x[:3, :2].view(f"u{nd.itemsize}").byteswap() if dtype == "bfloat16"
                else x[:3, :2].astype(nd.newbyteorder(">")))
        assert stored == want.tobytes()


@pytest.mark.parametrize("fill,stored,bits", [(2.0, "0x80", 0x80), (0.25, "0x7d", 0x7D),
                                              ("0x7f", "0x7f", 0x7F), ("NaN", "NaN", 0xFF)])
def test_float8_e8m0fnu_fill_value_json(tmp_path, fill, stored, bits) -> None:
    """A float8_e8m0fnu fill value is written as its hex bit pattern, which its data type
    specification allows as for every float type and tensorstore reads bit for bit. zarrx
    wrote the number (2.0), which tensorstore 0.1.86 reads as another value (2**-63, bits
    0x40), so chunks never written read otherwise there."""
    path = tmp_path / "e8m0.zarr"
    z = zarrx.create_array(str(path), shape=(4,), chunks=(2,), dtype="float8_e8m0fnu",
                           fill_value=fill, compressors=None)
    x = np.array([0.5, 1.0, 4.0], _np("float8_e8m0fnu"))
    z[1:] = x
    with open(path / "zarr.json") as f:
        assert json.load(f)["fill_value"] == stored
    got = zarrx.open_array(str(path), mode="r")
    assert got.fill_value.view(np.uint8) == bits
    assert got[...].view(np.uint8).tolist() == [bits, 0x7E, 0x7F, 0x81]
    t = ts.open(_ts_spec(str(path), 3)).result()
    assert t.read().result().view(np.uint8).tolist() == [bits, 0x7E, 0x7F, 0x81]


@pytest.mark.parametrize("number,bits", [(2.0, 0x80), (0.25, 0x7D), (2.0**64, 0xBF)])
def test_float8_e8m0fnu_fill_value_numbers_are_read_as_the_spec_has_them(tmp_path, number,
                                                                       bits) -> None:
    """A number is read as the value it is (2**(bits - 127)), as the data type's
    specification has it. tensorstore 0.1.86 writes 1.0 as 2**64 and reads 2.0 as 2**-63: the
    deviation docs/SPEC.md lists."""
    path = tmp_path / "e8m0.zarr"
    zarrx.create_array(str(path), shape=(2,), chunks=(1,), dtype="float8_e8m0fnu")
    doc = json.loads((path / "zarr.json").read_text())
    doc["fill_value"] = number
    (path / "zarr.json").write_text(json.dumps(doc))
    assert zarrx.open_array(str(path), mode="r")[...].view(np.uint8).tolist() == [bits] * 2
    t = ts.open(_ts_spec(str(path), 3)).result()
    assert t.read().result().view(np.uint8).tolist() == [bits - 64] * 2
    one = tmp_path / "one.zarr"
    ts.open(_ts_spec(str(one), 3), create=True, dtype=ts.float8_e8m0fnu, shape=[1],
            fill_value=np.array(1.0, _np("float8_e8m0fnu"))).result()
    assert json.loads((one / "zarr.json").read_text())["fill_value"] == 2.0**64


@pytest.mark.parametrize("value", [1.5, -6.0, 0.0])
def test_v2_float4_e2m1fn_fill_value_is_base64_as_tensorstore_writes_it(tmp_path,
                                                                        value) -> None:
    """Zarr v2 has no spelling for the ML types; tensorstore, whose names they are there,
    writes a float4_e2m1fn fill value as the base64 of its byte and refuses a number. zarrx
    refused the arrays tensorstore writes, and wrote a number tensorstore refused."""
    nd = _np("float4_e2m1fn")
    item = np.array(value, nd)
    theirs = tmp_path / "ts.zarr"
    t = ts.open({**_ts_spec(str(theirs), 2), "metadata": {"chunks": [2]}}, create=True,
                dtype=ts.float4_e2m1fn, shape=[3], fill_value=item).result()
    t[:1] = np.array([-0.5], nd)
    stored = json.loads((theirs / ".zarray").read_text())["fill_value"]
    assert stored == base64.b64encode(item.tobytes()).decode()
    got = zarrx.open_array(str(theirs), mode="r")
    assert got.fill_value.tobytes() == item.tobytes()
    assert got[...].tobytes() == np.array([-0.5, value, value], nd).tobytes()
    ours = tmp_path / "zx.zarr"
    z = zarrx.create_array(str(ours), shape=(3,), chunks=(2,), dtype=nd, zarr_format=2,
                           fill_value=item[()])
    z[:1] = np.array([-0.5], nd)
    assert json.loads((ours / ".zarray").read_text())["fill_value"] == stored
    back = ts.open(_ts_spec(str(ours), 2)).result().read().result()
    assert back.tobytes() == np.array([-0.5, value, value], nd).tobytes()
    doc = json.loads((ours / ".zarray").read_text())
    doc["fill_value"] = float(value)                # a number, as zarrx wrote it before
    (ours / ".zarray").write_text(json.dumps(doc))
    assert zarrx.open_array(str(ours), mode="r").fill_value.tobytes() == item.tobytes()
