"""Index arrays and masks as numpy takes them: a float index array is refused even when empty
(an empty list stays an empty integer index), and a boolean mask or index that repeats its
cells along an axis (``np.broadcast_to``) costs the cells it stores plus those it selects,
not the cells of the array."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.errors import IndexingError, SelectionSizeError, VindexInvalidSelectionError
from zarrx.store import MemoryStore
from zarrx.store.counting import CountingStore

EMPTY = np.array([], dtype=np.float64)
READS = {
    "getitem": (lambda z, e: z[e], IndexingError),
    "getitem-second-axis": (lambda z, e: z[:, e], IndexingError),
    "oindex": (lambda z, e: z.oindex[e, 1:], IndexingError),
    "get_orthogonal_selection": (lambda z, e: z.get_orthogonal_selection((0, e)), IndexingError),
    "vindex": (lambda z, e: z.vindex[e, e], VindexInvalidSelectionError),
    "get_coordinate_selection": (lambda z, e: z.get_coordinate_selection((e, [])),
                                 VindexInvalidSelectionError),
}
WRITES = {
    "setitem": (lambda z, e: z.__setitem__(e, 1), IndexingError),
    "oindex": (lambda z, e: z.oindex.__setitem__((slice(None), e), 1), IndexingError),
    "vindex": (lambda z, e: z.vindex.__setitem__(([], e), 1), VindexInvalidSelectionError),
}


def small() -> zarrx.Array:
    return zarrx.array(np.arange(12, dtype="i4").reshape(3, 4), chunks=(2, 2))


@pytest.mark.parametrize("name", list(READS) + [f"set-{w}" for w in WRITES])
def test_an_empty_float_index_array_is_refused_as_numpy_refuses_it(name):
    z = small()
    call, error = READS[name] if name in READS else WRITES[name[4:]]
    with pytest.raises(IndexError):
        np.zeros((3, 4))[EMPTY]
    # before: taken as an empty integer index, selecting nothing
    with pytest.raises(error, match="found dtype float64"):
        call(z, EMPTY)
    assert (z[...] == np.arange(12).reshape(3, 4)).all()


def test_an_empty_list_is_still_an_empty_integer_index():
    z, a = small(), np.arange(12, dtype="i4").reshape(3, 4)
    for sel in ([], ([], 1), (slice(None), [[]]), [[], []]):
        assert z[sel].shape == a[sel].shape
    assert z.oindex[[], 1:].shape == (0, 3)
    assert z.vindex[[], []].shape == a[[], []].shape == (0,)
    assert z.get_coordinate_selection(([[]], [])).shape == (1, 0)


def _refuse_whole_scans(monkeypatch):
    """np.nonzero refuses an array of more than 2**16 cells: a mask is looked at cell by cell
    only where it stores distinct cells."""
    real = np.nonzero

    def nonzero(a):
        assert np.size(a) <= 1 << 16, f"np.nonzero over {np.size(a)} cells"
        return real(a)
    monkeypatch.setattr(np, "nonzero", nonzero)


def test_a_broadcast_mask_of_a_huge_array_is_looked_at_once(monkeypatch):
    z = zarrx.create_array(MemoryStore(), shape=(2**31, 2**31), chunks=(2**10, 2**10),
                           dtype="i4", fill_value=7)
    z[2**31 - 1, 5:8] = [1, 2, 3]
    _refuse_whole_scans(monkeypatch)
    # before: np.nonzero went through all 2**62 cells (it never ended)
    assert z[np.broadcast_to(np.False_, z.shape)].shape == (0,)
    assert z.vindex[np.broadcast_to(np.zeros((1, 1), dtype=bool), z.shape)].shape == (0,)
    assert z.get_mask_selection(np.broadcast_to(np.False_, z.shape)).shape == (0,)
    z.set_mask_selection(np.broadcast_to(np.False_, z.shape), 0)
    assert z[2**31 - 1, 4:9].tolist() == [7, 1, 2, 3, 7]
    # a broadcast mask selecting many cells is refused by their count, before any is listed
    with pytest.raises(SelectionSizeError, match=f"boolean mask: {2**62} true cells"):
        z[np.broadcast_to(np.True_, z.shape)]
    y = zarrx.create_array(MemoryStore(), shape=(2**59, 8), chunks=(2**20, 4), dtype="i4")
    row = np.zeros((1, 8), dtype=bool)
    row[0, 3] = True
    with pytest.raises(SelectionSizeError, match=f"boolean mask: {2**59} true cells"):
        y[np.broadcast_to(row, y.shape)]


def test_a_broadcast_boolean_index_of_a_huge_axis_is_looked_at_once():
    z = zarrx.create_array(MemoryStore(), shape=(2**62,), chunks=(2**20,), dtype="i4",
                           fill_value=7)
    # before: np.flatnonzero copied the index first, a numpy MemoryError of 4 EiB
    assert z.oindex[np.broadcast_to(np.False_, z.shape)].shape == (0,)
    with pytest.raises(SelectionSizeError, match=f"boolean index on axis 0: {2**62} true"):
        z.oindex[np.broadcast_to(np.True_, z.shape)]
    with pytest.raises(SelectionSizeError, match=f"boolean mask: {2**62} true"):
        z[np.broadcast_to(np.True_, z.shape)] = 1


CORES = [(1, 5, 1), (4, 1, 6), (1, 1, 6), (1, 1, 1), (4, 5, 1), (4, 1, 1)]


@pytest.mark.parametrize("core", CORES, ids=[str(c) for c in CORES])
def test_a_broadcast_mask_selects_and_writes_what_numpy_does(core):
    shape = (4, 5, 6)
    a = np.arange(120, dtype="i4").reshape(shape)
    z = zarrx.array(a, chunks=(3, 2, 4))
    rng = np.random.default_rng(sum(core))
    mask = np.broadcast_to(rng.random(core) < 0.5, shape)
    assert 0 in mask.strides
    for got in (z[mask], z.vindex[mask], z.get_mask_selection(mask)):
        assert got.tolist() == a[mask].tolist()
    values = -np.arange(int(mask.sum()), dtype="i4")
    z[mask] = values
    a[mask] = values
    assert (z[...] == a).all()
    for ax in range(3):
        flag = np.broadcast_to(np.array(rng.random() < 0.5), (shape[ax],))
        sel = (slice(None),) * ax + (flag,)
        assert z.oindex[sel].tolist() == a[sel].tolist()


@pytest.mark.parametrize("sel", [None, (Ellipsis, None), 0, [0], slice(None), np.array(0),
                                 (Ellipsis, Ellipsis)],
                         ids=["None", "Ellipsis-None", "int", "list", "slice", "0-d-int", "two-Ellipsis"])
def test_a_coordinate_selection_of_a_0d_array_is_refused_as_one(sel):
    z = zarrx.create_array(MemoryStore(), shape=(), dtype="i4", fill_value=3)
    # before: the orthogonal parser's IndexingError ("orthogonal selection: newaxis (None)...")
    with pytest.raises(VindexInvalidSelectionError,
                       match=r"coordinate selection of a 0-d array: expected \(\), \.\.\. or a "
                             r"0-d boolean mask, found "):
        z.vindex[sel]
    with pytest.raises(VindexInvalidSelectionError, match="coordinate selection of a 0-d"):
        z.set_coordinate_selection(sel, 1)
    assert z.vindex[()] == z.vindex[...] == z.get_coordinate_selection((Ellipsis,)) == 3


def test_selections_of_a_huge_grid_cost_the_chunks_they_touch():
    """A selection of few cells of a 2**62-cell array reads one object per chunk it touches,
    and nothing per chunk of the grid it skips, whatever the selection kind."""
    store = CountingStore(MemoryStore())
    z = zarrx.create_array(store, name="z", shape=(2**62,), chunks=(2**20,), dtype="i4",
                           fill_value=7)
    y = zarrx.create_array(store, name="y", shape=(2**31, 2**31), chunks=(2**8, 2**8),
                           dtype="i4", fill_value=7)
    reads = {
        "step": (lambda: z[::2**50], 4096),
        "negative-step": (lambda: z[::-2**52], 1024),
        "step-2d": (lambda: y[::2**25, -1::-2**26], 64 * 32),
        "oindex": (lambda: y.oindex[[0, 2**31 - 1, 2**30], [5, -1]], 6),
        "vindex": (lambda: y.vindex[[0, 2**31 - 1, 2**30], [5, -1, 0]], 3),
        "blocks": (lambda: y.blocks[2**23 - 1, 5:7], 2),
    }
    for name, (read, chunks) in reads.items():
        store.reset()
        got = read()
        assert (got == 7).all(), name
        assert store.counts["get"] == chunks, name
    store.reset()
    y.vindex[[2**31 - 1, 0], [0, 2**31 - 1]] = [1, 2]
    z[::2**61] = 3
    assert store.counts["set"] == 4
    assert y.vindex[[2**31 - 1, 0], [0, 2**31 - 1]].tolist() == [1, 2]
    assert z[::2**61].tolist() == [3, 3]


@pytest.mark.parametrize("dtype", ["u8", "i8", "u4", "i1"])
def test_a_broadcast_index_array_too_long_for_memory_is_a_selection_size_error(dtype):
    z = zarrx.create_array(MemoryStore(), shape=(2**62,), chunks=(2**20,), dtype="i4")
    index = np.broadcast_to(np.array(5, dtype), (2**40,))
    # before (uint64): a numpy MemoryError, from a 1 TiB comparison made before the copy
    for read in (lambda: z.oindex[index], lambda: z.vindex[index], lambda: z[index]):
        with pytest.raises(SelectionSizeError, match=f"index array on axis 0: {2**40} positions"):
            read()


def test_an_index_past_2_63_is_named_whatever_the_array_layout():
    z = small()
    for index, bad in ((np.array([1, 2**64 - 1], "u8"), 2**64 - 1),
                       (np.array([[1], [2**63]], "u8"), 2**63),
                       (np.broadcast_to(np.array(7, "i1"), (5,)), 7)):
        with pytest.raises(zarrx.errors.BoundsCheckError,
                           match=f"index {bad} is out of bounds for axis 1 with size 4"):
            z[:, index]
        with pytest.raises(zarrx.errors.BoundsCheckError,
                           match=f"index {bad} is out of bounds for axis 0 with size 3"):
            z.vindex[index, 0]
