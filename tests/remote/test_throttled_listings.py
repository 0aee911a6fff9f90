"""A listing of many pages that the server throttles now and then (HTTP 503 SlowDown to one
request in two): each failed page is asked for again, after the last key listed, so the
store's retries apply to each page. Both stores started the whole listing again at every
failure, so a listing of more pages than a few never completed under throttling that failed
one request in a hundred (each attempt needed every page to succeed)."""
from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlparse

import pytest
from loopback import not_found, serving
from s3_pages import ListingEndpoint

from zarrx.errors import RemoteError, RemoteThrottledError

pytest.importorskip("aiohttp")

KEYS = [f"d/a/k{i:04d}" for i in range(1000)]


class _ThrottlingListHandler(ListingEndpoint):
    """An S3 endpoint listing ``KEYS`` in pages of ``page`` keys (continuation tokens and
    ``start-after`` honoured), answering 503 SlowDown to the listing requests ``fails`` picks
    (by their number, from 1). Records each listing request's query."""

    page = 100
    fails = staticmethod(lambda n: n % 2 == 0)

    def do_GET(self) -> None:
        asked = self.listing()
        if asked is None:
            return
        query, _ = asked
        cls = type(self)
        prefix = query.get("prefix", [""])[0]
        after = query.get("continuation-token", [""])[0] or query.get("start-after", [""])[0]
        keys = [k for k in KEYS if k.startswith(prefix) and k > after]
        page, more = keys[:cls.page], len(keys) > cls.page
        self.send_page(prefix, page, more, page[-1] if more else "")


def _store(backend: str, endpoint: str, retries: int):
    from zarrx.store import remote
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore("s3://bkt/d", retries=retries, backoff=0.001, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
    pytest.importorskip("s3fs")
    return remote.FsspecStore("s3://bkt/d", retries=retries, backoff=0.001, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_listing_throttled_every_other_request_completes(backend):
    H = _ThrottlingListHandler
    H.asked, H.fails = [], staticmethod(lambda n: n % 2 == 0)
    with serving(H) as endpoint:
        store = _store(backend, endpoint, retries=1)
        assert sorted(store.list_prefix("a/")) == [k[2:] for k in KEYS]
    # each page is asked for about twice (once refused), never the whole listing again
    assert len(H.asked) <= 2 * (len(KEYS) // H.page + 1) + 1


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_page_refused_every_time_gives_up_after_the_retries(backend):
    """Resuming never hides a page that fails at every attempt: the listing fails, naming
    the attempts, after a bounded number of requests."""
    H = _ThrottlingListHandler
    H.asked, H.fails = [], staticmethod(lambda n: n > 3)      # from the 4th page on
    with serving(H) as endpoint:
        store = _store(backend, endpoint, retries=2)
        with pytest.raises(RemoteThrottledError) as info:
            list(store.list_prefix("a/"))
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (s3://bkt/d/a/): HTTP 503")
    assert len(H.asked) <= 3 + 2 * 3


class _IgnoringStartAfterHandler(_ThrottlingListHandler):
    """An S3-compatible endpoint that does not know ``start-after`` (it lists from the first
    key), paging with continuation tokens as S3 does."""

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = [(k, v) for k, vs in parse_qs(url.query).items() for v in vs if k != "start-after"]
        self.path = url.path + "?" + urlencode(query)
        super().do_GET()


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_resumed_listing_leaves_out_the_keys_a_server_ignoring_start_after_sends_again(
        backend):
    """A listing resumed after a failed page, from a server that sends its first pages again
    (it ignores ``start-after``), leaves out the keys it took already instead of failing as a
    listing that repeats itself (FsspecStore over s3fs raised "listed 'a/k0000' twice")."""
    H = _IgnoringStartAfterHandler
    H.asked, H.fails = [], staticmethod(lambda n: n == 3)     # the third page, once
    with serving(H) as endpoint:
        store = _store(backend, endpoint, retries=2)
        assert sorted(store.list_prefix("a/")) == [k[2:] for k in KEYS]
    assert len(H.asked) <= 2 * (len(KEYS) // H.page + 1) + 2


class _RepeatingHandler(_ThrottlingListHandler):
    """A broken endpoint: ``start-after`` and continuation tokens ignored, every answer the
    first page again, saying the listing goes on; after 40 requests, HTTP 400 (so that a
    client asking for ever stops)."""

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query)
        if "list-type" in query and len(type(self).asked) >= 40:
            type(self).asked.append(query)
            return not_found(self)
        keep = [(k, v) for k, vs in query.items() for v in vs
                if k not in ("start-after", "continuation-token")]
        self.path = url.path + "?" + urlencode(keep)
        super().do_GET()


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_resumed_listing_of_a_server_repeating_its_pages_fails(backend):
    """A listing resumed after a failed page, from a server that sends its first page again
    and again, is a listing that repeats itself, as it is when not resumed (ObjectStore asked
    for the page for ever: the keys of a resumed listing at or before its last were left
    out unchecked)."""
    H = _RepeatingHandler
    H.asked, H.fails = [], staticmethod(lambda n: n == 2)
    with serving(H) as endpoint:
        store = _store(backend, endpoint, retries=2)
        with pytest.raises(RemoteError, match=r"the server listed 'a/k0000' twice"):
            list(store.list_prefix("a/"))
    assert len(H.asked) < 10
