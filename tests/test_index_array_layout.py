"""``z[...]`` with one index array of several axes among slices and integers lays its result
out as numpy does: the array's axes stand where it stands (``z[:, [[0, 1], [2, 3]]]`` has shape
``(n, 2, 2)``). Reads (with and without ``out=``) and writes of every layout and store are
checked against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, MemoryStore

IDX = np.array([[4, 0, -1], [1, 1, 2]])          # unsorted, a duplicate, a negative index

SELECTIONS = {
    "2d-first-axis": (IDX,),
    "2d-middle-axis": (slice(None), IDX),
    "2d-with-int-adjacent": (1, IDX),
    "2d-with-newaxis": (None, 2, IDX, slice(1, None, 2)),
    "3d-last-axis": (Ellipsis, IDX[None]),
    "list-of-lists": (slice(None, None, -1), [[0, 2], [3, 3]]),
    "2d-after-newaxis": (None, IDX, 3),
    "empty-2d": (slice(None), np.zeros((0, 2), int)),
}

LAYOUTS = {
    "v3": dict(zarr_format=3, chunks=(2, 3, 2)),
    "v3-sharded": dict(zarr_format=3, chunks=(2, 2, 2), shards=(4, 4, 2)),
    "v2-F": dict(zarr_format=2, chunks=(3, 2, 4), order="F"),
}


def _reference() -> np.ndarray:
    return np.arange(5 * 5 * 5, dtype="i4").reshape(5, 5, 5)


@pytest.mark.parametrize("sel", SELECTIONS.values(), ids=list(SELECTIONS))
@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
@pytest.mark.parametrize("local", [False, True], ids=["memory", "local"])
def test_one_index_array_reads_and_writes_as_numpy(tmp_path, sel, layout, local):
    ref = _reference()
    store = LocalStore(tmp_path / "a.zarr") if local else MemoryStore()
    z = zarrx.create_array(store, shape=ref.shape, dtype=ref.dtype, fill_value=-7, **layout)
    z[...] = ref
    want = ref[sel]
    got = z[sel]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    out = np.full(want.shape, -1, dtype=ref.dtype, order="F")
    assert z.read(sel, out=out) is out
    np.testing.assert_array_equal(out, want)
    values = np.arange(1000, 1000 + want.size, dtype=ref.dtype).reshape(want.shape)
    z[sel] = values
    ref[sel] = values                    # duplicated positions: the last value stays, as here
    np.testing.assert_array_equal(z[...], ref)
    if want.ndim:                        # broadcast along the last axis
        z[sel] = values[..., :1]
        ref[sel] = values[..., :1]
        np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], ref)


def test_out_of_the_wrong_shape_names_numpys_shape():
    z = zarrx.create_array(MemoryStore(), shape=(5, 5), chunks=(2, 2), dtype="i4")
    with pytest.raises(zarrx.ArgumentError, match=r"expected shape \(5, 2, 3\)"):
        z.read((slice(None), IDX), out=np.empty((5, 6), "i4"))


def test_values_that_do_not_fit_numpys_shape_are_refused():
    z = zarrx.create_array(MemoryStore(), shape=(5, 5), chunks=(2, 2), dtype="i4")
    with pytest.raises(zarrx.ArgumentError, match=r"selection shape \(5, 2, 3\)"):
        z[:, IDX] = np.zeros((5, 6), "i4")
    assert (z[...] == 0).all()


def test_fields_and_strings_take_the_same_layout():
    rec = np.zeros((4, 3), dtype=[("x", "i4"), ("y", "f8")])
    rec["x"] = np.arange(12).reshape(4, 3)
    z = zarrx.create_array(MemoryStore(), shape=(4, 3), chunks=(3, 2), dtype=rec.dtype)
    z[...] = rec
    np.testing.assert_array_equal(z[:, [[0], [2]], "x"], rec["x"][:, [[0], [2]]])
    z["y", :, [[2, 0]]] = [[[1.5, 2.5]]] * 4
    rec["y"][:, [[2, 0]]] = [[[1.5, 2.5]]] * 4
    np.testing.assert_array_equal(z[...], rec)
    text = np.array([["a", "bé", ""], ["c", "d", "ee"]], dtype=object)
    t = zarrx.create_array(MemoryStore(), shape=(2, 3), chunks=(1, 2), dtype=str)
    t[...] = text
    assert t[0, [[2], [1]]].tolist() == text[0, [[2], [1]]].tolist()
    assert t[None, 1, [[2], [1]]].tolist() == text[None, 1, [[2], [1]]].tolist()
    t[1, ..., [[0, 2]]] = [["x", "y"]]
    text[1, ..., [[0, 2]]] = [["x", "y"]]
    assert t[...].tolist() == text.tolist()


@pytest.mark.parametrize("sel", [(0, slice(None), IDX), (3, None, IDX), (1, Ellipsis, [[0], [2]])],
                         ids=str)
def test_integers_apart_from_an_index_array_of_several_axes_are_refused(sel):
    """numpy would move the array's axes first there, and zarr-python lays out an outer
    product: refused, as with a 1-d index array, naming the accessors that say which."""
    z = zarrx.create_array(MemoryStore(), shape=(5, 5, 5), chunks=(2, 2, 2), dtype="i4")
    with pytest.raises(zarrx.IndexingError, match="not adjacent .* use z.oindex"):
        z[sel]
    with pytest.raises(zarrx.IndexingError, match="not adjacent"):
        z[sel] = 1
