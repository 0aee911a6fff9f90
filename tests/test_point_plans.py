"""Plans of coordinate and mask selections: every chunk's projection is what a reading of the
points chunk by chunk gives (positions, chunk-local cells, coverage), in C order and
shard-major, on regular and rectilinear grids, and listing the chunks costs a few calls per
chunk, not a dozen numpy calls each."""
from __future__ import annotations

import numpy as np
import pytest
from call_counts import calls_made

import zarrx
from zarrx import indexing
from zarrx.store import MemoryStore


def _expected(points, shape, starts, stops):
    """chunk coords -> (output positions, local coordinates, full), worked out point by point."""
    want: dict = {}
    for i, pt in enumerate(zip(*points)):
        k = tuple(int(np.searchsorted(s, p, side="right") - 1) for s, p in zip(starts, pt))
        e = want.setdefault(k, ([], []))
        e[0].append(i)
        e[1].append(tuple(p - s[c] for p, s, c in zip(pt, starts, k)))
    out = {}
    for k, (pos, loc) in want.items():
        region = [min(st[c], n) - s[c] for st, s, c, n in zip(stops, starts, k, shape)]
        full = len(set(loc)) == int(np.prod(region))
        out[k] = (pos, loc, full)
    return out


GRIDS = {
    "regular": ((37, 23), (4, 5)),
    "rectilinear": ((37, 23), ((3, 9, 1, 20, 4), (7, 7, 2, 5, 2))),
}


@pytest.mark.parametrize("blocks", [(1024, 1 << 16), (3, 7)], ids=["blocks", "small-blocks"])
@pytest.mark.parametrize("shard", [None, (2, 3)], ids=["c-order", "shard-major"])
@pytest.mark.parametrize("grid", list(GRIDS))
def test_point_projections_match_a_point_by_point_grouping(grid, shard, blocks, monkeypatch):
    # small blocks (3 chunks, 7 points): blocks cut by their chunks and by their points, a
    # chunk holding more points than a block its own block
    monkeypatch.setattr(indexing, "POINT_BLOCK", blocks[0])
    monkeypatch.setattr(indexing, "POINT_CELLS", blocks[1])
    shape, chunks = GRIDS[grid]
    if isinstance(chunks[0], tuple):
        edges = chunks
    else:
        edges = tuple(tuple([c] * -(-n // c)) for n, c in zip(shape, chunks))
    starts = [np.concatenate(([0], np.cumsum(e)[:-1])) for e in edges]
    stops = [np.cumsum(e) for e in edges]
    rng = np.random.default_rng(5)
    # random points, repeated ones, and every cell of a few chunks (covered in any order)
    r = list(rng.integers(0, shape[0], 300))
    c = list(rng.integers(0, shape[1], 300))
    for a, b in [(0, 0), (36, 22), (12, 14)]:
        cells = [(i, j) for i in range(shape[0]) for j in range(shape[1])
                 if np.searchsorted(starts[0], i, side="right") ==
                 np.searchsorted(starts[0], a, side="right")
                 and np.searchsorted(starts[1], j, side="right") ==
                 np.searchsorted(starts[1], b, side="right")]
        rng.shuffle(cells)
        r += [i for i, _ in cells]
        c += [j for _, j in cells]
    points = (np.array(r), np.array(c))
    o = np.lexsort((points[1], points[0]))
    for sel in (points, (points[0][o], points[1][o])):
        plan = indexing.plan_selection(sel, shape, chunks, "coordinate", shard_shape=shard)
        want = _expected(sel, shape, starts, stops)
        got = list(plan.chunks)
        assert len(got) == plan.nchunks == len(want)
        assert [list(p.coords) for p in got] == plan.chunk_coords().tolist()
        for i, p in enumerate(got):
            pos, loc, full = want[p.coords]
            assert p.out_sel[0].tolist() == pos
            assert list(zip(*[v.tolist() for v in p.chunk_sel])) == loc
            assert p.full == full, p.coords
            at = plan.chunks[i]                # random access gives the same projection
            assert at.coords == p.coords and at.full == p.full
            assert at.out_sel[0].tolist() == pos
    assert any(p.full for p in indexing.plan_selection(points, shape, chunks, "coordinate"))


@pytest.mark.parametrize("order", ["sorted", "unsorted"])
def test_listing_the_chunks_of_many_points_costs_few_calls_per_chunk(order):
    per_chunk = []
    for side in (64, 128):                   # 4,096 and 16,384 chunks of 4 x 4 cells
        shape = (4 * side, 4 * side)
        rng = np.random.default_rng(1)
        n = 2 * side * side
        r, c = rng.integers(0, shape[0], n), rng.integers(0, shape[1], n)
        if order == "sorted":
            o = np.lexsort((c, r))
            r, c = r[o], c[o]
        plan = indexing.plan_selection((r, c), shape, (4, 4), "coordinate")
        nchunks = plan.nchunks
        per_chunk.append(calls_made(lambda: [None for _ in plan.chunks]) / nchunks)
    # (24 calls per chunk before: a dozen numpy calls made each chunk's projection)
    assert max(per_chunk) < 6, per_chunk


@pytest.mark.parametrize("threads", [1, 2])
def test_many_points_over_many_chunks_read_as_numpy(threads):
    shape, chunks = (300, 200), (3, 2)
    data = np.arange(np.prod(shape), dtype="f8").reshape(shape)
    data[::7] = -0.0
    z = zarrx.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="f8",
                           fill_value=np.nan)
    z[:150] = data[:150]                       # half the chunks stored, the rest missing
    want = data.copy()
    want[150:] = np.nan
    rng = np.random.default_rng(2)
    r, c = rng.integers(0, shape[0], 40_000), rng.integers(0, shape[1], 40_000)
    mask = rng.random(shape) < 0.4
    with zarrx.config.set(threads=threads):
        np.testing.assert_array_equal(z.vindex[r, c], want[r, c])
        np.testing.assert_array_equal(z.get_coordinate_selection((r[::-1], c[::-1])),
                                      want[r[::-1], c[::-1]])
        np.testing.assert_array_equal(z.vindex[mask], want[mask])
        np.testing.assert_array_equal(z.get_mask_selection(mask), want[mask])
