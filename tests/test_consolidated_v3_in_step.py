"""Zarr v3 inline consolidated metadata at the store root is kept in step with every metadata
write zarrx makes through the store (creates, overwrites, attribute changes, resize, append,
deletes, moves), as a v2 ``.zmetadata`` is: zarrx and zarr-python read the hierarchy as stored,
concurrent writers lose no entry, and a writer stopped between its steps never makes zarrx
serve a stale entry (the ``zarrx_pending`` list inside ``consolidated_metadata``)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.metadata import nodes
from zarrx.store import LocalStore, MemoryStore

from test_concurrent_writes import run_threads  # noqa: E402 - shared trial runners
from test_process_writes import run  # noqa: E402


def _inline(store):
    return json.loads(store.get("zarr.json"))["consolidated_metadata"]


def _consolidated_afresh(store):
    """The ``consolidated_metadata`` that consolidate_metadata writes for the hierarchy as
    stored now (in a copy of the store)."""
    copy = MemoryStore()
    for key in store.list_prefix(""):
        copy.set(key, store.get(key))
    zarrx.consolidate_metadata(copy)
    return _inline(copy)


def assert_in_step(store):
    cm = _inline(store)
    assert "zarrx_pending" not in cm
    assert cm == _consolidated_afresh(store)
    listed = sorted(n for n, _ in zarrx.open_group(store, mode="r").members(max_depth=None))
    stored = sorted(n for n, _ in zarrx.open_group(store, mode="r", use_consolidated=False)
                    .members(max_depth=None))
    assert listed == stored


def _hierarchy(store):
    g = zarrx.open_group(store, mode="w", attributes={"title": "t"})
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")
    g.create_group("sub").create_array("x", shape=(2, 2), chunks=(1, 2), dtype="f8")
    zarrx.consolidate_metadata(store)
    return zarrx.open_group(store, mode="r+")


STEPS = {
    "create an array": lambda g: g.create_array("b", shape=(3,), dtype="u1"),
    "create nested groups": lambda g: g.create_group("sub/deep/er", attributes={"k": 1}),
    "overwrite an array": lambda g: g.create_array("a", shape=(9,), dtype="f4", overwrite=True),
    "replace an array by a group": lambda g: g.create_group("a", overwrite=True),
    "assign data": lambda g: g.__setitem__("sub/x", np.ones((3, 2))),
    "array attributes": lambda g: g["a"].attrs.update({"units": "m"}),
    "group attributes": lambda g: g["sub"].attrs.__setitem__("title", "s"),
    "root attributes": lambda g: g.attrs.__setitem__("root", True),
    "root update_attributes": lambda g: g.update_attributes({"more": [1, 2]}),
    "delete an attribute": lambda g: g.attrs.__delitem__("title"),
    "resize": lambda g: g["sub/x"].resize((5, 2)),
    "append": lambda g: g["a"].append(np.arange(3, dtype="i4")),
    "delete an array": lambda g: g.__delitem__("a"),
    "delete a subtree": lambda g: g.__delitem__("sub"),
    "move a subtree": lambda g: g.move("sub", "moved/sub"),
    "create_hierarchy": lambda g: list(zarrx.create_hierarchy(
        store=g.store, nodes={"h/y": zarrx.create_array(MemoryStore(), shape=(2,),
                                                         dtype="i2").metadata})),
}


# the steps one after another (each leaving a hierarchy the next applies to)
SEQUENCE = ["create an array", "create nested groups", "overwrite an array", "assign data",
            "array attributes", "group attributes", "root attributes", "root update_attributes",
            "delete an attribute", "resize", "append", "move a subtree", "create_hierarchy",
            "delete an array"]


@pytest.mark.parametrize("step", list(STEPS))
def test_each_metadata_write_keeps_the_inline_document_in_step(step):
    store = MemoryStore()
    g = _hierarchy(store)
    STEPS[step](g)
    assert_in_step(store)


def test_the_reported_writes_are_seen_through_consolidated_metadata():
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w")
    g.create_array("a", shape=(4,), dtype="i4")
    zarrx.consolidate_metadata(store)
    zarrx.open_group(store, mode="r+").create_array("b", shape=(4,), dtype="i4")
    assert list(zarrx.open_group(store, mode="r").keys()) == ["a", "b"]
    w = zarrx.open_group(store, mode="r+")
    del w["a"]
    r = zarrx.open_group(store, mode="r")
    assert list(r.keys()) == ["b"]
    with pytest.raises(KeyError):
        r["a"]
    assert list(w.keys()) == ["b"]          # the writing handle reads the document again


def test_every_step_in_turn_on_a_local_store_is_what_zarr_python_reads(tmp_path):
    root = tmp_path / "h.zarr"
    store = LocalStore(str(root))
    g = _hierarchy(store)
    for step in SEQUENCE:
        STEPS[step](g)
        assert_in_step(store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # zarr-python: inline consolidated is no spec
        theirs = zarr.open_group(str(root), mode="r", use_consolidated=True)
        assert theirs.metadata.consolidated_metadata is not None
        got = {n: (getattr(m, "shape", None), dict(m.attrs))
               for n, m in theirs.members(max_depth=None)}
    ours = {n: (getattr(m, "shape", None), dict(m.attrs))
            for n, m in zarrx.open_group(store, mode="r", use_consolidated=False)
            .members(max_depth=None)}
    assert got == ours
    assert sorted(got) == ["b", "h", "h/y", "moved", "moved/sub", "moved/sub/deep",
                           "moved/sub/deep/er", "moved/sub/x"]
    assert got["moved/sub/x"][0] == (5, 2)


def test_the_root_group_keeps_its_consolidated_metadata_and_pending_paths():
    store = MemoryStore()
    g = _hierarchy(store)
    nodes._edit_consolidated(store, 3, lambda entries, pending: pending.add("a"))
    g.attrs["k"] = "v"
    g.attrs.update({"n": 1})
    cm = _inline(store)
    assert cm["zarrx_pending"] == ["a"]
    assert sorted(cm["metadata"]) == ["a", "sub", "sub/x"]
    assert json.loads(store.get("zarr.json"))["attributes"] == {"title": "t", "k": "v", "n": 1}


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


@pytest.mark.parametrize("step", ["create an array", "overwrite an array", "array attributes",
                                  "resize", "append", "delete an array", "delete a subtree",
                                  "move a subtree", "create nested groups"])
def test_a_writer_stopped_before_its_last_step_never_leaves_readers_stale(monkeypatch, step):
    """The writer dies after writing the node, before writing its new entry: the node stays
    listed as pending and zarrx readers take it from its own documents."""
    store = MemoryStore()
    g = _hierarchy(store)
    real = nodes._edit_consolidated

    def marks_only(store_, zarr_format, edit, at=""):
        probe = set()
        edit({}, probe)                         # an edit that leaves a path pending marks it;
        if not probe:                           # one that leaves none finishes: never reached
            raise _Killed
        return real(store_, zarr_format, edit, at)

    monkeypatch.setattr(nodes, "_edit_consolidated", marks_only)
    with pytest.raises(_Killed):
        STEPS[step](g)
    monkeypatch.setattr(nodes, "_edit_consolidated", real)
    assert _inline(store).get("zarrx_pending")
    listed = {n: (getattr(m, "shape", None), m.attrs.asdict())
              for n, m in zarrx.open_group(store, mode="r").members(max_depth=None)}
    stored = {n: (getattr(m, "shape", None), m.attrs.asdict())
              for n, m in zarrx.open_group(store, mode="r", use_consolidated=False)
              .members(max_depth=None)}
    assert listed == stored
    for path in stored:
        node = zarrx.open_group(store, mode="r")[path]
        assert (getattr(node, "shape", None), node.attrs.asdict()) == stored[path]
    zarrx.consolidate_metadata(store)           # pending paths stay pending
    assert _inline(store).get("zarrx_pending")


def test_zarr_python_and_tensorstore_open_a_hierarchy_with_pending_paths(tmp_path):
    import tensorstore as ts
    root = tmp_path / "h.zarr"
    store = LocalStore(str(root))
    g = _hierarchy(store)
    g["a"][:] = [1, 2, 3, 4]
    nodes._edit_consolidated(store, 3, lambda entries, pending: pending.update(("a", "sub/")))
    assert _inline(store)["zarrx_pending"] == ["a", "sub/"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_group(str(root), mode="r", use_consolidated=True)
        assert sorted(theirs.keys()) == ["a", "sub"]
        assert theirs["a"][:].tolist() == [1, 2, 3, 4]
    t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(root / "a")}},
                read=True).result()
    assert t.read().result().tolist() == [1, 2, 3, 4]


def test_a_malformed_pending_list_is_a_metadata_error():
    store = MemoryStore()
    _hierarchy(store)
    doc = json.loads(store.get("zarr.json"))
    doc["consolidated_metadata"]["zarrx_pending"] = ["a/../b"]
    store.set("zarr.json", json.dumps(doc).encode())
    with pytest.raises(zarrx.MetadataError) as e:
        zarrx.open_group(store, mode="r")
    assert str(e.value) == ("zarr.json consolidated_metadata.zarrx_pending[0]: expected a node "
                            "path such as 'a/b' (no empty, '.' or '..' segments), found 'a/../b'")


# -- concurrent writers ------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_threads_writing_different_nodes_lose_no_entry(tmp_path, kind):
    store = MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "s.zarr"))
    _hierarchy(store)

    def work(i):
        g = zarrx.open_group(store, mode="r+")
        for j in range(4):
            a = g.create_array(f"t{i}/a{j}", shape=(2,), dtype="i4")
            a.attrs["j"] = j
            if j % 3 == 2:
                del g[f"t{i}/a{j - 1}"]
            a.resize((3,))

    run_threads(work, 6)
    assert_in_step(store)
    entries = _inline(store)["metadata"]
    assert sorted(p for p in entries if p.startswith("t")) == sorted(
        [f"t{i}" for i in range(6)]
        + [f"t{i}/a{j}" for i in range(6) for j in range(4) if j % 3 != 1])
    assert all(entries[f"t{i}/a3"]["shape"] == [3] for i in range(6))


def _create_and_delete(root, worker, n):
    g = zarrx.open_group(LocalStore(root), mode="r+")
    for j in range(n):
        g.create_array(f"p{worker}_{j}", shape=(1,), dtype="u1", attributes={"j": j})
        if j % 2:
            del g[f"p{worker}_{j - 1}"]


def test_processes_writing_different_nodes_lose_no_entry(tmp_path):
    root = str(tmp_path / "s.zarr")
    _hierarchy(LocalStore(root))
    run(_create_and_delete, [(root, i, 8) for i in range(4)])
    store = LocalStore(root)
    assert_in_step(store)
    assert sorted(p for p in _inline(store)["metadata"] if p.startswith("p")) == sorted(
        f"p{i}_{j}" for i in range(4) for j in range(1, 8, 2))


def test_a_hierarchy_zarr_python_consolidated_stays_readable_by_it(tmp_path):
    """zarr-python writes flat entries, its groups' with an empty consolidated_metadata of their
    own; zarrx adds, changes and removes entries in that layout, and zarr-python reads them."""
    root = str(tmp_path / "h.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.open_group(root, mode="w").create_group("sub").create_array(
            "x", shape=(2,), dtype="i1")
        zarr.consolidate_metadata(root)
    g = zarrx.open_group(root, mode="r+")
    g.create_array("sub/new", shape=(3,), dtype="i1")
    g.create_group("sub/deep").create_array("y", shape=(1,), dtype="i1")
    g["sub"].attrs["k"] = "v"
    del g["sub/x"]
    assert_in_step(LocalStore(root))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_group(root, mode="r", use_consolidated=True)
        assert sorted(n for n, _ in theirs.members(max_depth=None)) == [
            "sub", "sub/deep", "sub/deep/y", "sub/new"]
        assert sorted(theirs["sub"].keys()) == ["deep", "new"]
        assert dict(theirs["sub"].attrs) == {"k": "v"}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_write_keeps_the_other_entries_as_stored_without_parsing_them(monkeypatch,
                                                                        zarr_format):
    """Keeping consolidated metadata in step costs the size of the document, not a parse and
    serialization of every node in it: entries a write does not touch are kept as stored."""
    from zarrx.metadata import v2, v3
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    for i in range(40):
        g.create_array(f"a{i}", shape=(4,), dtype="i4")
    zarrx.consolidate_metadata(store)
    key = "zarr.json" if zarr_format == 3 else ".zmetadata"
    before = json.loads(store.get(key))
    g = zarrx.open_group(store, mode="r+", use_consolidated=False)
    parsed = []
    for module, name in ((v3, "_array"), (v2, "parse_array_v2")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name,
                            lambda *a, _real=real, **k: parsed.append(1) or _real(*a, **k))
    g.create_array("new", shape=(2,), dtype="u1")
    assert len(parsed) < 5
    after = json.loads(store.get(key))
    if zarr_format == 3:
        old, new = before["consolidated_metadata"]["metadata"], \
            after["consolidated_metadata"]["metadata"]
        assert set(new) == set(old) | {"new"}
    else:
        old, new = before["metadata"], after["metadata"]
        assert set(new) == set(old) | {"new/.zarray", "new/.zattrs"}
    assert all(new[k] == v for k, v in old.items())
    monkeypatch.undo()
    assert sorted(zarrx.open_group(store, mode="r").array_keys()) == \
        sorted([f"a{i}" for i in range(40)] + ["new"])
