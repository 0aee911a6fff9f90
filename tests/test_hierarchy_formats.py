"""A hierarchy holds one Zarr format: a node whose format differs from its parent group's is
refused (zarr-python lists only children of its own format), before anything is written."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.store import MemoryStore


def keys(store: MemoryStore) -> list[str]:
    return sorted(store.list_prefix(""))


def message(fmt: int, path: str, parent_fmt: int, parent: str, store: MemoryStore,
            what: str = "create_array") -> str:
    return (f"{what}: cannot create a Zarr v{fmt} node at {path!r} inside the Zarr "
            f"v{parent_fmt} group {parent!r} in {store!r}: a hierarchy holds one Zarr format "
            f"(readers do not list children of another format); use zarr_format={parent_fmt} "
            f"or a separate store")


@pytest.mark.parametrize("parent_fmt", [3, 2])
def test_group_create_array_of_the_other_format(parent_fmt) -> None:
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=parent_fmt)
    g.create_group("sub")
    before = keys(store)
    fmt = 5 - parent_fmt
    with pytest.raises(MetadataError, match=re.escape(message(fmt, "sub/x", parent_fmt, "sub",
                                                              store))):
        g["sub"].create_array("x", shape=(4,), dtype="i4", zarr_format=fmt)
    assert keys(store) == before


def test_create_array_below_a_group_of_the_other_format_through_missing_groups() -> None:
    store = MemoryStore()
    zarrx.open_group(store, mode="w")                   # v3 root
    with pytest.raises(MetadataError, match=re.escape(message(2, "a/b/x", 3, "/", store))):
        zarrx.create_array(store, name="a/b/x", shape=(4,), dtype="i4", zarr_format=2)
    assert keys(store) == ["zarr.json"]


def test_create_group_of_the_other_format() -> None:
    store = MemoryStore()
    zarrx.open_group(store, mode="w", zarr_format=2)
    with pytest.raises(MetadataError, match=re.escape(message(3, "g", 2, "/", store,
                                                              "open_group"))):
        zarrx.open_group(store, path="g", mode="a", zarr_format=3)
    assert keys(store) == [".zgroup"]


def test_overwrite_with_the_other_format_keeps_the_old_node() -> None:
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w")
    a = g.create_array("x", shape=(4,), dtype="i4", chunks=(4,))
    a[:] = [1, 2, 3, 4]
    before = {k: store.get(k) for k in keys(store)}
    with pytest.raises(MetadataError, match=re.escape(message(2, "x", 3, "/", store))):
        zarrx.create_array(store, name="x", shape=(4,), dtype="i4", zarr_format=2,
                           overwrite=True)
    assert {k: store.get(k) for k in keys(store)} == before


@pytest.mark.parametrize("fmt", [2, 3])
def test_same_format_nesting_makes_groups_of_that_format(tmp_path, fmt) -> None:
    path = str(tmp_path / "h.zarr")
    g = zarrx.open_group(path, mode="w", zarr_format=fmt)
    g.create_array("a/b/x", shape=(3,), dtype="i4", chunks=(2,))[:] = [1, 2, 3]
    assert g["a/b"].zarr_format == fmt and g["a/b/x"].zarr_format == fmt
    zarr = pytest.importorskip("zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_group(path, mode="r")
        assert sorted(k for k, _ in theirs.members(max_depth=None)) == ["a", "a/b", "a/b/x"]
        np.testing.assert_array_equal(theirs["a/b/x"][:], [1, 2, 3])


@pytest.mark.parametrize("how", ["create_array", "open_array-w", "group-create_array",
                                 "group-create_group"])
@pytest.mark.parametrize("where", ["", "sub"], ids=["root", "child"])
def test_overwrite_clears_objects_left_without_a_node_document(tmp_path, how, where):
    """zarr-python clears the path with overwrite=True / mode="w" whether or not a node
    document is there; chunks left by an interrupted write or a deleted document must not
    reappear in the new node."""
    root = str(tmp_path / "d")
    path = f"{where}/x" if where else "x"
    g = zarrx.open_group(root, mode="w")
    g.create_array(path, shape=(8,), chunks=(4,), dtype="f4")[...] = 7
    (tmp_path / "d" / path / "zarr.json").unlink()          # the document is gone, chunks stay
    if how == "create_array":
        new = zarrx.create_array(root, name=path, shape=(8,), chunks=(4,), dtype="f4",
                                 overwrite=True)
    elif how == "open_array-w":
        new = zarrx.open_array(root, path=path, mode="w", shape=(8,), chunks=(4,), dtype="f4")
    elif how == "group-create_array":
        new = g.create_array(path, shape=(8,), chunks=(4,), dtype="f4", overwrite=True)
    else:
        g.create_group(path, overwrite=True)
        assert not any("/c/" in k for k in map(str, (tmp_path / "d").rglob("*")))
        return
    assert new[...].tolist() == [0.0] * 8


@pytest.mark.parametrize("parent_fmt", [3, 2])
def test_a_group_lists_and_consolidates_only_children_of_its_format(tmp_path, parent_fmt):
    """A node of the other format that another writer put below a group (here: an array
    created by its own path) is no member of it, as in zarr-python: not listed, not found by
    name, and left out of consolidated metadata (consolidating a v3 group holding a v2 array
    raised "zarr.json zarr_format: expected an array of Zarr format 3 ..., found 2")."""
    zarr = pytest.importorskip("zarr")
    root = tmp_path / "h.zarr"
    g = zarrx.open_group(str(root), mode="w", zarr_format=parent_fmt)
    g.create_array("same", shape=(2,), dtype="i4")
    g.create_group("sub").create_array("x", shape=(1,), dtype="u1")
    other = 5 - parent_fmt
    for path in ("other", "sub/other"):
        zarrx.create_array(str(root / path), shape=(2,), dtype="i4", zarr_format=other)
    zarrx.consolidate_metadata(str(root))
    want = ["same", "sub", "sub/x"]
    for opened in (zarrx.open_group(str(root), mode="r", use_consolidated=False),
                   zarrx.open_consolidated(str(root), mode="r")):
        assert [k for k, _ in opened.members(max_depth=None)] == want
        assert "other" not in opened and "sub/other" not in opened
        assert opened.get("other") is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_consolidated(str(root), zarr_format=parent_fmt)
        assert sorted(k for k, _ in theirs.members(max_depth=None)) == want
    assert zarrx.open_array(str(root / "other"), mode="r").metadata.zarr_format == other


@pytest.mark.parametrize("parent_fmt", [2, 3])
@pytest.mark.parametrize("how", ["create_group", "open_group-a", "open_group-w", "group",
                                 "open-a", "create_array", "create", "open_array-a",
                                 "save_array"])
def test_a_node_created_without_zarr_format_takes_its_hierarchys_format(tmp_path, how,
                                                                         parent_fmt):
    # zarr-python makes Zarr v3 there (a node its v2 parent does not list); zarrx refused it
    root = str(tmp_path / "h.zarr")
    zarrx.open_group(root, mode="w", zarr_format=parent_fmt).create_group("sub")
    path = "sub/a/new"                              # through a missing group
    kw = {"shape": (2,), "dtype": "i4"}
    make = {
        "create_group": lambda: zarrx.create_group(root, path=path),
        "open_group-a": lambda: zarrx.open_group(root, path=path, mode="a"),
        "open_group-w": lambda: zarrx.open_group(root, path=path, mode="w"),
        "group": lambda: zarrx.group(root, path=path),
        "open-a": lambda: zarrx.open(root, path=path, mode="a"),
        "create_array": lambda: zarrx.create_array(root, name=path, **kw),
        "create": lambda: zarrx.create(store=root, path=path, **kw),
        "open_array-a": lambda: zarrx.open_array(root, path=path, mode="a", **kw),
        "save_array": lambda: zarrx.save_array(root, np.arange(2), path=path),
    }[how]
    make()
    node = zarrx.open(root, path=path, mode="r")
    assert node.metadata.zarr_format == parent_fmt
    assert zarrx.open_group(root, path="sub/a", mode="r").metadata.zarr_format == parent_fmt
    assert [k for k, _ in zarrx.open_group(root, mode="r").members(max_depth=None)] == \
        ["sub", "sub/a", "sub/a/new"]


def test_a_node_created_without_zarr_format_and_no_group_above_is_zarr_v3(tmp_path):
    root = str(tmp_path / "h.zarr")
    assert zarrx.create_group(root, path="g").metadata.zarr_format == 3
    assert zarrx.create_array(str(tmp_path / "a.zarr"), shape=(1,), dtype="i4"
                              ).metadata.zarr_format == 3
    zarrx.open_group(str(tmp_path / "v2.zarr"), mode="w", zarr_format=2)
    # the root replaced by mode "w" has nothing above it
    assert zarrx.open_group(str(tmp_path / "v2.zarr"), mode="w").metadata.zarr_format == 3
