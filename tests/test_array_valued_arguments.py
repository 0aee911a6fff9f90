"""Arguments given as numpy arrays of several items, which have no one truth value: each is a
ZarrError naming the argument, not numpy's "truth value of an array is ambiguous"."""
from __future__ import annotations

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
