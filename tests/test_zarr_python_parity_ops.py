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
