"""zarrx.indexing's plans, case by case: shard-major order, projections, the ``full`` flag,
grid boundaries, zero-dimensional selections and newaxis, and plans listed lazily."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.errors import IndexingError
from zarrx.indexing import ChunkGridIndex, is_view, kind_of, plan_selection, shard_major

from indexing_helpers import _ten, read, split


def test_shard_major_example() -> None:
    coords = np.array(list(itertools.product(range(4), range(4))))
    order = shard_major(coords, (2, 2))
    assert [tuple(c) for c in coords[order][:4].tolist()] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    nested = shard_major(coords, [(4, 4), (2, 2)])
    assert nested.tolist() == order.tolist()


@pytest.mark.parametrize("sel, expected", [
    ((slice(None),), [((0,), (slice(0, 4),), (slice(0, 4),), True),
                      ((1,), (slice(0, 4),), (slice(4, 8),), True),
                      ((2,), (slice(0, 2),), (slice(8, 10),), True)]),
    ((slice(None, None, -1),), [((0,), (slice(0, 4),), (slice(9, 5, -1),), True),
                                ((1,), (slice(0, 4),), (slice(5, 1, -1),), True),
                                ((2,), (slice(0, 2),), (slice(1, None, -1),), True)]),
    ((5,), [((1,), (1, Ellipsis), (Ellipsis,), False)]),
    ((-1,), [((2,), (1, Ellipsis), (Ellipsis,), False)]),
], ids=["all", "reversed", "int", "negative-int"])
def test_projection_values(sel: tuple, expected: list) -> None:
    plan = plan_selection(sel, (10,), (4,))
    assert [tuple(p) for p in plan.chunks] == expected


def test_border_full_and_rectilinear() -> None:
    plan = plan_selection((slice(8, 10),), (10,), (4,))
    assert [(p.coords, p.full) for p in plan.chunks] == [((2,), True)]
    plan = plan_selection(np.s_[3:7], (10,), ((3, 4, 3),))
    assert [(p.coords, p.chunk_sel, p.full) for p in plan.chunks] == [((1,), (slice(0, 4),), True)]
    g = ChunkGridIndex((10, 3), ((3, 4, 3), (1, 2)))
    assert g.nchunks == (3, 2) and g.chunk_shape((1, 1)) == (4, 2)
    assert g.chunk_of((6, 2)) == (1, 1) and g.chunk_region((2, 0)) == (slice(7, 10), slice(0, 1))


def test_grid_boundaries_sizes_and_model_grids() -> None:
    from zarrx.metadata.model import RectilinearGrid, RegularGrid
    g = ChunkGridIndex((10, 7), RegularGrid(chunk_shape=(4, 7)))
    assert g.axes[0].boundaries().tolist() == [0, 4, 8, 10] and g.axes[0].sizes().tolist() == [4, 4, 4]
    r = ChunkGridIndex((10,), RectilinearGrid(chunk_sizes=((3, 4, 3, 2),)))
    assert r.nchunks == (3,) and r.axes[0].boundaries().tolist() == [0, 3, 7, 10]
    assert r.axes[0].sizes().tolist() == [3, 4, 3]
    assert ChunkGridIndex((), RegularGrid(chunk_shape=())).nchunks == ()
    assert ChunkGridIndex((0, 5), (2, 2)).nchunks == (0, 3)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=50), st.sampled_from([10, 100000]))
def test_stable_order_matches_argsort(ids: list, nbins: int) -> None:
    from zarrx import _indexing
    a = np.array(ids, dtype=np.int64)
    assert _indexing.stable_order(a, nbins).tolist() == np.argsort(a, kind="stable").tolist()


def test_zero_dim_and_newaxis() -> None:
    a = np.array(5)
    plan = plan_selection((), (), ())
    assert plan.out_shape == () and [tuple(p) for p in plan.chunks] == \
        [((), (Ellipsis,), (Ellipsis,), True)]
    plan = plan_selection((None, Ellipsis), (), ())
    assert plan.out_shape == (1,)
    out = np.zeros(1, dtype=a.dtype)
    for p in plan.chunks:
        assert p.out_sel == (0, Ellipsis) and out[p.out_sel].base is out   # a view
        out[p.out_sel] = a[p.chunk_sel]
    assert out.tolist() == [5]


def test_multi_array_orthogonal_is_outer() -> None:
    a = np.arange(60).reshape(3, 4, 5)
    sel = ([2, 0], 1, [4, 4, 1])
    plan = plan_selection(sel, a.shape, (2, 3, 2), "orthogonal")
    assert plan.out_shape == (2, 3)
    np.testing.assert_array_equal(read(plan, split(a, ChunkGridIndex(a.shape, (2, 3, 2))), a.dtype),
                                  a[np.ix_([2, 0], [1], [4, 4, 1])][:, 0, :])


def test_full_chunks_list_cells_in_chunk_order() -> None:
    plan = plan_selection(([3, 1, 0, 2], slice(None)), (4, 4), (2, 4), "orthogonal")
    ps = list(plan.chunks)
    assert all(p.full and p.chunk_sel[0] == slice(0, 2) for p in ps)
    assert [p.out_sel[0].tolist() for p in ps] == [[2, 1], [3, 0]]
    assert is_view(ps[0].chunk_sel) and not is_view(ps[0].out_sel)
    assert is_view((0, slice(None), None, Ellipsis))


def test_large_plan_is_lazy() -> None:
    plan = plan_selection(Ellipsis, (100_000, 100_000), (10, 10))
    assert plan.nchunks == 10**8
    first = next(iter(plan.chunks))
    assert first.coords == (0, 0) and first.full


def test_a_run_of_chunks_is_counted_not_listed() -> None:
    """Planning a step-1 slice over about two million chunks counts them; nothing is built per
    chunk until the plan's chunks are listed (box reads and writes never list them)."""
    import tracemalloc
    tracemalloc.start()
    try:
        plan = plan_selection((slice(5, 2_000_000 * 4 - 3), 1), (2_000_000 * 4, 3), (4, 2))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert plan.nchunks == 1_999_999 and plan.box == ((5, 7_999_997), (1, 2))
    assert peak < 1 << 20, peak
    last = plan.chunks[-1]
    assert last.coords == (1_999_999, 0) and last.chunk_sel == (slice(0, 1), 1)
    assert last.out_sel == (slice(7_999_991, 7_999_992),) and not last.full


