"""Consolidated metadata of a group below the store root (``consolidate_metadata(store,
path="sub")``, by zarrx or zarr-python: v2 ``sub/.zmetadata``, v3 inline in ``sub/zarr.json``)
is kept in step with every metadata write zarrx makes below that group, as the store root's is:
zarrx and zarr-python opening the group by its path see the hierarchy as stored, a writer
stopped between its steps never makes zarrx serve a stale entry, and concurrent writers lose no
entry."""
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

FORMATS = [2, 3]


def _doc_key(group, zarr_format):
    name = "zarr.json" if zarr_format == 3 else ".zmetadata"
    return f"{group}/{name}" if group else name


def _consolidated(store, group, zarr_format):
    """The consolidated document of ``group`` as stored (v3: its ``consolidated_metadata``)."""
    doc = json.loads(store.get(_doc_key(group, zarr_format)))
    return doc["consolidated_metadata"] if zarr_format == 3 else doc


def _consolidated_afresh(store, group, zarr_format):
    """What zarrx's consolidate_metadata writes for ``group`` as the store holds it now (in a
    copy of the store)."""
    copy = MemoryStore()
    for key in store.list_prefix(""):
        copy.set(key, store.get(key))
    zarrx.consolidate_metadata(copy, path=group)
    return _consolidated(copy, group, zarr_format)


def _listing(group):
    return {n: (getattr(m, "shape", None), m.attrs.asdict())
            for n, m in group.members(max_depth=None)}


def _stored(store, path):
    return _listing(zarrx.open_group(store, path=path, mode="r", use_consolidated=False))


def assert_in_step(store, group, zarr_format, *, afresh=True):
    """The consolidated metadata of ``group`` lists what is stored, with no pending path; with
    ``afresh``, it is what consolidating again would write."""
    cm = _consolidated(store, group, zarr_format)
    assert "zarrx_pending" not in cm
    if afresh:
        assert cm == _consolidated_afresh(store, group, zarr_format)
    ours = zarrx.open_group(store, path=group, mode="r")
    assert ours.metadata.consolidated is not None
    assert _listing(ours) == _stored(store, group)


