"""An array with a rectilinear chunk grid keeps its shape: ``resize``, ``append`` and the
xarray writer's appends refuse it with an ``ArgumentError`` before anything is stored (the
grid's edges are fixed by its document). ``append`` once grew the shape, then failed with an
``AttributeError`` writing the rows, leaving fill values where the data should be."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx


def _rectilinear(stored: dict):
    z = zarrx.create_array(stored, shape=(3,), chunks=[[2, 2, 2]], dtype="i4")
    z[...] = [1, 2, 3]
    return z


@pytest.mark.parametrize("change, what", [
    (lambda z: z.append(np.array([7, 8])), "append to"),
    (lambda z: z.append(np.array([7, 8, 9, 10])), "append to"),
    (lambda z: z.resize((5,)), "resize"),
    (lambda z: z._grow(lambda shape: (shape[0] + 2,)), "change the shape of"),
], ids=["append-inside-grid", "append-past-grid", "resize", "grow"])
def test_shape_changes_of_a_rectilinear_grid_are_refused_unchanged(change, what):
    stored: dict = {}
    z = _rectilinear(stored)
    before = dict(stored)
    with pytest.raises(zarrx.ArgumentError, match=f"/: cannot {what} an array with a "
                                                  f"rectilinear chunk grid"):
        change(z)
    again = zarrx.open_array(z.store, mode="r")
    assert again.shape == (3,) and again[...].tolist() == [1, 2, 3]
    assert z.shape == (3,) and stored == before
