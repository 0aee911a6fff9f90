"""What the distributed trials share: a cluster of worker processes, a pattern every worker
computes from a block's position, and SHA-256 digests of blocks computed on the workers and
locally."""
from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator

import dask
import dask.array as da
import distributed
import numpy as np

SHAPE, CHUNKS, SHARDS = (512, 384), (32, 32), (128, 96)


@contextlib.contextmanager
def cluster_client() -> Iterator[distributed.Client]:
    """A client of a local cluster of 2 worker processes (2 threads each); no task retries."""
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                           dashboard_address=None, silence_logs=50)
        with distributed.Client(cluster) as c:
            yield c
        cluster.close()


def expected(shape=SHAPE) -> np.ndarray:
    i, j = np.indices(shape)
    return ((i * 1009 + j * 7) % 65521).astype("f4") + 0.25


def pattern_block(block, block_info=None):
    """A block of ``expected()``, computed on a worker from its position."""
    (r0, _), (c0, _) = block_info[None]["array-location"]
    i, j = np.indices(block.shape)
    return (((i + r0) * 1009 + (j + c0) * 7) % 65521).astype("f4") + 0.25


def pattern(chunks) -> da.Array:
    return da.zeros(SHAPE, chunks=chunks, dtype="f4").map_blocks(pattern_block, dtype="f4")


def digest(block: np.ndarray) -> np.ndarray:
    return np.array([[hashlib.sha256(np.ascontiguousarray(block).tobytes()).hexdigest()]],
                    dtype=object)


def block_digests(x: da.Array) -> np.ndarray:
    return x.map_blocks(digest, dtype=object, chunks=(1, 1)).compute()


def local_digests(a: np.ndarray, chunks) -> np.ndarray:
    rows = np.cumsum((0,) + chunks[0])
    cols = np.cumsum((0,) + chunks[1])
    return np.array([[hashlib.sha256(np.ascontiguousarray(a[r0:r1, c0:c1]).tobytes()).hexdigest()
                      for c0, c1 in zip(cols, cols[1:])] for r0, r1 in zip(rows, rows[1:])],
                    dtype=object)
