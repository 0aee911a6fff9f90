"""Arrays with a rectilinear chunk grid through the Array API.

They keep their shape: ``resize``, ``append`` and the xarray writer's appends refuse it with
an ``ArgumentError`` before anything is stored (the grid's edges are fixed by its document).
``append`` once grew the shape, then failed with an ``AttributeError`` writing the rows,
leaving fill values where the data should be. Copies (``*_like``, ``from_array``, ``array``)
keep the grid when they keep the shape and the format, and pick chunks otherwise; they once
failed asking for ``chunks``, which such a grid has none of."""
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


@pytest.mark.parametrize("copy, grid", [
    (lambda z: zarrx.zeros_like(z), [[2, 3], [1, 2, 3]]),
    (lambda z: zarrx.full_like(z, fill_value=3), [[2, 3], [1, 2, 3]]),
    (lambda z: zarrx.from_array({}, data=z), [[2, 3], [1, 2, 3]]),
    (lambda z: zarrx.array(z), [[2, 3], [1, 2, 3]]),
    (lambda z: zarrx.zeros_like(z, shape=(7, 7)), None),
    (lambda z: zarrx.from_array({}, data=z, zarr_format=2), None),
], ids=["zeros_like", "full_like", "from_array", "array", "other-shape", "to-v2"])
def test_copies_of_a_rectilinear_array_keep_its_grid_where_it_fits(copy, grid):
    z = zarrx.create_array({}, shape=(5, 6), chunks=[[2, 3], [1, 2, 3]], dtype="i4")
    z[...] = np.arange(30).reshape(5, 6)
    out = copy(z)
    meta = out.metadata
    if grid is None:
        assert isinstance(meta.chunk_grid, zarrx.metadata.RegularGrid)
    else:
        assert [list(edges) for edges in meta.chunk_grid.chunk_sizes] == grid
    if out.shape == z.shape and out.fill_value == z.fill_value and out.nchunks_initialized:
        assert out[...].tolist() == z[...].tolist()
