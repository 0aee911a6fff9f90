"""The delimiter listing of ``FsspecStore.list_dir`` over s3fs keeps the protections of the
full listing: a server that lists for ever (new entries behind every token, or the same page
again) fails it after a bounded number of pages, naming the store's URL and the folder;
entries outside the folder are left out; a page cut by throttling is asked for again after
the last entry taken, so the folder that entry names is not taken twice; a page that cannot be
read is a RemoteError saying what it lacks."""
from __future__ import annotations

import pytest
from loopback import serving
from s3_pages import ListingEndpoint

from zarrx.errors import RemoteError

pytest.importorskip("aiohttp")
pytest.importorskip("s3fs")

#: keys of the bucket: 150 folders of 3 keys each and 150 keys, below ``d/a/``
KEYS = sorted([f"d/a/f{i:03d}/{n}" for i in range(150) for n in ("x", "y/z", "zarr.json")]
              + [f"d/a/k{i:03d}" for i in range(150)])


class _Lister(ListingEndpoint):
    """An S3 endpoint (bucket ``bkt``) listing ``keys`` as S3 does (``delimiter``,
    ``start-after``, continuation tokens), ``page`` entries a page; or, with ``mode``:
    ``"endless"``, two folders never named before and a new token on every page;
    ``"repeat"``, the first page and its token again and again; ``"blank"``, pages naming
    nothing, each with a new token (these three until the ``stop``-th request);
    ``"outside"``, entries outside the prefix besides (on the first page); ``"bad"``, a page
    whose entry lacks its Key. ``fails(n)``: the listing requests (by number, from 1)
    answered 503 SlowDown; ``status``: the status and error code of every other request,
    instead of a page. Records each listing query."""

    keys = KEYS
    page = 100
    mode = ""
    stop = 2000
    status: tuple[int, str] | None = None

    def _entries(self, prefix: str, delimiter: str, token: str, after: str) -> list[str]:
        """The entries after a continuation token, or made of the keys after ``after`` (as
        S3 does: the folder ``after`` names comes again when keys below it sort after it)."""
        out = set()
        for k in type(self).keys:
            if not k.startswith(prefix) or k <= after:
                continue
            head, sep, _ = k[len(prefix):].partition(delimiter) if delimiter else ("", "", "")
            out.add(prefix + head + sep if sep else k)
        return sorted(e for e in out if e > token)

    def do_GET(self) -> None:
        asked = self.listing()
        if asked is None:
            return
        query, n = asked
        cls = type(self)
        if cls.status is not None:
            return self.send_xml(cls.status[0], f"<Error><Code>{cls.status[1]}</Code><Message>"
                                             "m</Message></Error>".encode())
        prefix = query.get("prefix", [""])[0]
        delimiter = query.get("delimiter", [""])[0]
        token = query.get("continuation-token", [""])[0]
        after = token or query.get("start-after", [""])[0]
        if cls.mode == "endless":
            # (it stops after ``stop`` pages: a client that never stops still finishes)
            entries = [f"{prefix}e{n}.{i}/" for i in range(2)]
            more, token = n < cls.stop, f"t{n}"
        elif cls.mode == "blank":
            entries, more, token = [], n < cls.stop, f"t{n}"
        elif cls.mode == "repeat":
            entries, more, token = self._entries(prefix, delimiter, "", "")[:2], n < cls.stop, "t"
        else:
            entries = self._entries(prefix, delimiter, token,
                                    "" if token else query.get("start-after", [""])[0])
            entries, more = entries[:cls.page], len(entries) > cls.page
            token = entries[-1] if more else ""
        if cls.mode == "outside" and not after:
            entries += ["other/x", "d2/zarr.json", "dx", prefix.rstrip("/") + "y", "d",
                        "other/dir/"]
        self.send_page(prefix, entries, more, token,
                       "" if cls.mode == "bad" else "<Key>{}</Key>")


@pytest.fixture
def lister():
    _Lister.keys, _Lister.page, _Lister.mode = KEYS, 100, ""
    _Lister.stop, _Lister.status = 2000, None
    _Lister.fails, _Lister.asked = staticmethod(lambda n: False), []
    with serving(_Lister) as endpoint:
        yield endpoint


