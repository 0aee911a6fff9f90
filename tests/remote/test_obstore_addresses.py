"""What an ObjectStore made from a URL sends requests to: an https:// URL is a web address
whatever its host, and a request the store makes for its credentials is never taken for the
key's own."""
from __future__ import annotations

import http.server

import pytest
from loopback import not_found, serving

from zarrx.errors import RemoteConnectionError, RemoteError, StoreError

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")

from zarrx.store.remote import ObjectStore  # noqa: E402


def _recorder(seen: list) -> type:
    """A handler answering every request (a proxy's CONNECT too) with an empty 404, after
    noting its method and target in ``seen``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            seen.append((self.command, self.path))
            not_found(self)

        do_GET = do_HEAD = do_PUT = do_POST = do_CONNECT = answer

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.mark.parametrize("url, host", [
    ("https://mybucket.s3.amazonaws.com/data.zarr", "mybucket.s3.amazonaws.com"),
    ("https://s3.us-west-2.amazonaws.com/mybucket/data.zarr", "s3.us-west-2.amazonaws.com"),
    ("https://acct.blob.core.windows.net/cont/data.zarr", "acct.blob.core.windows.net"),
])
def test_an_https_url_of_a_cloud_host_is_read_at_its_web_address(monkeypatch, url, host):
    """Public data is read by its web address (as zarr-python and fsspec read it): the store
    connects to the URL's host and nowhere else, never asking an instance metadata service for
    credentials to sign with (obstore alone makes such URLs S3 or Azure stores)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    seen: list = []
    with serving(_recorder(seen)) as proxy:
        store = ObjectStore(url, storage_options={"client_options": {"proxy_url": proxy}},
                            retries=0)
        assert store.read_only
        with pytest.raises(RemoteConnectionError, match="cannot read 'zarr.json'"):
            store.get("zarr.json")
    assert seen == [("CONNECT", f"{host}:443")]


def test_an_https_url_takes_no_cloud_storage_options():
    with pytest.raises(StoreError, match="storage_options region: an HTTP"):
        ObjectStore("https://mybucket.s3.amazonaws.com/data.zarr",
                    storage_options={"region": "us-east-1"})


def test_a_404_from_the_credentials_service_is_not_a_missing_key(monkeypatch):
    """Without credentials an S3 store asks the instance metadata service for them before each
    request; one that answers 404 (an instance without a role) fails the request with a
    RemoteError saying so. Before, the 404 read as a missing key: reads gave None (an array's
    chunks the fill value), listings nothing, and a write raised an internal exception."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    seen: list = []
    with serving(_recorder(seen)) as proxy:
        store = ObjectStore("s3://bucket/data.zarr", retries=0, storage_options={
            "endpoint": "http://s3.example.invalid", "region": "us-east-1",
            "client_options": {"proxy_url": proxy}})
        address = "s3://bucket/data.zarr"
        for action, key, call in [("read", "zarr.json", lambda: store.get("zarr.json")),
                                  ("list", "<root>", lambda: list(store.list_prefix(""))),
                                  ("write", "k", lambda: store.set("k", b"1"))]:
            with pytest.raises(RemoteError) as info:
                call()
            assert str(info.value).startswith(
                f"ObjectStore({address!r}): cannot {action} {key!r} ({address}/{key}): HTTP 404 "
                "(a request other than the key's own failed: Error performing PUT "
                "http://169.254.169.254/latest/api/token")
    assert seen and all(target.startswith("http://169.254.169.254/") for _, target in seen)


def _forwarder(upstream: str, seen: list) -> type:
    """A forward proxy (plain HTTP) passing every request on to ``upstream``, whatever host
    its target names, after noting its method in ``seen``."""
    import urllib.error
    import urllib.request

    class Forward(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def relay(self) -> None:
            seen.append(self.command)
            path = "/" + self.path.split("://", 1)[-1].partition("/")[2]
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
            headers = {k: v for k, v in self.headers.items()
                       if k.lower() not in ("host", "connection", "proxy-connection")}
            headers.setdefault("Content-Type", "application/octet-stream")
            req = urllib.request.Request(upstream + path, data=body, method=self.command,
                                         headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=30) as resp:
                    status, data, answer = resp.status, resp.read(), resp.headers
            except urllib.error.HTTPError as exc:
                status, data, answer = exc.code, exc.read(), exc.headers
            self.send_response(status)
            for k, v in answer.items():
                if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                     "server", "date"):
                    self.send_header(k, v)
            length = answer.get("Content-Length") if self.command == "HEAD" else None
            self.send_header("Content-Length", length or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = relay

        def log_message(self, *args: object) -> None:
            pass

    return Forward


def test_a_conditional_delete_goes_through_the_stores_proxy(s3_server):
    """The conditional DELETE (made through a signed URL, outside obstore) goes through the
    ``proxy_url`` of the store's client_options as its other requests do (before, it went
    straight to the endpoint: with a server reached only through the proxy, writing the fill
    value over a shard's last values raised RemoteConnectionError)."""
    import numpy as np

    import zarrx

    seen: list = []
    with serving(_forwarder(s3_server.endpoint, seen)) as proxy:
        store = ObjectStore(s3_server.url(), retries=0, storage_options={
            **s3_server.options, "endpoint": "http://s3.example.invalid",
            "client_options": {"proxy_url": proxy}})
        a = zarrx.create_array(store, shape=(8,), chunks=(2,), shards=(8,), dtype="i4")
        a[0:2] = 5
        a[0:2] = 0                  # the shard is left all fill: deleted at its generation
        assert store.get("c/0") is None and a[...].tolist() == [0] * 8
    assert "DELETE" in seen
