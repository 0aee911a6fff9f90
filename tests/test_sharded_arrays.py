"""Sharded arrays end to end: request counts through the Array, each shard written once per
write, nested sharding, and interop with zarr-python 3 and tensorstore."""
from __future__ import annotations

import json

import numpy as np
import pytest
import tensorstore as ts
import zarr
from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec, ZstdCodec

import zarrx
from zarrx.store import CountingStore, MemoryStore


def field(shape, dtype="f4", seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=shape) * 100).astype(dtype)


def test_each_shard_written_once_for_unaligned_region():
    inner = MemoryStore()
    z = zarrx.create_array(inner, shape=(60, 60), dtype="i4", chunks=(5, 5), shards=(20, 20),
                           fill_value=0)
    z[...] = 1
    store = CountingStore(inner)
    z = zarrx.open_array(store, mode="r+")
    store.reset()
    z[3:47, 7:58] = 2            # unaligned, spans 3x3 shards
    shard_sets = {k: n for k, n in store.sets_by_key.items() if k.startswith("c/")}
    assert len(shard_sets) == 9 and set(shard_sets.values()) == {1}
    a = np.ones((60, 60), "i4")
    a[3:47, 7:58] = 2
    np.testing.assert_array_equal(z[...], a)



def test_a_write_over_all_of_an_edge_shard_inside_the_array_replaces_it_unread():
    # shards of 4 x 4 over 6 x 6: the edge shards' inner chunks at 6:8 lie wholly outside
    inner = MemoryStore()
    z = zarrx.create_array(inner, shape=(6, 6), dtype="i4", chunks=(2, 2), shards=(4, 4),
                           fill_value=0, compressors=None)
    z[...] = 1
    blob = bytearray(inner.get("c/1/1"))
    blob[-1] ^= 0xFF                         # the index checksum of an edge shard
    inner.set("c/1/1", bytes(blob))
    store = CountingStore(inner)
    z = zarrx.open_array(store, mode="r+")
    store.reset()
    z[...] = 2                               # nothing of any shard is kept: none is read
    assert dict(store.counts) == {"set": 4}
    np.testing.assert_array_equal(z[...], np.full((6, 6), 2, "i4"))
    index = np.frombuffer(bytes(inner.get("c/1/1"))[-68:-4], "<u8").reshape(4, 2)
    assert (index[1:] == 2**64 - 1).all() and (index[0] != 2**64 - 1).all()
    store.reset()
    z[4:6, 0:3] = 3                          # part of an edge shard: merged as before
    assert store.counts["set_if"] == 1 and store.counts["get_versioned"] == 1

def test_read_one_inner_chunk_costs_two_requests_cold_one_warm():
    inner = MemoryStore()
    z = zarrx.create_array(inner, shape=(64, 64), dtype="f4", chunks=(8, 8), shards=(32, 32))
    z[...] = field((64, 64))
    store = CountingStore(inner)
    z = zarrx.open_array(store, mode="r")
    store.reset()
    z[0:8, 0:8]
    assert store.counts["get"] == 2
    store.reset()
    z[8:16, 0:8]
    assert store.counts["get"] == 1


def test_all_fill_shards_are_deleted():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(40, 40), dtype="u2", chunks=(10, 10), shards=(20, 20),
                           fill_value=0)
    z[...] = 3
    assert (z.nshards_initialized, z.nchunks_initialized) == (4, 16)   # 4 inner chunks a shard
    z[0:20, 0:20] = 0
    assert (z.nshards_initialized, z.nchunks_initialized) == (3, 12)
    assert store.get("c/0/0") is None


def test_shards_and_chunks_properties():
    z = zarrx.create_array(MemoryStore(), shape=(100, 100), dtype="f8", chunks=(10, 10),
                           shards=(50, 50))
    assert z.chunks == (10, 10) and z.shards == (50, 50)
    z2 = zarrx.create_array(MemoryStore(), shape=(100, 100), dtype="f8", chunks=(10, 10))
    assert z2.chunks == (10, 10) and z2.shards is None


def _nested_codecs(index_location_outer="end", index_location_inner="end"):
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [10, 10],
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [5, 5],
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "zstd", "configuration": {"level": 1, "checksum": False}}],
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}],
            "index_location": index_location_inner}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": index_location_outer}}]


