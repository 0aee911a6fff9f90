"""``Group.move`` against other writers of the same store: two moves into one place never mix
their objects nor both report success, and a move whose source goes away while it copies
raises rather than leave data without its node (docs/RELIABILITY.md)."""
from __future__ import annotations

import multiprocessing as mp

import numpy as np
import pytest

import zarrx
from zarrx.errors import NodeExistsError, NodeNotFoundError
from zarrx.store import LocalStore


def _two_arrays(root, zarr_format):
    """The arrays ``a`` (all 1s) and ``x`` (all 2s) in a group at ``root`` (a store or a
    folder)."""
    g = zarrx.open_group(root if isinstance(root, LocalStore) else str(root), mode="w",
                         zarr_format=zarr_format)
    for name, value in (("a", 1), ("x", 2)):
        g.create_array(name, shape=(40, 40), chunks=(5, 5), dtype="i4", fill_value=0)[:] = value
    return g


def _move(root, source, barrier, results):
    g = zarrx.open_group(str(root), mode="r+")
    barrier.wait()
    try:
        g.move(source, "dst")
        results.put((source, "moved"))
    except NodeExistsError:
        results.put((source, "refused"))


def _values(group, name):
    return sorted(np.unique(group[name][:]).tolist()) if name in group else None


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_two_processes_moving_into_one_place_at_once_never_mix(tmp_path, zarr_format):
    ctx = mp.get_context("fork")
    moved = 0
    for rnd in range(6):
        root = tmp_path / str(rnd)
        _two_arrays(root, zarr_format)
        barrier, results = ctx.Barrier(2), ctx.Queue()
        procs = [ctx.Process(target=_move, args=(root, s, barrier, results)) for s in "ax"]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
        assert [p.exitcode for p in procs] == [0, 0]
        outcome = dict(results.get(timeout=10) for _ in procs)
        g = zarrx.open_group(str(root), mode="r")
        # before: both moves succeeded in 10 of 10 rounds, one array lost and the other's
        # place holding chunks of both
        assert list(outcome.values()).count("moved") <= 1, outcome
        for source, value in (("a", [1]), ("x", [2])):
            if outcome[source] == "moved":
                assert source not in g and _values(g, "dst") == value
            else:                           # refused: the source is as it was
                assert _values(g, source) == value
        if "dst" not in g:                  # what a refused move copied is gone again
            assert list(LocalStore(str(root)).list_prefix("dst/")) == []
        moved += "moved" in outcome.values()
    assert moved > 0


class Rival(LocalStore):
    """A LocalStore on which another writer runs ``rival()`` just before this handle's
    ``nth`` conditional create (a move's copy of an object)."""

    rival = None
    nth = 0

    def set_if(self, key, value, if_generation):
        if self.rival is not None:
            if self.nth == 0:
                rival, self.rival = self.rival, None
                rival()
            self.nth -= 1
        return super().set_if(key, value, if_generation)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_move_finding_its_place_taken_meanwhile_removes_what_it_copied(tmp_path,
                                                                         zarr_format):
    store = Rival(str(tmp_path))
    g = _two_arrays(store, zarr_format)
    other = LocalStore(str(tmp_path))
    store.nth = 5                           # five chunks copied, then another writer's
    key = "dst/c/1/1" if zarr_format == 3 else "dst/1.1"
    store.rival = lambda: other.set(key, b"theirs")
    with pytest.raises(NodeExistsError, match="an object is stored at .* already"):
        g.move("a", "dst")
    # before: the move wrote over it and reported success
    assert sorted(other.list_prefix("dst/")) == [key] and other.get(key) == b"theirs"
    np.testing.assert_array_equal(zarrx.open_group(str(tmp_path), mode="r")["a"][:], 1)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_move_whose_source_is_deleted_while_it_copies_raises(tmp_path, zarr_format):
    store = Rival(str(tmp_path))
    g = _two_arrays(store, zarr_format)
    store.nth = 3
    store.rival = lambda: zarrx.open_group(str(tmp_path), mode="r+").__delitem__("a")
    with pytest.raises(NodeNotFoundError, match="was removed while it was copied"):
        g.move("a", "dst")
    # before: the move reported success and "dst" held chunks without a node document
    assert list(LocalStore(str(tmp_path)).list_prefix("dst/")) == []
    assert "dst" not in zarrx.open_group(str(tmp_path), mode="r")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_move_whose_copied_chunks_a_creator_took_for_leftovers_raises(tmp_path, zarr_format):
    # a creator of an array at "dst" removes the chunks it finds there without a node
    # document (what a stopped delete leaves), here those the move has copied so far
    from zarrx.metadata.leftovers import clear_leftovers
    store = Rival(str(tmp_path))
    g = _two_arrays(store, zarr_format)
    store.nth = 5
    store.rival = lambda: clear_leftovers(LocalStore(str(tmp_path)), "dst")
    with pytest.raises(NodeExistsError, match="removed by another writer"):
        g.move("a", "dst")
    # without the check: "dst" opened reading the 5 removed chunks as 0s
    assert list(LocalStore(str(tmp_path)).list_prefix("dst/")) == []
    np.testing.assert_array_equal(zarrx.open_group(str(tmp_path), mode="r")["a"][:], 1)


def test_a_move_into_a_place_holding_objects_refuses_and_they_can_be_removed(tmp_path):
    import zarrx.tools
    g = zarrx.open_group(str(tmp_path), mode="w")
    g.create_array("s", shape=(10,), chunks=(5,), dtype="i4", fill_value=0)[5:] = 3
    store = LocalStore(str(tmp_path))
    store.set("d/c/0", store.get("s/c/1"))        # what a stopped delete of another "d" left
    with pytest.raises(NodeExistsError, match="an object is stored at 'd/c/0' already"):
        g.move("s", "d")        # before: "d" read the 3s of d/c/0 where "s" has the fill
    zarrx.tools.check(str(tmp_path), repair=True, remove_strays=True)
    g.move("s", "d")
    np.testing.assert_array_equal(g["d"][:], [0] * 5 + [3] * 5)
