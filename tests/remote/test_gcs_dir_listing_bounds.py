"""The delimiter listing of ``FsspecStore.list_dir`` over gcsfs keeps the protections of the
full listing, as the S3 one does (one walk serves both): a server that lists for ever (new
entries behind every token, the same page again, pages naming nothing) fails it after a
bounded number of pages, naming the store's URL and the folder; entries outside the folder
are left out; a page cut by a transient failure is asked for again by its token, not the
listing from its start; a page that cannot be read is a RemoteError saying what it lacks; a
server ignoring the delimiter lists every key, and the children are read from them."""
from __future__ import annotations

import functools
import http.server
import json
from urllib.parse import parse_qs, unquote, urlparse

import pytest
from loopback import serving

from zarrx.errors import RemoteError, RemoteServerError
from zarrx.store.base import Store

gcsfs = pytest.importorskip("gcsfs")

#: 150 folders of 3 keys each (and a folder marker), 150 keys, below ``d/a/``
KEYS = sorted([f"d/a/f{i:03d}/{n}" for i in range(150) for n in ("x", "y/z", "zarr.json")]
              + [f"d/a/k{i:03d}" for i in range(150)] + ["d/a/f000/"])
WANT = ([f"k{i:03d}" for i in range(150)], [f"f{i:03d}" for i in range(150)])


class _GCS(http.server.BaseHTTPRequestHandler):
    """GCS's JSON API listing of bucket ``bkt`` (``/storage/v1/b/bkt/o``), ``page`` entries
    a page, each page's token the last entry of the page before; with ``mode``: ``"endless"``,
    two folders never named before and a new token on every page; ``"repeat"``, the first page
    and its token again and again; ``"blank"``, pages naming nothing, each with a new token
    (these three until the ``stop``-th request); ``"outside"``, entries outside the prefix
    besides (on the first page); ``"bad"``, an item without its name; ``"flat"``, the
    delimiter ignored (every key below the prefix, as items). ``fails(n)``: the requests (by
    number, from 1) answered 503. Records each request's query."""

    page, mode, stop, keys = 100, "", 2000, KEYS
    asked: list = []
    fails = staticmethod(lambda n: False)

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the http.server interface
        url = urlparse(self.path)
        if unquote(url.path) != "/storage/v1/b/bkt/o":
            return self._send(404, {"error": {"code": 404, "message": "no"}})
        cls = type(self)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        cls.asked.append(q)
        n = len(cls.asked)
        if cls.fails(n):
            return self._send(503, {"error": {"code": 503, "message": "slow down"}})
        prefix, token = q.get("prefix", ""), q.get("pageToken", "")
        delimiter = "" if cls.mode == "flat" else q.get("delimiter", "")
        if cls.mode == "endless":
            entries, more = [f"{prefix}e{n}.{i}/" for i in range(2)], n < cls.stop
            token = f"t{n}"
        elif cls.mode == "blank":
            entries, more, token = [], n < cls.stop, f"t{n}"
        else:
            found = set()
            for k in cls.keys:
                if k.startswith(prefix):
                    head, sep, _ = k[len(prefix):].partition(delimiter) if delimiter \
                        else ("", "", "")
                    found.add(prefix + head + sep if sep else k)
            entries = sorted(e for e in found if cls.mode == "repeat" or e > token)
            entries, more = entries[:cls.page], len(entries) > cls.page
            token = entries[-1] if more else ""
        if cls.mode == "outside" and "pageToken" not in q:
            entries += ["other/x", "d2/zarr.json", "dx", prefix.rstrip("/") + "y", "d",
                        "other/dir/"]
        items = [{"name": e} if cls.mode != "bad" else {"size": "1"}
                 for e in entries if not (delimiter and e.endswith(delimiter))]
        page = {"kind": "storage#objects", "items": items,
                "prefixes": [e for e in entries if delimiter and e.endswith(delimiter)]}
        if more:
            page["nextPageToken"] = token
        self._send(200, page)


@pytest.fixture
def server():
    _GCS.page, _GCS.mode, _GCS.stop, _GCS.keys = 100, "", 2000, KEYS
    _GCS.fails, _GCS.asked = staticmethod(lambda n: False), []
    with serving(_GCS) as endpoint:
        yield endpoint


def _store(endpoint: str, **options):
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("gs://bkt/d", **{"retries": 0, **options}, storage_options={
        "endpoint_url": endpoint, "token": "anon"})
    # one attempt per request, as zarrx asks of s3fs: the store's retries are the ones seen
    store.fs._request = functools.partial(type(store.fs)._request.__wrapped__, store.fs)
    return store


