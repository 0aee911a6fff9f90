"""Metadata changes (attributes, resize, append, consolidation) made concurrently lose nothing.

Each change is a read-modify-write of the stored document, conditional on the generation read
and retried on conflict; threads sharing one handle also take turns on the handle's lock.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import zarrx
from zarrx import layout
from zarrx.metadata import node_read, nodes
from zarrx.metadata.consolidated import parse_zmetadata_pending
from zarrx.store import LocalStore, MemoryStore

from test_concurrent_writes import run_threads  # noqa: E402 - shared trial runners
from test_process_writes import run  # noqa: E402


def _store(kind, tmp_path):
    return MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "s.zarr"))


def _pending(store, zarr_format):
    """The paths the store root's consolidated metadata lists as pending."""
    if zarr_format == 2:
        return parse_zmetadata_pending(store.get(".zmetadata"), ".zmetadata")[1]
    return json.loads(store.get("zarr.json"))["consolidated_metadata"].get("zarrx_pending", [])


# -- attributes --------------------------------------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_threads_sharing_one_group_handle_keep_every_attribute(tmp_path, kind, zarr_format):
    store = _store(kind, tmp_path)
    g = zarrx.create_group(store, zarr_format=zarr_format)

    def work(i):
        for j in range(50):
            g.attrs[f"t{i}_{j}"] = j

    run_threads(work, 8)
    want = {f"t{i}_{j}": j for i in range(8) for j in range(50)}
    assert zarrx.open_group(store, mode="r").attrs.asdict() == want
    assert g.attrs.asdict() == want                 # the handle shows the last write


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_threads_with_their_own_array_handles_keep_every_attribute(tmp_path, kind):
    store = _store(kind, tmp_path)
    zarrx.create_array(store, shape=(4,), chunks=(2,), dtype="i4")

    def work(i):
        z = zarrx.open_array(store, mode="r+")
        for j in range(25):
            z.attrs.update({f"t{i}_{j}": j})

    run_threads(work, 8)
    assert len(zarrx.open_array(store, mode="r").attrs) == 200


def _set_attribute_and_append(group, array) -> None:
    group.attrs["child"] = 1
    array.append(np.array([7]))


def test_a_forked_child_changes_metadata_through_a_handle_a_parent_thread_was_changing(
        tmp_path):
    """A handle's metadata changes take turns on a lock of the handle; a process forked while
    another of its threads held that lock (in the middle of an attribute write, a resize or
    an append) has no thread to release it, so the child must not inherit it held (before:
    the child hung at its first attribute write through the handle)."""
    import multiprocessing
    import threading
    root = str(tmp_path / "g.zarr")
    group = zarrx.open_group(root, mode="w")
    group.create_array("a", shape=(2,), chunks=(2,), dtype="i4")
    group = zarrx.open_group(root, mode="r+")
    array = group["a"]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with group._meta_lock, array._meta_lock:
            held.set()
            release.wait()

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait()
    try:
        child = multiprocessing.get_context("fork").Process(target=_set_attribute_and_append,
                                                            args=(group, array))
        child.start()
        child.join(60)
        if child.exitcode is None:
            child.kill()
        assert child.exitcode == 0
    finally:
        release.set()
        thread.join()
    reopened = zarrx.open_group(root, mode="r")
    assert reopened.attrs["child"] == 1 and reopened["a"][:].tolist() == [0, 0, 7]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_attribute_write_keeps_a_shape_changed_through_another_handle(zarr_format):
    store = MemoryStore()
    zarrx.create_array(store, shape=(10,), chunks=(4,), dtype="i4", zarr_format=zarr_format)
    stale = zarrx.open_array(store, mode="r+")
    other = zarrx.open_array(store, mode="r+")
    other.append(np.arange(10, dtype="i4"))
    other.attrs["a"] = 1
    stale.attrs["b"] = 2                            # opened before the append and that key
    z = zarrx.open_array(store, mode="r")
    assert z.shape == (20,)
    assert z.attrs.asdict() == {"a": 1, "b": 2}
    assert list(z[10:]) == list(range(10))
    del stale.attrs["b"]                            # a delete keeps the others' keys too
    assert zarrx.open_array(store, mode="r").attrs.asdict() == {"a": 1}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_metadata_follows_attribute_and_shape_changes(zarr_format):
    store = MemoryStore()
    g = zarrx.create_group(store, zarr_format=zarr_format)
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")
    zarrx.consolidate_metadata(store)
    stale = zarrx.open_group(store, mode="r+")["a"]
    zarrx.open_group(store, mode="r+")["a"].resize(8)
    stale.attrs["k"] = "v"
    a = zarrx.open_group(store, mode="r")["a"]
    assert (a.shape, a.attrs.asdict()) == ((8,), {"k": "v"})
    assert zarrx.open_group(store, mode="r").metadata.consolidated["a"].shape == (8,)
    assert _pending(store, zarr_format) == []


