"""``ObjectStore.list_dir`` on S3 skips over the keys of each child folder instead of listing
them: a page ending in a child folder's keys is followed by a listing starting after them
(S3's ``start-after``). Opening a group whose array holds many chunks lists a few pages, not
one per 1000 chunks; a folder of many small child folders costs what the listing of every key
costs. A server that lists for ever, repeats its pages or ignores ``start-after`` is bounded
as the listing of every key is."""
from __future__ import annotations

import bisect
import random
import urllib.request
from urllib.parse import quote

import pytest
from loopback import serving
from s3_pages import ListingEndpoint

from zarrx.errors import RemoteError
from zarrx.store.base import Store

pytest.importorskip("obstore")


def _chunked(n: int) -> list[str]:
    """A group ``g`` holding an array ``a`` of ``n`` chunks, a group ``b`` and a key."""
    return sorted([f"g/a/c/{i}" for i in range(n)] + ["g/a/zarr.json", "g/b/zarr.json",
                                                      "g/zarr.json", "g/zz"])


class _Bucket(ListingEndpoint):
    """An S3 endpoint (bucket ``bkt``) listing ``keys`` (sorted) as S3 does without a
    delimiter (``start-after``, continuation tokens), ``page`` keys a page; or, with
    ``mode``: ``"endless"``, two keys in folders never named before and a new token on every
    page; ``"repeat"``, the first page and its token again and again; ``"ignore"``, every
    listing from the first key whatever its ``start-after``; ``"outside"``, keys outside the
    prefix besides. ``fails(n)``: the listing requests (by number, from 1) answered 503
    SlowDown. Records each listing query."""

    keys: list = []
    mode = ""

    def do_GET(self) -> None:
        asked = self.listing()
        if asked is None:
            return
        query, n = asked
        cls = type(self)
        prefix = query.get("prefix", [""])[0]
        token = query.get("continuation-token", [""])[0]
        after = token or ("" if cls.mode == "ignore" else query.get("start-after", [""])[0])
        if cls.mode == "endless":
            keys, token = [f"{prefix}e{n}/{i}" for i in range(2)], f"t{n}"
            more = n < 2000
        elif cls.mode == "repeat":
            keys, more, token = cls.keys[:2], n < 2000, "t"
        else:
            at = bisect.bisect_right(cls.keys, after) if after else 0
            keys = [k for k in cls.keys[at:at + cls.page + 1] if k.startswith(prefix)]
            keys, more = keys[:cls.page], len(keys) > cls.page
            token = keys[-1] if more else ""
        if cls.mode == "outside" and not after:
            keys = ["a/x", prefix.rstrip("/") + "y/z", "zz/top", *keys]
        self.send_page(prefix, keys, more, token)


@pytest.fixture
def bucket():
    _Bucket.keys, _Bucket.page, _Bucket.mode = _chunked(1), 1000, ""
    _Bucket.fails, _Bucket.asked = staticmethod(lambda n: False), []
    with serving(_Bucket) as endpoint:
        yield endpoint


def _store(endpoint: str, url: str = "s3://bkt", **options):
    from zarrx.store.remote import ObjectStore
    return ObjectStore(url, **{"retries": 0, **options}, storage_options={
        "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
        "region": "us-east-1"})


def _asked() -> int:
    n, _Bucket.asked = len(_Bucket.asked), []
    return n


def test_a_group_of_an_array_of_many_chunks_lists_a_few_pages(bucket):
    """100,000 chunks: the listing of every key asks for 101 pages and the request that finds
    the listing whole; the children of the group take three requests: the first page (all
    chunks), the keys after the array's folder, the request that finds the listing whole."""
    _Bucket.keys = _chunked(100_000)
    store = _store(bucket)
    want = (["zarr.json", "zz"], ["a", "b"])
    assert Store.list_dir(store, "g/") == want
    assert _asked() == 102
    assert store.list_dir("g/") == want
    assert _asked() == 3
    # a store rooted at the group lists the same way
    assert _store(bucket, "s3://bkt/g").list_dir("") == want
    assert _asked() == 3


def test_the_listing_goes_on_past_the_skipped_folder(bucket):
    _Bucket.keys = _chunked(2500)
    store = _store(bucket)
    assert store.list_dir("g/") == (["zarr.json", "zz"], ["a", "b"])
    after = [q.get("start-after", [""])[0] for q in _Bucket.asked]
    assert after[0] == ""
    assert after == ["", "g/a/" + "\U0010ffff" * 255, "g/zz"]


@pytest.mark.parametrize("children", [1000, 3000])
def test_many_small_child_folders_cost_what_the_full_listing_costs(bucket, children):
    """Arrays of one chunk each: no page is spent skipping them."""
    _Bucket.keys = sorted([f"g/a{i}/{n}" for i in range(children) for n in ("c/0", "zarr.json")]
                          + ["g/zarr.json"])
    store = _store(bucket)
    want = Store.list_dir(store, "g/")
    full = _asked()
    assert store.list_dir("g/") == want
    assert full == (2 * children + 1) // 1000 + 2
    assert _asked() <= full


