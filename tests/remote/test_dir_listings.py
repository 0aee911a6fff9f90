"""``list_dir`` of a remote store asks for a folder's children, not for every key below it:
``FsspecStore`` over s3fs sends one delimiter listing (S3's ``CommonPrefixes``), so opening a
group without consolidated metadata costs one listing request whatever the number of chunks
below it (before: one request per 1000 keys below the group). Its answer is the one the
listing of every key gives (``Store.list_dir``), for any tree of keys."""
from __future__ import annotations

import urllib.request
from urllib.parse import quote

import pytest
from listing_trees import folders_of, random_tree

import zarrx
from zarrx.store.base import Store

pytest.importorskip("s3fs")
pytest.importorskip("obstore")


def _stores(s3, prefix: str, endpoint: str | None = None):
    from zarrx.store.remote import FsspecStore, ObjectStore
    url = s3.url(prefix)
    fo = dict(s3.fsspec_options)
    so = dict(s3.options)
    if endpoint is not None:
        fo["endpoint_url"] = so["endpoint"] = endpoint
    return FsspecStore(url, storage_options=fo), ObjectStore(url, storage_options=so)


def _listings(proxy) -> int:
    return sum(1 for e in proxy.log if e.method == "GET" and "list-type" in e.query)


def test_opening_a_group_lists_its_children_once(s3_server, proxy):
    """A group whose array has 1100 chunks: FsspecStore finds its members with one listing
    request; ObjectStore lists the keys below the group (obstore's delimiter listing takes
    every page itself, unbounded), skipping the array's folder where its first page ends:
    that page, the keys after the folder and the request that finds the listing whole
    (see test_obstore_children.py for a group of many more chunks)."""
    prefix = s3_server.fresh()
    fs_store, _ = _stores(s3_server, prefix)
    g = zarrx.open_group(fs_store, mode="w")
    g.create_array("a", shape=(1100,), chunks=(1,), dtype="i1")[:] = 1
    g.create_group("b")
    for store, lists in zip(_stores(s3_server, prefix, proxy.url), (1, 3)):
        proxy.reset()
        assert sorted(zarrx.open_group(store, mode="r").keys()) == ["a", "b"]
        proxy.idle()
        assert _listings(proxy) == lists, type(store).__name__


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_children_as_the_keys_below_name_them(s3_server, seed):
    prefix = s3_server.fresh()
    keys = random_tree(seed)
    fs_store, obj_store = _stores(s3_server, prefix)
    fs_store.set_many([(k, b"x") for k in keys])
    # folder markers (empty "name/" objects another tool made) of folders that hold keys
    for marker in ("k/", "k/k/", "a/"):
        req = urllib.request.Request(
            f"{s3_server.endpoint}/{s3_server.bucket}/{quote(prefix + '/' + marker)}",
            method="PUT", data=b"")
        urllib.request.urlopen(req).close()
    folders = folders_of(keys)
    for store in (fs_store, obj_store):
        for p in ["", "nothing/", "k/k/y/", *sorted(folders)]:
            want = Store.list_dir(store, p)
            assert store.list_dir(p) == want, (type(store).__name__, p)
            if p == "":
                assert want[1] == sorted({k.partition("/")[0] for k in keys if "/" in k})
    # a store rooted deeper (a nested prefix) lists as the whole one does below it
    inner = _stores(s3_server, f"{prefix}/k")[0]
    assert inner.list_dir("") == fs_store.list_dir("k/") == (["k", "x"], ["k"])
    assert inner.list_dir("k/") == fs_store.list_dir("k/k/") == (["y"], [])


def test_a_missing_bucket_is_an_error_not_an_empty_folder(s3_server):
    from zarrx.errors import RemoteNotFoundError
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("s3://no-such-bucket/g", storage_options=s3_server.fsspec_options,
                        retries=0)
    with pytest.raises(RemoteNotFoundError) as info:
        store.list_dir("a/")
    assert str(info.value) == (f"{store!r}: cannot list 'a/' (s3://no-such-bucket/g/a/): "
                               f"HTTP 404 (NoSuchBucket)")
