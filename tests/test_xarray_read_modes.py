"""The ``mode`` a read of engine "zarrx" takes: ``r``, ``r+`` and ``a`` read the group as
stored; ``w`` and ``w-`` are refused, and the store is left as it was (engine "zarr" takes
``w``: it empties the group, the whole hierarchy below it included, and reads it empty)."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import ArgumentError  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

OPENERS = {"open_dataset": xr.open_dataset, "open_datatree": xr.open_datatree,
           "open_groups": xr.open_groups}


def _tree():
    return xr.DataTree.from_dict({"/": xr.Dataset({"v": ("x", np.arange(3))}),
                                  "/a": xr.Dataset({"w": ("y", [1.5, 2.5])})})


def _listing(path):
    return sorted(os.path.relpath(os.path.join(d, f), path)
                  for d, _, files in os.walk(path) for f in files)


@pytest.mark.parametrize("group", [None, "a"])
@pytest.mark.parametrize("mode", ["w", "w-"])
@pytest.mark.parametrize("opener", list(OPENERS))
def test_modes_that_replace_or_create_are_refused(tmp_path, opener, mode, group):
    # mode "w" emptied the whole store, also with group="a" (the root was opened with it)
    path = tmp_path / "t.zarr"
    zx.to_zarrx(_tree(), path)
    before = _listing(path)
    msg = f"engine 'zarrx': mode: expected 'r', 'r+' or 'a', found {mode!r}"
    with pytest.raises(ArgumentError, match=re.escape(msg)):
        OPENERS[opener](path, engine=ZarrxBackendEntrypoint, mode=mode, group=group)
    assert _listing(path) == before
    xr.testing.assert_identical(
        xr.open_datatree(path, engine=ZarrxBackendEntrypoint).load(), _tree())


@pytest.mark.parametrize("mode", ["r", "r+", "a"])
def test_modes_that_keep_the_group_read_it(tmp_path, mode):
    path = tmp_path / "t.zarr"
    zx.to_zarrx(_tree(), path)
    got = xr.open_dataset(path, engine=ZarrxBackendEntrypoint, mode=mode, group="a").load()
    xr.testing.assert_identical(got, _tree()["a"].to_dataset())


@pytest.mark.parametrize("opener", list(OPENERS))
def test_drop_variables_that_is_no_name_is_an_argument_type_error(tmp_path, opener):
    # (xarray's bare TypeError, "'int' object is not iterable", before)
    from zarrx.errors import ArgumentTypeError
    zx.to_zarrx(xr.Dataset({"v": ("x", [1, 2])}), tmp_path / "t.zarr")
    with pytest.raises(ArgumentTypeError, match=re.escape(
            "engine 'zarrx': drop_variables: expected a variable name or an iterable of "
            "names, found int 1")):
        OPENERS[opener](tmp_path / "t.zarr", engine=ZarrxBackendEntrypoint, drop_variables=1)
    got = xr.open_dataset(tmp_path / "t.zarr", engine=ZarrxBackendEntrypoint,
                          drop_variables=[1, "v"])
    assert list(got.variables) == []
