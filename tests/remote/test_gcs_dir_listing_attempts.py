"""Each page of ``FsspecStore.list_dir``'s GCS delimiter listing is one attempt, within the
store's ``timeout``, retried by the store alone, as S3's pages are: before, gcsfs's own
``_request`` tried a 503 up to 6 times for each of the store's attempts (12 requests and
about a minute with ``retries=1``; 30 and about three minutes with the default 4), and waited
for a silent server without limit whatever the store's ``timeout``."""
from __future__ import annotations

import http.server
import json
import threading

import pytest
from loopback import serving

from zarrx.errors import RemoteServerError, RemoteTimeoutError

gcsfs = pytest.importorskip("gcsfs")


class _GCS(http.server.BaseHTTPRequestHandler):
    """Answers each request with 503, or (``silent``) with nothing until ``release`` is set
    (at most ``most`` seconds, then the connection is closed); counts the requests."""

    asked = 0
    silent = False
    most = 10.0
    release = threading.Event()

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        cls = type(self)
        cls.asked += 1
        if cls.silent:
            cls.release.wait(cls.most)
            self.close_connection = True
            return
        body = json.dumps({"error": {"code": 503, "message": "try later"}}).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def server():
    _GCS.asked, _GCS.silent = 0, False
    _GCS.release = threading.Event()
    with serving(_GCS) as endpoint:
        yield endpoint
        _GCS.release.set()


def _store(endpoint: str, **options):
    from zarrx.store.remote import FsspecStore
    return FsspecStore("gs://bkt/d", **options, storage_options={"endpoint_url": endpoint,
                                                                 "token": "anon"})


def test_a_failing_server_is_asked_once_per_attempt_of_the_store(server):
    store = _store(server, retries=1, backoff=0.001)
    with pytest.raises(RemoteServerError) as info:
        store.list_dir("a/")
    assert str(info.value) == (f"{store!r}: cannot list 'a/' (gs://bkt/d/a/): HTTP 503 "
                               "after 2 attempts")
    assert _GCS.asked == 2


def test_a_silent_server_fails_the_listing_after_the_stores_timeout(server):
    _GCS.silent = True
    store = _store(server, retries=1, backoff=0.001, timeout=0.5)
    # gcsfs's one attempt before too: only the wait for the answer differs
    store.fs._request = type(store.fs)._request.__wrapped__.__get__(store.fs)
    with pytest.raises(RemoteTimeoutError) as info:
        store.list_dir("a/")
    assert str(info.value) == (f"{store!r}: cannot list 'a/' (gs://bkt/d/a/): timeout "
                               "after 2 attempts")
    assert _GCS.asked == 2


@pytest.mark.parametrize("call", ["list_prefix", "get"])
def test_a_silent_server_fails_any_request_after_the_stores_timeout(server, call):
    """The listing of every key below a folder too, through gcsfs's flat listing, and each
    of gcsfs's requests: gcsfs is given the store's timeouts (before: the listing waited
    without limit; reads were bounded by the store)."""
    _GCS.silent = True
    store = _store(server, retries=0, timeout=0.5)
    store.fs._request = type(store.fs)._request.__wrapped__.__get__(store.fs)
    with pytest.raises(RemoteTimeoutError) as info:
        got = getattr(store, call)("a/" if call == "list_prefix" else "a/k")
        list(got) if call == "list_prefix" else got
    assert str(info.value).startswith(f"{store!r}: cannot ")
    assert _GCS.asked == 1
