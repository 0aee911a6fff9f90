"""Index arrays given as array-likes (read into numpy first) and one 1-d index array per axis
with a boolean one among them (their outer product): what plain selections cost, and what
zarrx does where neither numpy nor zarr-python selects."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.array_selection import _plain
from zarrx.errors import IndexingError, IndexingTypeError, IndexingValueError
from zarrx.selection import _boolean_outer

from call_counts import calls_made

A = np.arange(30, dtype="i4").reshape(6, 5)
MASK5 = np.array([True, False, True, True, False])


def _unchanged(selection):
    return selection


def _grid():
    z = zarrx.create_array({}, shape=A.shape, dtype="i4", chunks=(3, 3))
    z[...] = A
    return z


@pytest.mark.parametrize("sel", [(slice(0, 10), 5), (Ellipsis,), (1, 2, 3, slice(None), None),
                                 (np.arange(3), slice(2)), ([0, 1], 3)])
def test_looking_for_array_likes_in_a_plain_selection_makes_no_call(sel):
    # every z[...] and z[...] = v goes through this scan: ints, slices, lists and numpy arrays
    # pass it without a call of their own (before: a generator and a test call per item)
    assert calls_made(lambda: _plain(sel)) == calls_made(lambda: _unchanged(sel))
    assert _plain(sel) is sel


@pytest.mark.parametrize("sel", [(np.arange(3), 5), ([0, 1], slice(2)), (np.arange(3), [0], 1)])
def test_the_outer_product_check_converts_nothing_when_an_item_is_no_index_array(sel):
    # z[idx, 3] is checked for one index array per axis: one isinstance call, no conversion
    # of the arrays before it (before: each converted and tested first)
    assert calls_made(lambda: _boolean_outer(sel)) <= calls_made(lambda: _unchanged(sel)) + 1
    assert not _boolean_outer(sel)


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


class _Hostile:
    """An array-like whose ``__array__`` returns ``result`` (or raises it)."""

    shape, dtype = (2,), np.dtype("int64")

    def __init__(self, result):
        self.result = result

    def __array__(self, dtype=None, copy=None):
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


@pytest.mark.parametrize("result", [[0, 1], None, "text"])
def test_an_array_like_whose_array_method_returns_no_array_raises_indexing_value_error(result):
    z = _grid()
    for call in (lambda: z[_Hostile(result)], lambda: z[1, _Hostile(result)],
                 lambda: z.oindex[:, _Hostile(result)],
                 lambda: z.__setitem__((_Hostile(result), 0), 7)):
        # a ValueError as in numpy and zarr-python, and a ZarrError naming the item
        with pytest.raises(IndexingValueError, match=r"(selection|index item [01]): the array-"
                                                     r"like _Hostile could not be read") as info:
            call()
        assert isinstance(info.value, ValueError)
    assert (z[...] == A).all()


def test_an_array_like_refusing_to_convert_raises_indexing_type_error():
    z = _grid()
    with pytest.raises(IndexingTypeError, match="index item 0: the array-like _Hostile"):
        z[_Hostile(TypeError("no conversion")), 0]


def test_other_errors_of_an_array_method_propagate_unchanged():
    # the item's own failure (or a store's, for a zarrx Array read) is not renamed
    z = _grid()
    with pytest.raises(RuntimeError, match="boom"):
        z[_Hostile(RuntimeError("boom"))]
    with pytest.raises(KeyError):
        z[_Hostile(KeyError("k")), 0]


def test_an_array_like_of_float_values_is_refused_as_a_float_index_array_is():
    z = _grid()
    with pytest.raises(IndexingError, match="index array on axis 0: expected integers or "
                                            "booleans, found dtype float64"):
        z[_Hostile(np.array([1.0, 2.0]))]


def test_a_zarrx_array_index_that_cannot_be_read_raises_its_own_error():
    # a corrupt chunk of the index array is its CodecError (a ValueError too), not renamed
    store: dict = {}
    ix = zarrx.create_array(store, shape=(4,), dtype="i4", chunks=(2,),
                            compressors=zarrx.codecs.ZstdCodec())
    ix[...] = [0, 1, 2, 3]
    store["c/1"] = b"not zstd"
    with pytest.raises(zarrx.errors.CodecError) as info:
        _grid()[ix]
    assert not isinstance(info.value, IndexingError)


@pytest.mark.parametrize("index", [lambda: zarrx.array(np.array([0, 1])),
                                   lambda: zarrx.array(np.array([True, False, True, False,
                                                                 False, True]))])
def test_the_basic_selection_methods_refuse_an_array_like_as_they_refuse_an_index_array(index):
    # before: get_basic_selection(a zarrx Array) selected through it, which a numpy array
    # (and zarr-python) is refused
    z = _grid()
    with pytest.raises(IndexingError, match=r"get_basic_selection: selection item 0: expected "
                                            r"an int, a slice, Ellipsis or None, found ndarray"):
        z.get_basic_selection(index())
    with pytest.raises(IndexingError, match=r"set_basic_selection: selection item 1: expected"):
        z.set_basic_selection((0, index()), 5)
    assert (z[...] == A).all()
    assert z.get_basic_selection((zarrx.array(np.array(2)), 1)) == A[2, 1]    # 0-d: an int
