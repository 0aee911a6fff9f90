"""Shards written by zarr-python 3 read through ShardStore, and shards ShardStore assembles
read by zarr-python. zarr-python and numcodecs are oracles here only."""
from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import numcodecs
import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec, ZstdCodec  # noqa: E402

from zarrx.metadata.model import KeyEncoding, ShardLevel  # noqa: E402
from zarrx.store.chunks import KeyedChunks  # noqa: E402
from zarrx.store.memory import MemoryStore  # noqa: E402
from shard_adapter import ShardStore  # noqa: E402

SHAPE, SHARDS, CHUNKS = (10, 13), (8, 8), (4, 4)
VARIANTS = list(itertools.product(["end", "start"], ["raw", "zstd"], [True, False]))
IDS = [f"{loc}-{comp}-{'crc' if crc else 'no-crc'}" for loc, comp, crc in VARIANTS]


def create(path: Path, loc: str, comp: str, crc: bool):
    inner = [BytesCodec()] + ([ZstdCodec(level=1)] if comp == "zstd" else [])
    index = [BytesCodec()] + ([Crc32cCodec()] if crc else [])
    return zarr.create_array(zarr.storage.LocalStore(path), shape=SHAPE, chunks=SHARDS,
                             serializer=ShardingCodec(chunk_shape=CHUNKS, codecs=inner,
                                                      index_codecs=index, index_location=loc),
                             compressors=None, dtype="<i4", fill_value=0)


def load(path: Path) -> MemoryStore:
    data = {}
    for root, _, files in os.walk(path):
        for f in files:
            full = Path(root) / f
            data[full.relative_to(path).as_posix()] = full.read_bytes()
    return MemoryStore(data)


def shard_store(mem: MemoryStore) -> ShardStore:
    """A ShardStore configured from the array's zarr.json (as zarrx.layout would configure it)."""
    doc = json.loads(mem.get("zarr.json"))
    (codec,) = doc["codecs"]
    cfg = codec["configuration"]
    level = ShardLevel(tuple(cfg["chunk_shape"]), cfg.get("index_location", "end"),
                       any(c["name"] == "crc32c" for c in cfg["index_codecs"]))
    grid = tuple(doc["chunk_grid"]["configuration"]["chunk_shape"])
    return ShardStore(KeyedChunks(mem, "", KeyEncoding()), level, grid)


def decode(raw: bytes, comp: str) -> np.ndarray:
    if comp == "zstd":
        raw = numcodecs.Zstd().decode(raw)
    return np.frombuffer(raw, dtype="<i4").reshape(CHUNKS)


def encode(block: np.ndarray, comp: str) -> bytes:
    raw = np.ascontiguousarray(block, dtype="<i4").tobytes()
    return numcodecs.Zstd(level=1).encode(raw) if comp == "zstd" else raw


GRID = [(i, j) for i in range(3) for j in range(4)]       # inner chunks covering 10 x 13


def expected_block(data: np.ndarray, c) -> np.ndarray:
    block = np.zeros(CHUNKS, dtype="<i4")
    part = data[c[0] * 4:(c[0] + 1) * 4, c[1] * 4:(c[1] + 1) * 4]
    block[:part.shape[0], :part.shape[1]] = part
    return block


@pytest.mark.parametrize("loc, comp, crc", VARIANTS, ids=IDS)
def test_read_shards_written_by_zarr_python(tmp_path, loc, comp, crc):
    a = create(tmp_path, loc, comp, crc)
    data = np.zeros(SHAPE, dtype="<i4")
    data[1:9, 2:11] = np.arange(72).reshape(8, 9) + 1     # some inner chunks stay all-fill
    a[:] = data
    s = shard_store(load(tmp_path))
    got = s.get_chunks([(c, None) for c in GRID])
    missing = [c for c, raw in zip(GRID, got) if raw is None]
    assert missing == [(0, 3), (1, 3), (2, 3)]             # all-fill inner chunks are not stored
    for c, raw in zip(GRID, got):
        if raw is None:
            assert not expected_block(data, c).any()
            continue
        block = decode(raw, comp)
        edge = data[c[0] * 4:(c[0] + 1) * 4, c[1] * 4:(c[1] + 1) * 4]
        np.testing.assert_array_equal(block[:edge.shape[0], :edge.shape[1]], edge)
    assert sorted(s.list_chunks()) == sorted(set(GRID) - set(missing))
    assert sorted(s.list_prefix("c/2/")) == ["c/2/0", "c/2/1", "c/2/2"]


@pytest.mark.parametrize("loc, comp, crc", VARIANTS, ids=IDS)
def test_zarr_python_reads_our_shards(tmp_path, loc, comp, crc):
    create(tmp_path, loc, comp, crc)                       # metadata only, no shard objects
    data = np.arange(np.prod(SHAPE), dtype="<i4").reshape(SHAPE) * 3 - 50
    absent = {(0, 1), (2, 3), (1, 2)}
    mem = MemoryStore()
    s = shard_store(MemoryStore({"zarr.json": (tmp_path / "zarr.json").read_bytes()}))
    s = ShardStore(KeyedChunks(mem, "", KeyEncoding()), s.levels[0], s.grid)
    order = sorted(GRID, key=lambda c: (c[0] // 2, c[1] // 2, c))
    s.set_chunks([(c, None if c in absent else encode(expected_block(data, c), comp))
                  for c in order])
    s.flush()
    assert sorted(mem.list_prefix("")) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]
    for key in mem.list_prefix(""):
        target = tmp_path / key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(mem.get(key))
    got = zarr.open_array(zarr.storage.LocalStore(tmp_path, read_only=True))[:]
    want = data.copy()
    for i, j in absent:
        want[i * 4:(i + 1) * 4, j * 4:(j + 1) * 4] = 0
    np.testing.assert_array_equal(got, want)


def test_partial_update_of_a_zarr_python_shard(tmp_path):
    """Read-modify-write of a shard zarr-python wrote keeps its other inner chunks."""
    a = create(tmp_path, "end", "raw", True)
    data = np.arange(np.prod(SHAPE), dtype="<i4").reshape(SHAPE)
    a[:] = data
    mem = load(tmp_path)
    s = shard_store(mem)
    new = np.full(CHUNKS, 7, dtype="<i4")
    s.set_chunks([((1, 1), encode(new, "raw"))])
    s.flush()
    (tmp_path / "c/0/0").write_bytes(mem.get("c/0/0"))
    data[4:8, 4:8] = 7
    np.testing.assert_array_equal(zarr.open_array(zarr.storage.LocalStore(tmp_path))[:], data)
