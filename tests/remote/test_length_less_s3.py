"""An S3 server whose answers carry no Content-Length: ObjectStore cannot read them and says
so without pointing to FsspecStore, which reads a web server's such answers but needs the
size an S3 HEAD gives."""
from __future__ import annotations

import http.server

import pytest
from loopback import serving

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

BODY = b"x" * 1000


class _ChunkedS3Handler(http.server.BaseHTTPRequestHandler):
    """Every GET answered in chunks, every HEAD without a length."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _headers(self) -> None:
        self.send_response(200)
        self.send_header("ETag", '"e"')
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")

    def do_GET(self) -> None:
        self._headers()
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY))

    def do_HEAD(self) -> None:
        self._headers()
        self.end_headers()


@pytest.mark.parametrize("op", ["get", "getsize"])
def test_objectstore_on_s3_does_not_send_users_to_fsspec_for_a_missing_length(op):
    """The message said FsspecStore reads such servers, which s3fs does not for a HEAD
    without Content-Length (getsize fails there too); it now only says what is missing."""
    pytest.importorskip("obstore")
    pytest.importorskip("s3fs")
    from zarrx.errors import RemoteError
    from zarrx.store import remote
    with serving(_ChunkedS3Handler) as endpoint:
        store = remote.ObjectStore("s3://bkt/d", retries=0, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
        with pytest.raises(RemoteError) as info:
            getattr(store, op)("k")
        fs = remote.FsspecStore("s3://bkt/d", retries=0, storage_options={
            "endpoint_url": endpoint, "key": "a", "secret": "b"})
        with pytest.raises(RemoteError, match="HEAD has no Content-Length"):
            fs.getsize("k")
    assert str(info.value) == ("ObjectStore('s3://bkt/d'): cannot read 'k' (s3://bkt/d/k): "
                               "the server's answer has no Content-Length header, which "
                               "ObjectStore needs")
