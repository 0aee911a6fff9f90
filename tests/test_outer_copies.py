"""Copies between outer products of index arrays (``dst[np.ix_(...)] = src[np.ix_(...)]``,
what an orthogonal read of index arrays does per chunk) match numpy, for any rank, item size
and layout; indices numpy would wrap or refuse go to numpy."""
from __future__ import annotations

import numpy as np
import pytest
from call_counts import calls_made
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx._gather import copy_selection

DTYPES = ["u1", "<i2", ">f4", "f8", "c16", "S5", [("a", "i4"), ("b", "u1")]]


def _ix(arrays):
    return tuple(np.ix_(*arrays))


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_outer_copies_match_numpy(data):
    ndim = data.draw(st.integers(2, 4))
    sshape = data.draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim))
    dshape = data.draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim))
    dtype = np.dtype(DTYPES[data.draw(st.integers(0, len(DTYPES) - 1))])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = np.frombuffer(rng.bytes(int(np.prod(sshape)) * dtype.itemsize), dtype=dtype)
    src = src.reshape(sshape)
    if data.draw(st.booleans()):
        src = np.asfortranarray(src)
    dst = np.zeros([d * 2 for d in dshape], dtype=dtype)
    if data.draw(st.booleans()):
        dst = dst[tuple(slice(None, None, 2) for _ in dshape)]     # strided
    counts = [int(rng.integers(0, min(s, d) + 1)) for s, d in zip(sshape, dshape)]
    itype = np.int64 if data.draw(st.booleans()) else np.int32    # int32: numpy's copy
    sidx = [rng.integers(0, s, c).astype(itype) for s, c in zip(sshape, counts)]  # repeats
    didx = [rng.permutation(d)[:c] for d, c in zip(dshape, counts)]     # each cell once
    want = dst.copy()
    want[_ix(didx)] = src[_ix(sidx)]
    copy_selection(src, _ix(sidx), dst, _ix(didx))
    assert dst.tobytes() == want.tobytes()


def test_indices_numpy_wraps_or_refuses_go_to_numpy():
    src = np.arange(12.0).reshape(3, 4)
    dst = np.zeros((2, 2))
    copy_selection(src, _ix([np.array([-1, 0]), np.array([1, -4])]), dst,
                   _ix([np.array([0, 1]), np.array([1, 0])]))
    assert dst.tolist() == [[8.0, 9.0], [0.0, 1.0]]
    with pytest.raises(IndexError):
        copy_selection(src, _ix([np.array([3]), np.array([0])]), dst,
                       _ix([np.array([0]), np.array([0])]))


def test_overlapping_arrays_go_to_numpy():
    a = np.arange(36.0).reshape(6, 6)
    want = a.copy()
    s, d = _ix([np.array([0, 1, 2]), np.array([0, 1])]), _ix([np.array([1, 2, 3]),
                                                           np.array([1, 2])])
    want[d] = want[s].copy()
    copy_selection(a, s, a, d)
    np.testing.assert_array_equal(a, want)


def test_an_outer_copy_makes_few_calls():
    src = np.arange(64.0 * 64).reshape(64, 64)
    dst = np.zeros((40, 40))
    sel_s, sel_d = _ix([np.arange(0, 64, 2)] * 2), _ix([np.arange(32)] * 2)
    # numpy's fancy indexing makes no Python calls either: the kernel must not add a call per
    # item (it makes a few per axis)
    assert calls_made(lambda: copy_selection(src, sel_s, dst, sel_d)) < 40
    np.testing.assert_array_equal(dst[:32, :32], src[::2, ::2])
