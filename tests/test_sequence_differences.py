"""Where random sequences of hierarchy operations run through zarrx and zarr-python 3.1 part
ways on purpose (docs/guide/migrating.md): what zarrx does there."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("existing", [str, "f8", "M8[s]"])
def test_require_array_of_str_returns_an_array_whose_type_casts_to_strings(existing):
    # zarr-python 3.1 compares with np.dtype(str) ("<U0") and refuses its own string arrays
    g = zarrx.open_group({}, mode="w")
    made = g.create_array("s", shape=(2,), dtype=existing)
    assert g.require_array("s", shape=(2,), dtype=str) == made
    with pytest.raises(zarrx.errors.NodeMismatchError, match="which does not cast safely"):
        g.require_array("s", shape=(2,), dtype="i1")


@pytest.mark.parametrize("axis", [2, -3])
def test_append_along_an_axis_the_array_lacks_leaves_it_as_it_was(axis):
    # zarr-python 3.1 keeps the shape and writes the data over the items there
    a = zarrx.create_array({}, shape=(2, 3), dtype="i4", chunks=(1, 1))
    a[...] = np.arange(6).reshape(2, 3)
    with pytest.raises(zarrx.ArgumentError, match=f"append axis {axis} out of range for 2 dims"):
        a.append(np.ones((2, 3), "i4"), axis=axis)
    assert a.shape == (2, 3) and a[...].tolist() == [[0, 1, 2], [3, 4, 5]]


@pytest.mark.parametrize("method", ["create_array", "require_array", "create_dataset"])
def test_group_methods_give_a_zarr_v2_array_the_default_compressor_of_create_array(method):
    # zarr-python 3.1's group methods give Blosc there, its create_array and create zstd
    g = zarrx.open_group({}, mode="w", zarr_format=2)
    made = getattr(g, method)(name="x", shape=(3,), dtype="i4")
    top = zarrx.create_array({}, shape=(3,), dtype="i4", zarr_format=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = zarr.create_array({}, shape=(3,), dtype="i4", zarr_format=2)
    assert made.metadata.compressor == top.metadata.compressor == {"id": "zstd", "level": 0}
    assert ref.metadata.to_dict()["compressor"] == {"id": "zstd", "level": 0}


def test_open_array_without_a_mode_creates_a_missing_array_as_mode_a_does():
    # zarr-python 3.1's open_array without mode= raises ArrayNotFoundError there
    store = zarrx.storage.MemoryStore()
    made = zarrx.open_array(store, path="x", shape=(2,), dtype="i4")
    assert made.shape == (2,) and zarrx.open_array(store, path="x", mode="r+") == made
    with pytest.raises(zarrx.errors.ArrayNotFoundError):
        zarrx.open_array(store, path="y", mode="r+", shape=(2,), dtype="i4")
    with pytest.raises(zarrx.ArgumentError, match="mode: expected one of r, r\\+, a, w, w-, "
                                                  "found None"):
        zarrx.open_group(store, path="x", mode=None)


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_attribute_change_through_an_earlier_handle_keeps_changes_made_since(fmt):
    # zarr-python 3.1 writes its handle's copy: 'gone' comes back and 'new' is lost
    store = zarrx.storage.MemoryStore()
    held = zarrx.open_group(store, mode="w", zarr_format=fmt, attributes={"gone": 1})
    other = zarrx.open_group(store, mode="r+")
    other.attrs["new"] = 2
    del other.attrs["gone"]
    held.attrs["q"] = 3
    assert dict(held.attrs) == {"new": 2, "q": 3}
    assert dict(zarrx.open_group(store, mode="r").attrs) == {"new": 2, "q": 3}


@pytest.mark.parametrize("data, shape, dtype", [(5, (), "int64"), ([1, 2], (2,), "int64"),
                                                ("abc", (), "<U3"), (b"xy", (), "|S2")])
def test_group_setitem_takes_what_array_takes(data, shape, dtype):
    # zarr-python 3.1 raises TypeError for anything but a numpy-like array
    g = zarrx.open_group({}, mode="w")
    g["n"] = data
    assert (g["n"].shape, str(g["n"].dtype)) == (shape, dtype)
    assert g["n"][...].tolist() == np.asarray(data).tolist()
