"""zarrx arrays on a LocalStore, read and written by a ``dask.distributed`` cluster of worker
processes; a worker killed in the middle of a write, and the write run again.

Data is checked by checksums of every byte computed on the workers and in the test process,
and by reading back with zarr-python. The same reads and writes against the S3 test server
are in ``tests/remote/test_distributed_s3.py``.
"""
from __future__ import annotations

import hashlib
import os
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import zarrx  # noqa: E402
import zarrx.dask as zd  # noqa: E402
from zarrx.store import LocalStore  # noqa: E402

from dask_checks import (SHAPE, CHUNKS, SHARDS, block_digests, cluster_client,  # noqa: E402
                         expected, local_digests, pattern, pattern_block)


@pytest.fixture(scope="module")
def client():
    with cluster_client() as c:
        yield c


def test_read_on_worker_processes_with_checksums(client, tmp_path):
    z = zarrx.create_array(LocalStore(tmp_path / "a.zarr"), shape=SHAPE, dtype="f4",
                           chunks=CHUNKS, shards=SHARDS, compressors=zarrx.codecs.Zstd(level=1))
    a = expected()
    z[...] = a
    x = zd.from_zarrx(str(tmp_path / "a.zarr"))
    assert x.chunks == ((512,), (384,))                  # one block: the array is small
    x = zd.from_zarrx(str(tmp_path / "a.zarr"), chunks=(128, 192))
    assert (block_digests(x) == local_digests(a, x.chunks)).all()
    workers = client.run(os.getpid)
    assert len(set(workers.values()) - {os.getpid()}) == 2
    assert float(x.sum(dtype="f8").compute()) == float(a.sum(dtype="f8"))


@pytest.mark.parametrize("fmt", [2, 3])
def test_write_from_worker_processes_with_checksums(client, tmp_path, fmt):
    import zarr

    kw = {"chunks": CHUNKS, "shards": SHARDS} if fmt == 3 else {"chunks": (64, 96)}
    x = pattern((100, 100))                               # misaligned with every object
    zd.to_zarrx(x, str(tmp_path / "w.zarr"), zarr_format=fmt, fill_value=-1, **kw)
    got = zarr.open_array(str(tmp_path / "w.zarr"), mode="r")[...]
    a = expected()
    assert (local_digests(got, ((512,), (384,))) == local_digests(a, ((512,), (384,)))).all()
    back = zd.from_zarrx(str(tmp_path / "w.zarr"), chunks=(128, 96))
    assert (block_digests(back) == local_digests(a, back.chunks)).all()


def _wait_for(predicate, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def held_block(block, release: str, block_info=None):
    """The last block waits until ``release`` exists, so the write is still running (its task
    computing) when the worker running it is killed."""
    (r0, r1), (c0, c1) = block_info[None]["array-location"]
    if (r1, c1) == SHAPE:
        deadline = time.monotonic() + 120
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.02)
    return pattern_block(block, block_info)


@pytest.mark.slow
def test_worker_killed_mid_write_then_rerun(client, tmp_path):
    """The worker running a write task is killed (SIGKILL) while the write runs: the write
    fails, every shard is whole (new data or absent), never torn. Running the write again
    completes it, every block in place."""
    import zarr

    root = tmp_path / "k.zarr"
    release = str(tmp_path / "release")
    z = zarrx.create_array(LocalStore(root), shape=SHAPE, dtype="f4", chunks=CHUNKS,
                           shards=SHARDS, fill_value=-1)
    a = expected()
    n_shards = (SHAPE[0] // SHARDS[0]) * (SHAPE[1] // SHARDS[1])

    def source():
        return da.zeros(SHAPE, chunks=SHARDS, dtype="f4").map_blocks(
            held_block, release=release, dtype="f4")

    future = client.compute(zd.to_zarrx(source(), z, compute=False))
    shard_dir = root / "c"
    _wait_for(lambda: shard_dir.exists() and sum(
        1 for p in shard_dir.rglob("*") if p.is_file() and not p.name.startswith(".")) >=
        n_shards - 1, "every shard but the held one")

    def busy_workers() -> list:
        return [w for w, keys in client.processing().items() if keys]

    # the other worker may still be handing back its last task after its shard landed
    _wait_for(lambda: len(busy_workers()) == 1, "only the held block's worker busy")
    busy = busy_workers()
    assert len(busy) == 1, client.processing()
    victim = client.run(os.getpid, workers=busy)[busy[0]]
    os.kill(victim, signal.SIGKILL)
    Path(release).touch()
    with pytest.raises(distributed.KilledWorker):
        future.result(timeout=120)
    future.release()                                       # the scheduler forgets the failure
    # no torn shard: each shard holds all of its new data, or nothing
    after = zarrx.open_array(root, mode="r")[...]
    whole = 0
    for r in range(0, SHAPE[0], SHARDS[0]):
        for c in range(0, SHAPE[1], SHARDS[1]):
            part = after[r:r + SHARDS[0], c:c + SHARDS[1]]
            want = a[r:r + SHARDS[0], c:c + SHARDS[1]]
            assert np.array_equal(part, want) or (part == -1).all(), (r, c)
            whole += np.array_equal(part, want)
    assert whole == n_shards - 1
    client.wait_for_workers(2, timeout=120)
    zd.to_zarrx(source(), zarrx.open_array(root, mode="r+"))
    got = zarr.open_array(str(root), mode="r")[...]
    assert hashlib.sha256(got.tobytes()).hexdigest() == hashlib.sha256(a.tobytes()).hexdigest()
    LocalStore(root).sweep(older_than=None)                 # temp files a killed write left
    assert not [p for p in root.rglob("*") if p.name.startswith(".zarrx-tmp-")]


def test_memory_store_writes_are_refused(client):
    """Workers would write into pickled copies of the store: refused, as dask's to_zarr does."""
    x = da.ones((20, 20), chunks=10, dtype="i4")
    z = zarrx.create_array(zarrx.store.MemoryStore(), shape=(20, 20), dtype="i4",
                           chunks=(10, 10), fill_value=0)
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "to_zarrx(/): cannot store into an in-memory array (MemoryStore) using the "
            "distributed scheduler")):
        zd.to_zarrx(x, z)
    with pytest.raises(zarrx.ZarrError, match="using the distributed or process scheduler"):
        zd.to_zarrx(x, z, compute=False).compute()
    assert int(z[...].sum()) == 0
