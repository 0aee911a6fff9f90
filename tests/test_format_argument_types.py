"""``zarr_format`` is taken as a Python or a numpy integer (as zarr-python takes it), never as a
bool or a float, wherever it is taken; what is stored is the plain number."""
from __future__ import annotations

import json

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError

CALLS = {
    "create_array": lambda f: zarrx.create_array({}, shape=(2,), dtype="i4", zarr_format=f),
    "create_group": lambda f: zarrx.create_group({}, zarr_format=f),
    "group": lambda f: zarrx.group({}, zarr_format=f),
    "open_group": lambda f: zarrx.open_group({}, mode="w", zarr_format=f),
    "open_array": lambda f: zarrx.open_array({}, mode="w", shape=(2,), dtype="i4",
                                             zarr_format=f),
    "open": lambda f: zarrx.open({}, mode="w", shape=(2,), dtype="i4", zarr_format=f),
    "create": lambda f: zarrx.create(shape=(2,), dtype="i4", store={}, zarr_format=f),
    "full": lambda f: zarrx.full(shape=(2,), fill_value=1, store={}, zarr_format=f),
    "array": lambda f: zarrx.array(np.arange(3), store={}, zarr_format=f),
    "from_array": lambda f: zarrx.from_array({}, data=np.arange(3), zarr_format=f),
    "zeros_like": lambda f: zarrx.zeros_like(np.arange(3), store={}, zarr_format=f),
}


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("fmt", [np.int64(2), np.uint8(3), np.int32(2)], ids=repr)
def test_a_numpy_integer_is_a_zarr_format(name, fmt):
    node = CALLS[name](fmt)
    assert type(node.metadata.zarr_format) is int and node.metadata.zarr_format == fmt
    doc = ".zarray" if node.metadata.zarr_format == 2 and isinstance(node, zarrx.Array) \
        else ".zgroup" if node.metadata.zarr_format == 2 else "zarr.json"
    raw = node.store.get(doc) if hasattr(node.store, "get") else None
    if isinstance(raw, (bytes, bytearray)):
        assert json.loads(raw)["zarr_format"] == int(fmt)


@pytest.mark.parametrize("name", list(CALLS))
@pytest.mark.parametrize("fmt", [np.bool_(True), np.float64(2.0), 2.0, True], ids=repr)
def test_bools_and_floats_are_no_zarr_format(name, fmt):
    with pytest.raises(ArgumentError, match=r"zarr_format: expected 2(, 3 or None| or 3), found"):
        CALLS[name](fmt)


def test_saving_and_loading_take_a_numpy_integer():
    store: dict = {}
    zarrx.save_group(store, a=np.arange(3), zarr_format=np.int64(2))
    assert ".zgroup" in store
    zarrx.save_array(store, np.arange(4), path="b", zarr_format=np.int64(2))
    assert zarrx.load(store, path="b", zarr_format=np.int64(2)).tolist() == [0, 1, 2, 3]
    assert zarrx.open_group(store, mode="r", zarr_format=np.int8(2)).metadata.zarr_format == 2
