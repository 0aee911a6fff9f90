"""Selections on zarr-python and on zarrx give what numpy gives: fancy and basic indexing,
field names, block slices, iteration, masks and the selection methods' arguments."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx

from parity_helpers import LIBS, arr, both
from parity_helpers import _quiet  # noqa: F401  (an autouse fixture)


N = np.arange(100, dtype="i4").reshape(10, 10)
SELECTIONS = {
    "two-lists": ([1, 3], [2, 4]),
    "int-and-list": (1, [1, 3]),
    "list-and-int": ([1, 3], 2),
    "one-list": [1, 3],
    "list-and-slice": ([1, 3], slice(1, 3)),
    "slice-and-list": (slice(1, 3), [1, 3]),
    "int-arrays-2d": (np.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]])),
    "negative-ints": ([-1, 0], [-2, 3]),
    "repeated": [3, 1, 1],
    "mask": N > 95,
    "bool-list-axis0": [True] + [False] * 9,
}


@pytest.mark.parametrize("sel", list(SELECTIONS.values()), ids=list(SELECTIONS))
def test_getitem_like_numpy_and_zarr_python(sel):
    got = both(lambda lib: arr(lib)[sel])
    for name in LIBS:
        assert isinstance(got[name], np.ndarray), (name, got[name])
        np.testing.assert_array_equal(got[name], N[sel])
        assert got[name].dtype == N.dtype


@pytest.mark.parametrize("sel", [[5, 1, 2], np.array([[5, 1], [2, 3]]), np.array([7])],
                         ids=["list", "2d-array", "array"])
def test_getitem_1d_index_arrays(sel):
    got = both(lambda lib: arr(lib, shape=(10,), chunks=(5,))[sel])
    for name in LIBS:
        np.testing.assert_array_equal(got[name], np.arange(10)[sel])
        assert got[name].shape == np.arange(10)[sel].shape


@pytest.mark.parametrize("sel,value", [(([1, 3], [2, 4]), [7, 8]), ([1, 3], 5),
                                       (([1, 3], slice(2, 4)), 5), ((2, [0, 9]), [6, 6])],
                         ids=["points", "rows", "rows-slice", "int-list"])
def test_setitem_fancy_like_numpy_and_zarr_python(sel, value):
    def case(lib):
        b = lib.create_array({}, shape=(10, 10), dtype="i4", chunks=(5, 5), fill_value=0)
        b[sel] = value
        return b[...]
    expected = np.zeros((10, 10), "i4")
    expected[sel] = value
    got = both(case)
    for name in LIBS:
        np.testing.assert_array_equal(got[name], expected)


def test_mixed_index_arrays_with_slices_are_refused_as_in_zarr_python():
    """numpy would broadcast the two arrays; zarr-python refuses; so does zarrx (IndexError),
    pointing to vindex / oindex, rather than guess."""
    a3 = {name: lib.create_array({}, shape=(4, 4, 4), dtype="i4") for name, lib in LIBS.items()}
    for a in a3.values():
        with pytest.raises(IndexError):
            a[[0, 1], [1, 2], :]


@pytest.mark.parametrize("sel", [[1, 2], (slice(None), [1, 2]), np.array([1, 2]), N > 50,
                                 ((1, 2),)],
                         ids=["list", "list-in-tuple", "int-array", "mask", "tuple-in-tuple"])
@pytest.mark.parametrize("method", ["get", "set"])
def test_basic_selection_methods_refuse_index_arrays_as_zarr_python(sel, method):
    """``z[[1, 2]]`` reads rows, as in numpy; ``get_basic_selection`` / ``set_basic_selection``
    take ints, slices and Ellipsis only, as in zarr-python (an ``IndexError``)."""
    call = ((lambda a: a.get_basic_selection(sel)) if method == "get" else
            (lambda a: a.set_basic_selection(sel, 0)))
    got = both(lambda lib: call(arr(lib)))
    assert isinstance(got["zarr"], IndexError) and isinstance(got["zarrx"], zarrx.IndexingError)
    assert str(got["zarrx"]).startswith(f"{method}_basic_selection: selection item ")
    assert arr(zarrx)[[1, 2]].tolist() == N[[1, 2]].tolist()


def test_basic_selection_error_names_the_item():
    with pytest.raises(zarrx.IndexingError, match=re.escape(
            "get_basic_selection: selection item 1: expected an int, a slice, Ellipsis or "
            "None, found list [1, 2]; use z.oindex[...] for orthogonal (outer) selection or "
            "z.vindex[...] for coordinate (point-wise) selection")):
        arr(zarrx).get_basic_selection((slice(None), [1, 2]))


@pytest.mark.parametrize("kind", ["oindex", "vindex", "blocks"])
def test_field_names_in_oindex_vindex_and_blocks_select_fields(kind):
    """``z.oindex[[0, 2], "x"]`` (and vindex, blocks) reads and writes one field, as ``z[...]``
    and the ``fields=`` argument do (zarr-python's indexers take field names too)."""
    dt = np.dtype([("x", "<i4"), ("y", "<f8")])
    expected = np.array([(1, 2.0), (3, 4.0), (5, 6.0), (7, 8.0)], dtype=dt)
    z = zarrx.create_array({}, shape=(4,), dtype=dt, chunks=(2,))
    z[...] = expected
    indexer = getattr(z, kind)
    sel, rows = {"oindex": ([0, 2], [0, 2]), "vindex": ([0, 2], [0, 2]),
                 "blocks": (1, [2, 3])}[kind]
    np.testing.assert_array_equal(indexer[sel, "x"], expected["x"][rows])
    np.testing.assert_array_equal(indexer["y", sel], expected["y"][rows])
    assert indexer[sel, "y", "x"].dtype.names == ("y", "x")
    indexer[sel, "y"] = -1.5
    expected["y"][rows] = -1.5
    np.testing.assert_array_equal(z[...], expected)           # the other field is kept
    with pytest.raises(zarrx.IndexingError, match="no field 'q'; the fields are 'x', 'y'"):
        indexer[sel, "q"]


@pytest.mark.parametrize("call", [
    lambda a: a[1.5:3], lambda a: a[:"b"], lambda a: a.oindex[0:2:1.0],
    lambda a: a.get_basic_selection(slice(1.5, 3)), lambda a: a.blocks[slice(0.0, 1)],
    lambda a: a.__setitem__(slice(1.5, 3), 0)],
    ids=["getitem", "stop-str", "oindex-step", "basic", "blocks", "setitem"])
def test_a_slice_bound_that_is_not_an_integer_is_a_type_error(call):
    got = both(lambda lib: call(arr(lib)))
    assert isinstance(got["zarr"], TypeError)
    assert isinstance(got["zarrx"], zarrx.errors.IndexingTypeError)
    assert isinstance(got["zarrx"], (TypeError, IndexError))
    with pytest.raises(TypeError):                    # numpy's class there too
        N[1.5:3]
    assert str(arr(zarrx).__class__)                  # the array is still usable
    with pytest.raises(TypeError) as info:
        arr(zarrx)[1.5:3]
    assert str(info.value) == "slice start on axis 0: expected an integer or None, found 1.5"


def test_block_slices_past_the_grid_are_clipped_as_numpy_slices():
    """A documented difference: zarr-python 3.1 raises BoundsCheckError there."""
    z = arr(zarrx, chunks=(3, 3))                     # 4 x 4 chunks
    assert z.blocks[5:10].shape == (0, 10)
    assert z.blocks[-10:1, 3:9].tolist() == N[0:3, 9:10].tolist()
    with pytest.raises(zarrx.errors.BoundsCheckError):
        z.blocks[4]


@pytest.mark.parametrize("shape, chunks", [((7, 3), (3, 2)), ((5,), (2,)), ((0, 2), (1, 1))])
def test_iteration_yields_what_indexing_gives(shape, chunks):
    z = arr(zarrx, shape=shape, chunks=chunks)
    items = list(z)
    assert len(items) == shape[0]
    for i, item in enumerate(items):
        assert type(item) is type(z[i]) and np.array_equal(item, z[i])
    got = both(lambda lib: [np.asarray(v).tolist() for v in arr(lib, shape=shape, chunks=chunks)])
    assert got["zarrx"] == got["zarr"]


def test_iterating_over_a_0d_array_is_a_type_error_as_in_numpy():
    """A documented difference: zarr-python 3.1 yields nothing."""
    z = zarrx.create_array({}, shape=(), dtype="i4")
    with pytest.raises(TypeError) as info:
        iter(z)
    assert isinstance(info.value, zarrx.ArgumentTypeError)
    assert str(info.value) == "/: iteration over a 0-d array"
    with pytest.raises(TypeError):
        iter(np.zeros(()))


def test_selection_methods_take_zarr_pythons_prototype_and_ndbuffer_out():
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.buffer.cpu import NDBuffer

    def case(lib):
        a = arr(lib)
        proto = default_buffer_prototype()
        out = NDBuffer.from_numpy_array(np.zeros((2, 10), "i4"))
        a.get_basic_selection(slice(0, 2), out=out, prototype=proto)
        a.set_orthogonal_selection(([0], [0]), -1, prototype=proto)
        return (out.as_numpy_array().tolist(), a.get_orthogonal_selection(([0], [0, 1]),
                                                                          prototype=proto).tolist(),
                a.get_block_selection((1, 1), prototype=None).shape)
    got = both(case)
    assert got["zarrx"] == got["zarr"] == (N[:2].tolist(), [[-1, 1]], (5, 5))
    with pytest.raises(TypeError) as info:
        arr(zarrx).get_basic_selection(0, prototype="gpu")
    assert isinstance(info.value, zarrx.ArgumentTypeError)
    assert str(info.value) == "/: prototype: expected None or zarr-python's CPU buffer " \
                              "prototype (zarrx uses numpy arrays), found str 'gpu'"


@pytest.mark.parametrize("shape, mask, want", [
    ((5,), np.array([True, False]), "expected shape (5,), found (2,)"),
    ((5, 4), np.ones((2, 2), bool), "expected shape (5, 4), found (2, 2)")])
def test_a_mask_of_the_wrong_shape_is_a_vindex_selection_error(shape, mask, want):
    """``z[mask]`` with a mask that does not fit the array: zarr-python's class, with the
    expected and found shapes."""
    got = both(lambda lib: lib.create_array({}, shape=shape, dtype="i4")[mask])
    assert type(got["zarr"]).__name__ == "VindexInvalidSelectionError"
    assert isinstance(got["zarrx"], zarrx.errors.VindexInvalidSelectionError)
    assert str(got["zarrx"]) == f"boolean mask: {want}"
