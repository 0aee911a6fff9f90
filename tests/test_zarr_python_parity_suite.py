"""What zarr-python's own test suite expects of the public API and zarrx lacked: each case runs
on both libraries where zarr-python 3.1 has the feature, and on zarrx alone (with the behaviour
zarr-python 3.3 gives) where it came later."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.errors import (ArrayNotFoundError, ContainsArrayError, ContainsGroupError,
                          GroupNotFoundError)

from parity_helpers import LIBS, both
from parity_helpers import _quiet  # noqa: F401  (an autouse fixture)


A = np.arange(20, dtype="i4").reshape(4, 5)
ROWS = np.array([True, False, True, True])
OUTER = {
    "two-masks": (ROWS, np.array([False, True, False, False, True])),
    "mask-and-ints": (ROWS, [0, 4]),
    "ints-and-mask": ([3, 0], np.array([True, True, False, False, True])),
    "mask-lists": ([True, False, True, True], [True] * 5),
    "equal-counts": (ROWS, np.array([True, False, True, True, False])),  # numpy pairs these
}


def _grid(lib):
    z = lib.create_array({}, shape=A.shape, dtype="i4", chunks=(2, 2))
    z[...] = A
    return z


@pytest.mark.parametrize("sel", list(OUTER.values()), ids=list(OUTER))
def test_boolean_index_arrays_on_every_axis_select_their_outer_product(sel):
    expected = A[np.ix_(*(np.asarray(s) for s in sel))]
    got = both(lambda lib: _grid(lib)[sel])
    for name in LIBS:
        np.testing.assert_array_equal(got[name], expected, err_msg=name)


@pytest.mark.parametrize("sel", list(OUTER.values()), ids=list(OUTER))
def test_writes_through_boolean_index_arrays_on_every_axis_fill_their_outer_product(sel):
    expected = A.copy()
    expected[np.ix_(*(np.asarray(s) for s in sel))] = -1

    def write(lib):
        z = _grid(lib)
        z[sel] = -1
        return z[...]
    got = both(write)
    for name in LIBS:
        np.testing.assert_array_equal(got[name], expected, err_msg=name)
