"""zarrx.indexing's refusals: selections out of range or ill-formed raise IndexingError with
axis and value, indices beyond int64 are never wrapped, values that do not fit are argument
errors, and selections touching too many chunks are refused up front."""
from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

from zarrx.errors import IndexingError, ZarrError
from zarrx.indexing import ChunkGridIndex, plan_selection

from indexing_helpers import _ten


S2 = (5, 10)
ERRORS = {
    "int-out-of-range": ((0, 12), "basic", S2, "index 12 is out of bounds for axis 1 with size 10"),
    "negative-out-of-range": (-6, "basic", S2, "index -6 is out of bounds for axis 0 with size 5"),
    "too-many": ((0, 0, 0), "basic", S2,
                 "too many indices for array: array is 2-dimensional, but 3 were indexed"),
    "two-ellipsis": ((Ellipsis, Ellipsis), "basic", S2,
                     "an index can only have a single ellipsis ('...'), found 2"),
    "float": ((1.5,), "basic", S2, "index 1.5 on axis 0: expected an integer, a slice, an "
              "integer or boolean array, None or Ellipsis; found float"),
    "bool-scalar": ((True,), "basic", S2, "index True on axis 0: expected an integer, a slice, an "
                    "integer or boolean array, None or Ellipsis; found bool"),
    "zero-step": ((slice(None, None, 0),), "basic", S2, "slice step cannot be zero (axis 0)"),
    "slice-float": ((slice(0.5, 2),), "basic", S2,
                    "slice start on axis 0: expected an integer or None, found 0.5"),
    "bool-length": ((np.ones(3, bool),), "orthogonal", S2,
                    "boolean index on axis 0: expected a 1-d array of length 5, found length 3"),
    "float-array": ((np.array([1.0]),), "orthogonal", S2,
                    "index array on axis 0: expected integers or booleans, found dtype float64"),
    "array-out-of-range": ((slice(None), [1, 10]), "orthogonal", S2,
                           "index 10 is out of bounds for axis 1 with size 10"),
    "oindex-2d": ((np.zeros((2, 2), int),), "orthogonal", S2,
                  "orthogonal index array on axis 0: expected 1 dimension, found shape (2, 2)"),
    "oindex-newaxis": ((None, 0), "orthogonal", S2, "orthogonal selection: newaxis (None) is only "
                       "supported in basic selections, found it at position 0"),
    "two-arrays-basic": (([0, 1], [0, 1]), "basic", S2, "basic selection with 2 index arrays is "
                         "ambiguous; use z.oindex[...] for orthogonal (outer) selection or "
                         "z.vindex[...] for coordinate (point-wise) selection"),
    "array-not-adjacent": ((0, slice(None), [0, 1]), "basic", (2, 3, 4), "basic selection mixes "
                           "an index array with integers that are not adjacent (numpy would move "
                           "the array's axis first); use z.oindex[...] for orthogonal (outer) "
                           "selection or z.vindex[...] for coordinate (point-wise) selection"),
    "vindex-count": (([0, 1],), "coordinate", S2,
                     "coordinate selection: expected 2 index arrays (one per axis), found 1"),
    "vindex-slice": ((slice(None), [0]), "coordinate", S2, "coordinate selection on axis 0: "
                     "expected an integer array, found slice slice(None, None, None); use "
                     "z.oindex for slices"),
    "vindex-broadcast": (([0, 1], [0, 1, 2]), "coordinate", S2, "coordinate selection: index "
                         "arrays could not be broadcast together, found shapes [(2,), (3,)]"),
    "vindex-range": (([0, 5], [0, 1]), "coordinate", S2,
                     "index 5 is out of bounds for axis 0 with size 5"),
    "mask-shape": (np.ones((5, 9), bool), "mask", S2,
                   "boolean mask: expected shape (5, 10), found (5, 9)"),
    "mask-dtype": (np.ones((5, 10), int), "mask", S2,
                   "boolean mask: expected a boolean array, found dtype int64"),
    "mask-ragged": (([True] * 5, 0), "mask", S2,
                    "boolean mask: expected a boolean array, found a tuple whose items are not "
                    "one array"),
    "block-step": ((slice(0, 2, 2),), "block", S2,
                   "block selection on axis 0: expected a slice with step 1, found step 2"),
    "block-range": ((0, 4), "block", S2, "block index 4 is out of bounds for axis 1 with 4 chunks"),
    "block-type": ((0, [1]), "block", S2, "block selection on axis 1: expected an integer or a "
                   "slice, found list [1]"),
    "kind": ((0,), "fancy", S2, "selection kind: expected one of basic, orthogonal, coordinate, "
             "mask, block, found 'fancy'"),
}


@pytest.mark.parametrize("sel, kind, shape, message", ERRORS.values(), ids=list(ERRORS))
def test_errors(sel: Any, kind: str, shape: tuple[int, ...], message: str) -> None:
    with pytest.raises(IndexingError, match=re.escape(message)) as info:
        plan_selection(sel, shape, (2, 3, 4)[: len(shape)], kind)
    assert str(info.value) == message
    assert isinstance(info.value, ZarrError) and isinstance(info.value, IndexError)


@pytest.mark.parametrize("grid, message", [
    ((0, 3), "chunk shape[0]: expected an integer >= 1 (or 0 on an axis of length 0), found 0"),
    (((2, 2), (3, 3, 3, 1)), "chunk edges of axis 0: expected lengths summing to at least the "
                             "axis size 5, found sum 4"),
    ((2,), "chunk grid has 1 axes but the array shape (5, 10) has 2"),
], ids=["zero-chunk", "short-edges", "rank"])
def test_grid_errors(grid: Any, message: str) -> None:
    with pytest.raises(IndexingError, match=re.escape(message)):
        ChunkGridIndex((5, 10), grid)


