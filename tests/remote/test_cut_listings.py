"""An S3 listing whose page says it goes on (``IsTruncated``) but gives no token for the
next page: obstore took it for the last page, so ``ObjectStore`` listed the keys of the first
page alone, with no sign of the rest. Now ``FsspecStore`` raises a RemoteError naming the
prefix (s3fs reads the flag), and ``ObjectStore`` lists the rest by asking for the keys after
the last one until none is left, whatever the size of the pages (before: only pages of 1000
keys were found out, and as an error; a server cutting its pages at 500 or 999 keys went
unnoticed)."""
from __future__ import annotations

import http.server
from urllib.parse import parse_qs, urlparse

import pytest
from loopback import not_found, serving

pytest.importorskip("aiohttp")

KEYS = [f"d/a/k{i:05d}" for i in range(2500)]


class _TokenlessListHandler(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint listing ``KEYS`` in pages of 1000 (after ``start-after``, or after the
    key a continuation token names); ``drop_token``: a page with more to come says so without
    a NextContinuationToken. Counts the listing requests."""

    protocol_version = "HTTP/1.1"
    drop_token = True
    keys = KEYS
    lists = 0
    page = 1000            # the keys of a page (a server cutting its pages short: fewer)
    ignore_after = False   # start-after ignored: a listing from the first key

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        if "list-type" not in query:
            return not_found(self)
        cls = type(self)
        cls.lists += 1
        prefix = query.get("prefix", [""])[0]
        after = query.get("continuation-token", [""])[0] or \
            ("" if cls.ignore_after else query.get("start-after", [""])[0])
        keys = [k for k in cls.keys if k.startswith(prefix) and k > after]
        page, more = keys[:cls.page], len(keys) > cls.page
        items = "".join(f"<Contents><Key>{k}</Key><LastModified>2024-01-01T00:00:00.000Z"
                        f"</LastModified><ETag>\"e\"</ETag><Size>3</Size></Contents>"
                        for k in page)
        token = "" if cls.drop_token or not more else \
            f"<NextContinuationToken>{page[-1]}</NextContinuationToken>"
        body = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns='
                '"http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name>'
                f"<Prefix>{prefix}</Prefix><KeyCount>{len(page)}</KeyCount>"
                f"<MaxKeys>1000</MaxKeys><IsTruncated>{'true' if more else 'false'}"
                f"</IsTruncated>{items}{token}</ListBucketResult>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _store(backend: str, endpoint: str):
    from zarrx.store import remote
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore("s3://bkt/d", retries=0, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
    pytest.importorskip("s3fs")
    return remote.FsspecStore("s3://bkt/d", retries=0, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


@pytest.mark.parametrize("page", [1000, 999, 500])
def test_a_page_saying_more_without_a_token_fails_the_fsspec_listing(page):
    from zarrx.errors import RemoteError
    _TokenlessListHandler.drop_token, _TokenlessListHandler.keys = True, KEYS
    _TokenlessListHandler.page, _TokenlessListHandler.ignore_after = page, False
    with serving(_TokenlessListHandler) as endpoint:
        store = _store("fsspec", endpoint)
        with pytest.raises(RemoteError) as info:
            list(store.list_prefix("a/"))
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (s3://bkt/d/a/): ")
    assert "token" in str(info.value).lower()


@pytest.mark.parametrize("page", [1000, 999, 500, 1])
def test_a_listing_cut_by_pages_without_a_token_is_completed_by_the_object_store(page):
    """Each page of a server dropping its tokens ends a listing for obstore: ObjectStore asks
    for the keys after the last one listed until none is left, so the listing is whole."""
    H = _TokenlessListHandler
    H.drop_token, H.keys, H.page, H.ignore_after, H.lists = True, KEYS, page, False, 0
    with serving(H) as endpoint:
        store = _store("obstore", endpoint)
        assert sorted(store.list_prefix("a/")) == [k[2:] for k in KEYS]
    assert H.lists == -(-len(KEYS) // page) + 1


@pytest.mark.parametrize("n", [0, 7, 999, 1000, 2000, 2500])
def test_whole_listings_are_whole(n):
    """A listing that gave keys costs ObjectStore one more request, which finds nothing after
    its last key; an empty one, none."""
    pytest.importorskip("obstore")
    _TokenlessListHandler.drop_token, _TokenlessListHandler.keys = False, KEYS[:n]
    _TokenlessListHandler.page, _TokenlessListHandler.ignore_after = 1000, False
    _TokenlessListHandler.lists = 0
    with serving(_TokenlessListHandler) as endpoint:
        store = _store("obstore", endpoint)
        assert sorted(store.list_prefix("a/")) == [k[2:] for k in KEYS[:n]]
    assert _TokenlessListHandler.lists == max(1, -(-n // 1000)) + (n > 0)


def test_a_server_ignoring_start_after_is_not_taken_for_a_cut_listing():
    """The keys such a server sends again are the listing's own, listed once: no error."""
    pytest.importorskip("obstore")
    _TokenlessListHandler.drop_token, _TokenlessListHandler.keys = False, KEYS[:1500]
    _TokenlessListHandler.page, _TokenlessListHandler.ignore_after = 1000, True
    with serving(_TokenlessListHandler) as endpoint:
        store = _store("obstore", endpoint)
        assert sorted(store.list_prefix("a/")) == [k[2:] for k in KEYS[:1500]]


class _GrowingListHandler(_TokenlessListHandler):
    """Lists whole pages with their tokens; another writer adds ``added`` just after the
    first listing request is answered."""

    added = "d/a/k99999"

    def do_GET(self) -> None:
        super().do_GET()
        cls = type(self)
        if cls.added not in cls.keys:
            cls.keys = [*cls.keys, cls.added]


@pytest.mark.parametrize("n", [10, 1000, 1500])
def test_a_key_written_while_a_listing_runs_is_an_ordinary_race(n):
    """Another writer's key, written after the listing began and sorting after its last key,
    is listed or not, as with any listing racing a writer: never an error (a check taking it
    for a key the listing left out failed every such listing with a RemoteError)."""
    H = _GrowingListHandler
    H.drop_token, H.keys, H.page, H.ignore_after = False, KEYS[:n], 1000, False
    with serving(H) as endpoint:
        store = _store("obstore", endpoint)
        got = sorted(store.list_prefix("a/"))
    assert got in ([k[2:] for k in KEYS[:n]], [k[2:] for k in KEYS[:n]] + ["a/k99999"])