def _store(endpoint: str, **options):
    from zarrx.store import remote
    return remote.FsspecStore("s3://bkt/d", **{"retries": 0, **options}, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


WANT = ([f"k{i:03d}" for i in range(150)], [f"f{i:03d}" for i in range(150)])


def test_the_children_come_from_a_delimiter_listing(lister):
    store = _store(lister)
    assert store.list_dir("a/") == WANT
    assert [(q["prefix"], q["delimiter"]) for q in _Lister.asked] == [(["d/a/"], ["/"])] * 3
    _Lister.asked = []
    assert store.list_dir("a/f007/") == (["x", "zarr.json"], ["y"])
    assert store.list_dir("") == ([], ["a"])
    assert store.list_dir("nothing/") == ([], [])
    assert len(_Lister.asked) == 3


@pytest.mark.parametrize("mode", ["endless", "repeat"])
def test_a_listing_that_never_ends_fails_after_bounded_pages(lister, mode):
    _Lister.mode = mode
    store = _store(lister, max_listed=100)
    with pytest.raises(RemoteError) as info:
        store.list_dir("a/")
    said = ("the server listed more than 100 keys (a listing that never ends?); a store "
            "holding more sets RemoteOptions.max_listed" if mode == "endless" else
            "the server listed 'f000/' twice (a listing that repeats itself would never end)")
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (s3://bkt/d/a/): ")
    assert said in str(info.value)
    assert len(_Lister.asked) == (51 if mode == "endless" else 2)


def test_entries_outside_the_folder_are_left_out(lister):
    _Lister.mode = "outside"
    store = _store(lister)
    assert store.list_dir("a/") == WANT
    assert store.list_dir("") == ([], ["a"])


def test_a_throttled_listing_goes_on_after_the_last_entry(lister):
    """Every second request is throttled: each page is asked for again after the last entry
    of the page before; the last entry of a page is a folder, which the server names again
    after it (its keys sort after it): taken once."""
    _Lister.fails = staticmethod(lambda n: n % 2 == 0)
    store = _store(lister, retries=1, backoff=0.001)
    assert store.list_dir("a/") == WANT
    resumed = [q["start-after"][0] for q in _Lister.asked
               if "start-after" in q and "continuation-token" not in q]
    # each failure went on after the last entry (the first page's last: a folder)
    assert resumed == ["d/a/f099/", "d/a/k048", "d/a/k148"]
    assert len(_Lister.asked) == 7


def test_throttling_without_progress_fails_naming_the_folder(lister):
    _Lister.fails = staticmethod(lambda n: True)
    store = _store(lister, retries=2, backoff=0.001)
    with pytest.raises(RemoteError) as info:
        store.list_dir("a/")
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (s3://bkt/d/a/): ")
    assert "after 3 attempts" in str(info.value)
    assert len(_Lister.asked) == 3


def test_a_page_that_cannot_be_read_is_a_remote_error(lister):
    _Lister.mode = "bad"
    store = _store(lister)
    with pytest.raises(RemoteError) as info:
        store.list_dir("a/")
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (s3://bkt/d/a/): ")
    assert "the server's listing cannot be read" in str(info.value)


def test_a_resumed_listing_of_a_server_repeating_its_pages_fails(lister):
    """A listing resumed after a throttled page, from a server that sends its first page
    again and again (it ignores start-after and its tokens): a listing that repeats itself,
    as when not resumed (before: each page, all at or before the cut, was left out unchecked
    and the listing asked on until the server stopped, then kept the first page only)."""
    _Lister.mode, _Lister.stop = "repeat", 40
    _Lister.fails = staticmethod(lambda n: n == 2)
    store = _store(lister, retries=2, backoff=0.001)
    with pytest.raises(RemoteError) as info:
        store.list_dir("a/")
    assert str(info.value).startswith(f"{store!r}: cannot list 'a/' (s3://bkt/d/a/): ")
    assert "the server listed 'f000/' twice" in str(info.value)
    assert len(_Lister.asked) == 4


def test_entries_outside_the_folder_do_not_move_where_a_cut_listing_goes_on(lister):
    """Entries outside the folder (sorting after every entry in it) on the first page, then
    a throttled page: the listing goes on after the last entry taken in the folder (before:
    after the greatest name outside it, leaving out every entry after the first page)."""
    _Lister.mode = "outside"
    _Lister.fails = staticmethod(lambda n: n == 2)
    store = _store(lister, retries=2, backoff=0.001)
    assert store.list_dir("a/") == WANT
    assert [q["start-after"][0] for q in _Lister.asked
            if "start-after" in q and "continuation-token" not in q] == ["d/a/f099/"]


@pytest.mark.parametrize("code", ["NoSuchKey", "NotFound", ""])
def test_a_folder_the_server_says_is_missing_is_empty(lister, code):
    """A 404 that names no missing bucket: an empty folder, as the listing of the keys below
    it has it (before: a ValueError when its error code was not one s3fs knows)."""
    _Lister.status = (404, code)
    store = _store(lister)
    assert store.list_dir("a/") == ([], []) == (list(store.list_prefix("a/")), [])


def test_keys_outside_the_folder_do_not_move_where_a_cut_full_listing_goes_on(lister):
    """The listing of every key below a folder (list_prefix), keys outside it on the first
    page, then a throttled page: it goes on after the last key taken in the folder (before:
    after the last key named, outside it, so that the server named the folder's first keys
    again, a listing repeating itself)."""
    _Lister.mode = "outside"
    _Lister.fails = staticmethod(lambda n: n == 2)
    store = _store(lister, retries=2, backoff=0.001)
    assert sorted(store.list_prefix("a/")) == [k[2:] for k in KEYS]
    assert [q["start-after"][0] for q in _Lister.asked
            if "start-after" in q and "continuation-token" not in q] == [KEYS[99]]


@pytest.mark.parametrize("listing", ["list_dir", "list_prefix"])
def test_pages_naming_nothing_without_end_fail_after_bounded_pages(lister, listing):
    """A server answering every page with no entry and a new token, saying the listing goes
    on: max_listed such pages fail the listing (before: it asked for pages as long as the
    server said there were more)."""
    _Lister.mode, _Lister.stop = "blank", 200
    store = _store(lister, max_listed=50)
    with pytest.raises(RemoteError) as info:
        list(getattr(store, listing)("a/"))
    assert str(info.value) == (
        f"{store!r}: cannot list 'a/' (s3://bkt/d/a/): the server answered more than 50 pages "
        "naming nothing new, each saying the listing goes on (a listing that never ends?)")
    assert len(_Lister.asked) == 51
