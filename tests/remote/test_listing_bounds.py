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
