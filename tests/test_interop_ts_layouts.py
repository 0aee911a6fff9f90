"""Layouts tensorstore creates that the other interop tests do not: shard index codecs other
than the default, nested shards with their indexes at either end, a ``transpose`` before
``sharding_indexed`` (a nested one too, at every level), six dimensions, blosc frames of every
kind, and the one-byte ml_dtypes types with every bit pattern.

tensorstore creates each array and writes a region; zarrx and tensorstore then write further
regions in turn. After each write both read the whole array, which must equal a numpy model
item for item (floats compared as their bytes, so NaN payloads and signed zeros count).
"""
from __future__ import annotations

import numpy as np
import pytest

import zarrx

ts = pytest.importorskip("tensorstore", reason="tensorstore writes and reads the arrays")
ml_dtypes = pytest.importorskip("ml_dtypes", reason="the one-byte types come from ml_dtypes")

LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}


def _shard(inner, codecs, location="end", index_codecs=None) -> dict:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs, "index_location": location,
        "index_codecs": index_codecs or [LE, CRC]}}


def _blosc(cname, clevel, shuffle, typesize, blocksize) -> dict:
    return {"name": "blosc", "configuration": {"cname": cname, "clevel": clevel,
                                               "shuffle": shuffle, "typesize": typesize,
                                               "blocksize": blocksize}}


def _t(order) -> dict:
    return {"name": "transpose", "configuration": {"order": order}}


# id: (shape, chunk grid, data type, fill value, codecs)
CASES = {
    "index-be-no-crc-start": ((13, 10), (8, 6), "float64", "NaN",
                              [_shard([4, 3], [LE], "start", [BE])]),
    "index-le-no-crc-end": ((13, 10), (8, 6), "int16", -7, [_shard([4, 3], [LE], "end", [LE])]),
    "index-be-crc-start-zstd": ((13, 10), (8, 6), "uint32", 5, [_shard(
        [2, 3], [BE, {"name": "zstd", "configuration": {"level": 3, "checksum": True}}],
        "start", [BE, CRC])]),
    "nested-start-end": ((19, 17), (12, 8), "uint32", 5,
                         [_shard([6, 4], [_shard([3, 2], [LE], "end")], "start")]),
    "nested-end-start-gzip": ((20, 18), (10, 12), "int8", -1, [_shard(
        [5, 6], [_shard([5, 3], [LE, {"name": "gzip", "configuration": {"level": 2}}],
                        "start")], "end")]),
    "transpose-before-shard": ((5, 6, 7), (4, 6, 4), "float64", -0.0,
                               [_t([2, 1, 0]), _shard([2, 3, 2], [LE], "start")]),
    "transpose-before-nested-shard": ((11, 9, 7), (8, 6, 4), "int16", -5, [_shard(
        [4, 3, 4], [_t([2, 0, 1]), _shard([2, 2, 3], [BE], "start")])]),
    "transposes-before-both-shards": ((11, 9, 7), (8, 6, 4), "float32", "NaN", [
        _t([1, 0, 2]), _shard([3, 4, 2], [_t([2, 1, 0]), _shard(
            [1, 2, 3], [_t([1, 2, 0]), LE, CRC], "end", [BE])], "start")]),
    "transposes-three-levels": ((17, 13), (12, 8), "uint8", 7, [
        _t([1, 0]), _shard([4, 6], [_t([1, 0]), _shard([3, 2], [_t([1, 0]), _shard(
            [2, 1], [LE], "start")], "end", [LE])])]),
    "shard-larger-than-array": ((5, 3), (8, 8), "bfloat16", "NaN",
                                [_shard([2, 2], [_t([1, 0]), BE])]),
    "6d-transpose-crc": ((3, 2, 4, 1, 3, 2), (2, 1, 3, 1, 2, 2), "complex128", ["NaN", -0.0],
                         [_t([5, 3, 1, 0, 2, 4]), BE, {"name": "gzip",
                                                       "configuration": {"level": 1}}, CRC]),
    "blosc-clevel-0": ((30, 17), (8, 5), "float32", 0, [LE, _blosc("lz4", 0, "shuffle", 4, 0)]),
    "blosc-blocksize-16-bit": ((30, 17), (8, 5), "int64", 3,
                               [BE, _blosc("zstd", 5, "bitshuffle", 8, 16)]),
    "blosc-typesize-mismatch": ((30, 17), (8, 5), "uint16", 9,
                                [LE, _blosc("lz4hc", 3, "shuffle", 3, 100)]),
    "blosc-zlib-noshuffle": ((30, 17), (8, 5), "complex64", [1.5, "NaN"],
                             [_t([1, 0]), LE, _blosc("zlib", 1, "noshuffle", 8, 0)]),
    "blosc-blosclz-bit": ((30, 17), (8, 5), "float16", "-Infinity",
                          [LE, _blosc("blosclz", 4, "bitshuffle", 2, 0)]),
    "float8-e5m2-shard-blosc": ((13, 10), (8, 6), "float8_e5m2", "0x7e", [_shard(
        [4, 3], [LE, _blosc("zstd", 1, "bitshuffle", 1, 0)])]),
    "float8-e4m3fn-gzip": ((13, 10), (4, 3), "float8_e4m3fn", 0.5,
                           [_t([1, 0]), LE, {"name": "gzip", "configuration": {"level": 6}}]),
    "int4-shard": ((13, 10), (8, 6), "int4", -3, [_shard([4, 3], [LE], "start")]),
    "float4-e2m1fn": ((13, 10), (4, 3), "float4_e2m1fn", -1.5, [LE, CRC]),
}


