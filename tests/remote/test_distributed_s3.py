"""zarrx arrays on the S3 test server, read and written by a ``dask.distributed`` cluster of
worker processes: the graph carries the URL and storage_options (never a live client), every
worker opens the store itself, and every byte is checked by checksums computed on the workers
and in the test process, and by reading back with zarr-python."""
from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
import dask  # noqa: E402

import zarrx  # noqa: E402
import zarrx.dask as zd  # noqa: E402

SHAPE, CHUNKS, SHARDS = (512, 384), (32, 32), (128, 96)


@pytest.fixture(scope="module")
def client():
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                           dashboard_address=None, silence_logs=50)
        with distributed.Client(cluster) as c:
            yield c
        cluster.close()


def expected() -> np.ndarray:
    i, j = np.indices(SHAPE)
    return ((i * 1009 + j * 7) % 65521).astype("f4") + 0.25


def pattern_block(block, block_info=None):
    """A block of ``expected()``, computed on a worker from its position."""
    (r0, _), (c0, _) = block_info[None]["array-location"]
    i, j = np.indices(block.shape)
    return (((i + r0) * 1009 + (j + c0) * 7) % 65521).astype("f4") + 0.25


def digest(block: np.ndarray) -> np.ndarray:
    return np.array([[hashlib.sha256(np.ascontiguousarray(block).tobytes()).hexdigest()]],
                    dtype=object)


def block_digests(x) -> np.ndarray:
    return x.map_blocks(digest, dtype=object, chunks=(1, 1)).compute()


def local_digests(a: np.ndarray, chunks) -> np.ndarray:
    rows, cols = np.cumsum((0,) + chunks[0]), np.cumsum((0,) + chunks[1])
    return np.array([[hashlib.sha256(np.ascontiguousarray(a[r0:r1, c0:c1]).tobytes()).hexdigest()
                      for c0, c1 in zip(cols, cols[1:])] for r0, r1 in zip(rows, rows[1:])],
                    dtype=object)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [2, 3])
def test_write_and_read_on_worker_processes(client, s3_server, fmt):
    import zarr

    url, so = s3_server.url(), s3_server.options
    kw = {"chunks": CHUNKS, "shards": SHARDS} if fmt == 3 else {"chunks": (64, 96)}
    x = da.zeros(SHAPE, chunks=(100, 100), dtype="f4").map_blocks(pattern_block, dtype="f4")
    zd.to_zarrx(x, url, storage_options=so, zarr_format=fmt, fill_value=-1,
                compressors=zarrx.codecs.Zstd(level=1), **kw)
    workers = client.run(os.getpid)
    assert len(set(workers.values()) - {os.getpid()}) == 2      # the write ran on workers
    a = expected()
    whole = ((SHAPE[0],), (SHAPE[1],))
    got = zarrx.open_array(url, mode="r", storage_options=so)[...]
    assert (local_digests(got, whole) == local_digests(a, whole)).all()
    store = zarr.storage.FsspecStore.from_url(url, storage_options=s3_server.fsspec_options,
                                              read_only=True)
    theirs = zarr.open_array(store, mode="r")[...]
    assert (local_digests(theirs, whole) == local_digests(a, whole)).all()
    back = zd.from_zarrx(url, storage_options=so, chunks=(128, 96))
    assert (block_digests(back) == local_digests(a, back.chunks)).all()
    assert float(back.sum(dtype="f8").compute()) == float(a.sum(dtype="f8"))


@pytest.mark.slow
def test_the_graph_carries_the_url_and_options_not_a_client(s3_server):
    import pickle

    url, so = s3_server.url(), s3_server.options
    z = zarrx.create_array(url, shape=SHAPE, dtype="f4", chunks=CHUNKS, shards=SHARDS,
                           storage_options=so)
    z[...] = expected()
    x = zd.from_zarrx(url, storage_options=so, chunks=SHARDS)
    blob = pickle.dumps(dict(x.__dask_graph__()))
    assert len(blob) < 64 * 1024                                  # specs, never data
    assert np.array_equal(pickle.loads(pickle.dumps(x)).compute(scheduler="processes"),
                          expected())
