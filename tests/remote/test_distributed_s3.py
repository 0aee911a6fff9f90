"""zarrx arrays on the S3 test server, read and written by a ``dask.distributed`` cluster of
worker processes: the graph carries the URL and storage_options (never a live client), every
worker opens the store itself, and every byte is checked by checksums computed on the workers
and in the test process, and by reading back with zarr-python."""
from __future__ import annotations

import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")

import zarrx  # noqa: E402
import zarrx.dask as zd  # noqa: E402

from dask_checks import (SHAPE, CHUNKS, SHARDS, block_digests, cluster_client,  # noqa: E402
                         expected, local_digests, pattern_block)


@pytest.fixture(scope="module")
def client():
    with cluster_client() as c:
        yield c


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