def _write_doc(store, shape, dtype, grid, codecs, fill=0):
    doc = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(grid)}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": fill, "codecs": codecs, "attributes": {}}
    store.set("zarr.json", json.dumps(doc).encode())


_LE = {"name": "bytes", "configuration": {"endian": "little"}}


def _sharding(chunk, codecs):
    """A sharding codec of inner chunks of ``chunk`` encoded by ``codecs``, its index at the end
    with a checksum."""
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": chunk, "codecs": codecs,
        "index_codecs": [_LE, {"name": "crc32c"}], "index_location": "end"}}


@pytest.mark.parametrize("locs", [("end", "end"), ("start", "end"), ("end", "start"), ("start", "start")],
                         ids=lambda x: "-".join(x))
def test_nested_sharding_round_trip_and_tensorstore_reads(tmp_path, locs):
    p = str(tmp_path / "n.zarr")
    from zarrx.store import LocalStore
    st = LocalStore(p)
    _write_doc(st, (40, 30), "float32", (20, 30), _nested_codecs(*locs))
    z = zarrx.open_array(p, mode="r+")
    a = field((40, 30))
    a[0:5, 0:5] = 0           # an all-fill inner chunk: missing in its shard
    z[...] = a
    np.testing.assert_array_equal(z[...], a)
    np.testing.assert_array_equal(z[12:27, 3:29], a[12:27, 3:29])
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": p}}).result()
    np.testing.assert_array_equal(t.read().result(), a)


@pytest.mark.parametrize("index_location", ["end", "start"])
@pytest.mark.parametrize("crc", [True, False], ids=["crc", "nocrc"])
@pytest.mark.parametrize("compressed", [True, False], ids=["zstd", "raw"])
def test_zarr_python_sharded_both_ways(tmp_path, index_location, crc, compressed):
    index_codecs = [BytesCodec(endian="little")] + ([Crc32cCodec()] if crc else [])
    codecs = [BytesCodec(endian="little")] + ([ZstdCodec(level=1)] if compressed else [])
    a = field((50, 45))
    a[10:20, :] = 0               # some missing inner chunks
    p1 = str(tmp_path / "zp.zarr")
    zp = zarr.create_array(p1, shape=a.shape, dtype="f4", fill_value=0,
                           chunks=(20, 15), serializer=ShardingCodec(
                               chunk_shape=(5, 5), codecs=codecs, index_codecs=index_codecs,
                               index_location=index_location),
                           compressors=None)
    zp[...] = a
    np.testing.assert_array_equal(zarrx.open_array(p1, mode="r")[...], a)
    # ours, with the same metadata, read by zarr-python and tensorstore
    p2 = str(tmp_path / "zx.zarr")
    from zarrx.store import LocalStore
    doc = json.loads(open(f"{p1}/zarr.json").read())
    LocalStore(p2).set("zarr.json", json.dumps(doc).encode())
    z = zarrx.open_array(p2, mode="r+")
    z[...] = a
    np.testing.assert_array_equal(zarr.open_array(p2, mode="r")[...], a)
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": p2}}).result()
    np.testing.assert_array_equal(t.read().result(), a)


def test_missing_shards_read_fill(tmp_path):
    p = str(tmp_path / "m.zarr")
    zp = zarr.create_array(p, shape=(40, 40), dtype="i2", chunks=(5, 5), shards=(20, 20),
                           fill_value=-3)
    zp[0:20, 0:20] = 7
    got = zarrx.open_array(p, mode="r")[...]
    want = np.full((40, 40), -3, "i2")
    want[0:20, 0:20] = 7
    np.testing.assert_array_equal(got, want)


def test_tensorstore_sharded_with_transpose_before_sharding(tmp_path):
    p = str(tmp_path / "t.zarr")
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": p},
            "metadata": {
                "shape": [24, 18], "data_type": "int32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [12, 6]}},
                "codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
                           {"name": "sharding_indexed", "configuration": {
                               "chunk_shape": [3, 4],
                               "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                               "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                                {"name": "crc32c"}]}}]}}
    t = ts.open(spec, create=True).result()
    a = np.arange(24 * 18, dtype="i4").reshape(24, 18)
    t[...] = a
    np.testing.assert_array_equal(zarrx.open_array(p, mode="r")[...], a)
    z = zarrx.open_array(p, mode="r+")
    z[...] = a[::-1]
    t2 = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": p}}).result()
    np.testing.assert_array_equal(t2.read().result(), a[::-1])


