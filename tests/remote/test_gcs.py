"""GCS against a GCS server on loopback (gcp-storage-emulator, which speaks GCS's JSON API):
the store and generation contracts of FsspecStore over gcsfs, what conditional writes GCS
gets, arrays written by zarrx and read by zarr-python and the reverse, and an ObjectStore
pointed at a GCS server of its own (obstore speaks GCS's XML API, which the emulator does not
serve)."""
from __future__ import annotations

import http.server
import threading

import numpy as np
import pytest
from store_contract import StoreContract

import zarrx
from zarrx.errors import StoreError
from zarrx.store import ByteRange
from zarrx.store.base import ABSENT
from zarrx.store.remote import FsspecStore

#: contract tests that hammer one key from several threads: each takes tens of seconds against
#: the emulator (one Python process answering every request); the S3 and memory classes run
#: them. (Under a writer that never pauses, a gcsfs snapshot whose tail read races every write
#: starts without its tail, and its reads then conflict: test_fsspecstore's racing filesystem
#: covers that.)
_SLOW = {"test_concurrent_set_get", "test_get_many_large_batch_keeps_order",
         "test_concurrent_increments_lose_nothing",
         "test_snapshot_consistent_under_concurrent_replace"}


class TestFsspecGCS(StoreContract):
    snapshot_pins_version = True       # small objects come whole with the snapshot's tail

    @pytest.fixture
    def store(self, gcs_server, tmp_path, request):
        if request.node.originalname in _SLOW:
            pytest.skip("slow against the GCS emulator; run by the S3 and memory classes")
        self.gcs = gcs_server
        s = self.make_store(tmp_path)
        yield s
        s.close()

    def make_store(self, tmp_path):
        self.url = self.gcs.url()
        return FsspecStore(self.url, storage_options=self.gcs.fsspec_options,
                           revalidate_after=0)

    def reopen_read_only(self, store, tmp_path):
        return FsspecStore(self.url, storage_options=self.gcs.fsspec_options, read_only=True)


# -- conditional writes -----------------------------------------------------------------------
def test_gcsfs_has_no_conditional_writes_and_says_so(gcs_server):
    """gcsfs sends no generation preconditions: set_if and delete_if are refused, never
    written without their condition."""
    store = FsspecStore(gcs_server.url(), storage_options=gcs_server.fsspec_options)
    assert store.supports_conditional_writes is False
    store.set("k", b"v1")
    gen = store.generation("k")
    for call in (lambda: store.set_if("k", b"v2", gen), lambda: store.set_if("n", b"v", ABSENT),
                 lambda: store.delete_if("k", gen)):
        with pytest.raises(StoreError, match="does not support conditional writes"):
            call()
    assert store.get("k") == b"v1" and store.get("n") is None
    forced = FsspecStore(gcs_server.url(), storage_options=gcs_server.fsspec_options,
                         conditional_writes=True)
    assert forced.supports_conditional_writes is False    # only s3fs sends conditions


# -- objects ----------------------------------------------------------------------------------
def test_listing_ranges_and_a_large_object_in_parts(gcs_server):
    store = FsspecStore(gcs_server.url(), storage_options=gcs_server.fsspec_options,
                        part_size=1 << 20, min_part_size=1 << 20)
    big = np.random.default_rng(0).integers(0, 255, (5 << 20) + 3, dtype="u1").tobytes()
    store.set_many([("a/big", big), ("a/b/c", b"0123456789"), ("ab", b"x")])
    assert sorted(store.list_prefix("a/")) == ["a/b/c", "a/big"]
    assert store.list_dir("a") == (["big"], ["b"])
    assert store.get("a/big") == big
    assert store.get("a/big", ByteRange.slice(3 << 20, 5)) == big[3 << 20:(3 << 20) + 5]
    assert store.get("a/big", ByteRange.last(1 << 20)) == big[-(1 << 20):]
    assert store.get("a/b/c", ByteRange.last(3)) == b"789"
    store.delete_prefix("a/")
    assert sorted(store.list()) == ["ab"]


