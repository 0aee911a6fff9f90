"""S3 answers whose headers botocore cannot read (a Last-Modified that is no date, a HEAD
without Content-Length): a RemoteError naming the key and what is wrong, from both stores,
never an exception of the library underneath."""
from __future__ import annotations

import http.server

import pytest
from loopback import serving

from zarrx.errors import RemoteError

pytest.importorskip("fsspec")

BODY = b'{"zarr_format": 3, "node_type": "group", "attributes": {}}'


class _OddHeaderHandler(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint serving ``BODY`` at every key of bucket ``bkt`` below ``/<how>/``:
    ``date`` with ``Last-Modified: yesterday``, ``nolength`` with HEADs answered without a
    Content-Length (the connection closed instead)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        how = self.path.split("/")[2]
        self.send_response(200)
        self.send_header("ETag", '"v1"')
        if how == "date":
            self.send_header("Last-Modified", "yesterday")
        if how == "nolength" and self.command == "HEAD":
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(BODY)

    do_HEAD = do_GET


def _store(backend: str, endpoint: str, how: str):
    from zarrx.store import remote
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore(f"s3://bkt/{how}", retries=0, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
    pytest.importorskip("s3fs")
    return remote.FsspecStore(f"s3://bkt/{how}", retries=0, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("how, call", [("date", "get"), ("date", "exists"),
                                       ("nolength", "exists"), ("nolength", "getsize")])
def test_an_answer_botocore_cannot_read_is_a_remote_error(backend, how, call):
    """FsspecStore raised botocore's ValueError ('Invalid timestamp "yesterday"') for a
    Last-Modified that is no date, and a KeyError ('ContentLength') for a HEAD without a
    Content-Length."""
    with serving(_OddHeaderHandler) as endpoint:
        store = _store(backend, endpoint, how)
        with pytest.raises(RemoteError) as info:
            getattr(store, call)("zarr.json")
    assert str(info.value).startswith(
        f"{store!r}: cannot read 'zarr.json' (s3://bkt/{how}/zarr.json): ")
    if backend == "fsspec":
        assert str(info.value).endswith(
            "botocore cannot read the server's answer: ValueError: Invalid timestamp "
            "\"yesterday\": Unknown string format: yesterday" if how == "date" else
            "the server's answer to a HEAD has no Content-Length")
