"""An object below a node of a remote store whose name the store's key rules refuse (another
tool made ``a/c//z`` or a name with a control character): no key can name it, so the store
cannot remove it, and a delete or an overwrite of the node refuses before removing anything,
naming it. Before, the node's documents and chunks were removed first and the delete then
failed, so an overwrite lost the old node without making the new one."""
from __future__ import annotations

import uuid

import numpy as np
import pytest

pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'zarrx[remote]')")
import fsspec  # noqa: E402

import zarrx  # noqa: E402
from zarrx.errors import StoreError  # noqa: E402
from zarrx.store import CountingStore  # noqa: E402
from zarrx.store.remote import FsspecStore  # noqa: E402

STRAYS = ["a/c//z", "a/c/x\ny", "a/c/./w"]


@pytest.fixture(params=STRAYS, ids=repr)
def stray(request):
    """A group holding an array ``a`` of two chunks (all 1) and the stray object; the store,
    the group, the stray's key."""
    root = f"unnamable-{uuid.uuid4().hex}"
    store = FsspecStore(f"memory://{root}")
    g = zarrx.open_group(store, mode="w")
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    fsspec.filesystem("memory").pipe(f"/{root}/{request.param}", b"x")
    yield store, g, request.param
    fsspec.filesystem("memory").rm(f"/{root}", recursive=True)


def _kept(store, key):
    assert sorted(store.list_prefix("")) == sorted(
        ["zarr.json", "a/zarr.json", "a/c/0", "a/c/1", key])
    np.testing.assert_array_equal(zarrx.open_array(store, path="a", mode="r")[:], 1)


def test_deleting_the_node_refuses_before_removing_anything(stray):
    store, g, key = stray
    with pytest.raises(StoreError) as info:
        del g["a"]
    assert str(info.value) == (
        f"{store!r}: cannot delete 'a/': the object {key!r} below it has a name the store "
        f"refuses ({store.key_problem(key)}), so it cannot remove it; nothing was deleted: "
        f"remove it with another tool, then delete again")
    _kept(store, key)


def test_overwriting_the_node_keeps_the_old_one(stray):
    store, g, key = stray
    with pytest.raises(StoreError, match="nothing was deleted"):
        g.create_array("a", shape=(2,), dtype="f8", overwrite=True)
    _kept(store, key)


def test_a_prefix_delete_refuses_too_also_through_a_wrapper(stray):
    store, _, key = stray
    with pytest.raises(StoreError, match="nothing was deleted"):
        CountingStore(store).delete_prefix("a/")
    _kept(store, key)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_refused_delete_leaves_the_consolidated_metadata_listing_the_node(fmt):
    # (the delete drops the node's entries before removing anything; refused, it lists them
    # again, no longer pending)
    import json

    root = f"unnamable-{uuid.uuid4().hex}"
    store = FsspecStore(f"memory://{root}")
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    zarrx.consolidate_metadata(store)
    key = ".zmetadata" if fmt == 2 else "zarr.json"
    before = json.loads(store.get(key))
    fsspec.filesystem("memory").pipe(f"/{root}/a/c//z", b"x")
    try:
        with pytest.raises(StoreError, match="nothing was deleted"):
            del zarrx.open_group(store, mode="r+")["a"]
        assert json.loads(store.get(key)) == before
    finally:
        fsspec.filesystem("memory").rm(f"/{root}", recursive=True)
