"""zarrx.indexing against numpy, by property: every selection kind on regular and rectilinear
grids, read and written chunk by chunk, gives what numpy gives."""
from __future__ import annotations

import itertools
import os
from typing import Any

import numpy as np
import strategies as zst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrx.errors import IndexingError
from zarrx.indexing import ChunkGridIndex, kind_of, plan_selection
from zarrx.selection import numpy_layout

from indexing_helpers import read, split, write


SETTINGS = settings(max_examples=int(os.environ.get("ZARRX_EXAMPLES", "100")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def join(chunks: dict, grid: ChunkGridIndex, dtype: Any) -> np.ndarray:
    a = np.empty(grid.shape, dtype=dtype)
    for coords, c in chunks.items():
        region = grid.chunk_region(coords)
        a[region] = c[tuple(slice(0, r.stop - r.start) for r in region)]
    return a


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
