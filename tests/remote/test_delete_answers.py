"""An S3 multi-object delete whose answer names a failure for some of its keys: both stores
classify the key's error code the same way (a refusal, a missing key, a transient failure
that is retried) and name the key and the code."""
from __future__ import annotations

import http.server
import re

import pytest
from loopback import serving

from zarrx.errors import RemoteAccessError, RemoteError, RemoteServerError

pytest.importorskip("fsspec")


class _DeleteHandler(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint whose DeleteObjects answers each key with the error ``code`` (None:
    deleted), counting the requests in ``posts``."""

    protocol_version = "HTTP/1.1"
    code: str | None = None
    posts = 0

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_POST(self) -> None:
        type(self).posts += 1
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        keys = re.findall(r"<Key>([^<]*)</Key>", body)
        code = self.code
        items = "".join(f"<Deleted><Key>{k}</Key></Deleted>" if code is None else
                        f"<Error><Key>{k}</Key><Code>{code}</Code><Message>{code} said"
                        f"</Message></Error>" for k in keys)
        out = ('<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns='
               f'"http://s3.amazonaws.com/doc/2006-03-01/">{items}</DeleteResult>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


def _store(backend: str, endpoint: str):
    from zarrx.store import remote
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore("s3://bkt/d", retries=1, backoff=0.001, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
    pytest.importorskip("s3fs")
    return remote.FsspecStore("s3://bkt/d", retries=1, backoff=0.001, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("code, error, detail, posts", [
    ("AccessDenied", RemoteAccessError, "HTTP 403 (AccessDenied for 'd/a')", 1),
    ("InternalError", RemoteServerError, "HTTP 500 (InternalError for 'd/a') after 2 attempts",
     2),
    ("NotImplemented", RemoteError, "other (NotImplemented for 'd/a')", 1),
    ("NoSuchKey", None, None, 1),
])
def test_a_key_a_delete_fails_is_named_with_its_code(backend, code, error, detail, posts):
    """ObjectStore said 'other (GenericError: DeleteObjects request failed for key d/a: ...)'
    for each (a refusal that was no RemoteAccessError, a server error not retried, a key
    already gone an error); FsspecStore did not retry a server error either."""
    _DeleteHandler.code, _DeleteHandler.posts = code, 0
    with serving(_DeleteHandler) as endpoint:
        store = _store(backend, endpoint)
        if error is None:
            store.delete_many(["a", "b"])
        else:
            with pytest.raises(error) as info:
                store.delete_many(["a", "b"])
            assert str(info.value) == f"{store!r}: cannot delete 'a' (s3://bkt/d/a): {detail}"
    assert _DeleteHandler.posts == posts
