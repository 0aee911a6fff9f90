"""Groups and hierarchy: create/open, members, paths across levels, attrs, modes, consolidation."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.store import CountingStore, MemoryStore


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def fmt(request):
    return request.param


def build(store, fmt):
    g = zarrx.open_group(store, mode="w", zarr_format=fmt, attributes={"title": "t"})
    g.create_array("temperature", shape=(100,), dtype="i4", chunks=(10,))
    m = g.create_group("measurements")
    m.create_array("humidity", shape=(5, 6), dtype="f8", chunks=(2, 3))
    m.create_group("empty")
    return g


def test_members_and_paths(fmt):
    store = MemoryStore()
    g = build(store, fmt)
    assert sorted(g.keys()) == ["measurements", "temperature"]
    assert list(g.group_keys()) == ["measurements"]
    assert list(g.array_keys()) == ["temperature"]
    h = g["measurements/humidity"]
    assert isinstance(h, zarrx.Array) and h.shape == (5, 6) and h.path == "measurements/humidity"
    assert [n for n, _ in g.members(max_depth=None)] == [
        "measurements", "measurements/empty", "measurements/humidity", "temperature"]
    assert "measurements/humidity" in g and "nope" not in g
    with pytest.raises(KeyError, match="no member 'nope'"):
        g["nope"]


def test_tree(fmt):
    g = build(MemoryStore(), fmt)
    assert g.tree() == "\n".join([
        "/",
        "├── measurements",
        "│   ├── empty",
        "│   └── humidity (5, 6) float64",
        "└── temperature (100,) int32",
    ])


def test_attrs_persist(fmt):
    store = MemoryStore()
    g = build(store, fmt)
    g.attrs["history"] = "made"
    g["temperature"].attrs.update(units="K", scale=2)
    g2 = zarrx.open_group(store, mode="r")
    assert g2.attrs.asdict() == {"title": "t", "history": "made"}
    assert dict(g2["temperature"].attrs) == {"units": "K", "scale": 2}
    with pytest.raises(zarrx.ReadOnlyError):
        g2.attrs["x"] = 1


@pytest.mark.parametrize("node", ["group", "array"])
def test_an_attrs_mapping_taken_earlier_sees_later_changes(fmt, node):
    """As in zarr-python: ``node.attrs`` shows the node's attributes as they are now, whichever
    of its mappings (or ``update_attributes``) changed them."""
    g = build(MemoryStore(), fmt)
    n = g if node == "group" else g["temperature"]
    first = n.attrs
    n.attrs["a"] = 1
    second = n.attrs
    first["b"] = 2
    n.update_attributes({"c": 3})
    want = {**({"title": "t"} if node == "group" else {}), "a": 1, "b": 2, "c": 3}
    assert dict(first) == dict(second) == dict(n.attrs) == want
    del second["a"]
    assert "a" not in first and len(first) == len(want) - 1
    if node == "array":
        n.resize((7,))                   # a shape change keeps what the mapping shows
        assert first.asdict() == {"b": 2, "c": 3}


def test_require_group_and_nested_create(fmt):
    g = build(MemoryStore(), fmt)
    a = g.require_group("measurements")
    assert a.path == "measurements"
    deep = g.create_group("a/b/c")
    assert deep.path == "a/b/c"
    assert isinstance(g["a"], zarrx.Group) and isinstance(g["a/b"], zarrx.Group)
    with pytest.raises(zarrx.NodeExistsError):
        g.create_group("measurements")
    with pytest.raises(zarrx.NodeExistsError):
        g.require_group("temperature")


def test_modes(tmp_path, fmt):
    p = str(tmp_path / "m.zarr")
    with pytest.raises(FileNotFoundError):
        zarrx.open(p, mode="r")
    with pytest.raises(zarrx.NodeNotFoundError):
        zarrx.open(p, mode="r+")
    g = zarrx.open(p, mode="a", zarr_format=fmt)
    assert isinstance(g, zarrx.Group) and g.zarr_format == fmt
    g.create_array("x", shape=(3,), dtype="u1", chunks=(3,))
    with pytest.raises(zarrx.NodeExistsError):
        zarrx.open_group(p, mode="w-")
    g2 = zarrx.open(p, mode="w", zarr_format=fmt)
    assert list(g2.keys()) == []
    a = zarrx.open(p, mode="w", shape=(4,), dtype="i2", chunks=(2,), zarr_format=fmt)
    assert isinstance(a, zarrx.Array)
    assert isinstance(zarrx.open(p, mode="r"), zarrx.Array)
    with pytest.raises(zarrx.ZarrError, match="mode: expected one of r, r\\+, a, w, w-, found 'x'"):
        zarrx.open(p, mode="x")


def test_open_auto_detects_zarr_python(tmp_path, fmt):
    p = str(tmp_path / "zp.zarr")
    root = zarr.open_group(p, mode="w", zarr_format=fmt)
    root.attrs["a"] = 1
    arr = root.create_array("x", shape=(7, 3), dtype="f4", chunks=(2, 2), fill_value=1.5)
    arr[...] = np.arange(21, dtype="f4").reshape(7, 3)
    root.create_group("sub")
    g = zarrx.open(p, mode="r")
    assert isinstance(g, zarrx.Group) and g.zarr_format == fmt
    assert dict(g.attrs) == {"a": 1}
    assert sorted(g.keys()) == ["sub", "x"]
    np.testing.assert_array_equal(g["x"][...], np.arange(21, dtype="f4").reshape(7, 3))


def test_pickle_group(fmt):
    g = build(MemoryStore(), fmt)
    g2 = pickle.loads(pickle.dumps(g))
    assert sorted(g2.keys()) == ["measurements", "temperature"]


def test_delete_member(fmt):
    store = MemoryStore()
    g = build(store, fmt)
    del g["measurements"]
    assert list(g.keys()) == ["temperature"]
    assert not any(k.startswith("measurements") for k in store.list_prefix(""))


# -- consolidated metadata -------------------------------------------------------------------

def test_consolidated_v3_zero_extra_reads():
    inner = MemoryStore()
    build(inner, 3)
    zarrx.consolidate_metadata(inner)
    doc = json.loads(inner.get("zarr.json"))
    assert doc["consolidated_metadata"]["kind"] == "inline"
    assert sorted(doc["consolidated_metadata"]["metadata"]) == [
        "measurements", "measurements/empty", "measurements/humidity", "temperature"]
    store = CountingStore(inner)
    g = zarrx.open_group(store, mode="r")
    store.reset()
    names = [n for n, _ in g.members(max_depth=None)]
    assert names == ["measurements", "measurements/empty", "measurements/humidity", "temperature"]
    assert g["measurements/humidity"].shape == (5, 6)
    assert store.counts["get"] == 0 and store.counts.get("get_many", 0) == 0


def test_consolidated_v2_read_through_and_kept_in_sync():
    inner = MemoryStore()
    g = build(inner, 2)
    zarrx.consolidate_metadata(inner)
    zm = json.loads(inner.get(".zmetadata"))
    assert zm["zarr_consolidated_format"] == 1
    assert "measurements/humidity/.zarray" in zm["metadata"]
    g = zarrx.open_group(inner, mode="r+")
    g.create_array("new", shape=(2,), dtype="u1", chunks=(2,))
    g["temperature"].attrs["units"] = "C"
    zm = json.loads(inner.get(".zmetadata"))
    assert "new/.zarray" in zm["metadata"]
    assert zm["metadata"]["temperature/.zattrs"] == {"units": "C"}
    store = CountingStore(inner)
    g = zarrx.open_group(store, mode="r")
    store.reset()
    assert sorted(g.keys()) == ["measurements", "new", "temperature"]
    assert store.counts["get"] == 0 and store.counts.get("get_many", 0) == 0
    # zarr-python reads our consolidated metadata
    zg = zarr.open_consolidated(_as_zarr_store(inner), zarr_format=2)
    assert sorted(zg.keys()) == ["measurements", "new", "temperature"]


def _as_zarr_store(store):
    from zarr.storage import MemoryStore as ZMem
    from zarr.core.buffer import default_buffer_prototype
    d = {k: default_buffer_prototype().buffer.from_bytes(store.get(k)) for k in store.list_prefix("")}
    return ZMem(d)


def test_zarr_python_reads_our_v3_consolidated():
    inner = MemoryStore()
    build(inner, 3)
    zarrx.consolidate_metadata(inner)
    zg = zarr.open_consolidated(_as_zarr_store(inner), zarr_format=3)
    assert sorted(zg.keys()) == ["measurements", "temperature"]
    assert zg["measurements/humidity"].shape == (5, 6)


def test_we_read_zarr_python_consolidated(tmp_path, fmt):
    p = str(tmp_path / "c.zarr")
    root = zarr.open_group(p, mode="w", zarr_format=fmt)
    root.create_array("x", shape=(4,), dtype="i8", chunks=(2,))
    root.create_group("g").create_array("y", shape=(2, 2), dtype="f2", chunks=(1, 1))
    zarr.consolidate_metadata(p)
    g = zarrx.open_group(p, mode="r")
    assert g.metadata.consolidated is not None
    assert sorted(n for n, _ in g.members(max_depth=None)) == ["g", "g/y", "x"]
    assert g["g/y"].dtype == np.float16


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_nested_create_makes_root_and_parents_like_zarr_python(fmt):
    store = MemoryStore()
    zarrx.create_array(store, name="a/b", shape=(2,), dtype="i1", chunks=(2,), zarr_format=fmt)
    meta_key = "zarr.json" if fmt == 3 else ".zgroup"
    assert store.get(meta_key) is not None and store.get(f"a/{meta_key}") is not None
    assert zarrx.open(store, mode="r").tree() == "/\n└── a\n    └── b (2,) int8"
    solo = MemoryStore()
    zarrx.create_array(solo, shape=(2,), dtype="i1", chunks=(2,))
    with pytest.raises(zarrx.NodeExistsError, match="cannot create 'x': '/' is an array"):
        zarrx.create_array(solo, name="x", shape=(2,), dtype="i1")


@pytest.mark.parametrize("path", ["", "sub"])
def test_consolidating_replaces_a_zmetadata_that_does_not_parse(path):
    """As in zarr-python, consolidating does not read the document it replaces: a v2
    ``.zmetadata`` that does not parse (at the root too) is written anew."""
    store = MemoryStore()
    zarrx.open_group(store, mode="w", zarr_format=2).create_group("sub").create_array(
        "a", shape=(1,), dtype="i1")
    store.set(f"{path}/.zmetadata" if path else ".zmetadata", b"garbage")
    zarrx.consolidate_metadata(store, path=path, zarr_format=2)
    assert zarrx.open_consolidated(store, path=path, mode="r").metadata.consolidated \
        is not None


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidating_a_hierarchy_deeper_than_the_recursion_limit(fmt):
    import sys
    depth = sys.getrecursionlimit() + 100
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    deepest = "/".join(["g"] * depth)
    zarrx.create_group(store, path=deepest, zarr_format=fmt)
    g.create_array(deepest + "/a", shape=(2,), dtype="i4")
    zarrx.consolidate_metadata(store)
    root = zarrx.open_consolidated(store, mode="r")
    assert root.metadata.consolidated is not None
    assert len(root.metadata.consolidated) == depth + 1
    assert root[deepest + "/a"].shape == (2,)


@pytest.mark.parametrize("stray", ["/x/zarr.json", "sub//zarr.json", "sub/./zarr.json",
                                   "sub/../zarr.json"])
def test_a_key_with_an_empty_or_dot_segment_names_no_child(stray):
    """Object stores and mappings hold such keys; walking "" as a child (the group itself)
    again and again would never end."""
    doc = b'{"zarr_format": 3, "node_type": "group"}'
    store = MemoryStore({"zarr.json": doc, "sub/zarr.json": doc, stray: doc})
    g = zarrx.open_group(store, mode="r")
    assert [name for name, _ in g.members(max_depth=3)] == ["sub"]
    g = zarrx.consolidate_metadata(store)
    assert list(g.metadata.consolidated) == ["sub"]
