"""Creating a node reads its own metadata and that of every node above it in one batch: one
round trip on a remote store (``latency_bound``), whatever the depth of the path, for
``create_array``, ``create_group``, ``create``, ``open(mode="w")``, ``create_hierarchy`` and
``Group.create_group``; the checks give the same answers and errors as reading each node
alone. ``load_nodes`` is the batched ``load_node``."""
from __future__ import annotations

import json
import re

import pytest

import zarrx
from zarrx.errors import ContainsArrayError, MetadataError, NodeExistsError
from zarrx.metadata.model import ArrayMeta, GroupMeta
from zarrx.metadata.nodes import load_node
from zarrx.store import MemoryStore

from store_rounds import NODE_DOCS, RemoteMemoryStore, Rounds

LINE = ("", "a", "a/b", "a/b/x")          # the new node a/b/x and every node above it


def _docs(*paths):
    """Every candidate document of the nodes at ``paths`` (the root's .zmetadata too)."""
    keys = {f"{p}/{n}" if p else n for p in paths for n in NODE_DOCS}
    return keys | ({".zmetadata"} if "" in paths else set())


def _hierarchy(fmt, inner=None):
    """A store holding the groups / and a/b of Zarr format ``fmt``."""
    inner = RemoteMemoryStore() if inner is None else inner
    zarrx.create_group(inner, path="a/b", zarr_format=fmt)
    return inner


def _one_batch(store, extra=()):
    """The store's node reads were one round, asking for every document of the line (and
    for ``extra``)."""
    assert store.node_reads(*LINE) == [store.reads()[0][1]]
    assert set(store.reads()[0][1]) == _docs(*LINE) | set(extra)


# -- latency-bound stores: one round -------------------------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_create_array_inherits_the_format_from_one_batch(fmt):
    store = Rounds(_hierarchy(fmt))
    z = zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4")
    assert z.metadata.zarr_format == fmt                 # found in that one batch
    _one_batch(store)
    assert store.reads()[0][0] == "get_many"


def test_create_array_in_an_existing_group_costs_four_read_rounds():
    store = Rounds(_hierarchy(3))
    zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4")
    # the node and its parents (one batch), the objects a delete stopped part way may have
    # left where the array goes (one listing), then keeping consolidated metadata in step:
    # the groups between that may carry some (one batch) and the root's document; seven before
    assert len(store.reads()) == 4 and store.reads()[1] == ("list_prefix", ["a/b/x/"])
    assert store.counts["get_many"] == 2


def test_create_array_in_a_fresh_store_reads_once_before_writing_its_parents():
    store = Rounds(RemoteMemoryStore())
    zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4", zarr_format=3)
    _one_batch(store)
    first_write = next(i for i, (m, _) in enumerate(store.calls) if m in ("set", "set_if"))
    assert first_write == 1                              # that batch, then the writes
    for p in ("", "a", "a/b"):
        assert isinstance(load_node(store.inner, p), GroupMeta)


@pytest.mark.parametrize("fmt", [None, 2, 3])
def test_create_group_and_create_read_the_line_once(fmt):
    store = Rounds(_hierarchy(fmt or 3))
    zarrx.create_group(store, path="a/b/x", zarr_format=fmt)
    _one_batch(store)
    store = Rounds(_hierarchy(fmt or 3))
    zarrx.create(shape=(4,), store=store, path="a/b/x", zarr_format=fmt)   # format, then create
    _one_batch(store)


@pytest.mark.parametrize("shape", [None, (4,)])
def test_open_mode_w_at_a_nested_path_reads_the_line_once(shape):
    store = Rounds(RemoteMemoryStore())
    kw = {} if shape is None else {"shape": shape, "dtype": "i4"}
    node = zarrx.open(store, path="a/b/x", mode="w", **kw)
    assert isinstance(node, zarrx.Group if shape is None else zarrx.Array)
    # (replacing: whether the groups between hold a .zmetadata, kept in step, too)
    _one_batch(store, {"a/.zmetadata", "a/b/.zmetadata"})