def _set_attrs(root, worker, n):
    for j in range(n):
        zarrx.open_array(LocalStore(root), mode="r+").attrs[f"p{worker}_{j}"] = j


def _append(root, worker, n):
    for j in range(n):
        zarrx.open_array(LocalStore(root), mode="r+").append(np.array([worker * 1000 + j], "i4"))


@pytest.mark.slow
def test_processes_setting_attributes_lose_none(tmp_path):
    root = str(tmp_path / "a.zarr")
    zarrx.create_array(LocalStore(root), shape=(10,), chunks=(4,), dtype="i4")
    run(_set_attrs, [(root, i, 40) for i in range(4)])
    assert len(zarrx.open_array(LocalStore(root), mode="r").attrs) == 160


# -- append and resize -------------------------------------------------------------------------
def test_processes_appending_lose_no_row(tmp_path):
    root = str(tmp_path / "a.zarr")
    zarrx.create_array(LocalStore(root), shape=(0,), chunks=(4,), dtype="i4", fill_value=-1)
    run(_append, [(root, i, 30) for i in (1, 2)])
    v = zarrx.open_array(LocalStore(root), mode="r")[:]
    assert sorted(v.tolist()) == sorted(i * 1000 + j for i in (1, 2) for j in range(30))


@pytest.mark.parametrize("shards", [None, (8,)])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_threads_appending_lose_no_row(tmp_path, kind, shards):
    store = _store(kind, tmp_path)
    shared = zarrx.create_array(store, shape=(0,), chunks=(2,), shards=shards, dtype="i4",
                                fill_value=-1)

    def work(i):
        own = zarrx.open_array(store, mode="r+")
        for j in range(20):
            z = shared if j % 2 else own            # one shared handle, one of its own
            z.append(np.array([i * 1000 + j], "i4"))

    run_threads(work, 6)
    v = zarrx.open_array(store, mode="r")[:]
    assert sorted(v.tolist()) == sorted(i * 1000 + j for i in range(6) for j in range(20))


def test_append_checks_the_stored_shape_of_the_other_axes():
    store = MemoryStore()
    zarrx.create_array(store, shape=(2, 3), chunks=(2, 3), dtype="i4")
    stale = zarrx.open_array(store, mode="r+")
    zarrx.open_array(store, mode="r+").resize(2, 4)
    with pytest.raises(zarrx.ArgumentError, match="does not match array shape"):
        stale.append(np.zeros((1, 3), "i4"))
    assert zarrx.open_array(store, mode="r").shape == (2, 4)
    assert stale.append(np.ones((1, 4), "i4")) == (3, 4)
    assert zarrx.open_array(store, mode="r")[2].tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_refused_change_leaves_no_pending_path(zarr_format):
    store = MemoryStore()
    g = zarrx.create_group(store, zarr_format=zarr_format)
    g.create_array("a", shape=(2, 3), chunks=(2, 3), dtype="i4")
    zarrx.consolidate_metadata(store)
    with pytest.raises(zarrx.ArgumentError):
        zarrx.open_group(store, mode="r+")["a"].append(np.zeros((1, 5), "i4"))
    assert _pending(store, zarr_format) == []


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


@pytest.mark.parametrize("killed_at", [("clear", False, 2), ("delete", False, 1),
                                       ("clear", True, 1), ("delete", True, 1)],
                         ids=["second-clear", "delete", "clear-after", "delete-after"])
