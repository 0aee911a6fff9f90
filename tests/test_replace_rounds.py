"""Round trips of creating over a place (``overwrite``, mode ``w``), of opening in mode ``a``
and of ``to_zarrx`` on a remote store (``latency_bound``): what the batch that reads the node
and the nodes above it found is not read again, and the outcome (the errors, what ends up
stored) is the same as reading it again."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import ContainsArrayError, NodeExistsError
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.metadata.nodes import load_node
from zarrx.store import MemoryStore

from store_rounds import RemoteMemoryStore, Rounds


def _before_delete(store):
    """The read rounds before the overwrite clears the place (it lists the place, then
    deletes what it found)."""
    cut = next(i for i, (m, _) in enumerate(store.calls) if m in ("list_prefix",
                                                                    "delete_prefix"))
    return [c for c in store.calls[:cut] if c in store.reads()]


def _hierarchy(fmt, path="a/b"):
    inner = RemoteMemoryStore()
    zarrx.create_group(inner, path=path, zarr_format=fmt)
    return inner


# -- 1. overwrite where nothing is stored ---------------------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("path", ["x", "a/b/x"])
def test_overwrite_of_a_missing_node_reads_only_the_batch_before_clearing(fmt, path):
    store = Rounds(_hierarchy(fmt))
    zarrx.create_array(store, name=path, shape=(4,), dtype="i4", overwrite=True)
    # the node, its parents and (for the consolidated metadata) whether the groups between
    # hold a .zmetadata: one batch; before, two or three more rounds came between
    assert len(_before_delete(store)) == 1
    assert store.calls[store.calls.index(_before_delete(store)[0]) + 1] == \
        ("list_prefix", [path + "/"])
    store.reset()
    zarrx.open(store, mode="w", path=path)
    assert len(_before_delete(store)) == 1
    assert isinstance(load_node(store.inner, path), GroupMeta)


@pytest.mark.parametrize("fmt", [2, 3])
def test_overwrite_still_removes_objects_left_without_a_node_document(fmt):
    inner = _hierarchy(fmt)
    inner.set("a/b/x/c/0", b"orphan")
    inner.set("a/b/x/y/zarr.json" if fmt == 3 else "a/b/x/y/.zgroup",
              b'{"zarr_format": 3, "node_type": "group"}' if fmt == 3 else b'{"zarr_format": 2}')
    store = Rounds(inner)
    zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4", overwrite=True)
    assert sorted(inner.list_prefix("a/b/x/")) == \
        (["a/b/x/zarr.json"] if fmt == 3 else ["a/b/x/.zarray"])


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kind", ["array", "group"])
def test_create_hierarchy_overwrite_removes_objects_left_without_a_node_document(fmt, kind):
    # before, only a node found there was deleted: the new array read the old chunks
    inner = _hierarchy(fmt)
    old = zarrx.create_array(inner, name="a/b/x", shape=(4,), chunks=(2,), dtype="i4",
                             fill_value=0, zarr_format=fmt)
    old[...] = 7
    for name in ("zarr.json", ".zarray", ".zattrs"):
        inner.delete(f"a/b/x/{name}")
    meta = (zarrx.create_array(MemoryStore(), shape=(4,), chunks=(2,), dtype="i4", fill_value=0,
                               zarr_format=fmt).metadata if kind == "array"
            else GroupMeta(zarr_format=fmt))
    zarrx.create_hierarchy(store=inner, nodes={"a/b/x": meta}, overwrite=True)
    doc = ("zarr.json" if fmt == 3 else ".zarray" if kind == "array" else ".zgroup")
    assert sorted(inner.list_prefix("a/b/x/")) == [f"a/b/x/{doc}"]
    if kind == "array":
        np.testing.assert_array_equal(zarrx.open_array(inner, path="a/b/x")[...], 0)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("where", ["", "a"])
def test_overwrite_keeps_consolidated_metadata_that_lists_an_orphan_in_step(fmt, where):
    inner = _hierarchy(fmt)
    zarrx.create_group(inner, path="a/b/x/y", zarr_format=fmt)
    zarrx.consolidate_metadata(inner, path=where or None, zarr_format=fmt)
    for name in ("zarr.json", ".zgroup", ".zattrs"):
        inner.delete(f"a/b/x/{name}")          # x is gone; its child y is left behind
    store = Rounds(inner)
    zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4", overwrite=True)
    g = zarrx.open_group(inner, path=where or None, mode="r")
    entries = g.metadata.consolidated
    rel = "b/x" if where else "a/b/x"
    assert isinstance(entries[rel], ArrayMeta)
    assert not [k for k in entries if k.startswith(rel + "/")]
    assert not list(inner.list_prefix("a/b/x/y/"))


def test_overwrite_on_a_local_store_reads_what_the_batch_did_not():
    store = Rounds(MemoryStore())
    zarrx.create_group(store.inner, path="a/b")
    store.reset()
    zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4", overwrite=True)
    # zarr.json first; the root has one, so its .zmetadata was not read: read now
    reads = _before_delete(store)
    assert any(".zmetadata" in keys for _, keys in reads[2:])
    assert isinstance(load_node(store.inner, "a/b/x"), ArrayMeta)


# -- 2. mode "a" on a missing node ------------------------------------------------------------

@pytest.mark.parametrize("fmt", [None, 2, 3])
@pytest.mark.parametrize("shape", [None, (4,)])
def test_open_mode_a_on_a_missing_node_reads_once_before_writing(fmt, shape):
    store = Rounds(_hierarchy(fmt or 3))
    kw = {} if shape is None else {"shape": shape, "dtype": "i4"}
    node = zarrx.open(store, mode="a", path="a/b/x", zarr_format=fmt, **kw)
    assert isinstance(node, zarrx.Group if shape is None else zarrx.Array)
    assert node.metadata.zarr_format == (fmt or 3)
    assert len(store.node_reads("a/b/x")) == 1   # two before: the node, then the batch
    store = Rounds(_hierarchy(fmt or 3))
    zarrx.open_group(store, mode="a", path="a/b/x", zarr_format=fmt)
    assert len(store.node_reads("a/b/x")) == 1


def test_open_mode_a_of_an_existing_v2_group_reads_its_consolidated_metadata():
    inner = _hierarchy(2)
    zarrx.create_array(inner, name="a/b/v", shape=(2,), dtype="i1", zarr_format=2)
    zarrx.consolidate_metadata(inner, path="a/b", zarr_format=2)
    store = Rounds(inner)
    g = zarrx.open_group(store, mode="a", path="a/b")
    assert set(g.metadata.consolidated) == {"v"}
    assert [m for m, _ in store.calls] == ["get_many"]
    assert zarrx.open_group(store, mode="a", path="a/b",
                            use_consolidated=False).metadata.consolidated is None


@pytest.mark.parametrize("opener", [zarrx.open, zarrx.open_group])
def test_open_mode_a_answers_as_before(opener):
    inner = _hierarchy(2)
    zarrx.create_array(inner, name="a/arr", shape=(2,), dtype="i1", zarr_format=2)
    message = ("the node at 'a/b' in {!r} is a Zarr v2 group, not Zarr v3 as zarr_format=3 "
               "asks")
    with pytest.raises(NodeExistsError, match=re.escape(message.format(inner))):
        opener(inner, mode="a", path="a/b", zarr_format=3)
    with pytest.raises(ContainsArrayError, match="'a/arr' is an array"):
        opener(inner, mode="a", path="a/arr/x")
    assert opener(inner, mode="a", path="a/b").metadata.zarr_format == 2


# -- 3. to_zarrx ---------------------------------------------------------------------------------

def _dataset(n=3):
    xr = pytest.importorskip("xarray")
    return xr.Dataset({f"v{i}": (("t",), np.arange(4) + i) for i in range(n)})


@pytest.mark.parametrize("mode", ["w", "w-"])
def test_to_zarrx_reads_the_line_once_and_not_again_per_variable(mode):
    from zarrx.xarray import to_zarrx

    store = Rounds(_hierarchy(3))
    to_zarrx(_dataset(3), store, mode=mode, group="a/b/x", consolidated=False)
    # the group's line once (its absence, its format, its creation), where mode "w-" read
    # the group twice more (mode "w" reads it again to replace the group: see below); then
    # one batch for the variables (their places and the line), not one each
    line = store.node_reads("a/b/x")
    assert len(line) == (3 if mode == "w" else 2)
    assert {"a/b/x/v0/zarr.json", "a/b/x/v2/.zarray"} <= set(line[-1])
    assert not [c for c in store.reads() if "a/b/x/v1/zarr.json" in c[1] and c[1] != line[-1]]
    xr = pytest.importorskip("xarray")
    back = xr.open_dataset(store.inner, engine="zarrx", group="a/b/x")
    assert back.equals(_dataset(3))


def test_to_zarrx_mode_w_minus_refuses_as_before():
    from zarrx.xarray import to_zarrx

    inner = _hierarchy(3)
    with pytest.raises(NodeExistsError, match=re.escape("to_zarrx: a node exists at 'a/b' "
                                                        "(mode 'w-' creates")):
        to_zarrx(_dataset(1), inner, mode="w-", group="a/b")
    inner.set("a/b/x/c/0", b"left")
    with pytest.raises(NodeExistsError, match="mode 'w-' creates a node at 'a/b/x'"):
        to_zarrx(_dataset(1), inner, mode="w-", group="a/b/x")
    zarrx.create_array(inner, name="a/arr", shape=(1,), dtype="i1")
    with pytest.raises(ContainsArrayError):
        to_zarrx(_dataset(1), inner, mode="w-", group="a/arr/x")


class _ConsolidatedMeanwhile:
    """A store under which another writer consolidates the whole hierarchy right after
    ``to_zarrx`` first read the line of the group it writes (``g``)."""

    armed = False

    def get_many(self, requests, *args, **kwargs):
        out = super().get_many(requests, *args, **kwargs)
        if self.armed and "g/.zmetadata" in [k for k, _ in requests]:
            self.armed = False
            zarrx.consolidate_metadata(self)
        return out


@pytest.mark.parametrize("base", [MemoryStore, RemoteMemoryStore])
@pytest.mark.parametrize("fmt", [2, 3])
def test_to_zarrx_mode_w_keeps_consolidated_metadata_made_meanwhile_in_step(base, fmt):
    # (before: the replacement trusted that first read, which found no consolidated metadata
    # at the root, so the replaced group's old variable stayed listed there)
    store = type("Store", (_ConsolidatedMeanwhile, base), {})()
    zarrx.create_array(store, name="g/old", shape=(2,), dtype="i1", zarr_format=fmt)
    store.armed = True
    from zarrx.xarray import to_zarrx
    to_zarrx(_dataset(1), store, mode="w", group="g", zarr_format=fmt, consolidated=False)
    assert not store.armed
    root = load_node(store, "", fmt, consolidated=True)
    assert sorted(root.consolidated) == ["g", "g/v0"]
    assert "old" not in zarrx.open_consolidated(store, zarr_format=fmt)["g"]