def test_create_hierarchy_reads_every_node_and_parent_in_one_batch():
    store = Rounds(_hierarchy(3))
    zarrx.create_hierarchy(store=store, nodes={
        "a/b/x": GroupMeta(zarr_format=3), "a/b/x/y": GroupMeta(zarr_format=3),
        "a/c/d": GroupMeta(zarr_format=3)})
    paths = (*LINE, "a/b/x/y", "a/c", "a/c/d")
    assert store.node_reads(*paths) == [store.reads()[0][1]]
    assert set(store.reads()[0][1]) == _docs(*paths)


def test_group_create_group_and_move_read_once():
    inner = _hierarchy(3)
    g = zarrx.open_group(inner, path="a", mode="r+")
    store = Rounds(inner)
    g = zarrx.Group(store, "a", g.metadata)
    g.create_group("b/x/y")
    assert store.node_reads("a/b", "a/b/x", "a/b/x/y") == [store.reads()[0][1]]
    store.reset()
    g.move("b/x", "n/m")
    assert store.node_reads("a/b/x", "a/n", "a/n/m") == [store.reads()[0][1]]


@pytest.mark.parametrize("fmt", [2, 3])
def test_to_zarrx_reads_the_line_once_for_the_format_and_the_group(fmt):
    xr = pytest.importorskip("xarray")
    import numpy as np
    from zarrx.xarray import to_zarrx

    store = Rounds(_hierarchy(fmt))
    to_zarrx(xr.Dataset({"v": (("t",), np.arange(4))}), store, mode="w", group="a/b/x",
             consolidated=False)
    assert zarrx.open_group(store.inner, path="a/b/x", mode="r").metadata.zarr_format == fmt
    # the group's line once for its format, once more right before it is replaced (with the
    # consolidated documents that replacing keeps in step); then the variable's own line
    assert store.node_reads(*LINE) == [store.reads()[0][1], store.reads()[1][1],
                                       next(k for m, k in store.reads() if "a/b/x/v/.zgroup" in k)]


# -- the checks answer as before -----------------------------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("at", ["", "a", "a/b"])
def test_an_array_in_the_way_is_found_in_the_batch(fmt, at):
    inner = RemoteMemoryStore()
    zarrx.create_array(inner, name=at or None, shape=(2,), dtype="i1", zarr_format=fmt)
    store = Rounds(inner)
    message = (f"create_array: cannot create 'a/b/x': {at or '/'!r} is an array in "
               f"{store!r} (an array has no children)")
    with pytest.raises(ContainsArrayError, match=re.escape(message)):
        zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4")
    assert len(store.node_reads(*LINE)) == 1
    assert not [c for c in store.calls if c[0] in ("set", "set_if", "delete")]


def test_a_parent_of_the_other_format_is_refused_after_one_batch():
    store = Rounds(_hierarchy(2))
    message = (f"create_array: cannot create a Zarr v3 node at 'a/b/x' inside the Zarr v2 "
               f"group 'a/b' in {store!r}: a hierarchy holds one Zarr format (readers do not "
               f"list children of another format); use zarr_format=2 or a separate store")
    with pytest.raises(MetadataError, match=re.escape(message)):
        zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4", zarr_format=3)
    assert len(store.node_reads(*LINE)) == 1


def test_an_existing_node_is_found_in_the_batch():
    inner = _hierarchy(3)
    zarrx.create_array(inner, name="a/b/x", shape=(2,), dtype="i1")
    store = Rounds(inner)
    with pytest.raises(NodeExistsError, match="a node already exists at 'a/b/x'"):
        zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4")
    assert len(store.node_reads(*LINE)) == 1


@pytest.mark.parametrize("make", [RemoteMemoryStore, MemoryStore])
@pytest.mark.parametrize("fmt", [None, 3])
def test_a_broken_parent_document_raises_as_reading_that_parent_does(make, fmt):
    inner = _hierarchy(3, make())
    inner.set("a/zarr.json", b'{"zarr_format": 3, "node_type": "group", "attributes": [')
    with pytest.raises(MetadataError) as alone:
        load_node(inner, "a")
    assert "a/zarr.json" in str(alone.value)
    with pytest.raises(MetadataError) as created:
        zarrx.create_array(inner, name="a/b/x", shape=(4,), dtype="i4", zarr_format=fmt)
    # without zarr_format the nearest group (a/b) gives the format; the parents check then
    # reads a, from the store root down, as it did node by node
    assert str(created.value) == str(alone.value)
    assert inner.get("a/b/x/zarr.json") is None


