"""zarrx.indexing against numpy: every selection kind, regular and rectilinear grids, reads and
writes assembled chunk by chunk, the ``full`` flag, shard-major order, and the error messages."""
from __future__ import annotations

import itertools
import os
import re
from typing import Any

import numpy as np
import pytest
import strategies as zst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrx.errors import IndexingError, ZarrError
from zarrx.indexing import ChunkGridIndex, is_view, kind_of, plan_selection, shard_major
from zarrx.selection import numpy_layout

SETTINGS = settings(max_examples=int(os.environ.get("ZARRX_EXAMPLES", "100")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SENTINEL = -7


# ----------------------------------------------------------------------------------- helpers

def split(a: np.ndarray, grid: ChunkGridIndex) -> dict[tuple[int, ...], np.ndarray]:
    """The chunk arrays of ``a`` at their stored shape; cells past the edge hold SENTINEL."""
    chunks = {}
    for coords in grid.all_coords():
        c = np.full(grid.chunk_shape(coords), SENTINEL, dtype=a.dtype)
        region = grid.chunk_region(coords)
        c[tuple(slice(0, r.stop - r.start) for r in region)] = a[region]
        chunks[coords] = c
    return chunks


def join(chunks: dict, grid: ChunkGridIndex, dtype: Any) -> np.ndarray:
    a = np.empty(grid.shape, dtype=dtype)
    for coords, c in chunks.items():
        region = grid.chunk_region(coords)
        a[region] = c[tuple(slice(0, r.stop - r.start) for r in region)]
    return a


def read(plan, chunks: dict, dtype: Any) -> np.ndarray:
    out = np.full(plan.out_shape, SENTINEL, dtype=dtype)
    target = out.reshape(-1) if plan.flat else out
    for p in plan.chunks:
        target[p.out_sel] = chunks[p.coords][p.chunk_sel]
    return out


def write(plan, chunks: dict, values: np.ndarray) -> None:
    src = values.reshape(-1) if plan.flat else values
    for p in plan.chunks:
        chunks[p.coords][p.chunk_sel] = src[p.out_sel]


def orthogonal_oracle(sel: tuple, shape: tuple[int, ...]) -> tuple:
    """A numpy index with orthogonal meaning: np.ix_-shaped arrays, ints kept as scalars."""
    kept = [i for i, s in enumerate(sel) if not isinstance(s, (int, np.integer))]
    idx: list[Any] = []
    for ax, s in enumerate(sel):
        if isinstance(s, (int, np.integer)):
            idx.append(s)
            continue
        a = np.arange(shape[ax])[s] if isinstance(s, slice) else np.asarray(s)
        if a.dtype == bool:
            a = np.flatnonzero(a)
        sh = [1] * len(kept)
        sh[kept.index(ax)] = a.shape[0]
        idx.append(a.reshape(sh))
    return tuple(idx)


def block_oracle(sel: tuple, grid: ChunkGridIndex) -> tuple:
    out = []
    for ax, s in enumerate(sel):
        a = grid.axes[ax]
        ks = range(a.nchunks)[s] if isinstance(s, slice) else [range(a.nchunks)[s]]
        if len(ks) == 0:
            out.append(slice(0, 0))
        else:
            out.append(slice(a.start(ks[0]), a.start(ks[-1]) + a.inbound_len(ks[-1])))
    return tuple(out)


def check_plan(a: np.ndarray, grid: ChunkGridIndex, plan, oracle: Any) -> None:
    """Read, write, ``full`` and touched-once checks against the numpy index ``oracle``."""
    chunks = split(a, grid)
    expected = a[oracle]
    assert plan.shape == np.shape(expected)
    # a plan with a view holds an index array of several axes flattened on one axis:
    # numpy_layout lays its result out as numpy does
    laid = (lambda v: v) if plan.view is None else (lambda v: numpy_layout(v, plan.view))
    np.testing.assert_array_equal(laid(read(plan, chunks, a.dtype)), expected)
    # writes: scatter fresh values, reassemble, compare with numpy assignment
    values = np.arange(1000, 1000 + int(np.prod(plan.out_shape)), dtype=a.dtype).reshape(plan.out_shape)
    b = a.copy()
    b[oracle] = laid(values)
    write(plan, chunks, values)
    np.testing.assert_array_equal(join(chunks, grid, a.dtype), b)
    # coverage: each touched chunk once, `full` exact
    ids = np.arange(a.size).reshape(a.shape)
    cov = np.zeros(a.size, dtype=bool)
    cov[np.asarray(ids[oracle]).reshape(-1)] = True
    cov = cov.reshape(a.shape)
    listed = [p.coords for p in plan.chunks]
    assert len(listed) == len(set(listed)) == plan.nchunks == len(plan.chunks)
    seq = plan.chunks                      # a lazy sequence: indexing agrees with iteration
    assert [repr(seq[i]) for i in range(len(seq))] == [repr(p) for p in seq] == \
        [repr(p) for p in seq[:]] == [repr(p) for i in range(0, len(seq), 3) for p in seq[i:i + 3]]
    per_axis = [np.array([ag.chunk_of(i) for i in range(n)], dtype=np.int64)
                for ag, n in zip(grid.axes, a.shape)]
    if a.ndim:
        touched = set(zip(*(m[w].tolist() for m, w in zip(per_axis, np.nonzero(cov)))))
    else:
        touched = {()} if cov.any() else set()
    assert set(listed) == touched
    for p in plan.chunks:
        assert p.full == bool(cov[grid.chunk_region(p.coords)].all()), p


def arrays_and_grid(data: Any, max_dims: int = 4, max_side: int = 9
                    ) -> tuple[np.ndarray, ChunkGridIndex, Any]:
    shape = data.draw(zst.shapes(max_dims=max_dims, max_side=max_side), label="shape")
    chunks = data.draw(zst.grids(shape), label="grid")
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return a, ChunkGridIndex(shape, chunks), chunks


# ---------------------------------------------------------------------------- property tests

@SETTINGS
@given(st.data())
def test_basic_matches_numpy(data: Any) -> None:
    a, grid, chunks = arrays_and_grid(data)
    sel = data.draw(zst.basic_selections(a.shape), label="sel")
    check_plan(a, grid, plan_selection(sel, a.shape, chunks, "basic"), sel)


@SETTINGS
@given(st.data())
def test_orthogonal_matches_numpy(data: Any) -> None:
    a, grid, chunks = arrays_and_grid(data)
    sel = data.draw(zst.orthogonal_selections(a.shape), label="sel")
    check_plan(a, grid, plan_selection(sel, a.shape, chunks, "orthogonal"),
               orthogonal_oracle(sel, a.shape))


@SETTINGS
@given(st.data())
def test_coordinate_matches_numpy(data: Any) -> None:
    a, grid, chunks = arrays_and_grid(data)
    sel = data.draw(zst.coordinate_selections(a.shape), label="sel")
    check_plan(a, grid, plan_selection(sel, a.shape, chunks, "coordinate"), sel)


@SETTINGS
@given(st.data())
def test_mask_matches_numpy(data: Any) -> None:
    a, grid, chunks = arrays_and_grid(data, max_side=7)
    mask = data.draw(zst.mask_selections(a.shape), label="mask")
    check_plan(a, grid, plan_selection(mask, a.shape, chunks, "mask"), mask)
    if a.ndim >= 1:
        assert kind_of(mask, a.shape) == "mask"
        check_plan(a, grid, plan_selection(mask, a.shape, chunks, "basic"), mask)


@SETTINGS
@given(st.data())
def test_block_matches_numpy(data: Any) -> None:
    a, grid, chunks = arrays_and_grid(data, max_side=7)
    sel = data.draw(zst.block_selections(a.shape, chunks), label="sel")
    full_sel = sel + (slice(None),) * (a.ndim - len(sel))
    check_plan(a, grid, plan_selection(sel, a.shape, chunks, "block"), block_oracle(full_sel, grid))


@SETTINGS
@given(st.data())
def test_basic_with_one_array_matches_numpy(data: Any) -> None:
    a, grid, chunks = arrays_and_grid(data, max_dims=3)
    if a.ndim == 0:
        return
    sel = list(data.draw(zst.basic_selections(a.shape).filter(lambda s: isinstance(s, tuple)
                                                             and Ellipsis not in s and None not in s)))
    sel += [slice(None)] * (a.ndim - len(sel))
    ax = data.draw(st.integers(0, a.ndim - 1))
    sel[ax] = data.draw(st.one_of(zst.int_arrays(a.shape[ax]), zst.bool_arrays(a.shape[ax]),
                                  zst.int_arrays(a.shape[ax]).map(lambda i: i.reshape(1, -1, 1)),
                                  zst.int_arrays(a.shape[ax], max_len=4).map(
                                      lambda i: np.stack([i, i[::-1]]))))
    sel = tuple(sel)
    try:
        plan = plan_selection(sel, a.shape, chunks, "basic")
    except IndexingError as exc:
        assert "not adjacent" in str(exc)
        return
    check_plan(a, grid, plan, sel)


@SETTINGS
@given(st.data())
def test_shard_major_order(data: Any) -> None:
    shape = data.draw(zst.shapes(min_dims=1, max_dims=3, min_side=1, max_side=20))
    chunks = data.draw(zst.chunk_shapes(shape))
    grid = ChunkGridIndex(shape, chunks)
    outer = tuple(data.draw(st.integers(1, max(1, n))) for n in grid.nchunks)
    levels = [outer]
    if data.draw(st.booleans()):
        levels.append(tuple(data.draw(st.sampled_from([d for d in range(1, o + 1) if o % d == 0]))
                            for o in outer))
    sel = data.draw(zst.basic_selections(shape))
    plain = plan_selection(sel, shape, chunks)
    plan = plan_selection(sel, shape, chunks, shard_shape=levels)
    a = [tuple(p) for p in plain.chunk_coords().tolist()]
    b = [p.coords for p in plan.chunks]
    assert [p.coords for p in plain.chunks] == a == sorted(a)          # C order by default
    assert sorted(b) == a and [tuple(c) for c in plan.chunk_coords().tolist()] == b
    assert [p.coords for p in plan.chunks[::-1]] == b[::-1]
    windows = plan.chunks
    assert [p.coords for i in range(0, len(b), 4) for p in windows[i:i + 4]] == b
    for depth in range(1, len(levels) + 1):   # every shard's chunks form one contiguous run
        keys = [tuple(tuple(c // s for c, s in zip(coords, lev)) for lev in levels[:depth])
                for coords in b]
        runs = [k for k, _ in itertools.groupby(keys)]
        assert len(runs) == len(set(runs)) and runs == sorted(runs)
    leaf = [tuple(tuple(c // s for c, s in zip(coords, lev)) for lev in levels) for coords in b]
    for _, group in itertools.groupby(zip(leaf, b), key=lambda t: t[0]):
        members = [c for _, c in group]
        assert members == sorted(members)


def test_shard_major_example() -> None:
    coords = np.array(list(itertools.product(range(4), range(4))))
    order = shard_major(coords, (2, 2))
    assert [tuple(c) for c in coords[order][:4].tolist()] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    nested = shard_major(coords, [(4, 4), (2, 2)])
    assert nested.tolist() == order.tolist()


# --------------------------------------------------------------------------- specific cases

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


# ------------------------------------------------------------------------------------ errors

S2 = (5, 10)
ERRORS = {
    "int-out-of-range": ((0, 12), "basic", S2, "index 12 is out of bounds for axis 1 with size 10"),
    "negative-out-of-range": (-6, "basic", S2, "index -6 is out of bounds for axis 0 with size 5"),
    "too-many": ((0, 0, 0), "basic", S2,
                 "too many indices for array: array is 2-dimensional, but 3 were indexed"),
    "two-ellipsis": ((Ellipsis, Ellipsis), "basic", S2,
                     "an index can only have a single ellipsis ('...'), found 2"),
    "float": ((1.5,), "basic", S2, "index 1.5 on axis 0: expected an integer, a slice, an "
              "integer or boolean array, None or Ellipsis; found float"),
    "bool-scalar": ((True,), "basic", S2, "index True on axis 0: expected an integer, a slice, an "
                    "integer or boolean array, None or Ellipsis; found bool"),
    "zero-step": ((slice(None, None, 0),), "basic", S2, "slice step cannot be zero (axis 0)"),
    "slice-float": ((slice(0.5, 2),), "basic", S2,
                    "slice start on axis 0: expected an integer or None, found 0.5"),
    "bool-length": ((np.ones(3, bool),), "orthogonal", S2,
                    "boolean index on axis 0: expected a 1-d array of length 5, found length 3"),
    "float-array": ((np.array([1.0]),), "orthogonal", S2,
                    "index array on axis 0: expected integers or booleans, found dtype float64"),
    "array-out-of-range": ((slice(None), [1, 10]), "orthogonal", S2,
                           "index 10 is out of bounds for axis 1 with size 10"),
    "oindex-2d": ((np.zeros((2, 2), int),), "orthogonal", S2,
                  "orthogonal index array on axis 0: expected 1 dimension, found shape (2, 2)"),
    "oindex-newaxis": ((None, 0), "orthogonal", S2, "orthogonal selection: newaxis (None) is only "
                       "supported in basic selections, found it at position 0"),
    "two-arrays-basic": (([0, 1], [0, 1]), "basic", S2, "basic selection with 2 index arrays is "
                         "ambiguous; use z.oindex[...] for orthogonal (outer) selection or "
                         "z.vindex[...] for coordinate (point-wise) selection"),
    "array-not-adjacent": ((0, slice(None), [0, 1]), "basic", (2, 3, 4), "basic selection mixes "
                           "an index array with integers that are not adjacent (numpy would move "
                           "the array's axis first); use z.oindex[...] for orthogonal (outer) "
                           "selection or z.vindex[...] for coordinate (point-wise) selection"),
    "vindex-count": (([0, 1],), "coordinate", S2,
                     "coordinate selection: expected 2 index arrays (one per axis), found 1"),
    "vindex-slice": ((slice(None), [0]), "coordinate", S2, "coordinate selection on axis 0: "
                     "expected an integer array, found slice slice(None, None, None); use "
                     "z.oindex for slices"),
    "vindex-broadcast": (([0, 1], [0, 1, 2]), "coordinate", S2, "coordinate selection: index "
                         "arrays could not be broadcast together, found shapes [(2,), (3,)]"),
    "vindex-range": (([0, 5], [0, 1]), "coordinate", S2,
                     "index 5 is out of bounds for axis 0 with size 5"),
    "mask-shape": (np.ones((5, 9), bool), "mask", S2,
                   "boolean mask: expected shape (5, 10), found (5, 9)"),
    "mask-dtype": (np.ones((5, 10), int), "mask", S2,
                   "boolean mask: expected a boolean array, found dtype int64"),
    "mask-ragged": (([True] * 5, 0), "mask", S2,
                    "boolean mask: expected a boolean array, found a tuple whose items are not "
                    "one array"),
    "block-step": ((slice(0, 2, 2),), "block", S2,
                   "block selection on axis 0: expected a slice with step 1, found step 2"),
    "block-range": ((0, 4), "block", S2, "block index 4 is out of bounds for axis 1 with 4 chunks"),
    "block-type": ((0, [1]), "block", S2, "block selection on axis 1: expected an integer or a "
                   "slice, found list [1]"),
    "kind": ((0,), "fancy", S2, "selection kind: expected one of basic, orthogonal, coordinate, "
             "mask, block, found 'fancy'"),
}


@pytest.mark.parametrize("sel, kind, shape, message", ERRORS.values(), ids=list(ERRORS))
def test_errors(sel: Any, kind: str, shape: tuple[int, ...], message: str) -> None:
    with pytest.raises(IndexingError, match=re.escape(message)) as info:
        plan_selection(sel, shape, (2, 3, 4)[: len(shape)], kind)
    assert str(info.value) == message
    assert isinstance(info.value, ZarrError) and isinstance(info.value, IndexError)


@pytest.mark.parametrize("grid, message", [
    ((0, 3), "chunk shape[0]: expected an integer >= 1 (or 0 on an axis of length 0), found 0"),
    (((2, 2), (3, 3, 3, 1)), "chunk edges of axis 0: expected lengths summing to at least the "
                             "axis size 5, found sum 4"),
    ((2,), "chunk grid has 1 axes but the array shape (5, 10) has 2"),
], ids=["zero-chunk", "short-edges", "rank"])
def test_grid_errors(grid: Any, message: str) -> None:
    with pytest.raises(IndexingError, match=re.escape(message)):
        ChunkGridIndex((5, 10), grid)


# -- integers beyond int64 ------------------------------------------------------------------
def _ten():
    import zarrx
    z = zarrx.create_array({}, shape=(10,), chunks=(3,), dtype="i4")
    z[...] = np.arange(10)
    return z


U8_MAX = np.array([2**64 - 1], dtype="u8")


@pytest.mark.parametrize("op, shown", [
    (lambda z: z[U8_MAX], 2**64 - 1),
    (lambda z: z.oindex[np.array([2**63], dtype="u8")], 2**63),
    (lambda z: z.vindex.__setitem__(np.array([2**64 - 2], dtype="u8"), 77), 2**64 - 2),
    (lambda z: z.get_coordinate_selection((np.uint64(2**64 - 1),)), 2**64 - 1),
    (lambda z: z.get_coordinate_selection((2**70,)), 2**70),
    (lambda z: z.set_coordinate_selection((2**70,), 1), 2**70),
    (lambda z: z.vindex[2**70], 2**70),
], ids=["u8-basic", "u8-oindex", "u8-vindex-write", "np-uint64-coordinate", "huge-coordinate",
        "huge-coordinate-write", "huge-vindex"])
def test_indices_beyond_int64_are_out_of_bounds_never_wrapped(op, shown):
    """numpy raises IndexError for these; casting them to int64 would wrap them to negative
    positions and read or write another element."""
    z = _ten()
    with pytest.raises(IndexingError) as info:
        op(z)
    assert str(info.value) == f"index {shown} is out of bounds for axis 0 with size 10"
    assert z[...].tolist() == list(range(10))


@pytest.mark.parametrize("sel", [slice(None, None, 2**63), slice(None, None, -2**63),
                                 slice(3, None, 2**70), slice(None, None, 11)])
def test_huge_slice_steps_select_like_numpy(sel):
    z = _ten()
    assert z[sel].tolist() == np.arange(10)[sel].tolist()
    assert z.oindex[sel].tolist() == np.arange(10)[sel].tolist()


@pytest.mark.parametrize("value", [2**70, float("inf"), -1])
def test_values_that_do_not_fit_the_dtype_are_argument_errors(value):
    import zarrx
    z = zarrx.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
    with pytest.raises(zarrx.errors.ArgumentError, match="cannot convert value of type"):
        z[0] = value


@pytest.mark.parametrize("dtype", ["U3", "S3", [("a", "i4"), ("b", "S2")]])
def test_dates_too_long_for_a_string_dtype_are_argument_errors(dtype):
    import zarrx
    z = zarrx.create_array({}, shape=(2,), chunks=(2,), dtype=dtype)
    with pytest.raises(zarrx.errors.ArgumentError, match=re.escape(
            f"/: cannot convert value of type ndarray to dtype {z.dtype}: The string provided "
            f"for NumPy ISO datetime formatting was too short")):
        z[...] = np.array(["2020-01-01", "2021-06-01"], dtype="M8[D]")


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


# -- selections touching more chunks than one call handles ---------------------------------

def test_selection_touching_too_many_chunks_is_refused_up_front() -> None:
    import zarrx
    from zarrx.errors import SelectionSizeError

    z = zarrx.create_array(zarrx.store.MemoryStore(), shape=(2**40,), chunks=(1,), dtype="u1")
    with pytest.raises(SelectionSizeError) as info:
        z[: 2**31]
    assert str(info.value) == (
        "array '/': the selection touches 2147483648 chunks; at most 4194304 are read or "
        "written in one call: select less at a time")
    assert isinstance(info.value, MemoryError) and isinstance(info.value, IndexingError)
    assert isinstance(info.value, ZarrError)
    with pytest.raises(SelectionSizeError, match="touches 1099511627776 chunks"):
        z[...] = 0
    with pytest.raises(SelectionSizeError, match="touches 4194305 chunks"):
        z[: 2**23 + 1 : 2] = 1
    assert z[: 2**10].shape == (2**10,)


def test_box_paths_refuse_too_many_chunks(tmp_path) -> None:
    import zarrx
    from zarrx.errors import SelectionSizeError

    store = zarrx.store.LocalStore(str(tmp_path / "a.zarr"))
    z = zarrx.create_array(store, shape=(2**40,), chunks=(1,), dtype="u1", compressors=None)
    with pytest.raises(SelectionSizeError, match="touches 1099511627776 chunks"):
        z[...] = 0
    with pytest.raises(SelectionSizeError, match="touches 4194305 chunks"):
        z[: 2**22 + 1]
    assert not list((tmp_path / "a.zarr").glob("c/*"))


def test_a_plan_lists_at_most_max_chunks_per_axis() -> None:
    from zarrx.errors import SelectionSizeError
    from zarrx.indexing import MAX_CHUNKS

    plan = plan_selection(slice(0, 2**31), (2**40,), (1,))      # counted, not listed
    assert len(plan) == 2**31
    with pytest.raises(SelectionSizeError) as info:
        next(iter(plan))
    assert str(info.value) == (
        f"basic selection: touches {2**31} chunks along axis 0; at most {MAX_CHUNKS} are "
        f"listed per axis: select less at a time")
    plan = plan_selection(slice(None, None, 3), (2**40,), (1,))  # a strided slice too
    assert len(plan) == -(-2**40 // 3)
    plan = plan_selection((slice(3, 3 + 7 * MAX_CHUNKS, 7),), (2**40,), (8,))
    last = (3 + 7 * (MAX_CHUNKS - 1)) // 8
    assert len(plan) == last + 1               # a step under the chunk length skips no chunk
    assert plan.chunks[-1].coords == (last,)
    for step in (-9, -8, -5, 5, 8, 9):
        plan = plan_selection((slice(None, None, step),), (9003,), (8,))
        want = sorted({p // 8 for p in range(9003)[::step]})
        assert len(plan) == len(want)
        assert [c.coords[0] for c in plan.chunks] == want


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
