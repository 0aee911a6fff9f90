"""A delete or a move stopped part way (a killed process, a failing store) leaves no node that
reads the objects already removed, or not yet copied, as the fill value, and an array created
afterwards where the node was never reads the objects the delete left behind as its own
(docs/RELIABILITY.md)."""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

import zarrx
from zarrx.errors import ContainsArrayError
from zarrx.store import LocalStore


class Stopped(Exception):
    """The stand-in for the end of a process in the middle of a delete."""


class StopsDeleting(LocalStore):
    """A LocalStore whose ``delete`` stops for good after ``budget`` deletes."""

    budget: int | None = None

    def delete(self, key):
        if self.budget is not None:
            if self.budget == 0:
                raise Stopped(key)
            self.budget -= 1
        super().delete(key)


def _array(store, zarr_format, path="a"):
    a = zarrx.create_array(store, name=path, shape=(40, 40), chunks=(10, 10), dtype="i4",
                           fill_value=0, zarr_format=zarr_format)
    a[:] = 7
    return a


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("budget", [0, 1, 5, 12])
def test_a_delete_stopped_part_way_leaves_no_holed_node_nor_leftovers_for_a_new_array(
        tmp_path, zarr_format, budget):
    store = StopsDeleting(str(tmp_path))
    zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    _array(store, zarr_format).attrs["x"] = 1          # v2: a .zattrs to leave behind too
    store.budget = budget
    with pytest.raises(Stopped):
        zarrx.open_group(store, mode="r+").__delitem__("a")
    store.budget = None
    g = zarrx.open_group(str(tmp_path), mode="r+")
    if "a" in g:            # before: for v2 a .zarray could outlive chunks removed (0s read)
        np.testing.assert_array_equal(g["a"][:], 7)
        return
    b = g.create_array("a", shape=(40, 40), chunks=(10, 10), dtype="i4", fill_value=0)
    # before: the new array read the chunks the delete left as its own (7s)
    np.testing.assert_array_equal(b[:], 0)
    doc = ".zarray" if zarr_format == 2 else "zarr.json"
    assert sorted(b.store.list_prefix("a/")) == [f"a/{doc}"]


