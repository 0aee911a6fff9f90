"""A dask array of more blocks than dask can compute from is refused, quickly and with a
ZarrError, whatever chunks asks for and however large the array."""
import pytest

import zarrx
from zarrx.dask import from_zarrx
from zarrx.dask.chunks import MAX_BLOCKS
from zarrx.errors import SelectionSizeError
from zarrx.store import MemoryStore

pytest.importorskip("dask.array")


@pytest.mark.parametrize("chunks", [1, (1,), {0: 1}, "1B"], ids=["int", "tuple", "dict", "text"])
def test_blocks_of_one_element_over_2_to_the_40_are_refused_at_once(chunks):
    z = zarrx.create_array(MemoryStore(), shape=(2**40,), chunks=(2**20,), dtype="u1")
    with pytest.raises(SelectionSizeError, match=f"at most {MAX_BLOCKS} are made"):
        from_zarrx(z, chunks=chunks)            # before: MemoryError, listing 2^40 sizes


def test_a_dask_array_dask_could_not_compute_from_is_refused():
    # 2^40 blocks of one element: dask listed every block key to compute one of them (it
    # never finished); by default the 2^56-byte array below makes 2^29 blocks of 128 MiB
    z = zarrx.create_array(MemoryStore(), shape=(2**20, 2**20), chunks=(1, 1), dtype="u1")
    with pytest.raises(SelectionSizeError,
                       match=r"to_dask: array '/', chunks=\(1, 1\): the dask array would have "
                             r"1099511627776 blocks"):
        z.to_dask(chunks=(1, 1))
    z[-1, -1] = 9
    assert z.to_dask()[-1, -1].compute() == 9           # 8,192 blocks of 128 MiB
    big = zarrx.create_array(MemoryStore(), shape=(128,) * 8, chunks=(1,) * 8, dtype="u1")
    with pytest.raises(SelectionSizeError, match="would have 536870912 blocks"):
        big.to_dask()
    assert big.to_dask(chunks=(16,) + (-1,) * 7).numblocks == (8,) + (1,) * 7


def _nearest_by_scan(edges, pos):
    return min(edges, key=lambda b: (abs(b - pos), b))


class _Edge(int):
    """A chunk boundary that counts the comparisons and differences made with it."""
    compared = 0

    def __sub__(self, other):
        _Edge.compared += 1
        return int(self) - other

    def __rsub__(self, other):
        _Edge.compared += 1
        return other - int(self)

    def __lt__(self, other):
        _Edge.compared += 1
        return int(self) < other

    def __gt__(self, other):
        _Edge.compared += 1
        return int(self) > other

    def __eq__(self, other):
        _Edge.compared += 1
        return int(self) == other

    __hash__ = int.__hash__


def test_blocks_not_aligned_with_many_objects_are_regrouped_in_linear_steps():
    # 1,334 blocks of 3 over 1,000 chunks of 4: each moved boundary was found by comparing it
    # with every chunk boundary (1.3 million comparisons here; at 10^5 blocks over as many
    # chunks a write never started); by bisection, about 17 per block
    from zarrx.dask.chunks import aligned_chunks, object_edges
    z = zarrx.create_array(MemoryStore(), shape=(4_000,), chunks=(4,), dtype="u1")
    edges = [[_Edge(b) for b in axis] for axis in object_edges(z.metadata)]
    blocks = ((3,) * 1_333 + (1,),)
    _Edge.compared = 0
    out = aligned_chunks(blocks, edges, (0,))
    assert _Edge.compared < 40 * len(blocks[0]) + 3 * len(edges[0])      # 1.3 million before
    inner = [int(b) for b in edges[0][1:-1]]
    cuts, pos = [], 0
    for size in blocks[0][:-1]:
        pos += size
        near = _nearest_by_scan(inner, pos)
        if near > (cuts[-1] if cuts else 0):
            cuts.append(near)
    expected = tuple(b - a for a, b in zip([0] + cuts, cuts + [4_000]))
    assert out == (expected,)


@pytest.mark.parametrize("seed", range(40))
def test_regrouped_blocks_write_what_numpy_writes(seed, tmp_path):
    import random

    import dask.array as da
    import numpy as np
    rng = random.Random(seed)
    shape = tuple(rng.randint(1, 30) for _ in range(rng.randint(1, 2)))
    chunks = tuple(rng.randint(1, 6) for _ in shape)
    shards = tuple(c * rng.randint(1, 3) for c in chunks)
    z = zarrx.create_array(tmp_path / "a.zarr", shape=shape, chunks=chunks, shards=shards,
                           dtype="i4", fill_value=-1)
    region = tuple(slice(a, rng.randint(a + 1, n)) for n in shape for a in [rng.randint(0, n - 1)])
    extent = tuple(s.stop - s.start for s in region)
    source = np.arange(int(np.prod(extent)), dtype="i4").reshape(extent)
    blocks = tuple(rng.randint(1, n) for n in extent)
    zarrx.dask.to_zarrx(da.from_array(source, chunks=blocks), z, region=region)
    expected = np.full(shape, -1, dtype="i4")
    expected[region] = source
    np.testing.assert_array_equal(z[...], expected)
