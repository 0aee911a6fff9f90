"""A dask array of more blocks than dask can compute from is refused, quickly and with a
ZarrError, whatever chunks asks for and however large the array."""
import time

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
    t0 = time.perf_counter()
    with pytest.raises(SelectionSizeError, match=f"at most {MAX_BLOCKS} are made"):
        from_zarrx(z, chunks=chunks)            # before: MemoryError, listing 2^40 sizes
    assert time.perf_counter() - t0 < 5


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
