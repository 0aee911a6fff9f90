"""``RemoteOptions.max_listed`` on the listings of fsspec filesystems other than s3fs and
HTTP: fsspec's own ``find`` walked every folder and returned everything at the end, so a
filesystem naming ever more folders was listed until the stack or memory ran out; zarrx walks
such a filesystem itself and stops once a listing passes ``max_listed`` entries."""
from __future__ import annotations

import itertools
import re

import pytest

fsspec = pytest.importorskip("fsspec")

from fsspec.asyn import AsyncFileSystem  # noqa: E402


def _entries(path: str) -> list[dict]:
    """An endless tree: every folder holds a file and a folder."""
    path = path.strip("/")
    return [{"name": f"{path}/f", "type": "file", "size": 1},
            {"name": f"{path}/d", "type": "directory", "size": 0}]


class _EndlessFS(fsspec.AbstractFileSystem):
    protocol = "endless"
    listings = 0

    def ls(self, path, detail=True, **kwargs):
        type(self).listings += 1
        out = _entries(path)
        return out if detail else [e["name"] for e in out]


class _AsyncEndlessFS(AsyncFileSystem):
    protocol = "aendless"
    listings = 0

    async def _ls(self, path, detail=True, **kwargs):
        type(self).listings += 1
        out = _entries(path)
        return out if detail else [e["name"] for e in out]


@pytest.mark.parametrize("cls", [_EndlessFS, _AsyncEndlessFS], ids=["sync", "async"])
def test_a_filesystem_listing_ever_deeper_folders_is_cut_at_max_listed(cls):
    """Before: fsspec's walk went down until RecursionError (not a StoreError), after about
    a thousand listings; now a RemoteError naming the listing after max_listed entries."""
    from zarrx.errors import RemoteError
    from zarrx.store import remote
    cls.listings = 0
    store = remote.FsspecStore(cls(skip_instance_cache=True), path="root", max_listed=100)
    with pytest.raises(RemoteError, match=re.escape("cannot list 'a/' (") + ".*"
                       + re.escape("the server listed more than 100 keys")):
        list(store.list_prefix("a/"))
    assert cls.listings <= 51


@pytest.mark.parametrize("most, fails", [(9, True), (10, False)])
def test_a_memory_filesystem_listing_is_bounded_by_max_listed(most, fails):
    from zarrx.errors import RemoteError
    from zarrx.store import remote
    name = f"memory://bounds-{most}-{next(_names)}"
    store = remote.FsspecStore(name, max_listed=most)
    for i in range(10):
        store.set(f"k{i}", b"x")
    if fails:
        with pytest.raises(RemoteError, match=r"cannot list '<root>' \(memory://.*: the "
                                              r"server listed more than 9 keys"):
            list(store.list_prefix(""))
    else:
        assert sorted(store.list_prefix("")) == [f"k{i}" for i in range(10)]


_names = itertools.count()


# -- filesystems with a find of their own ------------------------------------------------------
# A filesystem whose ``find`` is one flat listing returned whole (gcsfs, adlfs) was counted
# against max_listed only once that listing had come: a server naming keys without end was
# listed until memory ran out. Now such a filesystem is listed within the bound as it comes.

_FOLDERS, _FILES = 1000, 10             # a tree of 10,000 files in 1,000 folders


def _tree_entries(path: str) -> list[dict]:
    path = path.strip("/")
    if path == "root/a":
        return [{"name": f"{path}/d{i}", "type": "directory", "size": 0}
                for i in range(_FOLDERS)]
    if path.startswith("root/a/d"):
        return [{"name": f"{path}/f{j}", "type": "file", "size": 1} for j in range(_FILES)]
    raise FileNotFoundError(path)


def _flat(made: list[int], path: str) -> dict:
    """What a find of its own gives: every file below ``path``, made one by one."""
    out = {}
    for i in range(_FOLDERS):
        for j in range(_FILES):
            made[0] += 1
            name = f"{path.strip('/')}/d{i}/f{j}"
            out[name] = {"name": name, "type": "file", "size": 1}
    return out


class _OwnFindFS(fsspec.AbstractFileSystem):
    protocol = "ownfind"
    made = [0]

    def ls(self, path, detail=True, **kwargs):
        out = _tree_entries(path)
        type(self).made[0] += len(out)
        return out if detail else [e["name"] for e in out]

    def find(self, path, maxdepth=None, withdirs=False, detail=False, **kwargs):
        found = _flat(type(self).made, path)
        return found if detail else sorted(found)


class _AsyncOwnFindFS(AsyncFileSystem):
    protocol = "aownfind"
    made = [0]

    async def _ls(self, path, detail=True, **kwargs):
        out = _tree_entries(path)
        type(self).made[0] += len(out)
        return out if detail else [e["name"] for e in out]

    async def _find(self, path, maxdepth=None, withdirs=False, detail=False, **kwargs):
        found = _flat(type(self).made, path)
        return found if detail else sorted(found)


@pytest.mark.parametrize("cls", [_OwnFindFS, _AsyncOwnFindFS], ids=["sync", "async"])
def test_a_filesystem_with_its_own_find_is_bounded_while_listing(cls):
    """Before: its find made all 10,000 entries before the bound of 100 applied; now the
    listing stops within a folder's listing past the bound."""
    from zarrx.errors import RemoteError
    from zarrx.store import remote
    cls.made[0] = 0
    store = remote.FsspecStore(cls(skip_instance_cache=True), path="root", max_listed=100)
    with pytest.raises(RemoteError, match=re.escape("the server listed more than 100 keys")):
        list(store.list_prefix("a/"))
    assert cls.made[0] <= _FOLDERS + 100
    cls.made[0] = 0
    whole = remote.FsspecStore(cls(skip_instance_cache=True), path="root")
    assert len(list(whole.list_prefix("a/d7/"))) == _FILES
    assert sorted(whole.list_prefix("a/d7/")) == sorted(f"a/d7/f{j}" for j in range(_FILES))


def test_gcsfs_listings_stop_at_the_bound(gcs_server):
    """gcsfs's find takes every page before it returns (asking for pages of 1000 entries, for
    as long as the server names a next one); its listing is now told to stop after
    max_listed + 1 entries, asking for no more (the tests' emulator, like GCS, sends at most
    ``maxResults``)."""
    from zarrx.errors import RemoteError
    from zarrx.store.remote import FsspecStore
    store = FsspecStore(gcs_server.url(), storage_options=gcs_server.fsspec_options,
                        max_listed=10)
    store.set_many((f"a/{i:02d}", b"x") for i in range(30))
    sent = []
    stock = store.fs._call_list_objects

    async def counting(bucket, **kwargs):
        asked.append(kwargs.get("maxResults"))
        page = await stock(bucket, **kwargs)
        sent.append(len(page.get("items", [])))
        return page

    asked: list = []

    store.fs._call_list_objects = counting
    with pytest.raises(RemoteError, match=re.escape("the server listed more than 10 keys")):
        list(store.list_prefix("a/"))
    assert asked == [11] and sent == [11]
    store.options = type(store.options).make(store.options, max_listed=30)
    asked.clear()
    assert sorted(store.list_prefix("a/")) == [f"a/{i:02d}" for i in range(30)]
    assert asked == [31]