def test_a_sibling_sorting_right_after_a_skipped_folder_is_listed(bucket):
    """``name0`` is the least name after every key below ``name/``; names below ``name/``
    in characters of any width, up to S3's 1024 bytes, are skipped over."""
    deep = ["g/a/" + "\U0010ffff" * 255, "g/a/" + "\uffff" * 340, "g/a/\U0010ffff/x"]
    _Bucket.keys = sorted([f"g/a/c/{i}" for i in range(1500)] + deep
                          + ["g/a", "g/a-", "g/a.x", "g/a0", "g/a0/x", "g/a\U0010ffff"])
    store = _store(bucket)
    want = (["a", "a-", "a.x", "a0", "a\U0010ffff"], ["a", "a0"])
    assert Store.list_dir(store, "g/") == want
    _asked()
    assert store.list_dir("g/") == want
    assert _asked() == 3


def test_keys_outside_the_folder_are_left_out(bucket):
    _Bucket.keys, _Bucket.mode = _chunked(1500), "outside"
    assert _store(bucket).list_dir("g/") == (["zarr.json", "zz"], ["a", "b"])


@pytest.mark.parametrize("mode", ["endless", "repeat"])
def test_a_listing_that_never_ends_fails_after_bounded_pages(bucket, mode):
    _Bucket.mode = mode
    _Bucket.page = 2
    store = _store(bucket, max_listed=100)
    with pytest.raises(RemoteError) as info:
        store.list_dir("g/")
    said = ("the server listed more than 100 keys (a listing that never ends?); a store "
            "holding more sets RemoteOptions.max_listed" if mode == "endless" else
            "the server listed 'g/a/c/0' twice (a listing that repeats itself would never "
            "end)")
    assert str(info.value).startswith(f"{store!r}: cannot list 'g/' (s3://bkt/g/): ")
    assert said in str(info.value)
    assert len(_Bucket.asked) == 51


def test_a_server_ignoring_start_after_is_listed_once_to_its_end(bucket):
    _Bucket.keys, _Bucket.mode = _chunked(5000), "ignore"
    store = _store(bucket)
    assert store.list_dir("g/") == (["zarr.json", "zz"], ["a", "b"])
    # the first page, then the listing from the start again to its end
    assert _asked() == 1 + 6


def test_a_throttled_listing_goes_on_after_the_last_key_or_skip(bucket):
    _Bucket.keys = sorted(_chunked(1500) + [f"g/m/c/{i}" for i in range(1500)])
    _Bucket.fails = staticmethod(lambda n: n % 2 == 0)
    store = _store(bucket, retries=1, backoff=0.001)
    assert store.list_dir("g/") == (["zarr.json", "zz"], ["a", "b", "m"])
    past_a, past_m = "g/a/" + "\U0010ffff" * 255, "g/m/" + "\U0010ffff" * 255
    # each throttled request asked again where it was: past a skipped folder, after a key
    assert [q.get("start-after", [""])[0] for q in _Bucket.asked] == [
        "", past_a, past_a, past_m, past_m, "g/zz", "g/zz"]


def test_throttling_without_progress_fails_naming_the_folder(bucket):
    _Bucket.fails = staticmethod(lambda n: True)
    store = _store(bucket, retries=2, backoff=0.001)
    with pytest.raises(RemoteError) as info:
        store.list_dir("g/")
    assert str(info.value).startswith(f"{store!r}: cannot list 'g/' (s3://bkt/g/): ")
    assert "after 3 attempts" in str(info.value)
    assert len(_Bucket.asked) == 3


#: names of keys and folders: odd characters, non-ASCII ones, names sorting right before and
#: after a folder ``n/`` (``n-``, ``n.x``, ``n0``, ``n~``, ``nü``) and a key ``n`` beside it
SEGMENTS = ["n", "n-", "n.x", "n0", "n~", "nü", "n 1", "a b", "ü", "x+y", "p%20q", "=",
            "~!'()", "zarr.json", "c", "0", "\U0001f600", "ñ/ñ"]


def _tree(seed: int) -> list[str]:
    rnd = random.Random(seed)
    keys = {"/".join(rnd.choice(SEGMENTS) for _ in range(rnd.choice([1, 2, 2, 3, 4])))
            for _ in range(80)}
    keys |= {f"n/c/{i}" for i in range(rnd.randrange(1, 9))} | {"n", "n0", "nü/x"}
    return sorted(keys)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_children_are_those_the_keys_below_name(s3_server, seed, monkeypatch):
    """Random trees on the S3 test server, the listing handed over a few paths at a time (a
    skip after each one ending in a child folder): the children are those the listing of
    every key gives."""
    from zarrx.store.remote import ObjectStore, obstore_children
    prefix = s3_server.fresh()
    store = ObjectStore(s3_server.url(prefix), storage_options=s3_server.options)
    keys = _tree(seed)
    store.set_many([(k, b"x") for k in keys])
    # folder markers (empty "name/" objects another tool made)
    for marker in ("n/", "n/c/", "nü/", "empty/"):
        req = urllib.request.Request(
            f"{s3_server.endpoint}/{s3_server.bucket}/{quote(prefix + '/' + marker)}",
            method="PUT", data=b"")
        urllib.request.urlopen(req).close()
    folders = {k[:i + 1] for k in keys for i in range(len(k)) if k[i] == "/"}
    for chunk in (1, 2, 3):
        monkeypatch.setattr(obstore_children, "CHUNK", chunk)
        for p in ["", "nothing/", *sorted(folders)]:
            assert store.list_dir(p) == Store.list_dir(store, p), (chunk, p)
    inner = ObjectStore(s3_server.url(f"{prefix}/n"), storage_options=s3_server.options)
    assert inner.list_dir("") == store.list_dir("n/")
