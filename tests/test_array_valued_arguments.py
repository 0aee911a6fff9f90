"""Arguments given as numpy arrays (of several items, which have no one truth value, or of
none) and keywords an open function passes on itself: each is a ZarrError naming the
argument, not numpy's "truth value of an array is ambiguous" or Python's own TypeError."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx

TWO = np.array([1, 2])


def test_create_mode():
    store: dict = {}
    with pytest.raises(zarrx.ArgumentError, match=r"mode: expected one of r, r\+, a, w, w-"):
        zarrx.create((2,), store=store, mode=TWO)
    assert store == {}


def test_group_create_group_overwrite():
    g = zarrx.open_group({}, mode="w")
    g.create_group("x").attrs["keep"] = 1
    with pytest.raises(zarrx.ArgumentTypeError, match="create_group: overwrite: expected True "
                                                      "or False, found ndarray"):
        g.create_group("x", overwrite=TWO)
    assert dict(g["x"].attrs) == {"keep": 1}


def test_config_consistency():
    with pytest.raises(zarrx.ArgumentError, match="zarrx.config.consistency: expected one of "):
        zarrx.config.set(consistency=TWO)
    assert zarrx.config.get("consistency") == "strict"


def test_dimension_names_of_a_0d_array():
    with pytest.raises(zarrx.ArgumentTypeError, match="dimension_names: expected a sequence of "
                                                      "str or None"):
        zarrx.create_array({}, shape=(2,), dtype="i1", dimension_names=np.array("x"))


def test_zarr_version_beside_the_source_format_of_a_like_function():
    a = zarrx.create_array({}, shape=(2,), dtype="i1")
    with pytest.raises(zarrx.ArgumentError, match="zarr_format 3 and zarr_version "
                                                  r"array\(\[1, 2\]\) differ"):
        zarrx.full_like(a, zarr_version=TWO)


@pytest.mark.parametrize("fn", ["open", "open_array"])
@pytest.mark.parametrize("overwrite", [True, False])
def test_open_functions_name_overwrite_as_a_keyword_they_do_not_take(fn, overwrite):
    """The mode says whether a node is replaced; ``overwrite=`` used to collide with the
    ``overwrite`` the open function passes on (Python's "got multiple values" TypeError;
    zarr-python 3.1 raises a KeyError)."""
    store: dict = {}
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            f"{fn}() got an unexpected keyword argument 'overwrite' (mode='w' replaces the "
            f"node there)")):
        getattr(zarrx, fn)(store, mode="w", shape=(3,), overwrite=overwrite)
    assert store == {}


def _array() -> zarrx.Array:
    return zarrx.create_array({}, shape=(2,), dtype="i1")


@pytest.mark.parametrize("call", [
    lambda: _array().with_config({"order": TWO}),
    lambda: zarrx.create_array({}, shape=(2,), dtype="i1", config={"order": TWO}),
    lambda: zarrx.open_array(_array().store, write_empty_chunks=TWO),
    lambda: zarrx.open(_array().store, config={"write_empty_chunks": TWO}),
], ids=["with_config-order", "config-order", "open_array-write_empty_chunks",
        "open-config-write_empty_chunks"])
def test_runtime_configuration_values(call):
    with pytest.raises(zarrx.ZarrError, match="order|write_empty_chunks"):
        call()


@pytest.mark.parametrize("key", [[], {}, TWO], ids=["list", "dict", "array"])
def test_config_get_of_a_key_that_cannot_be_one(key):
    assert zarrx.config.get(key, "fallback") == "fallback"
    with pytest.raises(zarrx.errors.ArgumentKeyError):
        zarrx.config.get(key)
