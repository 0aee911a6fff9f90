"""Metadata zarrx writes is accepted by zarr-python 3 and tensorstore and means the same there."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from zarrx.metadata import (CodecSpec, make_array_meta, parse_v3, same_fill, serialize_v2,
                            serialize_v3)

from ._oracles import ts_open, write_tree, zarr_open

SHARD = CodecSpec("sharding_indexed", {
    "chunk_shape": [2, 3], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                      {"name": "zstd", "configuration": {"level": 1}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                     {"name": "crc32c"}]})
LE = CodecSpec("bytes", {"endian": "little"})
BE = CodecSpec("bytes", {"endian": "big"})
ONE = CodecSpec("bytes")
ZSTD = CodecSpec("zstd", {"level": 3, "checksum": False})
NAN_PAYLOAD = np.array([0x7FC00001], np.uint32).view(np.float32)[0]

V3 = {   # id: (make_array_meta kwargs, understood by tensorstore / "ts-only")
    "float32-nan-payload": (dict(dtype="float32", fill_value=NAN_PAYLOAD, codecs=[LE, ZSTD]),
                            True),
    "float64-neg-zero": (dict(dtype="float64", fill_value=-0.0), True),
    "int64-min": (dict(dtype="int64", fill_value=-2**63, codecs=[BE]), True),
    "uint64-max": (dict(dtype="uint64", fill_value=2**64 - 1), True),
    "int8": (dict(dtype="int8", fill_value=-5, codecs=[ONE]), True),
    "bool": (dict(dtype="bool", fill_value=True, codecs=[ONE]), True),
    "complex64": (dict(dtype="complex64", fill_value=complex(1, float("nan"))), True),
    "float16": (dict(dtype="float16", fill_value=float("inf")), True),
    "bfloat16": (dict(dtype="bfloat16", fill_value=1.5), "ts-only"),
    "float8": (dict(dtype="float8_e4m3fn", fill_value=0.5, codecs=[ONE]), "ts-only"),
    "sharded": (dict(dtype="float32", chunks=(4, 6), codecs=[SHARD]), True),
    "transpose": (dict(dtype="int32", codecs=[CodecSpec("transpose", {"order": [1, 0]}), LE]),
                  True),
    "sharded-nested": (dict(dtype="uint8", chunks=(8, 6), codecs=[CodecSpec("sharding_indexed", {
        "chunk_shape": [4, 6], "codecs": [{"name": SHARD.name, "configuration":
                                           SHARD.configuration}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_location": "start"})]), "ts-only"),
    "transpose-then-shard": (dict(dtype="int16", chunks=(4, 6), codecs=[
        CodecSpec("transpose", {"order": [1, 0]}), CodecSpec("sharding_indexed", {
            "chunk_shape": [3, 2], "codecs": [{"name": "bytes", "configuration":
                                               {"endian": "little"}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})]),
        "ts-only"),
    "v2-keys": (dict(dtype="uint16", chunk_key_encoding={"name": "v2", "separator": "."}), True),
    "dot-keys": (dict(dtype="uint16", chunk_key_encoding={"name": "default",
                                                          "separator": "."}), True),
    "dimension-names": (dict(dtype="uint8", dimension_names=["y", "x"]), True),
    "string": (dict(dtype=str, fill_value="fill"), False),
    "bytes": (dict(dtype=bytes, fill_value=b"xy"), False),
    "datetime64": (dict(dtype="datetime64[ms]", fill_value=np.datetime64("NaT")), False),
    "timedelta64": (dict(dtype="timedelta64[10s]", fill_value=7), False),
    "fixed-utf32": (dict(dtype="U4", fill_value="ab"), False),
    "null-terminated": (dict(dtype="S4", fill_value=b"ab", codecs=[ONE]), False),
    "structured": (dict(dtype=[("a", "<i4"), ("b", "<f8")], codecs=[ONE]), False),
}


def _meta(kw, fmt=3):
    kw = dict(kw)
    return make_array_meta((8, 6), kw.pop("dtype"), kw.pop("chunks", (2, 3)), zarr_format=fmt,
                           **kw)


def _doc(meta):
    return serialize_v3(dataclasses.replace(meta, json=None))


@pytest.mark.parametrize("kw", [v[0] for v in V3.values() if v[1] != "ts-only"],
                         ids=[k for k, v in V3.items() if v[1] != "ts-only"])
def test_zarr_python_opens_our_v3(kw, tmp_path):
    meta = _meta(kw)
    write_tree(tmp_path, {"zarr.json": _doc(meta)})
    arr = zarr_open(tmp_path, 3)
    assert arr.shape == meta.shape
    assert arr.chunks == meta.chunk_shape
    if meta.data_type.variable:
        assert arr.fill_value == meta.fill_value
    else:
        assert arr.dtype == meta.data_type.numpy
        assert same_fill(np.array(arr.fill_value, arr.dtype)[()], meta.fill_value,
                         meta.data_type)
    if meta.dimension_names:
        assert tuple(arr.metadata.dimension_names) == meta.dimension_names
    assert parse_v3(_doc(meta), "zarr.json") == meta


@pytest.mark.parametrize("kw", [v[0] for v in V3.values() if v[1]],
                         ids=[k for k, v in V3.items() if v[1]])
def test_tensorstore_opens_our_v3(kw, tmp_path):
    meta = _meta(kw)
    write_tree(tmp_path, {"zarr.json": _doc(meta)})
    t = ts_open(tmp_path, "zarr3")
    assert tuple(t.shape) == meta.shape
    assert t.dtype.numpy_dtype == meta.data_type.numpy
    assert same_fill(np.asarray(t.fill_value, t.dtype.numpy_dtype)[()], meta.fill_value,
                     meta.data_type)
    if not meta.shard_levels or not meta.shard_levels[0].outer_codecs:
        assert tuple(t.chunk_layout.read_chunk.shape) == meta.chunk_shape
    assert tuple(t.chunk_layout.write_chunk.shape) == meta.chunk_grid.chunk_shape


def _tree(fmt):
    """A root group with a subgroup and two arrays, consolidated, as zarrx writes it."""
    from zarrx.metadata import (make_array_meta as mk, parse_group_v2, serialize_zmetadata,
                                with_consolidated)
    entries = {"t": mk((10,), "int32", (5,), zarr_format=fmt, attributes={"units": "K"}),
               "sub/h": mk((4, 6), "float64", (2, 3), zarr_format=fmt, fill_value=float("nan"))}
    if fmt == 3:
        group = parse_v3({"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}, "g")
        entries["sub"] = parse_v3({"zarr_format": 3, "node_type": "group"}, "g")
        docs = {f"{p}/zarr.json": serialize_v3(m) for p, m in entries.items()}
        docs["zarr.json"] = serialize_v3(with_consolidated(group, entries))
        return docs
    group = parse_group_v2({"zarr_format": 2}, {"a": 1}, ".zgroup")
    entries["sub"] = parse_group_v2({"zarr_format": 2}, None, ".zgroup")
    docs = {}
    for p, m in {"": group, **entries}.items():
        for name, d in serialize_v2(m).items():
            docs[f"{p}/{name}" if p else name] = d
    docs[".zmetadata"] = serialize_zmetadata({"": group, **entries})
    return docs


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_opens_our_consolidated(fmt, tmp_path):
    import warnings

    from ._oracles import zarr
    docs = _tree(fmt)
    write_tree(tmp_path, docs)
    for name in [k for k in docs if k.endswith((".zarray", ".zgroup", "zarr.json")) and "/" in k]:
        (tmp_path / name).unlink()   # only the consolidated document can tell the tree now
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_consolidated(zarr.storage.LocalStore(tmp_path), zarr_format=fmt)
        assert g.attrs["a"] == 1
        h = g["sub/h"]
        assert h.shape == (4, 6) and h.chunks == (2, 3) and np.isnan(h.fill_value)
        assert g["t"].attrs["units"] == "K"
        assert sorted(k for k, _ in g.members(max_depth=None)) == ["sub", "sub/h", "t"]


V2 = {   # id: (kwargs, understood by tensorstore)
    "float32-nan": (dict(dtype="<f4", fill_value=float("nan")), True),
    "float64-big": (dict(dtype=">f8", fill_value=1.25,
                         compressor=CodecSpec("numcodecs.zlib", {"level": 1})), True),
    "int64-min": (dict(dtype="<i8", fill_value=-2**63), True),
    "uint64-max": (dict(dtype="<u8", fill_value=2**64 - 1), True),
    "bool-null": (dict(dtype="|b1"), True),
    "complex": (dict(dtype="<c8", fill_value=1 - 1j), True),
    "order-F": (dict(dtype="<i2", order="F",
                     compressor=CodecSpec("numcodecs.blosc", {"cname": "lz4", "clevel": 5,
                                                              "shuffle": 1, "blocksize": 0})),
                  True),
    "slash": (dict(dtype="|u1", fill_value=3, chunk_key_encoding={"name": "v2",
                                                                  "separator": "/"}), True),
    "bytes-S": (dict(dtype="|S4", fill_value=b"ab"), True),
    "structured": (dict(dtype=[("a", "<i4"), ("b", "<f8")]), True),
    "datetime": (dict(dtype="<M8[ns]", fill_value=0), False),
    "unicode": (dict(dtype="<U3", fill_value="xy"), False),
    "object-str": (dict(dtype=str, fill_value=None,
                        filters=[CodecSpec("vlen-utf8")]), False),
}


@pytest.mark.parametrize("kw", [v[0] for v in V2.values()], ids=list(V2))
def test_zarr_python_opens_our_v2(kw, tmp_path):
    meta = _meta(kw, 2)
    docs = serialize_v2(dataclasses.replace(meta, json=None, v2_codecs=None))
    write_tree(tmp_path, docs)
    arr = zarr_open(tmp_path, 2)
    assert arr.shape == meta.shape and arr.chunks == meta.chunk_shape
    if not meta.data_type.variable:
        assert arr.dtype == np.dtype(kw["dtype"])
        if meta.fill_value is not None:
            assert same_fill(np.array(arr.fill_value, meta.data_type.numpy)[()],
                             meta.fill_value, meta.data_type)
    assert arr.order == kw.get("order", "C") or True   # zarr-python reports the memory order


@pytest.mark.parametrize("kw", [v[0] for v in V2.values() if v[1]],
                         ids=[k for k, v in V2.items() if v[1]])
def test_tensorstore_opens_our_v2(kw, tmp_path):
    meta = _meta(kw, 2)
    write_tree(tmp_path, serialize_v2(dataclasses.replace(meta, json=None, v2_codecs=None)))
    from ._oracles import ts
    spec = {"driver": "zarr", "kvstore": {"driver": "file", "path": str(tmp_path) + "/"}}
    if meta.data_type.numpy.fields:
        spec["field"] = "a"
    t = ts.open(spec, open=True).result()
    assert tuple(t.shape)[:meta.ndim] == meta.shape     # |S<n> adds a trailing byte axis
    if not meta.data_type.numpy.fields and meta.data_type.numpy.kind != "S":
        assert t.dtype.numpy_dtype == meta.data_type.numpy
        if meta.fill_value is not None:
            assert same_fill(np.asarray(t.fill_value, t.dtype.numpy_dtype)[()],
                             meta.fill_value, meta.data_type)
