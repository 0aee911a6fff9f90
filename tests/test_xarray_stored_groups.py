"""A variable ``to_zarrx`` adds to a stored group (modes "a", "a-") may not be named like a
group stored in it: its array would replace that group and everything below it. It is refused
with a ContainsGroupError before the store changes, as engine "zarr" refuses it (before, the
sub-group and its data were deleted without a word)."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import ContainsGroupError  # noqa: E402
from zarrx.store import MemoryStore  # noqa: E402


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("mode", ["a", "a-"])
@pytest.mark.parametrize("consolidated", [True, False])
def test_a_new_variable_named_like_a_stored_group_is_refused(fmt, mode, consolidated):
    store = MemoryStore()
    zx.to_zarrx(xr.Dataset({"v": ("x", [1, 2])}), store, zarr_format=fmt,
                consolidated=consolidated)
    zx.to_zarrx(xr.Dataset({"keep": ("y", [7, 8, 9])}), store, group="sub/g", mode="w",
                consolidated=consolidated)
    before = {k: store.get(k) for k in store.list_prefix("")}
    ds = xr.Dataset({"v": ("x", [1, 2]), "new": ("x", [5, 6]), "sub": ("x", [3, 4])})
    with pytest.raises(ContainsGroupError, match=re.escape(
            "to_zarrx: variable 'sub': a group is stored at 'sub', which its array would "
            "replace with everything below it; rename the variable (or use mode='w' to "
            "replace the whole group)")) as info:
        zx.to_zarrx(ds, store, mode=mode)
    assert isinstance(info.value, ValueError)
    assert {k: store.get(k) for k in store.list_prefix("")} == before
    got = xr.open_dataset(store, engine="zarrx", group="sub/g").load()
    assert got["keep"].values.tolist() == [7, 8, 9]


def test_the_same_name_below_the_group_written_is_no_clash():
    store = MemoryStore()
    zx.to_zarrx(xr.Dataset({"v": ("x", [1, 2])}), store)
    zx.to_zarrx(xr.Dataset({"keep": ("y", [7])}), store, group="g/sub", mode="w")
    zx.to_zarrx(xr.Dataset({"sub": ("x", [3, 4])}), store, mode="a")   # at the root
    assert zarrx.open_group(store, mode="r")["g/sub/keep"][...].tolist() == [7]
    assert xr.open_dataset(store, engine="zarrx")["sub"].values.tolist() == [3, 4]
