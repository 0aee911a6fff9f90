"""Array operations that a random differential against zarr-python 3.1 turned up: the calls
where zarrx must answer as zarr-python (and numpy) do."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx

from parity_helpers import both, builtins_of
from parity_helpers import _quiet  # noqa: F401  (an autouse fixture)


@pytest.mark.parametrize("shape", [(), (3, 2)])
def test_resize_without_a_shape_is_a_type_error_as_a_missing_argument(shape):
    def case(lib):
        a = lib.create_array({}, shape=shape, dtype="i4", chunks=shape or ())
        a.resize()
    got = both(case)
    assert isinstance(got["zarr"], TypeError)
    assert isinstance(got["zarrx"], zarrx.errors.ArgumentTypeError)
    assert builtins_of(got["zarr"]) <= builtins_of(got["zarrx"])
    assert "resize() missing the new shape" in str(got["zarrx"])
    a = zarrx.create_array({}, shape=shape, dtype="i4", chunks=shape or ())
    with pytest.raises(TypeError):
        a.resize()
    assert a.shape == shape


@pytest.mark.parametrize("mask", [np.True_, np.False_, (np.True_,)],
                         ids=["true", "false", "in-a-tuple"])
def test_a_numpy_bool_is_the_mask_of_a_0d_array_as_a_0d_boolean_array_is(mask):
    a = zarrx.create_array({}, shape=(), dtype="i2", fill_value=4)
    m = np.full((), 4, "i2")
    want = m[mask]
    for got in (a[mask], a.vindex[mask], a.get_mask_selection(mask),
                a.get_coordinate_selection(mask)):
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype
        assert got.tolist() == want.tolist()
    a[mask] = 7
    m[mask] = 7
    a.vindex[np.False_] = 9                  # selects nothing
    assert a[()] == m[()]


@pytest.mark.parametrize("sel", ["plain", "tuple"])
@pytest.mark.parametrize("where", ["getitem", "setitem", "vindex"])
def test_a_numpy_bool_on_an_nd_array_is_a_vindex_selection_error_as_in_zarr_python(sel, where):
    b = np.True_ if sel == "plain" else (np.True_,)

    def case(lib):
        a = lib.create_array({}, shape=(4, 3), dtype="i4", chunks=(2, 2))
        if where == "getitem":
            return a[b]
        if where == "setitem":
            a[b] = 1
            return None
        return a.vindex[b]
    got = both(case)
    assert type(got["zarr"]).__name__ == "VindexInvalidSelectionError"
    assert isinstance(got["zarrx"], zarrx.errors.VindexInvalidSelectionError)
    assert builtins_of(got["zarr"]) <= builtins_of(got["zarrx"])


# where zarr-python 3.1 departs from numpy (docs/guide/migrating.md): zarrx answers as numpy

N = np.arange(12, dtype="i4").reshape(4, 3)


def _numbered(**kw):
    a = zarrx.create_array({}, shape=(4, 3), dtype="i4", chunks=(2, 2), **kw)
    a[...] = N
    return a


@pytest.mark.parametrize("sel", [np.array(2), (1, np.array(2)), (np.array(-1), slice(None)),
                                 [], ([], slice(None))],
                         ids=["0d", "int-and-0d", "0d-and-slice", "empty-list",
                              "empty-list-and-slice"])
def test_0d_integer_arrays_and_empty_lists_select_as_in_numpy(sel):
    a = _numbered()
    got = a[sel]
    assert np.asarray(got).shape == N[sel].shape and np.asarray(got).tolist() == N[sel].tolist()
    assert a.oindex[np.array(1), [0, 2]].tolist() == [3, 5]
    assert a.vindex[[], []].shape == (0,)
    a[np.array(1), 0] = 99
    assert a[1, 0] == 99


@pytest.mark.parametrize("dtype", ["u1", "u2", "u8"])
def test_unsigned_index_arrays_in_any_order_select_the_items_named(dtype):
    a = zarrx.create_array({}, shape=(3,), dtype="i8", chunks=(1,))
    a[2] = 7                                 # chunks 0 and 1 missing
    rows = np.array([0, 2, 1], dtype=dtype)
    assert a.oindex[rows].tolist() == a[rows].tolist() == a.vindex[rows].tolist() == [0, 7, 0]
    b = _numbered(fill_value=0)
    b.oindex[np.array([2, 0], dtype=dtype), :] = [[70, 71, 72], [80, 81, 82]]
    want = N.copy()
    want[[2, 0], :] = [[70, 71, 72], [80, 81, 82]]
    assert b[...].tolist() == want.tolist()
    assert b.vindex[np.array([3, 0], dtype=dtype), np.array([2, 1], dtype=dtype)].tolist() \
        == [11, 81]


@pytest.mark.parametrize("shards", [None, (2,)])
def test_complex_values_with_a_nan_part_other_than_the_fill_value_are_kept(shards):
    fill = complex("nan-2j")
    a = zarrx.create_array({}, shape=(3,), dtype="c16", chunks=(1,), shards=shards,
                           fill_value=fill)
    a[...] = np.array([complex("nan-3j"), fill, complex("nan+5j")])
    got = a[...]
    assert [v.imag for v in got.tolist()] == [-3.0, -2.0, 5.0]
    assert a.nchunks_initialized == (2 if shards is None else 4)


@pytest.mark.parametrize("how", ["mask", "vindex", "set_mask_selection", "basic"])
def test_a_value_that_does_not_fit_is_refused_before_any_chunk_is_written(how):
    a = zarrx.create_array({}, shape=(7, 1, 1), dtype="f4", chunks=(6, 1, 1), fill_value=0)
    a[...] = 5
    m = np.zeros((7, 1, 1), bool)
    m[[1, 3, 6]] = True
    value = np.array([[1.0], [2.0], [3.0]], "f4")
    with pytest.raises(zarrx.errors.ArgumentError, match="cannot be broadcast"):
        if how == "mask":
            a[m] = value
        elif how == "vindex":
            a.vindex[m] = value
        elif how == "set_mask_selection":
            a.set_mask_selection(m, value)
        else:
            a[:, 0, 0] = np.ones((2, 7), "f4")
    assert a[...].ravel().tolist() == [5.0] * 7


@pytest.mark.parametrize("dtype", ["U2", "S2"])
def test_dates_written_to_text_too_narrow_for_them_are_an_argument_error(dtype):
    a = zarrx.create_array({}, shape=(2,), dtype=dtype, chunks=(1,))
    with pytest.raises(zarrx.errors.ArgumentError, match="cannot convert value"):
        a[...] = np.array(["2020-01-01", "NaT"], "M8[s]")
    assert a.nchunks_initialized == 0


def test_arrays_opened_with_other_configurations_are_equal_and_hash_alike():
    store: dict = {}
    made = zarrx.create_array(store, shape=(2,), dtype="i1", config={"write_empty_chunks": True})
    plain = zarrx.open_array(store)
    other = zarrx.open_array(store, config={"order": "F"})
    assert made == plain == other and hash(made) == hash(plain) == hash(other)
    assert len({made, plain, other}) == 1
