"""A GCS server's error answer through gcsfs (its ``HttpError``, naming the status as its
``code``) is the store's RemoteError for that status, as an S3 one is (before: gcsfs's
HttpError left the store as it was, no ZarrError)."""
from __future__ import annotations

import functools
import http.server

import pytest
from loopback import serving

from zarrx.errors import RemoteError, RemoteServerError, ZarrError

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