def _numpy_type(name: str) -> np.dtype:
    return np.dtype(getattr(ml_dtypes, name, name))


def _values(dt: np.dtype, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Every bit pattern of the type (the low nibble, sign-extended, for int4; the low four
    bits for float4)."""
    n = int(np.prod(shape))
    if dt.name == "int4":
        return rng.integers(-8, 8, n).astype(dt).reshape(shape)
    raw = rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8)
    if dt.name == "float4_e2m1fn":
        raw &= 0x0F
    return raw.view(dt).reshape(shape)


def _bits(a: np.ndarray) -> np.ndarray:
    if a.dtype.name == "int4":                  # tensorstore leaves the high nibble clear
        return a.astype(np.int8)
    return np.ascontiguousarray(a).view(np.uint8)


def _regions(shape: tuple[int, ...], rng: np.random.Generator, n: int) -> list[tuple]:
    out = [tuple(slice(0, s) for s in shape)] if n > 3 else []
    while len(out) < n:
        out.append(tuple(slice(int(a), int(a) + 1 + int(rng.integers(0, s - a)))
                         for a, s in ((int(rng.integers(0, s)), s) for s in shape)))
    return out


@pytest.mark.parametrize("first", ["tensorstore", "zarrx"])
@pytest.mark.parametrize("name", list(CASES))
def test_tensorstore_and_zarrx_write_in_turn_and_read_alike(tmp_path, name, first) -> None:
    shape, grid, dtype, fill, codecs = CASES[name]
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp_path)}}
    ts.open({**spec, "metadata": {
        "shape": list(shape), "data_type": dtype, "fill_value": fill, "codecs": codecs,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}}}},
        create=True).result()
    dt = _numpy_type(dtype)
    rng = np.random.default_rng(sorted(CASES).index(name))
    z = zarrx.open_array(str(tmp_path), mode="r+")
    model = np.full(shape, ts.open(spec).result().fill_value, dt)
    assert np.array_equal(_bits(np.full(shape, z.fill_value, dt)), _bits(model))
    writers = ["tensorstore", "zarrx"] if first == "tensorstore" else ["zarrx", "tensorstore"]
    for i, region in enumerate(_regions(shape, rng, 5)):
        value = _values(dt, model[region].shape, rng)
        if writers[i % 2] == "tensorstore":
            ts.open(spec).result()[region].write(value).result()
        else:
            zarrx.open_array(str(tmp_path), mode="r+")[region] = value
        model[region] = value
        theirs = ts.open(spec).result().read().result()
        ours = zarrx.open_array(str(tmp_path), mode="r")[...]
        assert np.array_equal(_bits(ours), _bits(model)), f"zarrx, after write {i}"
        assert np.array_equal(_bits(theirs), _bits(model)), f"tensorstore, after write {i}"
