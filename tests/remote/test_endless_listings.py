"""Listings that never end: a server that goes on naming new keys behind every continuation
token (each token new, or the same one again) is listed up to ``RemoteOptions.max_listed``
keys, then fails with a RemoteError naming the store's URL, in both stores."""
from __future__ import annotations

import http.server
from urllib.parse import parse_qs, urlparse

import pytest
from loopback import not_found, serving

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")


class _EndlessListHandler(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint whose ListObjectsV2 always has more: each page names two keys never
    named before and a continuation token (new each time, or always ``t``); it counts the
    pages asked for and stops after 10,000 (a client that never stops still finishes)."""

    protocol_version = "HTTP/1.1"
    pages = 0
    same_token = False

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        if "list-type" not in query:
            return not_found(self)
        cls = type(self)
        cls.pages += 1
        n = cls.pages
        more = "true" if n < 10_000 else "false"
        token = "t" if cls.same_token else f"t{n}"
        prefix = query.get("prefix", [""])[0]
        items = "".join(f"<Contents><Key>{prefix}k{n}.{i}</Key><LastModified>2024-01-01T00:00:"
                        f"00.000Z</LastModified><ETag>\"e\"</ETag><Size>3</Size></Contents>"
                        for i in range(2))
        body = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns='
                '"http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name>'
                f"<Prefix>{prefix}</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>"
                f"<IsTruncated>{more}</IsTruncated>{items}"
                + (f"<NextContinuationToken>{token}</NextContinuationToken>"
                   if more == "true" else "")
                + "</ListBucketResult>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _s3_store(backend: str, endpoint: str, **options):
    from zarrx.store import remote
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore("s3://bkt/d", retries=0, **options, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
    pytest.importorskip("s3fs")
    return remote.FsspecStore("s3://bkt/d", retries=0, **options, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


@pytest.mark.parametrize("same_token", [False, True], ids=["new-tokens", "same-token"])
@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_listing_that_never_ends_is_cut_at_max_listed(backend, same_token):
    """Both stores asked for pages until the server stopped (never, for a server that does
    not): the listing now fails once it passes ``max_listed`` keys, after a bounded number
    of pages."""
    from zarrx.errors import RemoteError
    _EndlessListHandler.pages = 0
    _EndlessListHandler.same_token = same_token
    with serving(_EndlessListHandler) as endpoint:
        store = _s3_store(backend, endpoint, max_listed=100)
        with pytest.raises(RemoteError) as info:
            list(store.list_prefix(""))
    assert str(info.value) == (f"{store!r}: cannot list '<root>' (s3://bkt/d/<root>): the "
                               f"server listed more than 100 keys (a listing that never "
                               f"ends?); a store holding more sets RemoteOptions.max_listed")
    # 2 keys a page: 51 pages, or (obstore hands its listing over 50 paths at a time) the
    # 25 pages of each of 3 such chunks
    assert _EndlessListHandler.pages == (75 if backend == "obstore" else 51)


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_listing_of_max_listed_keys_is_whole(backend):
    """A listing of exactly ``max_listed`` keys is no error: the bound is on more."""
    _EndlessListHandler.pages = 9_950            # 50 pages left, 100 keys
    _EndlessListHandler.same_token = False
    with serving(_EndlessListHandler) as endpoint:
        store = _s3_store(backend, endpoint, max_listed=100)
        assert len(list(store.list_prefix(""))) == 100


class _DeepWebHandler(http.server.BaseHTTPRequestHandler):
    """A web server whose every folder page links to two new files and a new folder."""

    protocol_version = "HTTP/1.1"
    pages = 0

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        path = urlparse(self.path).path
        if not path.endswith("/"):
            return not_found(self)
        type(self).pages += 1
        n = type(self).pages
        body = (f'<a href="f{n}a">a</a><a href="f{n}b">b</a><a href="s{n}/">s</a>').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_web_listing_of_ever_more_files_is_cut_at_max_listed():
    """FsspecStore walks a web server's folders; a server naming more files than
    ``max_listed`` fails the listing before its depth bound does."""
    from zarrx.errors import RemoteError
    from zarrx.store import remote
    _DeepWebHandler.pages = 0
    with serving(_DeepWebHandler) as url:
        store = remote.FsspecStore(f"{url}/d", retries=0, max_listed=10)
        with pytest.raises(RemoteError) as info:
            list(store.list_prefix(""))
    assert str(info.value).endswith("the server listed more than 10 keys (a listing that "
                                    "never ends?); a store holding more sets "
                                    "RemoteOptions.max_listed")
    assert _DeepWebHandler.pages == 6