def test_tensorstore_sharded_start_index_missing_chunks(tmp_path):
    p = str(tmp_path / "s.zarr")
    spec = {"driver": "zarr3", "kvstore": {"driver": "file", "path": p},
            "metadata": {
                "shape": [30, 30], "data_type": "float64", "fill_value": 1.5,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [15, 15]}},
                "codecs": [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [5, 5], "index_location": "start",
                    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                               {"name": "zstd", "configuration": {"level": 2}}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}]}}
    t = ts.open(spec, create=True).result()
    t[2:9, 3:27] = 4.0
    want = np.full((30, 30), 1.5)
    want[2:9, 3:27] = 4.0
    np.testing.assert_array_equal(zarrx.open_array(p, mode="r")[...], want)


@pytest.mark.parametrize("inner", ["raw", "crc32c"])
@pytest.mark.parametrize("index_location", ["end", "start"])
def test_shards_assembled_in_place_read_everywhere(tmp_path, inner, index_location):
    """Raw inner chunks are encoded straight into the shard being assembled; shards with
    all-fill inner chunks fall back to packing. Both must read identically elsewhere."""
    from zarrx.codecs import Crc32c
    p = str(tmp_path / "s.zarr")
    z = zarrx.create_array(p, shape=(64, 48), dtype="<i4", chunks=(8, 8),
                           shards={"shape": (32, 24), "index_location": index_location},
                           compressors=[Crc32c()] if inner == "crc32c" else None, fill_value=0)
    a = np.arange(64 * 48, dtype="<i4").reshape(64, 48) + 1
    a[32:40, 0:8] = 0            # one all-fill inner chunk: that shard is packed instead
    z[...] = a.T.T[:, :]         # a strided source through a view
    np.testing.assert_array_equal(zarrx.open_array(p, mode="r")[...], a)
    np.testing.assert_array_equal(zarr.open_array(p, mode="r")[...], a)
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": p}}).result()
    np.testing.assert_array_equal(t.read().result(), a)
    z[...] = a[::-1]             # overwrite whole shards in place again
    np.testing.assert_array_equal(zarr.open_array(p, mode="r")[...], a[::-1])


def test_nested_raw_shards(tmp_path):
    p = str(tmp_path / "n.zarr")
    from zarrx.store import LocalStore
    codecs = _nested_codecs()
    codecs[0]["configuration"]["codecs"][0]["configuration"]["codecs"] = [
        {"name": "bytes", "configuration": {"endian": "little"}}]
    _write_doc(LocalStore(p), (40, 30), "int16", (20, 30), codecs)
    z = zarrx.open_array(p, mode="r+")
    a = (np.arange(1200, dtype="i2").reshape(40, 30) % 97) + 1
    z[...] = a
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": p}}).result()
    np.testing.assert_array_equal(t.read().result(), a)
    np.testing.assert_array_equal(z[5:33, 2:29], a[5:33, 2:29])


def test_a_write_over_a_whole_inner_shard_needs_none_of_it():
    store = MemoryStore()
    _write_doc(store, (8,), "uint8", (8,), [_sharding([4], [_sharding([2], [_LE])])])
    z = zarrx.open_array(store, mode="r+")
    z[...] = np.arange(1, 9, dtype="u1")
    blob = bytearray(store.get("c/0"))     # inner shards of 2 x 2 bytes + a 36-byte index
    blob[10] ^= 1                          # in the index of the first inner shard
    store.set("c/0", bytes(blob))
    with pytest.raises(zarrx.ShardError, match="inner chunk 'c/0': index checksum mismatch"):
        z[...]
    with pytest.raises(zarrx.ShardError, match="inner chunk 'c/0': index checksum mismatch"):
        z[0] = 9                           # keeps a part of the inner shard: decodes it
    z[0:4] = 9                             # replaces all of it: decodes nothing of it
    assert z[...].tolist() == [9, 9, 9, 9, 5, 6, 7, 8]
    z[0:4] = 0                             # all fill: the inner shard is left out
    assert z[...].tolist() == [0, 0, 0, 0, 5, 6, 7, 8]
    assert len(store.get("c/0")) == 40 + 36


