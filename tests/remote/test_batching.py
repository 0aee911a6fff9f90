"""How a remote store spends requests, counted at a proxy in front of the S3 server:
concurrency limits, coalescing, parallel parts of large objects, multipart uploads."""
from __future__ import annotations

import os

import pytest

from zarrx.store import ByteRange

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")

from zarrx.store.remote import ObjectStore  # noqa: E402

MiB = 1 << 20


@pytest.fixture
def make(s3_server, proxy):
    prefix = s3_server.fresh()

    def build(**overrides):
        so = {**s3_server.options, "endpoint": proxy.url}
        return ObjectStore(f"s3://{s3_server.bucket}/{prefix}", storage_options=so, **overrides)

    return build


def test_one_batch_keeps_requests_in_flight_up_to_the_limit(make, proxy):
    store = make(in_flight=8)
    store.set_many((f"k/{i}", b"x%d" % i) for i in range(40))
    assert 1 < proxy.max_in_flight <= 8                  # writes run concurrently too
    proxy.reset()
    proxy.latency = 0.05
    got = store.get_many([(f"k/{i}", None) for i in range(40)])
    assert got == [b"x%d" % i for i in range(40)]
    assert proxy.count("GET") == 40
    assert 1 < proxy.max_in_flight <= 8


def test_nearby_ranges_are_coalesced(make, proxy):
    data = os.urandom(1 * MiB)
    ranges = [ByteRange.slice(i * 50_000, 1000) for i in range(20)]
    wanted = [data[r.offset:r.offset + r.length] for r in ranges]
    store = make(coalesce_gap=64 << 10)
    store.set("obj", data)
    proxy.reset()
    assert store.get_many([("obj", r) for r in reversed(ranges)]) == wanted[::-1]
    assert proxy.count("GET") == 1
    proxy.reset()
    assert make(coalesce_gap=0).get_many([("obj", r) for r in ranges]) == wanted
    assert proxy.count("GET") == 20
    proxy.reset()
    assert make(coalesce_gap=64 << 10, max_request=200_000).get_many(
        [("obj", r) for r in ranges]) == wanted
    assert proxy.count("GET") == 5                       # 4 ranges per request of <= 200 kB


def test_a_large_object_is_read_as_parallel_parts_of_one_version(make, proxy):
    data = os.urandom(3 * MiB + 5)
    store = make(part_size=1 * MiB)
    store.set("big", data)
    proxy.reset()
    assert store.get("big") == data
    gets = [r for r in proxy.log if r.method == "GET"]
    assert gets[0].headers["Range"] == f"bytes=0-{MiB - 1}"
    assert len(gets) == 3
    etag = store.generation("big").value
    assert all(r.headers.get("If-Match") == etag for r in gets[1:])
    proxy.reset()
    assert store.get("big", ByteRange.slice(10, 2 * MiB + 100)) == data[10:2 * MiB + 110]
    assert proxy.count("GET") == 2


def test_large_values_are_uploaded_in_parts(make, proxy):
    data = os.urandom(11 * MiB)
    store = make(multipart_threshold=8 * MiB, part_size=5 * MiB)
    store.set("big", data)
    assert any(r.method == "POST" and "uploads" in r.query for r in proxy.log)
    assert sum(1 for r in proxy.log if r.method == "PUT" and "partNumber" in r.query) == 3
    assert store.get("big") == data
    proxy.reset()
    store.set("small", b"x" * 1000)
    assert [r.method for r in proxy.log] == ["PUT"]


def test_the_parts_of_a_snapshot_read_go_out_together(make, proxy):
    """A snapshot knows the version it reads, so the parts of a large range need not wait for
    the first one: all are in flight at once, each conditioned on the snapshot's ETag."""
    data = os.urandom(4 * MiB + 7)
    store = make(part_size=1 * MiB, revalidate_after=0)
    store.set("shard", data)
    snap = store.snapshot("shard")
    proxy.reset()
    proxy.latency = 0.2
    assert snap.read([ByteRange.slice(5, 4 * MiB)]) == [data[5:4 * MiB + 5]]
    gets = [r for r in proxy.log if r.method == "GET"]
    assert len(gets) == 4
    assert all(r.headers.get("If-Match") == snap.generation.value for r in gets)
    assert proxy.max_in_flight == 4