def _zarr_python_listing(root, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # zarr-python: v3 inline consolidated is no spec
        theirs = zarr.open_group(root, path=path, mode="r", use_consolidated=True)
        assert theirs.metadata.consolidated_metadata is not None
        return {n: (getattr(m, "shape", None), dict(m.attrs))
                for n, m in theirs.members(max_depth=None)}


def _hierarchy(store, zarr_format, consolidate=("sub",)):
    """/a, /sub (attributes), /sub/x, /sub/deep/y; the groups in ``consolidate`` consolidated."""
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    g.create_array("a", shape=(4,), dtype="i4")
    sub = g.create_group("sub", attributes={"title": "s"})
    sub.create_array("x", shape=(2, 2), chunks=(1, 2), dtype="f8")
    sub.create_group("deep").create_array("y", shape=(3,), dtype="u1")
    for path in consolidate:
        zarrx.consolidate_metadata(store, path=path)
    return zarrx.open_group(store, mode="r+")


STEPS = {
    "create an array": lambda g: g.create_array("sub/b", shape=(3,), dtype="u1"),
    "create an array deeper": lambda g: g.create_array("sub/deep/z", shape=(2,), dtype="i2"),
    "create nested groups": lambda g: g.create_group("sub/new/er", attributes={"k": 1}),
    "overwrite an array": lambda g: g.create_array("sub/x", shape=(9,), dtype="f4",
                                                   overwrite=True),
    "assign data": lambda g: g.__setitem__("sub/x", np.ones((3, 2))),
    "array attributes": lambda g: g["sub/x"].attrs.update({"units": "m"}),
    "deeper array attributes": lambda g: g["sub/deep/y"].attrs.__setitem__("k", [1]),
    "the group's own attributes": lambda g: g["sub"].attrs.__setitem__("title", "t"),
    "a group's attributes below": lambda g: g["sub/deep"].attrs.__setitem__("d", 1),
    "resize": lambda g: g["sub/x"].resize((5, 2)),
    "append": lambda g: g["sub/deep/y"].append(np.arange(2, dtype="u1")),
    "delete an array": lambda g: g.__delitem__("sub/x"),
    "delete a subtree": lambda g: g.__delitem__("sub/deep"),
    "move within the group": lambda g: g.move("sub/deep", "sub/moved/deep"),
    "move into the group": lambda g: g.move("a", "sub/a"),
    "move out of the group": lambda g: g.move("sub/x", "x"),
}


@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("step", list(STEPS))
def test_each_metadata_write_keeps_a_sub_groups_consolidated_metadata_in_step(step,
                                                                               zarr_format):
    store = MemoryStore()
    g = _hierarchy(store, zarr_format)
    STEPS[step](g)
    assert_in_step(store, "sub", zarr_format)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_the_reported_writes_are_seen_by_zarrx_and_zarr_python(tmp_path, zarr_format):
    """An array created in a consolidated sub-group was missing when the group was opened by
    its path, and a deleted one still listed."""
    root = str(tmp_path / "h.zarr")
    store = LocalStore(root)
    _hierarchy(store, zarr_format)
    g = zarrx.open_group(root, mode="r+")
    g["sub"].create_array("new", shape=(4,), dtype="i4")
    del g["sub/x"]
    assert sorted(zarrx.open_group(root, path="sub", mode="r").keys()) == ["deep", "new"]
    assert sorted(zarrx.open_consolidated(root, path="sub", mode="r").keys()) == ["deep", "new"]
    assert _zarr_python_listing(root, "sub") == _stored(store, "sub")
    assert sorted(_zarr_python_listing(root, "sub")) == ["deep", "deep/y", "new"]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_every_step_in_turn_with_every_group_consolidated(tmp_path, zarr_format):
    """The root, the group and a group inside it each carry consolidated metadata: each write
    keeps all of those that list the node in step, and zarr-python reads each of them."""
    root = str(tmp_path / "h.zarr")
    store = LocalStore(root)
    g = _hierarchy(store, zarr_format, consolidate=("sub/deep", "sub", ""))
    for step in ["create an array deeper", "deeper array attributes", "append",
                 "a group's attributes below", "the group's own attributes", "create an array",
                 "resize", "create nested groups", "move into the group", "delete an array"]:
        STEPS[step](g)
        for group in ("", "sub", "sub/deep"):
            assert_in_step(store, group, zarr_format)
    for group in ("", "sub", "sub/deep"):
        assert _zarr_python_listing(root, group) == _stored(store, group)
    assert _stored(store, "sub/deep") == {"y": ((5,), {"k": [1]}), "z": ((2,), {})}


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_consolidated_group_moved_keeps_its_documents_and_those_above_in_step(zarr_format):
    store = MemoryStore()
    g = _hierarchy(store, zarr_format, consolidate=("sub/deep", "sub", ""))
    g.move("sub/deep", "sub/moved/deep")
    g["sub/moved/deep"].create_array("n", shape=(1,), dtype="i1")
    for group in ("", "sub", "sub/moved/deep"):
        assert_in_step(store, group, zarr_format)
    g.move("sub", "top")
    g.create_array("top/moved/deep/m", shape=(1,), dtype="i1")
    for group in ("", "top", "top/moved/deep"):
        assert_in_step(store, group, zarr_format)
    assert sorted(_stored(store, "top/moved/deep")) == ["m", "n", "y"]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_group_zarr_python_consolidated_stays_in_step_for_it(tmp_path, zarr_format):
    """zarr-python consolidates the sub-group (and then the root, writing an empty
    consolidated_metadata into each group's entry); zarrx writes into the sub-group and
    zarr-python, opening the group by its path, reads what is stored."""
    root = str(tmp_path / "h.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(root, mode="w", zarr_format=zarr_format)
        g.create_group("sub").create_array("x", shape=(2,), dtype="i1")
        g["sub"].create_group("deep").create_array("y", shape=(1,), dtype="i1")
        zarr.consolidate_metadata(root, path="sub")
        zarr.consolidate_metadata(root)
    store = LocalStore(root)
    g = zarrx.open_group(root, mode="r+")
    g.create_array("sub/new", shape=(3,), dtype="i1", attributes={"n": 1})
    g.create_array("sub/deep/z", shape=(2,), dtype="i1")
    g["sub/x"].resize((7,))
    g["sub"].attrs["k"] = "v"
    del g["sub/deep/y"]
    for group in ("", "sub"):
        assert_in_step(store, group, zarr_format, afresh=False)
        assert _zarr_python_listing(root, group) == _stored(store, group)
    assert sorted(_stored(store, "sub")) == ["deep", "deep/z", "new", "x"]
    assert _stored(store, "sub")["x"] == ((7,), {})


def test_a_v2_sub_groups_zmetadata_is_read_when_it_is_opened_by_its_path():
    """zarr-python reads ``sub/.zmetadata`` when opening the group at ``sub``; zarrx ignored it
    (open_consolidated(path="sub") refused a group it had just consolidated)."""
    store = MemoryStore()
    _hierarchy(store, 2)
    sub = zarrx.open_consolidated(store, path="sub", mode="r")
    assert sub.metadata.consolidated is not None
    assert sorted(sub.metadata.consolidated) == ["deep", "deep/y", "x"]
    assert zarrx.open_group(store, path="sub", mode="r").metadata.consolidated is not None
    assert zarrx.open(store, path="sub", mode="r").metadata.consolidated is not None
    assert zarrx.open_group(store, path="sub", mode="r",
                            use_consolidated=False).metadata.consolidated is None
    with pytest.raises(zarrx.MetadataError) as e:
        zarrx.open_consolidated(store, path="sub/deep", mode="r")
    # named as opened: mode "r" reads through a read-only view of the store
    assert str(e.value) == (f"open_consolidated: the group at 'sub/deep' in "
                            f"{store.with_read_only(True)!r} has no consolidated metadata "
                            f"(write it with zarrx.consolidate_metadata)")


def test_a_consolidated_metadata_field_spelled_with_escapes_is_kept_in_step():
    store = MemoryStore()
    _hierarchy(store, 3)
    raw = store.get("sub/zarr.json")
    store.set("sub/zarr.json", raw.replace(b'"consolidated_metadata"',
                                           b'"consolidated\\u005fmetadata"'))
    zarrx.open_group(store, mode="r+").create_array("sub/b", shape=(1,), dtype="i1")
    assert_in_step(store, "sub", 3)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_handle_that_writes_reads_its_groups_consolidated_metadata_again(zarr_format):
    store = MemoryStore()
    _hierarchy(store, zarr_format)
    sub = zarrx.open_group(store, path="sub", mode="r+")
    assert sub.metadata.consolidated is not None
    sub.create_array("b", shape=(1,), dtype="i1")
    del sub["x"]
    assert sub.metadata.consolidated is not None
    assert sorted(sub.keys()) == ["b", "deep"]


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


# (a v3 group's own attributes are written into its zarr.json, its consolidated document itself:
# one write, no pending step)
@pytest.mark.parametrize("step, zarr_format", [
    (step, fmt) for step in ["create an array deeper", "overwrite an array", "array attributes",
                             "the group's own attributes", "resize", "delete an array",
                             "delete a subtree", "move within the group"]
    for fmt in FORMATS if (step, fmt) != ("the group's own attributes", 3)])
def test_a_writer_stopped_before_its_last_step_never_leaves_readers_of_the_group_stale(
        monkeypatch, step, zarr_format):
    """The writer dies after writing the node, before writing its new entries: the node stays
    listed as pending in the sub-group's document, and zarrx readers of the group take it
    from its own documents."""
    store = MemoryStore()
    g = _hierarchy(store, zarr_format)
    real = nodes._edit_consolidated

    def marks_only(store_, fmt, edit, at=""):
        probe = set()
        edit({}, probe)                         # an edit that leaves a path pending marks it;
        if not probe:                           # one that leaves none finishes: never reached
            raise _Killed
        return real(store_, fmt, edit, at)

    monkeypatch.setattr(nodes, "_edit_consolidated", marks_only)
    with pytest.raises(_Killed):
        STEPS[step](g)
    monkeypatch.undo()
    assert _consolidated(store, "sub", zarr_format).get("zarrx_pending")
    sub = zarrx.open_group(store, path="sub", mode="r")
    assert sub.metadata.consolidated is not None
    assert _listing(sub) == _stored(store, "sub")
    assert sub.attrs.asdict() == zarrx.open_group(store, path="sub", mode="r",
                                                  use_consolidated=False).attrs.asdict()


def test_a_write_below_a_child_of_the_root_looks_for_consolidated_groups_in_one_read():
    """The cost when no group below the root is consolidated: a write of a child of the root
    reads no other group's document; a write deeper down looks at those of the groups between
    the root and the node in one batched call (their generations, on a store where they cost
    no request: the documents were read before, at the generations they still have, so none
    is read again)."""
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w")
    g.create_group("p/q/r")
    zarrx.consolidate_metadata(store)
    g = zarrx.open_group(store, mode="r+", use_consolidated=False)
    p, r = g["p"], g["p/q/r"]
    reads = []
    for name in ("get", "get_versioned", "get_many", "generations"):
        real = getattr(store, name)

        def spy(first, *args, _name=name, _real=real, **kwargs):
            first = list(first) if _name in ("get_many", "generations") else first
            reads.append((_name, [k for k, _ in first] if _name == "get_many" else first))
            return _real(first, *args, **kwargs)
        setattr(store, name, spy)
    p.attrs["k"] = 1
    assert {key for _, keys in reads for key in ([keys] if isinstance(keys, str) else keys)} \
        == {"zarr.json", "p/zarr.json"}
    reads.clear()
    r.attrs["k"] = 1
    assert [(name, keys) for name, keys in reads if "p/q/zarr.json" in keys] == [
        ("generations", ["p/zarr.json", "p/q/zarr.json"])]
    assert _consolidated(store, "", 3)["metadata"]["p/q/r"]["attributes"] == {"k": 1}


# -- concurrent writers ------------------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_threads_writing_below_a_consolidated_group_lose_no_entry(tmp_path, kind, zarr_format):
    store = MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "s.zarr"))
    _hierarchy(store, zarr_format, consolidate=("sub", ""))

    def work(i):
        g = zarrx.open_group(store, mode="r+")
        for j in range(4):
            a = g.create_array(f"sub/t{i}/a{j}", shape=(2,), dtype="i4")
            a.attrs["j"] = j
            if j % 3 == 2:
                del g[f"sub/t{i}/a{j - 1}"]
            a.resize((3,))
        g[f"sub/t{i}"].attrs["i"] = i

    run_threads(work, 6)
    for group in ("", "sub"):
        assert_in_step(store, group, zarr_format)
    listed = _listing(zarrx.open_group(store, path="sub", mode="r"))
    assert sorted(p for p in listed if p.startswith("t")) == sorted(
        [f"t{i}" for i in range(6)]
        + [f"t{i}/a{j}" for i in range(6) for j in range(4) if j % 3 != 1])
    assert all(listed[f"t{i}/a3"] == ((3,), {"j": 3}) for i in range(6))
    assert all(listed[f"t{i}"] == (None, {"i": i}) for i in range(6))


def _create_and_delete(root, worker, n):
    g = zarrx.open_group(LocalStore(root), mode="r+")
    for j in range(n):
        g.create_array(f"sub/deep/p{worker}_{j}", shape=(1,), dtype="u1", attributes={"j": j})
        if j % 2:
            del g[f"sub/deep/p{worker}_{j - 1}"]


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_processes_writing_below_consolidated_groups_lose_no_entry(tmp_path, zarr_format):
    root = str(tmp_path / "s.zarr")
    _hierarchy(LocalStore(root), zarr_format, consolidate=("sub/deep", "sub"))
    run(_create_and_delete, [(root, i, 6) for i in range(4)])
    store = LocalStore(root)
    for group in ("sub", "sub/deep"):
        assert_in_step(store, group, zarr_format)
    assert sorted(p for p in _stored(store, "sub/deep") if p.startswith("p")) == sorted(
        f"p{i}_{j}" for i in range(4) for j in range(1, 6, 2))
