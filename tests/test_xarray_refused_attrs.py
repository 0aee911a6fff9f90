"""Dataset and variable attributes ``to_zarrx`` cannot store are refused before the store
changes: text with a lone surrogate (a metadata document is UTF-8), and dataset attributes
that make the group's document larger than a reader takes (``max_metadata_bytes``). Before,
both were found only when the group's attributes were written, after mode "w" had replaced
the stored group: its variables were lost."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import ArgumentError, MetadataError  # noqa: E402
from zarrx.store import MemoryStore  # noqa: E402

SURROGATE = ("expected text that UTF-8 can encode (no lone surrogates), found '\\ud800'")


def stored_dataset(fmt):
    store = MemoryStore()
    zx.to_zarrx(xr.Dataset({"v": ("x", [1, 2]), "w": ("x", [3.0, 4.0])}, attrs={"t": "old"}),
                store, zarr_format=fmt)
    return store, {k: store.get(k) for k in store.list_prefix("")}


#: where the attribute goes -> (dataset, the start of the refusal)
CASES = {
    "dataset-value": (lambda a: xr.Dataset({"v": ("x", [5, 6])}, attrs=a),
                      "to_zarrx: the dataset attribute 'a': "),
    "dataset-nested": (lambda a: xr.Dataset({"v": ("x", [5, 6])}, attrs={"a": {"k": [a["a"]]}}),
                       "to_zarrx: the dataset attribute 'a': "),
    "variable-stored": (lambda a: xr.Dataset({"v": ("x", [5, 6], a)}),
                        "to_zarrx: variable 'v' attribute 'a': "),
    "variable-new": (lambda a: xr.Dataset({"v": ("x", [5, 6]), "n": ("x", [0, 1], a)}),
                     "to_zarrx: variable 'n' attribute 'a': "),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("mode", ["w", "a"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_lone_surrogate_in_an_attribute_is_refused_before_the_store_changes(fmt, mode, case):
    make, where = CASES[case]
    store, before = stored_dataset(fmt)
    with pytest.raises(ArgumentError, match=re.escape(where + SURROGATE)):
        zx.to_zarrx(make({"a": "\ud800"}), store, mode=mode, zarr_format=fmt)
    assert {k: store.get(k) for k in store.list_prefix("")} == before


def test_a_lone_surrogate_in_an_attribute_name_is_refused():
    store, before = stored_dataset(3)
    ds = xr.Dataset({"v": ("x", [5, 6])}, attrs={"\udc00": 1})
    with pytest.raises(ArgumentError, match=re.escape(
            "to_zarrx: the dataset attribute '\\udc00': expected text that UTF-8 can encode "
            "(no lone surrogates), found '\\udc00'")):
        zx.to_zarrx(ds, store, mode="w")
    assert {k: store.get(k) for k in store.list_prefix("")} == before


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("mode", ["w", "a"])
def test_dataset_attributes_past_the_document_limit_are_refused_before_the_store_changes(
        fmt, mode):
    store, before = stored_dataset(fmt)
    ds = xr.Dataset({"v": ("x", [5, 6])}, attrs={"a": "x" * 20_000})
    with zarrx.config.set(max_metadata_bytes=10_000):
        with pytest.raises(MetadataError, match=r"^(zarr\.json|\.zattrs): expected a "
                           r"document of at most 10000 bytes, found 2\d{4} bytes"):
            zx.to_zarrx(ds, store, mode=mode, zarr_format=fmt)
    assert {k: store.get(k) for k in store.list_prefix("")} == before
    got = xr.open_dataset(store, engine="zarrx").load()
    assert got["w"].values.tolist() == [3.0, 4.0] and got.attrs == {"t": "old"}
