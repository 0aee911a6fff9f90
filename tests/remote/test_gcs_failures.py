"""A GCS server's error answer through gcsfs (its ``HttpError``, naming the status as its
``code``) is the store's RemoteError for that status, as an S3 one is (before: gcsfs's
HttpError left the store as it was, no ZarrError)."""
from __future__ import annotations

import functools
import http.server
import json

import pytest
from loopback import serving

from zarrx.errors import RemoteAccessError, RemoteError, RemoteServerError, ZarrError

gcsfs = pytest.importorskip("gcsfs")


class _Failing(http.server.BaseHTTPRequestHandler):
    status = 503

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        body = b'{"error": {"code": %d, "message": "no"}}' % type(self).status
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("status, cls", [(503, RemoteServerError), (409, RemoteError)])
@pytest.mark.parametrize("call", ["get", "list_prefix"])
def test_a_gcs_error_answer_is_a_remote_error_with_its_status(status, cls, call):
    from zarrx.store.remote import FsspecStore
    _Failing.status = status
    with serving(_Failing) as endpoint:
        store = FsspecStore("gs://bkt/d", retries=1, backoff=0.001,
                            storage_options={"endpoint_url": endpoint, "token": "anon"})
        # one attempt per request (gcsfs waits seconds between its own): the store's are seen
        store.fs._request = functools.partial(type(store.fs)._request.__wrapped__, store.fs)
        with pytest.raises(ZarrError) as info:
            list(getattr(store, call)("a/k" if call == "get" else "a/"))
    assert type(info.value) is cls
    assert info.value.status == status
    assert f"HTTP {status}" in str(info.value)


class _Answering(http.server.BaseHTTPRequestHandler):
    """Answers every request with ``status`` and the JSON error body ``error``."""
    status, error = 403, {}

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        body = json.dumps({"error": type(self).error}).encode()
        self.send_response(type(self).status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


#: answers gcsfs raises as exceptions keeping no status (a 403 as an OSError, a 502 as
#: requests' ProxyError, a 400 saying "invalid" as a ValueError), or with the code the body
#: names (no status, or another): before, a RemoteError "other (OSError)", "other
#: (ProxyError)" (not retried), gcsfs's own ValueError and HttpError (no ZarrError), a 503
#: named 500 by its body an HTTP 500; a 400's message (before: "HTTP 400")
ANSWERS = {
    "403": (403, {"code": 403, "message": "no access"}, RemoteAccessError, "HTTP 403"),
    "502": (502, {"code": 502, "message": "bad gateway"}, RemoteServerError,
            "HTTP 502 after 2 attempts"),
    "400-invalid": (400, {"code": 400, "message": "invalid pageToken"}, RemoteError,
                    "HTTP 400 (invalid pageToken)"),
    "400-requester-pays": (400, {"code": 400, "message": "Bucket is a requester pays bucket but "
                                 "no user project provided."}, RemoteError,
                           "HTTP 400 (Bucket is a requester pays bucket but no user project "
                           "provided.)"),
    "text-code": (503, {"code": "SlowDown", "message": "wait"}, RemoteServerError,
                  "HTTP 503 after 2 attempts"),
    "other-code": (503, {"code": 500, "message": "wait"}, RemoteServerError,
                   "HTTP 503 after 2 attempts"),
    "digits-code": (503, {"code": "503", "message": "wait"}, RemoteServerError,
                    "HTTP 503 after 2 attempts"),
}


@pytest.mark.parametrize("case", list(ANSWERS))
@pytest.mark.parametrize("call", ["get", "list_prefix", "list_dir"])
def test_gcsfs_answers_without_a_status_are_classified(case, call):
    from zarrx.store.remote import FsspecStore
    _Answering.status, _Answering.error, cls, said = ANSWERS[case]
    with serving(_Answering) as endpoint:
        store = FsspecStore("gs://bkt/d", retries=1, backoff=0.001,
                            storage_options={"endpoint_url": endpoint, "token": "anon"})
        store.fs._request = functools.partial(type(store.fs)._request.__wrapped__, store.fs)
        with pytest.raises(ZarrError) as info:
            got = getattr(store, call)("a/k" if call == "get" else "a/")
            list(got) if call == "list_prefix" else got
    assert type(info.value) is cls
    action, key = ("read", "a/k") if call == "get" else ("list", "a/")
    assert str(info.value).startswith(
        f"{store!r}: cannot {action} {key!r} (gs://bkt/d/{key}): {said}")
    assert str(info.value).endswith(said if call != "get" or cls is not RemoteAccessError
                                    else "with forbidden_is_missing=True")


def test_a_forbidden_read_over_gcsfs_is_missing_when_asked():
    from zarrx.store.remote import FsspecStore
    _Answering.status, _Answering.error = 403, {"code": 403, "message": "no access"}
    with serving(_Answering) as endpoint:
        store = FsspecStore("gs://bkt/d", retries=0, forbidden_is_missing=True,
                            storage_options={"endpoint_url": endpoint, "token": "anon"})
        store.fs._request = functools.partial(type(store.fs)._request.__wrapped__, store.fs)
        assert store.get("a/k") is None