U8_MAX = np.array([2**64 - 1], dtype="u8")


@pytest.mark.parametrize("op, shown", [
    (lambda z: z[U8_MAX], 2**64 - 1),
    (lambda z: z.oindex[np.array([2**63], dtype="u8")], 2**63),
    (lambda z: z.vindex.__setitem__(np.array([2**64 - 2], dtype="u8"), 77), 2**64 - 2),
    (lambda z: z.get_coordinate_selection((np.uint64(2**64 - 1),)), 2**64 - 1),
    (lambda z: z.get_coordinate_selection((2**70,)), 2**70),
    (lambda z: z.set_coordinate_selection((2**70,), 1), 2**70),
    (lambda z: z.vindex[2**70], 2**70),
], ids=["u8-basic", "u8-oindex", "u8-vindex-write", "np-uint64-coordinate", "huge-coordinate",
        "huge-coordinate-write", "huge-vindex"])
def test_indices_beyond_int64_are_out_of_bounds_never_wrapped(op, shown):
    """numpy raises IndexError for these; casting them to int64 would wrap them to negative
    positions and read or write another element."""
    z = _ten()
    with pytest.raises(IndexingError) as info:
        op(z)
    assert str(info.value) == f"index {shown} is out of bounds for axis 0 with size 10"
    assert z[...].tolist() == list(range(10))


@pytest.mark.parametrize("value", [2**70, float("inf"), -1])
def test_values_that_do_not_fit_the_dtype_are_argument_errors(value):
    import zarrx
    z = zarrx.create_array({}, shape=(4,), chunks=(2,), dtype="u1")
    with pytest.raises(zarrx.errors.ArgumentError, match="cannot convert value of type"):
        z[0] = value


@pytest.mark.parametrize("dtype", ["U3", "S3", [("a", "i4"), ("b", "S2")]])
def test_dates_too_long_for_a_string_dtype_are_argument_errors(dtype):
    import zarrx
    z = zarrx.create_array({}, shape=(2,), chunks=(2,), dtype=dtype)
    with pytest.raises(zarrx.errors.ArgumentError, match=re.escape(
            f"/: cannot convert value of type ndarray to dtype {z.dtype}: The string provided "
            f"for NumPy ISO datetime formatting was too short")):
        z[...] = np.array(["2020-01-01", "2021-06-01"], dtype="M8[D]")


def test_selection_touching_too_many_chunks_is_refused_up_front() -> None:
    import zarrx
    from zarrx.errors import SelectionSizeError

    z = zarrx.create_array(zarrx.store.MemoryStore(), shape=(2**40,), chunks=(1,), dtype="u1")
    with pytest.raises(SelectionSizeError) as info:
        z[: 2**31]
    assert str(info.value) == (
        "array '/': the selection touches 2147483648 chunks; at most 4194304 are read or "
        "written in one call: select less at a time")
    assert isinstance(info.value, MemoryError) and isinstance(info.value, IndexingError)
    assert isinstance(info.value, ZarrError)
    with pytest.raises(SelectionSizeError, match="touches 1099511627776 chunks"):
        z[...] = 0
    with pytest.raises(SelectionSizeError, match="touches 4194305 chunks"):
        z[: 2**23 + 1 : 2] = 1
    assert z[: 2**10].shape == (2**10,)


def test_box_paths_refuse_too_many_chunks(tmp_path) -> None:
    import zarrx
    from zarrx.errors import SelectionSizeError

    store = zarrx.store.LocalStore(str(tmp_path / "a.zarr"))
    z = zarrx.create_array(store, shape=(2**40,), chunks=(1,), dtype="u1", compressors=None)
    with pytest.raises(SelectionSizeError, match="touches 1099511627776 chunks"):
        z[...] = 0
    with pytest.raises(SelectionSizeError, match="touches 4194305 chunks"):
        z[: 2**22 + 1]
    assert not list((tmp_path / "a.zarr").glob("c/*"))


def test_a_plan_lists_at_most_max_chunks_per_axis() -> None:
    from zarrx.errors import SelectionSizeError
    from zarrx.indexing import MAX_CHUNKS

    plan = plan_selection(slice(0, 2**31), (2**40,), (1,))      # counted, not listed
    assert len(plan) == 2**31
    with pytest.raises(SelectionSizeError) as info:
        next(iter(plan))
    assert str(info.value) == (
        f"basic selection: touches {2**31} chunks along axis 0; at most {MAX_CHUNKS} are "
        f"listed per axis: select less at a time")
    plan = plan_selection(slice(None, None, 3), (2**40,), (1,))  # a strided slice too
    assert len(plan) == -(-2**40 // 3)
    plan = plan_selection((slice(3, 3 + 7 * MAX_CHUNKS, 7),), (2**40,), (8,))
    last = (3 + 7 * (MAX_CHUNKS - 1)) // 8
    assert len(plan) == last + 1               # a step under the chunk length skips no chunk
    assert plan.chunks[-1].coords == (last,)
    for step in (-9, -8, -5, 5, 8, 9):
        plan = plan_selection((slice(None, None, step),), (9003,), (8,))
        want = sorted({p // 8 for p in range(9003)[::step]})
        assert len(plan) == len(want)
        assert [c.coords[0] for c in plan.chunks] == want