def test_the_children_come_from_a_delimiter_listing(server):
    store = _store(server)
    assert store.list_dir("a/") == WANT
    assert [(q["prefix"], q["delimiter"], q["maxResults"]) for q in _GCS.asked] == \
        [("d/a/", "/", "1000")] * 3
    assert [q.get("pageToken") for q in _GCS.asked] == [None, "d/a/f099/", "d/a/k049"]
    _GCS.asked = []
    assert store.list_dir("a/f007/") == (["x", "zarr.json"], ["y"])
    assert store.list_dir("") == ([], ["a"])
    assert store.list_dir("nothing/") == ([], [])
    assert len(_GCS.asked) == 3


def test_a_server_ignoring_the_delimiter_gives_the_same_children(server):
    """Every key below the folder, markers among them: the children they name, as the
    listing of every key has them (a folder holding only its marker is none; before, a
    marker named its folder)."""
    _GCS.mode, _GCS.keys = "flat", sorted(KEYS + ["d/a/m/", "d/a/f001/q/"])
    store = _store(server)
    assert store.list_dir("a/") == WANT == Store.list_dir(store, "a/")
    assert len(_GCS.asked) == 2 * 7      # 603 keys, 100 a page, in each listing
    assert store.list_dir("a/f001/") == (["x", "zarr.json"], ["y"])


@pytest.mark.parametrize("mode", ["endless", "repeat"])
def test_a_listing_that_never_ends_fails_after_bounded_pages(server, mode):
    _GCS.mode = mode
    store = _store(server, max_listed=100)
    with pytest.raises(RemoteError) as info:
        store.list_dir("a/")
    said = ("the server listed more than 100 keys (a listing that never ends?); a store "
            "holding more sets RemoteOptions.max_listed" if mode == "endless" else
            "the server listed 'f000/' twice (a listing that repeats itself would never end)")
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (gs://bkt/d/a/): ")
    assert said in str(info.value)
    assert len(_GCS.asked) == (51 if mode == "endless" else 2)


def test_pages_naming_nothing_without_end_fail_after_bounded_pages(server):
    _GCS.mode, _GCS.stop = "blank", 200
    store = _store(server, max_listed=50)
    with pytest.raises(RemoteError) as info:
        store.list_dir("a/")
    assert str(info.value) == (
        f"{store!r}: cannot list 'a/' (gs://bkt/d/a/): the server answered more than 50 pages "
        "naming nothing new, each saying the listing goes on (a listing that never ends?)")
    assert len(_GCS.asked) == 51


def test_entries_outside_the_folder_are_left_out(server):
    _GCS.mode = "outside"
    store = _store(server)
    assert store.list_dir("a/") == WANT
    assert store.list_dir("") == ([], ["a"])


def test_a_cut_listing_asks_again_for_the_page_it_was_cut_at(server):
    """Every second request fails (503): each page is asked for again by its token, at once
    (the listing took entries since it began), not the listing from its first page."""
    _GCS.fails = staticmethod(lambda n: n % 2 == 0)
    store = _store(server, retries=1, backoff=0.001)
    assert store.list_dir("a/") == WANT
    assert [q.get("pageToken") for q in _GCS.asked] == \
        [None, "d/a/f099/", "d/a/f099/", "d/a/k049", "d/a/k049"]


def test_failures_without_progress_fail_naming_the_folder(server):
    _GCS.fails = staticmethod(lambda n: True)
    store = _store(server, retries=2, backoff=0.001)
    with pytest.raises(RemoteServerError) as info:
        store.list_dir("a/")
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (gs://bkt/d/a/): HTTP 503")
    assert "after 3 attempts" in str(info.value)
    assert len(_GCS.asked) == 3


def test_a_page_that_cannot_be_read_is_a_remote_error(server):
    _GCS.mode = "bad"
    store = _store(server)
    with pytest.raises(RemoteError) as info:
        store.list_dir("a/")
    assert str(info.value) == (f"{store!r}: cannot list 'a/' (gs://bkt/d/a/): the server's "
                               "listing cannot be read: a field it lacks, 'name'")


def test_a_missing_bucket_is_an_empty_folder_as_in_the_full_listing(server):
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("gs://nobkt/d", storage_options={"endpoint_url": server,
                                                         "token": "anon"})
    assert store.list_dir("a/") == ([], []) == (list(store.list_prefix("a/")), [])
