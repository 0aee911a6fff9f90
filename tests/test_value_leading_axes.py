"""A written value may have more axes than the selection when the extra ones lead and have
length 1, as numpy's assignment allows (``a[0, :] = np.ones((1, 3))``): they are dropped,
then the value broadcasts as before (for a mask too, where numpy refuses a value of more than
one axis). zarr-python 3.1 takes some of these writes too (``z[0:1, 0:1] = np.ones((1, 1, 1,
1))``, ``z.vindex[[0, 1], [0, 1]] = np.ones((1, 2))``); zarrx refused them all. One element
(``z[i, j] = [[1]]``) still takes a scalar only, as in numpy and zarr-python."""
from __future__ import annotations

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.store import LocalStore, MemoryStore

CASES = {     # (accessor, selection, value shape)
    "row": ("z", (0, slice(None)), (1, 5)),
    "whole": ("z", (Ellipsis,), (1, 1, 4, 5)),
    "region-to-broadcast": ("z", (slice(1, 3), slice(None, None, -2)), (1, 1, 1, 3)),
    "column": ("z", (slice(None), 3), (1, 1, 4)),
    "index-array": ("z", ([3, 0, 0], slice(1, 4)), (1, 3, 3)),
    "orthogonal": ("oindex", ([2, 0], [4, 1, 1]), (1, 2, 3)),
    "coordinate": ("vindex", ([0, 3, 3], [4, 0, 0]), (1, 1, 3)),
    "block": ("blocks", (1, 0), (1, 2, 2)),
    "mask": ("z", (np.arange(20).reshape(4, 5) % 3 == 0,), (1, 7)),
}

LAYOUTS = {
    "v3": dict(zarr_format=3, chunks=(2, 2)),
    "v3-sharded": dict(zarr_format=3, chunks=(1, 2), shards=(2, 4)),
    "v2-F": dict(zarr_format=2, chunks=(3, 2), order="F"),
}


def _numpy_write(ref: np.ndarray, accessor: str, sel: tuple, value: np.ndarray,
                 chunks: tuple[int, int]) -> None:
    """numpy's assignment for each accessor (numpy itself refuses a 2-d value for a mask:
    that case is written with the leading axis dropped)."""
    if accessor == "oindex":
        ref[np.ix_(*[np.asarray(s) for s in sel])] = value
    elif accessor == "blocks":
        (i, j), (m, n) = sel, chunks
        ref[i * m:(i + 1) * m, j * n:(j + 1) * n] = value
    elif sel[0].__class__ is np.ndarray and sel[0].dtype == bool:
        ref[sel] = value.reshape(value.shape[1:])
    else:
        ref[sel] = value


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=list(LAYOUTS))
@pytest.mark.parametrize("local", [False, True], ids=["memory", "local"])
def test_leading_axes_of_length_1_are_dropped_as_numpy_drops_them(tmp_path, case, layout, local):
    accessor, sel, vshape = case
    ref = np.arange(20, dtype="i4").reshape(4, 5)
    store = LocalStore(tmp_path / "a.zarr") if local else MemoryStore()
    z = zarrx.create_array(store, shape=ref.shape, dtype=ref.dtype, fill_value=0, **layout)
    z[...] = ref
    if accessor == "blocks":        # the block's shape in this layout
        vshape = (1, *(min(c, n - c * k) for c, n, k in zip(layout["chunks"], ref.shape, sel)))
    value = np.arange(100, 100 + int(np.prod(vshape)), dtype="i4").reshape(vshape)
    target = z if accessor == "z" else getattr(z, accessor)
    target[sel if len(sel) > 1 else sel[0]] = value
    _numpy_write(ref, accessor, sel, value, layout["chunks"])
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], ref)


@pytest.mark.parametrize("vshape", [(2, 1, 5), (1, 2, 1, 5), (3, 5)], ids=str)
def test_leading_axes_longer_than_1_are_still_refused(vshape):
    z = zarrx.create_array(MemoryStore(), shape=(4, 5), chunks=(2, 2), dtype="i4")
    with pytest.raises(zarrx.ArgumentError, match=r"cannot be broadcast to the selection shape "
                                                  r"\(1, 5\)"):
        z[0:1] = np.ones(vshape, "i4")
    assert not (z[...] != 0).any()


@pytest.mark.parametrize("value", [[[1]], np.ones((1,), "i4"), np.ones((1, 1, 1), "i4")], ids=str)
def test_one_element_takes_a_scalar_only_as_in_numpy(value):
    z = zarrx.create_array(MemoryStore(), shape=(4, 5), chunks=(2, 2), dtype="i4")
    with pytest.raises(zarrx.ArgumentError, match=r"selection shape \(\)"):
        z[1, 2] = value


@pytest.mark.parametrize("write", [
    lambda z: z.__setitem__((slice(0, 1), slice(0, 1)), np.full((1, 1, 1, 1), 5)),
    lambda z: z.vindex.__setitem__(([0, 1], [0, 1]), np.full((1, 2), 5)),
], ids=["region", "vindex"])
def test_writes_zarr_python_takes_are_taken(write):
    got = {}
    for lib in (zarr, zarrx):
        z = lib.create_array({}, shape=(2, 3), chunks=(2, 2), dtype="i4", fill_value=0)
        write(z)
        got[lib.__name__] = z[...].tolist()
    assert got["zarrx"] == got["zarr"]


@pytest.mark.parametrize("dtype", ["c8", "i4", "f8", "U2"])
@pytest.mark.parametrize("value", [[1, 2], (1, 2.0), np.ones(2, "u2")], ids=str)
def test_a_sequence_for_one_element_keeps_zarr_pythons_builtin_classes(dtype, value):
    """numpy raises TypeError for some types (complex numbers, integers) and ValueError for
    others, and zarr-python passes it on (a complex array raised an ArgumentError, a
    ValueError only): zarrx's ArgumentTypeError is both."""
    got = {}
    for lib in (zarr, zarrx):
        z = lib.create_array({}, shape=(2, 2), chunks=(1, 1), dtype=dtype)
        with pytest.raises((TypeError, ValueError)) as info:
            z[0, 1] = value
        got[lib.__name__] = info.value
        assert z[...].tolist() == np.zeros((2, 2), dtype).tolist()
    mine = got["zarrx"]
    assert isinstance(mine, zarrx.errors.ArgumentTypeError)
    for builtin in (TypeError, ValueError):
        assert isinstance(mine, builtin) or not isinstance(got["zarr"], builtin)
