"""zarrx never writes metadata that a reader (zarrx's own parser, with its limits) refuses:
a call that would is refused before anything is written, and the node stays readable."""
from __future__ import annotations

import pytest

import zarrx
from zarrx.errors import ArgumentError, ArgumentTypeError, MetadataError
from zarrx.store import MemoryStore


def _nested(depth: int) -> list:
    x: list = []
    for _ in range(depth):
        x = [x]
    return x


def _snapshot(store: MemoryStore) -> dict:
    return {k: store.get(k) for k in sorted(store.list_prefix(""))}


DEEP = ("attributes: expected JSON nested at most 64 levels deep, found deeper nesting")


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("change, error, message", [
    (lambda a: a.attrs.__setitem__("x", _nested(70)), MetadataError, DEEP),
    (lambda a: a.attrs.update(x=_nested(3000)), MetadataError, DEEP),
    (lambda a: a.resize((2**70,)), ArgumentError,
     "/a: resize expected 1 non-negative ints below 2**63, found (1180591620717411303424,)"),
], ids=["attrs-70-deep", "attrs-3000-deep", "resize-past-int64"])
def test_refused_before_anything_is_written(zarr_format, change, error, message):
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    a = g.create_array("a", shape=(4,), chunks=(2,), dtype="f4")
    a[...] = 1
    before = _snapshot(store)
    with pytest.raises(error) as info:
        change(a)
    doc = "zarr.json" if zarr_format == 3 else ".zarray"
    assert str(info.value).startswith(message.format(doc=doc))
    assert _snapshot(store) == before
    again = zarrx.open_array(store, path="a", mode="r")
    assert again.shape == (4,) and again[...].tolist() == [1, 1, 1, 1]


def test_group_attributes_are_checked_too():
    g = zarrx.group(MemoryStore())
    with pytest.raises(MetadataError, match="nested at most 64 levels"):
        g.attrs["deep"] = _nested(65)
    assert dict(zarrx.open_group(g.store, mode="r").attrs) == {}


@pytest.mark.parametrize("make", [
    lambda v: zarrx.create_array({}, shape=(3,), dtype="i4", attributes=v),
    lambda v: zarrx.group({}, attributes=v),
    lambda v: zarrx.open_group({}, mode="w", attributes=v),
    lambda v: zarrx.group({}).create_group("x", attributes=v),
], ids=["create_array", "group", "open_group", "Group.create_group"])
@pytest.mark.parametrize("value", [5, [1], "ab", {1: 2}], ids=["int", "list", "str", "int-key"])
def test_attributes_argument_must_be_a_mapping(make, value):
    with pytest.raises(ArgumentTypeError, match=r"attributes: expected a mapping of str keys to "
                                                r"JSON values, found "):
        make(value)