def test_a_point_read_of_a_million_points_holds_few_arrays_of_their_length() -> None:
    """z.vindex over 2**20 unsorted points: besides the 1 MiB result, the read holds the two
    int64 position arrays and at most three more of the points' length at once (the chunk of
    each point, its order, the sorted chunks); it held eight."""
    import tracemalloc

    import zarrx
    from zarrx.store import MemoryStore
    z = zarrx.create_array(MemoryStore(), shape=(4096, 4096), chunks=(64, 64), dtype="u1",
                           fill_value=7)
    n = 1 << 20
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, 4096, n), rng.integers(0, 4096, n)
    tracemalloc.start()
    try:
        got = z.vindex[i, j]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got.shape == (n,) and bool((got == 7).all())
    assert peak < 6 * 8 * n, f"{peak / (8 * n):.1f} int64 arrays of the points' length"


def test_a_plan_listed_by_many_threads_at_once() -> None:
    """The first listing projects the runs once, whichever thread gets there first."""
    import threading
    want = [p for p in plan_selection((slice(1, 95), slice(0, 7)), (100, 7), (3, 7)).chunks]
    for _ in range(30):
        plan = plan_selection((slice(1, 95), slice(0, 7)), (100, 7), (3, 7))
        start = threading.Barrier(8)
        got: dict[int, list] = {}

        def lister(t: int) -> None:
            start.wait()
            got[t] = [plan.chunks[i] for i in range(t, len(want), 8)]

        threads = [threading.Thread(target=lister, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert all(got[t] == want[t::8] for t in range(8))


@pytest.mark.parametrize("sel", [slice(None, None, 2**63), slice(None, None, -2**63),
                                 slice(3, None, 2**70), slice(None, None, 11)])
def test_huge_slice_steps_select_like_numpy(sel):
    z = _ten()
    assert z[sel].tolist() == np.arange(10)[sel].tolist()
    assert z.oindex[sel].tolist() == np.arange(10)[sel].tolist()


@pytest.mark.parametrize("sel", [
    (None, [0, 3], Ellipsis, -1), (None, [0, 3], -1), ([0, 3], Ellipsis, -1),
    (Ellipsis, [0, 3], -1), (1, Ellipsis, [0, 2]), (None, 1, Ellipsis, [0, 2]),
    ([0, 3], None, -1), (slice(None), None, [1, 2]), (None, Ellipsis, [1, 2]),
], ids=str)
def test_newaxis_and_ellipsis_around_an_index_array_match_numpy(sel):
    """An Ellipsis or a newaxis between integers and an index array separates them, as in
    numpy, even where the Ellipsis stands for no axis: numpy then moves the array's axis
    first, and zarrx either gives numpy's result or says it cannot."""
    import zarrx
    ref = np.arange(28).reshape(7, 4)
    z = zarrx.create_array({}, shape=(7, 4), chunks=(4, 2), dtype="i8")
    z[...] = ref
    try:
        got = z[sel]
    except IndexingError as exc:
        assert "not adjacent (numpy would move the array's axis first)" in str(exc)
        assert sel in ((None, [0, 3], Ellipsis, -1), (None, 1, Ellipsis, [0, 2]))
        return
    assert got.shape == ref[sel].shape and np.array_equal(got, ref[sel])


def test_a_mask_in_a_one_tuple_is_a_mask():
    """``z[mask,]`` reads and writes the cells ``z[mask]`` does, as numpy's ``a[mask,]`` and
    zarr-python's do."""
    import zarrx
    ref = np.arange(28).reshape(7, 4)
    z = zarrx.create_array({}, shape=(7, 4), chunks=(4, 3), dtype="i8")
    z[...] = ref
    mask = ref % 3 == 0
    assert kind_of((mask,), ref.shape) == "mask"
    assert z[mask,].tolist() == ref[mask,].tolist()
    z[mask,] = -1
    ref[mask,] = -1
    assert z[...].tolist() == ref.tolist()


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("sel", [[4, 4], [-1, -1], [0, 4, 4]], ids=str)
def test_a_repeated_index_in_a_border_chunk_reads_like_numpy(fmt, sel):
    """The last chunk holds one cell of the array; an index array naming it as many times as
    the chunk is long covers the chunk's cells and has its length, yet is not the chunk."""
    import zarrx
    ref = np.arange(5) + 10
    z = zarrx.create_array({}, shape=(5,), chunks=(2,), dtype="i2", zarr_format=fmt)
    z[...] = ref
    assert z.oindex[np.array(sel)].tolist() == ref[sel].tolist()
    assert z[sel].tolist() == ref[sel].tolist()


@pytest.mark.parametrize("index", [np.uint8(5), np.int8(-1), np.uint16(2)])
def test_block_selections_take_numpy_integers_of_any_width(index) -> None:
    """A block index given as a narrow numpy integer selects that block (its chunk arithmetic
    once wrapped in the integer's type: an OverflowError, or a wrong block)."""
    import zarrx
    from zarrx.store import MemoryStore

    x = np.arange(13 * 18, dtype="i4").reshape(13, 18)
    z = zarrx.create_array(MemoryStore(), shape=x.shape, chunks=(2, 3), dtype="i4")
    z[...] = x
    k = int(index) % 6
    want = x[:, 3 * k:3 * k + 3]
    for threads in (1, 2):
        with zarrx.config.set(threads=threads):
            assert np.array_equal(z.blocks[..., index], want)
            assert np.array_equal(z.blocks[:, index], want)
    z.blocks[:, index] = -want
    assert np.array_equal(z[:, 3 * k:3 * k + 3], -want)
    assert np.array_equal(z.blocks[slice(np.uint8(1), np.uint8(3)), index], want[2:6] * -1)
