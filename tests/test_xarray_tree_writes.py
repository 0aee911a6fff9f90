"""A DataTree written by ``to_zarrx`` is checked and encoded node by node before the store
changes: a node that is refused leaves the whole stored tree as it was, in every mode (before,
the nodes above it were written first, and in mode "w" the stored tree was already replaced)."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
if not hasattr(xr, "DataTree"):
    pytest.skip("this xarray has no DataTree", allow_module_level=True)

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import ArgumentError, ArgumentTypeError  # noqa: E402
from zarrx.store import MemoryStore  # noqa: E402


def stored(store):
    return {k: store.get(k) for k in store.list_prefix("")}


def tree_with(child, shift=0.0):
    return xr.DataTree.from_dict({"/": xr.Dataset({"v": ("x", np.arange(3.0) + shift)},
                                                  attrs={"r": 1}),
                                  "/a": xr.Dataset({"w": ("y", np.arange(2))}),
                                  "/a/b": child})


#: a node the write refuses, with the error and its message
REFUSED = {
    "reserved-name": (xr.Dataset({"__zarr_x": ("z", [1, 2])}), ArgumentError,
                      "to_zarrx: variable '__zarr_x': expected a Zarr v3 node name"),
    "attribute": (xr.Dataset({"d": ("z", [1, 2], {"bad": object()})}), ArgumentTypeError,
                  "to_zarrx: variable 'd'"),
    "value-that-does-not-fit": (xr.Dataset({"d": ("z", [1, 70000])}), ArgumentError,
                                "to_zarrx: variable 'd': "),
}


@pytest.mark.parametrize("mode", ["w", "w-", "a"])
@pytest.mark.parametrize("case", list(REFUSED))
def test_a_refused_node_leaves_the_stored_tree_as_it_was(mode, case):
    child, error, msg = REFUSED[case]
    encoding = {"/a/b": {"d": {"dtype": "int16"}}} if case == "value-that-does-not-fit" else None
    store = MemoryStore()
    if mode != "w-":    # a tree stored already: replaced (w) or added to (a)
        old = tree_with(xr.Dataset({"c": ("z", [5.0, 6.0])}))
        zx.to_zarrx(old, store)
    before = stored(store)
    new = tree_with(child, shift=10.0)     # (the root's values: replaced first, before)
    with pytest.raises(error, match=re.escape(msg)):
        zx.to_zarrx(new, store, mode=mode, encoding=encoding)
    assert stored(store) == before
    if mode != "w-":
        got = xr.open_datatree(store, engine="zarrx").load()
        xr.testing.assert_identical(got, old)


def test_a_tree_replacing_one_of_the_other_format_is_written_in_its_own():
    # the nodes are planned before the stored (Zarr v2) tree is replaced: they take the new
    # root's format, not the one stored
    store = MemoryStore()
    old = tree_with(xr.Dataset({"c": ("z", [5.0, 6.0])}))
    zx.to_zarrx(old, store, zarr_format=2)
    new = tree_with(xr.Dataset({"c": ("z", [7.0, 8.0, 9.0])}))
    zx.to_zarrx(new, store, mode="w", zarr_format=3)
    root = zarrx.open_group(store, mode="r")
    assert root.zarr_format == 3 and root["a/b"].zarr_format == 3
    xr.testing.assert_identical(xr.open_datatree(store, engine="zarrx").load(), new)


#: a node name a Zarr group cannot take -> (the Zarr formats that refuse it, the refusal)
NODE_NAMES = {
    "__zarr_g": ((3,), "to_zarrx: cannot create '__zarr_g': expected Zarr v3 node names not "
                       "made only of periods and not starting with '__zarr'"),
    "...": ((3,), "to_zarrx: cannot create '...': expected Zarr v3 node names"),
    "zarr.json": ((2, 3), "to_zarrx: group: expected a node path without metadata document "
                          "names, found 'zarr.json' in 'zarr.json'"),
    ".zgroup": ((2, 3), "to_zarrx: group: expected a node path without metadata document "
                        "names, found '.zgroup' in '.zgroup'"),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("mode", ["w", "w-", "a"])
@pytest.mark.parametrize("name", list(NODE_NAMES))
def test_a_node_name_no_group_can_take_is_refused_before_the_root_is_written(fmt, mode, name):
    refused, msg = NODE_NAMES[name]
    store = MemoryStore()
    root = xr.Dataset({"v": ("x", np.arange(3.0))})
    if mode != "w-":
        zx.to_zarrx(root, store, zarr_format=fmt)
    before = stored(store)
    tree = xr.DataTree.from_dict({"/": root + 1, f"/{name}": xr.Dataset({"w": ("y", [1])})})
    if fmt not in refused:
        zx.to_zarrx(tree, store, mode=mode, zarr_format=fmt)
        xr.testing.assert_identical(xr.open_datatree(store, engine="zarrx").load(), tree)
        return
    with pytest.raises(ArgumentError, match=re.escape(msg)):
        zx.to_zarrx(tree, store, mode=mode, zarr_format=fmt)
    assert stored(store) == before
