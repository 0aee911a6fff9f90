"""Shards encoded as a whole (bytes->bytes codecs after sharding_indexed), as zarr-python
writes them by default when given a sharding serializer: zarrx reads and writes them, and
zarr-python reads what zarrx wrote."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx.errors import MetadataError
from zarrx.store import LocalStore, MemoryStore

zarr = pytest.importorskip("zarr")
ShardingCodec = zarr.codecs.ShardingCodec
pytestmark = pytest.mark.filterwarnings("ignore:Combining a `sharding_indexed`")


SHARD = {"name": "sharding_indexed", "configuration": {
    "chunk_shape": [4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                     {"name": "crc32c"}]}}


def _theirs(store, after, index_location="end"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.create_array(store, shape=(40, 30), chunks=(20, 30), dtype="i4",
                                 serializer=ShardingCodec(chunk_shape=(5, 10),
                                                          index_location=index_location),
                                 compressors=after)


AFTER = {"zstd": [zarr.codecs.ZstdCodec(level=1)],
         "crc32c": [zarr.codecs.Crc32cCodec()],
         "gzip+crc32c": [zarr.codecs.GzipCodec(level=1), zarr.codecs.Crc32cCodec()]}


@pytest.mark.parametrize("after", list(AFTER))
@pytest.mark.parametrize("index_location", ["end", "start"])
def test_zarr_python_default_sharding_reads_and_writes(tmp_path, after, index_location):
    x = np.arange(1200, dtype="i4").reshape(40, 30)
    _theirs(str(tmp_path), AFTER[after], index_location)[...] = x
    codecs = json.loads((tmp_path / "zarr.json").read_text())["codecs"]
    assert codecs[0]["name"] == "sharding_indexed" and len(codecs) > 1
    z = zarrx.open_array(str(tmp_path), mode="r+")
    np.testing.assert_array_equal(z[...], x)
    np.testing.assert_array_equal(z[3:27, 4:29], x[3:27, 4:29])
    z[10:30, 5:12] = -1
    x[10:30, 5:12] = -1
    z[39, 29] = 7
    x[39, 29] = 7
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path), mode="r")[...], x)
    assert json.loads((tmp_path / "zarr.json").read_text())["codecs"] == codecs


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_partial_writes_match_numpy(data):
    store = zarr.storage.MemoryStore()
    x = np.zeros((40, 30), dtype="i4")
    _theirs(store, AFTER["zstd"])
    z = zarrx.open_array(store, mode="r+")
    for _ in range(data.draw(st.integers(1, 4))):
        r0 = data.draw(st.integers(0, 39))
        r1 = data.draw(st.integers(r0 + 1, 40))
        c0 = data.draw(st.integers(0, 29))
        c1 = data.draw(st.integers(c0 + 1, 30))
        v = data.draw(st.integers(-5, 5))
        z[r0:r1, c0:c1] = v
        x[r0:r1, c0:c1] = v
    np.testing.assert_array_equal(z[...], x)
    np.testing.assert_array_equal(zarr.open_array(store, mode="r")[...], x)


@pytest.mark.parametrize("make", [lambda p: MemoryStore(), lambda p: LocalStore(str(p))],
                         ids=["memory", "local"])
def test_a_corrupt_shard_is_a_clear_error(tmp_path, make):
    store = make(tmp_path)
    doc = {"zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "int32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [SHARD,
                      {"name": "zstd", "configuration": {"level": 1}}]}
    store.set("zarr.json", json.dumps(doc).encode())
    store.set("c/0", b"not zstd at all")
    z = zarrx.open_array(store, mode="r")
    with pytest.raises(zarrx.ZarrError, match="zstd"):
        z[...]


def test_only_bytes_to_bytes_codecs_may_follow_sharding():
    store = MemoryStore()
    doc = {"zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "int32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [SHARD,
                      {"name": "bytes", "configuration": {"endian": "little"}}]}
    store.set("zarr.json", json.dumps(doc).encode())
    with pytest.raises(MetadataError, match=r"codecs\[1\]: expected one array->bytes codec "
                                            r"only \(after 'sharding_indexed'\), found 'bytes'"):
        zarrx.open_array(store, mode="r")


def test_the_toolbox_reads_shards_encoded_whole(tmp_path):
    import subprocess
    import sys
    _theirs(str(tmp_path), AFTER["zstd"])[...] = np.arange(1200, dtype="i4").reshape(40, 30)
    run = [sys.executable, "-m", "zarrx"]
    chunk = subprocess.run(run + ["chunk", str(tmp_path), "c/0/0"], capture_output=True,
                           text=True, timeout=120)
    assert chunk.returncode == 0 and "12 of 12 inner chunks stored" in chunk.stdout
    info = subprocess.run(run + ["info", str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert "; each shard encoded whole by zstd(level=1" in info.stdout
    assert subprocess.run(run + ["check", str(tmp_path)], timeout=120).returncode == 0
    (tmp_path / "c" / "1" / "0").write_bytes(b"garbage")
    bad = subprocess.run(run + ["check", str(tmp_path)], capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode == 1
    assert "corrupt: c/1/0: zstd: input of 7 bytes is not a complete zstd frame" in bad.stdout


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_threads_writing_one_shard_lose_no_update(tmp_path, kind):
    import threading
    store = str(tmp_path) if kind == "local" else MemoryStore()
    zarrx.create_array(store, shape=(64,), chunks=(8,), shards=(64,), dtype="i4")
    st = LocalStore(str(tmp_path)) if kind == "local" else store
    doc = json.loads(st.get("zarr.json"))
    doc["codecs"].append({"name": "zstd", "configuration": {"level": 1, "checksum": False}})
    st.set("zarr.json", json.dumps(doc).encode())

    def worker(i):
        z = zarrx.open_array(store, mode="r+")
        for k in range(8):
            z[i * 8 + k] = i * 100 + k
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    want = [i * 100 + k for i in range(8) for k in range(8)]
    assert zarrx.open_array(store, mode="r")[...].tolist() == want


def test_long_strings_in_shards_encoded_whole_read_back(tmp_path):
    # each shard decodes to far more than its strings' count times 8 bytes
    x = np.array([f"{i}" * 2500 for i in range(8)], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array(str(tmp_path / "zp"), shape=(8,), chunks=(8,), dtype=str,
                                   serializer=ShardingCodec(
                                       chunk_shape=(2,), codecs=[zarr.codecs.VLenUTF8Codec()]))
    theirs[...] = x
    z = zarrx.open_array(str(tmp_path / "zp"), mode="r+")
    assert z[...].tolist() == x.tolist()
    z[3] = "y" * 9000
    x[3] = "y" * 9000
    assert zarrx.open_array(str(tmp_path / "zp"), mode="r")[...].tolist() == x.tolist()
    assert zarr.open_array(str(tmp_path / "zp"), mode="r")[...].tolist() == x.tolist()


def test_nested_shards_of_small_chunks_encoded_whole_read_back(tmp_path):
    # the inner shards' indexes (16 bytes per one-byte chunk) outweigh their data
    b = {"name": "bytes", "configuration": {"endian": "little"}}

    def sharding(chunk, codecs):
        return {"name": "sharding_indexed", "configuration": {
            "chunk_shape": chunk, "codecs": codecs, "index_codecs": [b, {"name": "crc32c"}],
            "index_location": "end"}}
    doc = {"zarr_format": 3, "node_type": "array", "shape": [32, 32], "data_type": "uint8",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [32, 32]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [sharding([16, 32], [sharding([1, 1], [b])]),
                      {"name": "zstd", "configuration": {"level": 1, "checksum": False}}]}
    (tmp_path / "zarr.json").write_text(json.dumps(doc))
    x = (np.arange(1024) % 250 + 1).astype("u1").reshape(32, 32)
    zarrx.open_array(str(tmp_path), mode="r+")[...] = x
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path), mode="r")[...], x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(zarr.open_array(str(tmp_path), mode="r")[...], x)


def test_a_shard_that_does_not_decode_names_the_array_and_the_shard():
    store = MemoryStore()
    doc = {"zarr_format": 3, "node_type": "array", "shape": [8], "data_type": "int32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [SHARD, {"name": "zstd", "configuration": {"level": 1}}]}
    store.set("a/zarr.json", json.dumps(doc).encode())
    store.set("a/c/0", b"not zstd at all")
    z = zarrx.open_array(store, path="a", mode="r+")
    message = ("array 'a' shard 'a/c/0': zstd: input of 15 bytes is not a complete zstd "
               "frame: Unknown frame descriptor")
    with pytest.raises(zarrx.CodecError) as read:
        z[...]
    assert str(read.value) == message
    assert (read.value.array, read.value.key) == ("a", "a/c/0")
    with pytest.raises(zarrx.CodecError) as write:
        z[1] = 5                                 # merging into the shard decodes it first
    assert str(write.value) == message
