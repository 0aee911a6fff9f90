"""Index arrays given as array-likes (read into numpy first) and one 1-d index array per axis
with a boolean one among them (their outer product): what plain selections cost, and what
zarrx does where neither numpy nor zarr-python selects."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.errors import IndexingError

A = np.arange(30, dtype="i4").reshape(6, 5)
MASK5 = np.array([True, False, True, True, False])


def _grid():
    z = zarrx.create_array({}, shape=A.shape, dtype="i4", chunks=(3, 3))
    z[...] = A
    return z


@pytest.mark.parametrize("rows", [[True, 2, 0], [1, False, 2], [np.True_, 0, 3]])
def test_a_list_mixing_booleans_and_integers_beside_a_mask_is_no_outer_product(rows):
    # such a list is an integer list (numpy reads True as 1): numpy pairs it with the mask's
    # positions, zarr-python refuses it (IndexError); zarrx refuses it too rather than
    # select a third result, the outer product
    z = _grid()
    with pytest.raises(IndexingError, match="ambiguous"):
        z[rows, MASK5]
    with pytest.raises(IndexingError, match="ambiguous"):
        z[rows, MASK5] = -1
    assert (z[...] == A).all()
    # the accessors make either meaning explicit
    assert (z.oindex[rows, MASK5] == A[np.ix_(np.array(rows, dtype=int), MASK5)]).all()
    assert (z.vindex[rows, np.flatnonzero(MASK5)] == A[rows, MASK5]).all()


def test_a_list_of_booleans_or_of_integers_beside_a_mask_still_selects_the_outer_product():
    z = _grid()
    rows = [True, False, False, True, True, False]
    assert (z[rows, MASK5] == A[np.ix_(rows, MASK5)]).all()
    assert (z[[4, 0, 4], MASK5] == A[np.ix_([4, 0, 4], MASK5)]).all()
    assert (z[[np.True_, False, True, True, False, False], [-1, 0]] ==
            A[np.ix_([True, False, True, True, False, False], [-1, 0])]).all()
