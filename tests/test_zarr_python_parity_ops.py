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