def test_an_fsspec_s3_store_keeps_its_in_flight_limit_busy(s3_server, proxy):
    """s3fs's client keeps 10 connections unless told otherwise: a batch of an FsspecStore
    with a larger in-flight limit still has that many requests out at once."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    from zarrx.store.remote import FsspecStore
    so = {**s3_server.fsspec_options, "endpoint_url": proxy.url}
    store = FsspecStore(s3_server.url(), storage_options=so, in_flight=24)
    store.set_many((f"k/{i}", b"x%d" % i) for i in range(48))
    proxy.reset()
    proxy.latency = 0.1
    assert store.get_many([(f"k/{i}", None) for i in range(48)]) == [b"x%d" % i
                                                                       for i in range(48)]
    assert 10 < proxy.max_in_flight <= 24


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_the_later_parts_of_a_large_object_stream_beside_the_first(s3_server, proxy, backend):
    """The first part's headers give the object's size and ETag: the other parts go out then,
    conditioned on that ETag, while the first part's body is still arriving."""
    prefix = s3_server.fresh()
    url = f"s3://{s3_server.bucket}/{prefix}"
    if backend == "obstore":
        store = ObjectStore(url, storage_options={**s3_server.options, "endpoint": proxy.url},
                            part_size=MiB)
    else:
        pytest.importorskip("s3fs", reason="s3fs is not installed")
        from zarrx.store.remote import FsspecStore
        store = FsspecStore(url, storage_options={**s3_server.fsspec_options,
                                                  "endpoint_url": proxy.url}, part_size=MiB)
    data = os.urandom(3 * MiB)
    store.set("big", data)
    proxy.reset()
    proxy.bandwidth = 4 * MiB                        # each 1 MiB part streams for 0.25 s
    assert store.get("big") == data
    gets = [r for r in proxy.log if r.method == "GET"]
    assert len(gets) == 3
    assert proxy.max_in_flight == 3
    etag = store.generation("big").value
    assert [r.headers.get("If-Match") for r in gets] == [None, etag, etag]
    proxy.reset()
    assert store.get("big", ByteRange.slice(MiB // 2, 2 * MiB)) == data[MiB // 2:5 * MiB // 2]
    assert proxy.count("GET") == 2 and proxy.max_in_flight == 2
    proxy.reset()                                    # a range past the object's end: clipped
    assert store.get("big", ByteRange.slice(MiB, 4 * MiB)) == data[MiB:]
    assert proxy.count("GET") == 2 and proxy.count("HEAD") == 0


def test_uploads_share_the_link_cap_and_go_out_together(make, proxy):
    """The proxy caps request bodies as it caps responses (a connection's share of a link, each
    way): every upload of a batch streams at the cap, all of them at once."""
    store = make(in_flight=8)
    values = {f"u/{i}": os.urandom(MiB // 2) for i in range(4)}
    proxy.bandwidth = 2 * MiB                        # each 512 KiB body takes 0.25 s
    store.set_many(values.items())
    proxy.idle()
    puts = [r for r in proxy.log if r.method == "PUT"]
    assert sorted(r.bytes_in for r in puts) == [MiB // 2] * 4
    assert all(r.end - r.start >= 0.24 for r in puts)
    assert proxy.max_in_flight == 4
    proxy.bandwidth = None
    assert store.get_many([(k, None) for k in values]) == list(values.values())


def test_a_multipart_upload_uses_smaller_parts_when_larger_ones_leave_requests_idle(make, proxy):
    """20 MiB with up to 64 requests in flight: four parts of 5 MiB (the smallest object
    stores take), not 8 + 8 + 4 MiB, so more of the upload streams at once."""
    data = os.urandom(20 * MiB)
    store = make(multipart_threshold=16 * MiB, part_size=8 * MiB)
    store.set("big", data)
    parts = [r for r in proxy.log if r.method == "PUT" and "partNumber" in r.query]
    assert sorted(r.bytes_in for r in parts) == [5 * MiB] * 4
    assert store.get("big") == data


def test_an_fsspec_s3_store_sends_the_parts_of_an_upload_together(s3_server, proxy):
    """s3fs uploads 10 parts at a time unless told otherwise: eleven parts go out at once."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    from zarrx.store.remote import FsspecStore
    so = {**s3_server.fsspec_options, "endpoint_url": proxy.url}
    store = FsspecStore(s3_server.url(), storage_options=so, multipart_threshold=16 * MiB)
    data = os.urandom(55 * MiB)
    proxy.latency = 0.3
    store.set("big", data)
    parts = [r for r in proxy.log if r.method == "PUT" and "partNumber" in r.query]
    assert sorted(r.bytes_in for r in parts) == [5 * MiB] * 11
    assert proxy.max_in_flight == 11
    proxy.latency = 0
    assert store.get("big") == data
