"""Mode ``w-`` of ``open``, ``open_array`` and ``open_group`` reports the node in the way
before any argument of the creation, as zarr-python does (its ``FileExistsError``): a node
there is a ``ContainsArrayError`` / ``ContainsGroupError``, whatever else is wrong."""
from __future__ import annotations

import pytest

import zarrx
from zarrx.errors import ContainsArrayError, ContainsGroupError

zarr = pytest.importorskip("zarr")

CALLS = {
    "open dtype without shape": lambda m, s: m.open(s, mode="w-", dtype="i4"),
    "open bad shape": lambda m, s: m.open(s, mode="w-", shape="x"),
    "open bad dtype": lambda m, s: m.open(s, mode="w-", shape=(2,), dtype="nope"),
    "open_array without shape": lambda m, s: m.open_array(s, mode="w-", dtype="i4"),
    "open_array bad chunks": lambda m, s: m.open_array(s, mode="w-", shape=(2,), dtype="i4",
                                                       chunks="x"),
    "open_array bad fill value": lambda m, s: m.open_array(s, mode="w-", shape=(2,),
                                                           dtype="i4", fill_value="x"),
    "open_group bad attributes": lambda m, s: m.open_group(s, mode="w-", attributes=5),
}


def _store(kind: str, fmt: int, path: str) -> dict:
    store: dict = {}
    if kind == "array":
        zarrx.create_array(store, name=path, shape=(2,), dtype="i4", zarr_format=fmt)
    else:
        zarrx.create_group(store, path=path, zarr_format=fmt)
    return store


@pytest.mark.parametrize("kind,error", [("array", ContainsArrayError),
                                        ("group", ContainsGroupError)])
@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("name", list(CALLS))
def test_the_node_in_the_way_is_reported_first(name, fmt, kind, error):
    if fmt == 2:        # (zarr-python 3.1 cannot read Zarr v3 documents from a dict)
        with pytest.raises(FileExistsError):
            CALLS[name](zarr, _store(kind, fmt, ""))
    store = _store(kind, fmt, "")
    before = dict(store)
    what = name.split()[0]
    with pytest.raises(error, match=f"^{what}: a node already exists at '/'"):
        CALLS[name](zarrx, store)
    assert store == before


def test_a_node_below_the_root_is_reported_with_its_path():
    store = _store("array", 3, "a/b")
    with pytest.raises(ContainsArrayError, match="^open: a node already exists at 'a/b'"):
        zarrx.open(store, path="a/b", mode="w-", dtype="i4")
    with pytest.raises(ContainsArrayError, match="^open_group: a node already exists"):
        zarrx.open_group(store, path="a/b", mode="w-", attributes=[1])


def test_arguments_are_still_checked_where_nothing_is_in_the_way():
    with pytest.raises(zarrx.ZarrError, match="no shape= was given"):
        zarrx.open({}, mode="w-", dtype="i4")
    with pytest.raises(zarrx.ZarrError, match="needs shape="):
        zarrx.open_array({}, mode="w-", dtype="i4")
