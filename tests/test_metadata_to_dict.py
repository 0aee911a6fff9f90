"""``Array.metadata.to_dict()`` and ``Group.metadata.to_dict()``: the node's metadata document
as zarr-python's ``to_dict()`` gives it (a v3 node's ``zarr.json``; a v2 array's ``.zarray``
with its ``attributes``; a v2 group's attributes, format and node type)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore


def _plain(doc):
    """A document as JSON has it (zarr-python's holds tuples where JSON has lists)."""
    return json.loads(json.dumps(doc))


ARRAYS = [
    dict(shape=(4, 6), chunks=(2, 3), dtype="i4", attributes={"a": 1}),
    dict(shape=(5,), chunks=(2,), dtype="u1", compressors=None, fill_value=7),
    dict(shape=(8, 8), chunks=(2, 2), shards=(4, 4), dtype="f8", dimension_names=["y", "x"],
         zarr_format=3),
    dict(shape=(3,), chunks=(3,), dtype="i2", order="F", zarr_format=2),
]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("i", range(len(ARRAYS)))
def test_an_arrays_to_dict_is_its_stored_document(tmp_path, fmt, i):
    kw = dict(ARRAYS[i])
    if kw.setdefault("zarr_format", fmt) != fmt:
        pytest.skip("another format's case")
    a = zarrx.create_array(str(tmp_path), name="a", **kw)
    doc = a.metadata.to_dict()
    if fmt == 3:
        assert doc == json.loads((tmp_path / "a" / "zarr.json").read_text())
    else:
        zarray = json.loads((tmp_path / "a" / ".zarray").read_text())
        attrs = kw.get("attributes", {})
        assert doc == {**zarray, "attributes": attrs}
    assert a.metadata.node_type == "array"


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("i", range(len(ARRAYS)))
def test_to_dict_is_zarr_pythons(tmp_path, fmt, i):
    zarr = pytest.importorskip("zarr")
    kw = dict(ARRAYS[i])
    if kw.setdefault("zarr_format", fmt) != fmt:
        pytest.skip("another format's case")
    zarrx.create_array(str(tmp_path), name="a", **kw)
    theirs = _plain(zarr.open_array(str(tmp_path / "a"), mode="r").metadata.to_dict())
    assert zarrx.open_array(str(tmp_path / "a")).metadata.to_dict() == theirs
    zarrx.open_group(str(tmp_path), mode="a", zarr_format=fmt, attributes={"g": [1, 2]})
    theirs = _plain(zarr.open_group(str(tmp_path), mode="r").metadata.to_dict())
    theirs.pop("consolidated_metadata", None)       # zarr-python's: None when there is none
    assert zarrx.open_group(str(tmp_path)).metadata.to_dict() == theirs


@pytest.mark.parametrize("fmt", [2, 3])
def test_to_dict_is_a_copy_that_create_hierarchy_takes_back(fmt):
    store = MemoryStore()
    a = zarrx.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i4",
                           zarr_format=fmt, attributes={"nested": {"k": [1]}})
    doc = a.metadata.to_dict()
    doc["attributes"]["nested"]["k"].append(2)
    doc["shape"][0] = 99
    assert a.metadata.attributes == {"nested": {"k": [1]}} and a.shape == (4,)
    doc = a.metadata.to_dict()
    g = zarrx.group(store, zarr_format=fmt, attributes={"t": "x"})
    out = zarrx.create_hierarchy(store=MemoryStore(), nodes={"": g.metadata.to_dict(),
                                                             "b": doc})
    made = dict(out)
    assert made["b"].metadata.to_dict() == doc
    assert made[""].metadata.to_dict() == g.metadata.to_dict()
    assert np.array_equal(made["b"][:], np.zeros(4, "i4"))