@pytest.mark.parametrize("shards", [None, (8, 8)], ids=["chunks", "shards"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_shrink_killed_part_way_never_brings_old_data_back(monkeypatch, killed_at, shards,
                                                             zarr_format):
    """The writer dies as it sets out to clear (the part outside the new shape of) a boundary
    object or to delete the objects outside the new shape, before or after the metadata
    write. Whatever shape it left stored, growing again never reads data from outside it."""
    if shards and zarr_format == 2:
        pytest.skip("sharding is v3 only")
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(16, 16), chunks=(4, 4), shards=shards, dtype="i4",
                           fill_value=0, zarr_format=zarr_format)
    z[:] = 5
    real_empty, real_update = layout.empty_outside, nodes.update_array
    steps: list[tuple[str, bool]] = []
    kind, after, nth = killed_at

    def step(what):
        steps.append((what, "metadata" in [w for w, _ in steps]))
        if steps.count((kind, after)) == nth and steps[-1] == (kind, after):
            raise _Killed

    def dying(source, meta, clear):
        def clearing(box):
            step("clear")
            clear(box)
        result = real_empty(source, meta, clearing)
        step("delete")
        return result

    def updating(*args, **kwargs):
        out = real_update(*args, **kwargs)
        steps.append(("metadata", True))
        return out

    monkeypatch.setattr(layout, "empty_outside", dying)
    monkeypatch.setattr(nodes, "update_array", updating)
    with pytest.raises(_Killed):
        zarrx.open_array(store, mode="r+").resize(6, 7)
    monkeypatch.setattr(layout, "empty_outside", real_empty)
    monkeypatch.setattr(nodes, "update_array", real_update)
    left = zarrx.open_array(store, mode="r").shape
    assert left == ((6, 7) if after else (16, 16))
    z = zarrx.open_array(store, mode="r+")
    z.resize(16, 16)
    v = z[:]
    assert (v[:6, :7] == 5).all()
    outside = np.ones((16, 16), bool)
    outside[:left[0], :left[1]] = False
    assert (v[outside] == 0).all()


@pytest.mark.parametrize("shards", [None, (8, 8)], ids=["chunks", "shards"])
def test_a_shrink_killed_after_its_metadata_write_leaves_nothing_outside(monkeypatch, shards):
    """The kill the old order allowed: after the smaller shape was written, before anything
    outside it was deleted or cleared. Doing both first means that point has nothing left to
    do: the objects straddling the new edge hold only fill beyond it."""
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(16, 16), chunks=(4, 4), shards=shards, dtype="i4",
                           fill_value=0)
    z[:] = 5
    real = nodes.update_array

    def then_killed(*args, **kwargs):
        real(*args, **kwargs)
        raise _Killed

    monkeypatch.setattr(nodes, "update_array", then_killed)
    with pytest.raises(_Killed):
        zarrx.open_array(store, mode="r+").resize(6, 7)
    monkeypatch.setattr(nodes, "update_array", real)
    assert zarrx.open_array(store, mode="r").shape == (6, 7)
    z = zarrx.open_array(store, mode="r+")
    z.resize(16, 16)
    v = z[:]
    assert (v[:6, :7] == 5).all()
    assert (v[6:, :] == 0).all() and (v[:6, 7:] == 0).all()


@pytest.mark.parametrize("zarr_format,shards,key", [(2, None, "1"), (3, None, "c/1"),
                                                    (3, (8,), "c/0")],
                         ids=["v2", "v3", "v3-sharded"])