def test_a_write_over_all_of_a_nested_edge_shard_inside_the_array_needs_none_of_it():
    store = MemoryStore()
    _write_doc(store, (7, 8), "int32", (4, 4), [_sharding([2, 4], [_sharding([1, 2], [_LE])])])
    z = zarrx.open_array(store, mode="r+")
    want = np.arange(1, 57, dtype="i4").reshape(7, 8)
    z[...] = want
    # shard c/1/1: nested shards of rows 4:6 (4 x 8 bytes + a 68-byte index) and of row 6
    # (row 7 lies outside the array: 2 x 8 bytes + a 68-byte index), then a 36-byte index
    blob = bytearray(store.get("c/1/1"))
    blob[100 + 16 + 5] ^= 0xFF             # in the index of the nested shard of row 6
    store.set("c/1/1", bytes(blob))
    with pytest.raises(zarrx.ShardError, match="index checksum mismatch"):
        z[6, 4] = -1                       # keeps a part of the nested shard: decodes it
    z[6, 4:8] = -1                         # all of it inside the array: decodes nothing of it
    want[6, 4:8] = -1
    np.testing.assert_array_equal(z[...], want)


def test_nested_sharding_counts_the_innermost_chunks(tmp_path):
    """``chunks``, ``cdata_shape``, ``nchunks`` and ``blocks`` of nested sharding are those of
    the innermost chunks (zarr-python 3 gives the middle level's: a deliberate difference);
    ``shards`` is the outer shard shape, as in zarr-python."""
    a = np.arange(144, dtype="i4").reshape(12, 12)
    z = zarrx.create_array(str(tmp_path), shape=a.shape, dtype="i4", chunks=(6, 6),
                           serializer=ShardingCodec(chunk_shape=(3, 3),
                                                    codecs=[ShardingCodec(chunk_shape=(1, 3))]))
    z[...] = a
    assert z.shards == (6, 6) and z.chunks == (1, 3) and z.cdata_shape == (12, 4)
    assert z.nchunks == z.nchunks_initialized == 48 and z.nshards_initialized == 4
    np.testing.assert_array_equal(z.blocks[5, 1], a[5:6, 3:6])
    theirs = zarr.open_array(str(tmp_path), mode="r")
    assert theirs.shards == z.shards
    np.testing.assert_array_equal(theirs[...], a)


@pytest.mark.parametrize("where", ["local", "memory"])
def test_an_inner_shard_shorter_than_its_index_is_named_by_resize_and_listing(tmp_path, where):
    # an outer entry giving a nested shard 4 bytes, less than its 32-byte trailing index: the
    # index was read from 28 bytes before the shard (a local read failed with "Invalid
    # argument"); the shard is now read whole and reported truncated
    import re
    import struct
    from zarrx import layout
    from zarrx.store.local import LocalStore
    bytes_le = {"name": "bytes", "configuration": {"endian": "little"}}
    ser = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [4], "index_codecs": [bytes_le], "codecs": [
            {"name": "sharding_indexed", "configuration": {
                "chunk_shape": [2], "codecs": [bytes_le], "index_codecs": [bytes_le]}}]}}
    store = LocalStore(str(tmp_path / "a")) if where == "local" else MemoryStore()
    z = zarrx.create_array(store, shape=(8,), dtype="u1", chunks=(8,), serializer=ser,
                           compressors=None, fill_value=0)
    z[:] = np.arange(1, 9)
    blob = bytearray(store.get("c/0"))
    struct.pack_into("<QQ", blob, len(blob) - 32, 0, 4)      # outer entry 0: bytes [0, 4)
    store.set("c/0", bytes(blob))
    message = ("shard 'c/0' inner chunk 'c/0': truncated: 4 bytes, shorter than its 32-byte "
               "index (2 entries x 16 B) at the end")
    source = layout.chunk_source(store, "", z.metadata)
    with pytest.raises(zarrx.errors.ShardError, match=re.escape(message)):
        list(source.list_chunks())
    with pytest.raises(zarrx.errors.ShardError, match=re.escape(message)):
        zarrx.open_array(store, mode="r+").resize((3,))
