"""``list_dir`` of ``FsspecStore`` over gcsfs asks GCS for a folder's children alone: one
``objects.list`` request with ``delimiter=/`` (the emulator, like GCS, pages 1000 entries), so
opening a group without consolidated metadata costs one listing request whatever the number
of chunks below it (before: the listing of every key below the group, one request per 1000
keys). Its answer is the one the listing of every key gives (``Store.list_dir``), for any
tree of keys; a folder holding only its marker is named as a child, as on S3."""
from __future__ import annotations

import numpy as np
import pytest
from listing_trees import folders_of, random_tree

import zarrx
from zarrx.store.base import Store
from zarrx.store.remote import FsspecStore

gcsfs = pytest.importorskip("gcsfs")


@pytest.fixture
def listings(monkeypatch):
    """The query of each listing request gcsfs sends (``GET b/<bucket>/o``, through its
    ``_request``); ``of(asked, folder)`` keeps those of the folder (gcsfs looks for a folder
    of an object's name when it reads one: listings too)."""
    asked: list[dict] = []
    stock = gcsfs.GCSFileSystem._request

    async def counted(self, method, path, *args, **kwargs):
        if method == "GET" and path == "b/{}/o":
            asked.append(kwargs)
        return await stock(self, method, path, *args, **kwargs)

    monkeypatch.setattr(gcsfs.GCSFileSystem, "_request", counted)
    return asked


def _of(asked: list[dict], url: str) -> list[dict]:
    """The listings of the folder of ``url`` (``gs://bucket/key``)."""
    prefix = url.split("/", 3)[3] + "/"
    return [q for q in asked if q.get("prefix") == prefix]


def _store(gcs, url=None):
    return FsspecStore(url or gcs.url(), storage_options=gcs.fsspec_options)


def test_opening_a_group_lists_its_children_once(gcs_server, listings):
    """A group whose array holds 2,500 chunks (3 pages of keys below the group): its
    members come from one listing request, which names the array's folder once."""
    url = gcs_server.url()
    g = zarrx.open_group(url, mode="w", storage_options=gcs_server.fsspec_options)
    g.create_array("a", shape=(2500,), chunks=(1,), dtype="i1")[:] = 1
    g.create_group("b")
    listings.clear()
    opened = zarrx.open_group(url, mode="r", storage_options=gcs_server.fsspec_options)
    assert isinstance(opened.store, FsspecStore)
    assert sorted(opened.keys()) == ["a", "b"]
    assert [name for name, _ in opened.members()] == ["a", "b"]
    assert [q["delimiter"] for q in _of(listings, url)] == ["/", "/"]
    listings.clear()
    store = _store(gcs_server, url)
    assert Store.list_dir(store, "") == (["zarr.json"], ["a", "b"])   # every key below
    assert len(_of(listings, url)) == 3


def test_xarray_finds_the_variables_of_a_store_without_consolidated_metadata(gcs_server,
                                                                            listings):
    xr = pytest.importorskip("xarray")
    url = gcs_server.url()
    so = gcs_server.fsspec_options
    ds = xr.Dataset({"t": (("x",), np.arange(1500.0))}, coords={"x": np.arange(1500)})
    ds.to_zarr(url, mode="w", consolidated=False, storage_options=so,
               encoding={"t": {"chunks": (50,)}})
    listings.clear()
    got = xr.open_dataset(url, engine="zarrx", consolidated=False, storage_options=so)
    xr.testing.assert_identical(got.load(), ds)
    assert [q["delimiter"] for q in _of(listings, url)] == ["/"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_children_as_the_keys_below_name_them(gcs_server, seed):
    """Random trees of keys with unusual names, and markers of folders that hold keys: the
    children of every folder are the ones the listing of every key below it gives."""
    url = gcs_server.url()
    keys = random_tree(seed)
    store = _store(gcs_server, url)
    store.set_many([(k, b"x") for k in keys])
    for marker in ("k/", "k/k/", "a/"):       # (empty "name/" objects another tool made)
        store.fs.pipe(f"{store.root}/{marker}", b"")
    for p in ["", "nothing/", "k/k/y/", *sorted(folders_of(keys))]:
        want = Store.list_dir(store, p)
        assert store.list_dir(p) == want, p
        if p == "":
            assert want[1] == sorted({k.partition("/")[0] for k in keys if "/" in k})
    inner = _store(gcs_server, f"{url}/k")       # a store rooted deeper lists alike below it
    assert inner.list_dir("") == store.list_dir("k/") == (["k", "x"], ["k"])
    assert inner.list_dir("k/") == store.list_dir("k/k/") == (["y"], [])


def test_a_folder_holding_only_its_marker_is_a_child_holding_no_node(gcs_server):
    """GCS names a folder whose only object is its marker as a folder, as S3 does (and
    zarr-python's list_dir lists it); the group's members are the same either way."""
    url = gcs_server.url()
    g = zarrx.open_group(url, mode="w", storage_options=gcs_server.fsspec_options)
    g.create_group("b")
    store = _store(gcs_server, url)
    store.fs.pipe(f"{store.root}/m/", b"")
    assert store.list_dir("") == (["zarr.json"], ["b", "m"])
    assert Store.list_dir(store, "") == (["zarr.json"], ["b"])
    assert [name for name, _ in zarrx.open_group(store, mode="r").members()] == ["b"]


def test_the_emulator_honours_the_delimiter_but_not_start_offset(gcs_server):
    """What the tests' server does: it names child folders as GCS does (``prefixes``) and
    pages as GCS does (as the tests' emulator is set up), but lists from the first key
    whatever ``startOffset`` says: a listing skipping over keys by it cannot be tried there."""
    store = _store(gcs_server)
    store.set_many([("a/x", b"1"), ("a/y/z", b"2"), ("b", b"3")])
    bucket, _, key = store.root.partition("/")

    def names(**query):
        page = store.fs.call("GET", "b/{}/o", bucket, json_out=True, prefix=f"{key}/", **query)
        return [i["name"][len(key) + 1:] for i in page.get("items", [])], \
            [p[len(key) + 1:] for p in page.get("prefixes", [])], "nextPageToken" in page

    assert names(delimiter="/") == (["b"], ["a/"], False)
    assert names(delimiter="/", maxResults=1) == ([], ["a/"], True)
    assert names(startOffset=f"{key}/b") == (["a/x", "a/y/z", "b"], [], False)
