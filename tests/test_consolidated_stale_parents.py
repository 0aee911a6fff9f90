"""Consolidated metadata zarr-python wrote and then left stale (it keeps none in step) stays
openable after zarrx writes below a group it does not list: zarrx lists that group too, since
a document listing a node without its parent is one zarr-python cannot open at all."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import zarr

import zarrx


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # zarr-python's consolidated-metadata warnings
        yield


def _stale(path: str, fmt: int, at: str | None) -> None:
    """zarr-python: groups ``a`` and ``a/s`` (consolidated at ``at``), then ``a/s/b`` and
    ``a/s/b/c``, which the consolidated metadata does not list."""
    st = zarr.storage.LocalStore(path)
    g = zarr.open_group(st, mode="w", zarr_format=fmt)
    g.create_group("a").create_group("s")
    zarr.consolidate_metadata(st, path=at)
    zarr.open_group(st, mode="r+", use_consolidated=False).create_group("a/s/b/c")


def _members(path: str, at: str) -> list[str]:
    """The members zarr-python lists from the consolidated metadata of the group at ``at``."""
    st = zarr.storage.LocalStore(path, read_only=True)
    return sorted(n for n, _ in zarr.open_group(st, mode="r", path=at,
                                                 use_consolidated=True).members(max_depth=None))


WRITES = {
    "create_array": lambda g: g.create_array("a/s/b/c/x", shape=(2,), dtype="i4"),
    "create_group": lambda g: g.create_group("a/s/b/c/x"),
    "attributes": lambda g: g["a/s/b/c"].attrs.update({"k": 1}),
    "setitem": lambda g: g.__setitem__("a/s/b/c/x", np.arange(2)),
    "move": lambda g: g.move("a/s/b/c", "a/s/b/x"),
}


@pytest.mark.parametrize("write", WRITES.values(), ids=list(WRITES))
@pytest.mark.parametrize("at", [None, "a"], ids=["root", "below"])
@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_a_write_below_a_group_stale_consolidated_metadata_lacks_lists_the_group(
        tmp_path, fmt, at, write):
    path = str(tmp_path / "h.zarr")
    _stale(path, fmt, at)
    write(zarrx.open_group(path, mode="r+"))
    below = "" if at is None else "a"
    listed = zarrx.open_group(path, mode="r", path=below, use_consolidated=False)
    want = sorted(n for n, _ in listed.members(max_depth=None))
    assert _members(path, below) == want
    assert sorted(n for n, _ in zarrx.open_consolidated(path, mode="r", path=below)
                  .members(max_depth=None)) == want


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_a_write_below_a_group_stale_consolidated_metadata_lists_as_an_array(tmp_path, fmt):
    """zarr-python replaced the array ``a`` by a group after consolidating."""
    path = str(tmp_path / "h.zarr")
    st = zarr.storage.LocalStore(path)
    zarr.open_group(st, mode="w", zarr_format=fmt).create_array("a", shape=(2,), dtype="i4")
    zarr.consolidate_metadata(st)
    zarr.open_group(st, mode="r+", use_consolidated=False).create_group("a", overwrite=True)
    zarrx.open_group(path, mode="r+").create_array("a/x", shape=(2,), dtype="i4")
    assert _members(path, "") == ["a", "a/x"]
    theirs = zarr.open_group(zarr.storage.LocalStore(path, read_only=True), mode="r")
    assert isinstance(theirs["a"], zarr.Group) and theirs["a/x"].shape == (2,)


@pytest.mark.parametrize("fmt", [2, 3], ids=["v2", "v3"])
def test_an_array_written_where_stale_consolidated_metadata_lists_a_group_drops_its_children(
        tmp_path, fmt):
    """zarr-python replaced the group ``a`` (with ``a/b``) by an array after consolidating:
    the array's entry comes without the stale entries below it."""
    path = str(tmp_path / "h.zarr")
    st = zarr.storage.LocalStore(path)
    zarr.open_group(st, mode="w", zarr_format=fmt).create_group("a").create_group("b")
    zarr.consolidate_metadata(st)
    zarr.open_group(st, mode="r+", use_consolidated=False).create_array(
        "a", shape=(2,), dtype="i4", overwrite=True)
    zarrx.open_group(path, mode="r+", use_consolidated=False)["a"].attrs["k"] = 1
    assert _members(path, "") == ["a"]
    theirs = zarr.open_group(zarr.storage.LocalStore(path, read_only=True), mode="r")
    assert theirs["a"].attrs["k"] == 1