def test_the_nearest_node_gives_the_format_before_a_broken_one_above_it_is_parsed():
    inner = _hierarchy(2)
    inner.set(".zgroup", b"not json")
    with pytest.raises(MetadataError) as alone:
        load_node(inner, "")
    with pytest.raises(MetadataError) as created:
        zarrx.create_group(inner, path="a/b/x")
    assert str(created.value) == str(alone.value)


# -- local stores: zarr.json first, then the v2 documents of the nodes without one ---------

def test_a_local_store_reads_zarr_json_first_then_the_v2_documents_in_one_more_round():
    store = Rounds(MemoryStore())
    zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4")
    v3 = {f"{p}/zarr.json" if p else "zarr.json" for p in LINE}
    first, second = store.reads()[:2]
    assert set(first[1]) == v3
    assert set(second[1]) == _docs(*LINE) - v3
    assert store.node_reads(*LINE) == [second[1]]
    store = Rounds(_hierarchy(3, MemoryStore()))
    zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4")
    first, second = store.reads()[:2]
    assert set(first[1]) == v3                           # the parents have one: done
    assert set(second[1]) == _docs("a/b/x") - {"a/b/x/zarr.json"}


def test_load_node_alone_keeps_its_requests_on_a_local_store():
    store = Rounds(_hierarchy(2, MemoryStore()))
    load_node(store, "a")
    assert store.reads() == [("get", ["a/zarr.json"]),
                             ("get_many", ["a/.zarray", "a/.zgroup", "a/.zattrs"])]


# -- load_nodes is load_node for several nodes ---------------------------------------------

def _zoo(inner):
    """A store with a node of every kind load_node reads, and broken documents."""
    zarrx.create_group(inner, zarr_format=2, attributes={"r": 1})
    zarrx.create_array(inner, name="v2a", shape=(3,), dtype="i2", zarr_format=2,
                       attributes={"units": "m"})
    zarrx.create_group(inner, path="v2g", zarr_format=2)
    zarrx.consolidate_metadata(inner, zarr_format=2)     # the root's .zmetadata
    v3 = MemoryStore()                  # a consolidated v3 group, stored at g3
    zarrx.create_array(v3, name="arr", shape=(5,), dtype="f4", zarr_format=3)
    zarrx.consolidate_metadata(v3)
    for key in v3.list_prefix(""):
        inner.set(f"g3/{key}", v3.get(key))
    inner.set("both/zarr.json", json.dumps({"zarr_format": 3, "node_type": "group"}).encode())
    inner.set("both/.zgroup", b'{"zarr_format": 2}')     # v3 wins
    inner.set("bad3/zarr.json", b"{")
    inner.set("bad2/.zarray", b'{"zarr_format": 2}')
    inner.set("html/.zgroup", b"<html><title>Sign in</title></html>")
    return inner


PATHS = ["", "v2a", "v2g", "g3", "g3/arr", "both", "bad3", "bad2", "html", "none", "none/x"]


def _outcome(get, path):
    try:
        return get(path)
    except zarrx.ZarrError as exc:
        return (type(exc), str(exc))


@pytest.mark.parametrize("make", [RemoteMemoryStore, MemoryStore])
@pytest.mark.parametrize("zarr_format", [None, 2, 3])
def test_load_nodes_gives_what_load_node_gives(make, zarr_format):
    from zarrx.metadata.nodes import load_nodes

    inner = _zoo(make())
    batch = load_nodes(inner, PATHS, zarr_format)
    for path in PATHS:
        want = _outcome(lambda p: load_node(inner, p, zarr_format), path)
        assert _outcome(lambda p: batch[p], path) == want, path
    assert isinstance(batch["v2a"] if zarr_format != 3 else batch["g3/arr"], ArrayMeta)


def test_load_nodes_reads_every_path_in_one_round_on_a_latency_bound_store():
    from zarrx.metadata.nodes import load_nodes

    store = Rounds(_zoo(RemoteMemoryStore()))
    batch = load_nodes(store, PATHS)
    assert [m for m, _ in store.calls] == ["get_many"]
    assert batch["both"].zarr_format == 3
    assert batch[""].consolidated is not None            # the root's .zmetadata was read
    store = Rounds(_zoo(MemoryStore()))
    load_nodes(store, PATHS)
    assert [m for m, _ in store.calls] == ["get_many", "get_many"]