# -- arrays -----------------------------------------------------------------------------------
zarr = pytest.importorskip("zarr", reason="zarr-python is not installed")

CASES = {"v3": dict(zarr_format=3, chunks=(16, 16)),
         "v3-sharded": dict(zarr_format=3, chunks=(8, 8), shards=(32, 32)),
         "v2": dict(zarr_format=2, chunks=(16, 16))}


def _zarr_store(gcs, url, read_only):
    return zarr.storage.FsspecStore.from_url(url, storage_options=gcs.fsspec_options,
                                             read_only=read_only)


@pytest.mark.parametrize("case", list(CASES))
def test_zarr_python_reads_zarrx(gcs_server, case):
    url = gcs_server.url()
    data = np.arange(64 * 48, dtype="i4").reshape(64, 48)
    z = zarrx.create_array(url, shape=data.shape, dtype="i4",
                           storage_options=gcs_server.fsspec_options, **CASES[case])
    assert isinstance(z.store, FsspecStore)           # gcsfs's endpoint_url: through gcsfs
    z[...] = data
    z.attrs["who"] = "zarrx"
    a = zarr.open_array(_zarr_store(gcs_server, url, True), mode="r")
    np.testing.assert_array_equal(a[...], data)
    assert a.attrs["who"] == "zarrx"


@pytest.mark.parametrize("case", list(CASES))
def test_zarrx_reads_zarr_python(gcs_server, case):
    url = gcs_server.url()
    data = np.random.default_rng(3).random((64, 48))
    a = zarr.create_array(_zarr_store(gcs_server, url, False), shape=data.shape, dtype="f8",
                          **CASES[case])
    a[...] = data
    z = zarrx.open(url, mode="r", storage_options=gcs_server.fsspec_options)
    np.testing.assert_array_equal(z[...], data)
    np.testing.assert_array_equal(z[5:40:3, 7], data[5:40:3, 7])


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_hierarchies_both_ways(gcs_server, zarr_format):
    so = gcs_server.fsspec_options
    mine, theirs = gcs_server.url(), gcs_server.url()
    g = zarrx.open_group(mine, mode="w", storage_options=so, zarr_format=zarr_format)
    g.create_array("x", shape=(10,), dtype="i2", chunks=(4,))[...] = np.arange(10)
    zarrx.consolidate_metadata(mine, storage_options=so)
    zg = zarr.open_consolidated(_zarr_store(gcs_server, mine, True), mode="r",
                                zarr_format=zarr_format)
    np.testing.assert_array_equal(zg["x"][...], np.arange(10))

    tg = zarr.open_group(_zarr_store(gcs_server, theirs, False), mode="w",
                         zarr_format=zarr_format)
    tg.create_array("y", shape=(6,), dtype="u1", chunks=(4,))[...] = np.arange(6)
    zarr.consolidate_metadata(_zarr_store(gcs_server, theirs, False), zarr_format=zarr_format)
    xg = zarrx.open_consolidated(theirs, storage_options=so)
    np.testing.assert_array_equal(xg["y"][...], np.arange(6))


# -- ObjectStore's GCS address ----------------------------------------------------------------
class _NotFound(http.server.BaseHTTPRequestHandler):
    """A GCS server with no objects: every object is missing (404)."""

    def do_GET(self):  # noqa: N802 - the http.server interface
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def empty_gcs():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("key", ["base_url", "google_base_url"])
def test_an_http_base_url_is_allowed_for_gs(empty_gcs, key):
    """Like an S3 endpoint, an http:// GCS base URL (an emulator's) is used without TLS, not a
    "builder error" at the first request."""
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore

    store = ObjectStore("gs://bkt/x", storage_options={key: empty_gcs, "bearer_token": "t"})
    assert store.get("zarr.json") is None


def test_an_unusable_base_url_is_refused_when_the_store_is_made():
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore

    with pytest.raises(StoreError) as info:
        ObjectStore("gs://bkt/x", storage_options={"base_url": "localhost:4443"})
    assert str(info.value) == ("ObjectStore('gs://bkt/x'): storage_options base_url: expected "
                               "a URL starting with http:// or https://, found 'localhost:4443'")