def test_a_killed_delete_never_serves_old_chunks_to_a_new_array(tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("needs fork and SIGKILL")
    for rnd in range(10):
        root = tmp_path / str(rnd)
        g = zarrx.open_group(str(root), mode="w")
        a = g.create_array("a", shape=(200, 200), chunks=(10, 10), dtype="i4", fill_value=0)
        a[:] = 7
        ready, go = os.pipe()
        pid = os.fork()
        if pid == 0:                        # pragma: no cover - the child is killed
            try:
                os.write(go, b"x")
                del g["a"]
            finally:
                os._exit(0)
        os.read(ready, 1)
        time.sleep(0.006 * rnd)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(ready), os.close(go)
        g = zarrx.open_group(str(root), mode="r+")
        if "a" in g:
            np.testing.assert_array_equal(g["a"][:], 7)
        else:                               # before: 13 of 30 rounds read 7s here
            np.testing.assert_array_equal(g.create_array("a", shape=(200, 200),
                                                         chunks=(10, 10), dtype="i4")[:], 0)


class Rival(LocalStore):
    """A LocalStore on which another writer stores ``rival`` (key -> value) as this handle
    first calls the method named ``when``."""

    rival: dict | None = None
    when = ""

    def _rival(self, name):
        if self.rival is not None and name == self.when:
            rival, self.rival = self.rival, None
            for key, value in rival.items():
                LocalStore(str(self.root)).set(key, value)

    def generation(self, key):
        self._rival("generation")
        return super().generation(key)

    def delete_if(self, key, if_generation):
        self._rival("delete_if")
        return super().delete_if(key, if_generation)


def _leftovers(tmp_path):
    """A store holding the chunks of ``a`` without its document, the document and a chunk."""
    store = Rival(str(tmp_path))
    a = _array(store, 3)
    doc, chunk = store.get("a/zarr.json"), store.get("a/c/1/1")
    store.delete("a/zarr.json")             # a delete stopped after the document
    return store, doc, chunk


def test_a_chunk_written_after_the_leftovers_were_read_is_kept(tmp_path):
    store, _, chunk = _leftovers(tmp_path)
    store.when, store.rival = "delete_if", {"a/c/1/1": chunk}
    b = zarrx.create_array(store, name="a", shape=(40, 40), chunks=(10, 10), dtype="i4",
                           fill_value=0)
    assert sorted(store.list_prefix("a/")) == ["a/c/1/1", "a/zarr.json"]
    np.testing.assert_array_equal(b[10:20, 10:20], 7)
    assert b[:].sum() == 7 * 100


def test_an_array_created_meanwhile_by_another_writer_keeps_its_chunks(tmp_path):
    store, doc, chunk = _leftovers(tmp_path)
    before = sorted(store.list_prefix("a/")) + ["a/zarr.json"]
    store.when, store.rival = "generation", {"a/zarr.json": doc, "a/c/1/1": chunk}
    with pytest.raises(ContainsArrayError):
        zarrx.create_array(store, name="a", shape=(40, 40), chunks=(10, 10), dtype="i4",
                           fill_value=0)
    assert sorted(store.list_prefix("a/")) == sorted(before)   # nothing of it removed


def test_objects_below_a_node_document_are_not_leftovers(tmp_path):
    store = LocalStore(str(tmp_path))
    zarrx.open_group(store, mode="w", zarr_format=2)
    _array(store, 2, path="g/x")
    store.delete("g/.zgroup")               # a group that lost its document, not its child
    before = sorted(store.list_prefix("g/"))
    zarrx.create_array(store, name="g", shape=(4,), chunks=(2,), dtype="i4", zarr_format=2)
    assert sorted(store.list_prefix("g/")) == sorted(before + ["g/.zarray"])


class StopsWriting(LocalStore):
    """A LocalStore whose ``set`` and ``set_if`` stop for good after ``budget`` writes."""

    budget: int | None = None

    def _spend(self, key):
        if self.budget is not None:
            if self.budget == 0:
                raise Stopped(key)
            self.budget -= 1

    def set(self, key, value):
        self._spend(key)
        return super().set(key, value)

    def set_if(self, key, value, if_generation):
        self._spend(key)
        return super().set_if(key, value, if_generation)


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("budget", [1, 8, 16])
def test_a_move_stopped_part_way_leaves_no_node_missing_data_at_its_destination(
        tmp_path, zarr_format, budget):
    store = StopsWriting(str(tmp_path))
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    a = _array(store, zarr_format)
    a.attrs["x"] = 1
    store.budget = budget
    with pytest.raises(Stopped):
        g.move("a", "b")
    store.budget = None
    g = zarrx.open_group(str(tmp_path), mode="r")
    np.testing.assert_array_equal(g["a"][:], 7)
    # before, for v2: "b" opened with its .zarray copied and reading 0s for chunks not yet
    assert "b" not in g


def test_files_of_other_programs_below_a_new_array_are_not_leftovers(tmp_path):
    # only chunk keys and a v2 .zattrs are what a deleted array leaves: with anything else
    # there, nothing below the path is removed
    store = LocalStore(str(tmp_path))
    zarrx.open_group(store, mode="w")
    for key in ("notes/c/0", "notes/readme.txt"):
        store.set(key, b"keep")
    zarrx.create_array(store, name="notes", shape=(4,), chunks=(2,), dtype="u1")
    assert sorted(store.list_prefix("notes/")) == ["notes/c/0", "notes/readme.txt",
                                                  "notes/zarr.json"]


@pytest.mark.parametrize("keys", [["a/c/0/1", "a/c/1/1"], ["a/0.1", "a/1.1"],
                                  ["a/0/1"], ["a/c.0.1"]], ids=["v3", "v2", "v2-slash", "v3-dot"])
def test_chunks_of_any_key_encoding_are_leftovers(tmp_path, keys):
    store = LocalStore(str(tmp_path))
    zarrx.open_group(store, mode="w")
    for key in keys:
        store.set(key, b"\x07" * 4)
    a = zarrx.create_array(store, name="a", shape=(4, 4), chunks=(2, 2), dtype="u1")
    assert sorted(store.list_prefix("a/")) == ["a/zarr.json"]
    assert a[:].sum() == 0