def test_clearing_a_boundary_object_keeps_a_write_made_meanwhile(zarr_format, shards, key):
    """Another writer (another store handle over the same objects, as another process would
    be) writes inside the new shape into the object a shrink is clearing, between the shrink's
    read of it and its write: the conditional write sees the change, and the value is kept."""
    class Racing(MemoryStore):
        armed = False

        def get_versioned(self, k, *args, **kwargs):
            got = super().get_versioned(k, *args, **kwargs)
            if self.armed and k == key:
                self.armed = False
                zarrx.open_array(other, mode="r+")[5] = 99
            return got

    class Elsewhere(MemoryStore):
        @property
        def shared_identity(self):
            return ("elsewhere", id(self))      # as another process's: no lock shared

    store = Racing()
    other = Elsewhere.__new__(Elsewhere)
    other.__dict__.update(store.__dict__)       # the same objects, its own locks
    z = zarrx.create_array(store, shape=(8,), chunks=(2,) if shards else (4,), shards=shards,
                           dtype="i4", fill_value=0, zarr_format=zarr_format)
    z[:] = 5
    store.armed = True
    z.resize(7 if shards else 6)
    assert not store.armed
    z.resize(8)
    np.testing.assert_array_equal(z[:], [5, 5, 5, 5, 5, 99] + [0, 0] if not shards else
                                  [5, 5, 5, 5, 5, 99, 5, 0])


@pytest.mark.parametrize("shards", [None, (8,)], ids=["chunks", "shards"])
def test_a_grow_right_after_a_shrinks_metadata_write_keeps_its_data(monkeypatch, shards):
    """Another handle grows the array back and writes the grown part between the shrink's
    metadata write and its second pass: that pass clears only outside the shape stored by
    then, so the other handle's values stay (before: the boundary chunk was cleared and the
    objects outside the smaller shape deleted, losing them)."""
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(10,), chunks=(2,) if shards else (4,), shards=shards,
                           dtype="i4", fill_value=-1)
    z[:] = 0
    real = nodes.update_array

    def then_grown(*args, **kwargs):
        out = real(*args, **kwargs)
        monkeypatch.setattr(nodes, "update_array", real)
        other = zarrx.open_array(store, mode="r+")
        other.resize(10)
        other[6:] = 7
        return out

    monkeypatch.setattr(nodes, "update_array", then_grown)
    z.resize(6)
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[:], [0] * 6 + [7] * 4)


# -- consolidation -----------------------------------------------------------------------------
_RESIZE = """
import sys, zarrx
from zarrx.store import LocalStore
zarrx.open_group(LocalStore(sys.argv[1]), mode="r+")["a"].resize(int(sys.argv[2]))
"""


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidation_racing_a_metadata_write_never_leaves_it_stale(tmp_path, monkeypatch,
                                                                     zarr_format):
    """Another process resizes an array while consolidation walks the hierarchy: the walk is
    redone (its write is conditional on the version of the consolidated document, .zmetadata
    or the root zarr.json, read before it)."""
    root = str(tmp_path / "g.zarr")
    g = zarrx.create_group(LocalStore(root), zarr_format=zarr_format)
    g.create_array("a", shape=(10,), chunks=(5,), dtype="i4")
    zarrx.consolidate_metadata(LocalStore(root))
    real = node_read.walk
    done = []

    def walk_then_race(store, path, *args):
        listed = list(real(store, path, *args))
        if not done:
            done.append(1)
            subprocess.run([sys.executable, "-c", _RESIZE, root, "11"], check=True)
        yield from listed

    monkeypatch.setattr(node_read, "walk", walk_then_race)
    zarrx.consolidate_metadata(LocalStore(root))
    monkeypatch.setattr(node_read, "walk", real)
    with open(tmp_path / "g.zarr" / "a" / (".zarray" if zarr_format == 2 else "zarr.json")) as f:
        assert json.load(f)["shape"] == [11]
    assert zarrx.open_group(LocalStore(root), mode="r")["a"].shape == (11,)
    assert _pending(LocalStore(root), zarr_format) == []


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidation_keeps_pending_paths(zarr_format):
    """A path pending in the consolidated metadata belongs to a writer that may not have
    finished: consolidating keeps it pending, so readers keep taking that node from its
    documents."""
    store = MemoryStore()
    g = zarrx.create_group(store, zarr_format=zarr_format)
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")
    zarrx.consolidate_metadata(store)
    nodes._edit_consolidated(store, zarr_format, lambda entries, pending: pending.add("a"))
    zarrx.consolidate_metadata(store)
    assert _pending(store, zarr_format) == ["a"]
    zarrx.open_group(store, mode="r+")["a"].resize(6)   # the node written again: settled
    assert _pending(store, zarr_format) == []
