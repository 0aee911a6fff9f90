"""Several processes updating shared shards (and shared chunks) of one array on a LocalStore.

Each process has its own handle; they meet only in the files. Reads with a generation and
conditional writes (``set_if``) make the read-modify-write of a shard or of a partly written
chunk safe: 0 updates lost, 0 errors.
"""
from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pytest

import zarrx
from zarrx.store.local import LocalStore


def _increment(root: str, cells: list, times: int) -> None:
    z = zarrx.open_array(LocalStore(root), mode="r+")
    for _ in range(times):
        for i, j in cells:
            z[i, j] = z[i, j] + 1


def _write_blocks(root: str, worker: int, n_workers: int, rounds: int) -> None:
    z = zarrx.open_array(LocalStore(root), mode="r+")
    tiles = [(i, j) for i in range(0, 32, 4) for j in range(0, 32, 4)]
    for r in range(rounds):
        for b, (i, j) in enumerate(tiles):
            if b % n_workers == worker:
                z[i:i + 4, j:j + 4] = b * 1000 + r


def run(target, args_list) -> None:
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=target, args=args) for args in args_list]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0] * len(procs)


@pytest.mark.parametrize("codec", ["raw", "zstd"])
def test_increments_in_one_shard_from_four_processes(tmp_path, codec):
    root = str(tmp_path / "a.zarr")
    zarrx.create_array(LocalStore(root), shape=(8, 8), dtype="i4", chunks=(2, 2),
                       shards=(8, 8), fill_value=0,
                       compressors=None if codec == "raw" else zarrx.codecs.Zstd(level=1))
    cells = [[(0, 0)], [(2, 3)], [(5, 4)], [(7, 7)]]       # each in its own inner chunk
    run(_increment, [(root, c, 100) for c in cells])
    z = zarrx.open_array(LocalStore(root), mode="r")
    assert [int(z[c[0]]) for c in cells] == [100] * 4


def test_increments_of_one_unsharded_chunk_from_four_processes(tmp_path):
    """Partial-chunk writes on an unsharded array: different elements of one chunk."""
    root = str(tmp_path / "a.zarr")
    zarrx.create_array(LocalStore(root), shape=(8, 8), dtype="i4", chunks=(8, 8), fill_value=0)
    cells = [[(0, 0)], [(2, 3)], [(5, 4)], [(7, 7)]]
    run(_increment, [(root, c, 100) for c in cells])
    z = zarrx.open_array(LocalStore(root), mode="r")
    assert [int(z[c[0]]) for c in cells] == [100] * 4


@pytest.mark.slow
def test_chunk_aligned_writes_into_shared_shards_from_eight_processes(tmp_path):
    """8 processes x 200 chunk-aligned writes; every shard is shared by several processes."""
    root = str(tmp_path / "a.zarr")
    zarrx.create_array(LocalStore(root), shape=(32, 32), dtype="i4", chunks=(4, 4),
                       shards=(16, 16), fill_value=-1)
    rounds = 25                          # 64 tiles / 8 workers x 25 rounds = 200 writes each
    run(_write_blocks, [(root, w, 8, rounds) for w in range(8)])
    z = zarrx.open_array(LocalStore(root), mode="r")
    expect = np.empty((32, 32), "i4")
    tiles = [(i, j) for i in range(0, 32, 4) for j in range(0, 32, 4)]
    for b, (i, j) in enumerate(tiles):
        expect[i:i + 4, j:j + 4] = b * 1000 + rounds - 1
    np.testing.assert_array_equal(z[...], expect)
