"""Sizes, counts and indices at and past the 64-bit limits, from metadata and from arguments:
each is refused with a ZarrError naming what was found and what was expected."""
from __future__ import annotations

import pytest

import zarrx
from zarrx.errors import IndexingError
from zarrx.storage import MemoryStore


@pytest.mark.parametrize("nones, ndim", [(63, 65), (100, 102)])
def test_a_basic_selection_of_more_dimensions_than_numpy_holds_is_an_indexing_error(nones, ndim):
    # reads said the result "does not fit in memory", writes that a scalar "cannot be
    # broadcast" to it
    a = zarrx.create_array(MemoryStore(), shape=(6, 4), chunks=(2, 2), dtype="i4")
    message = f"basic selection: the result would have {ndim} dimensions, more than numpy's 64"
    with pytest.raises(IndexingError) as info:
        a[(None,) * nones]
    assert str(info.value) == message and isinstance(info.value, IndexError)
    with pytest.raises(IndexingError) as info:
        a[(None,) * nones] = 1
    assert str(info.value) == message


def test_a_basic_selection_of_64_dimensions_still_reads_and_writes():
    a = zarrx.create_array(MemoryStore(), shape=(6, 4), chunks=(2, 2), dtype="i4", fill_value=1)
    assert a[(None,) * 62].shape == (1,) * 62 + (6, 4)
    a[(0,) + (None,) * 63] = 5              # an integer takes away the axis it indexes
    assert a[0].tolist() == [5, 5, 5, 5] and a[1].tolist() == [1, 1, 1, 1]
