"""A path inside a zip archive (``data.zip/group/array``) is no directory: opening one refuses
it and names the archive and the node's path in it, whatever the mode."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError


@pytest.mark.parametrize("mode", [None, "r", "r+", "a", "w", "w-"])
def test_a_path_inside_an_archive_names_the_archive_and_the_path_in_it(tmp_path, mode):
    archive = tmp_path / "a b.zip"
    g = zarrx.open_group(archive, mode="w")
    g.create_array("g/arr", shape=(3,), dtype="i1")[:] = 1
    g.store.close()
    before = archive.read_bytes()
    kw = {} if mode is None else {"mode": mode}
    with pytest.raises(StoreError, match=re.escape(
            f"is inside the zip archive {str(archive)!r}: open the archive and the node in it, "
            f"as zarrx.open({str(archive)!r}, path='g/arr')")):
        zarrx.open(f"{archive}/g/arr", **kw)
    assert archive.read_bytes() == before
    np.testing.assert_array_equal(zarrx.open(archive, mode="r", path="g/arr")[:], [1, 1, 1])


def test_a_directory_named_like_an_archive_is_a_directory(tmp_path):
    folder = tmp_path / "looks.zip"
    folder.mkdir()
    g = zarrx.open_group(folder / "data.zarr", mode="w")
    g.create_array("arr", shape=(2,), dtype="i1")[:] = 2
    np.testing.assert_array_equal(zarrx.open(folder / "data.zarr", mode="r")["arr"][:], [2, 2])


@pytest.mark.parametrize("mode", [None, "r", "r+", "a", "w"])
def test_a_directory_store_named_like_an_archive_opens_as_a_directory(tmp_path, mode):
    """zarr-python opens every path as a directory, ``data.zip`` too: what it wrote there is a
    directory store, and zarrx opens it as one (before: refused as "a directory, not a zip
    archive")."""
    zarr = pytest.importorskip("zarr")
    folder = tmp_path / "data.zip"
    zarr.open_group(str(folder), mode="w").create_array("x", shape=(3,), dtype="i4")[:] = 5
    assert folder.is_dir()
    g = zarrx.open_group(folder, **({} if mode is None else {"mode": mode}))
    if mode == "w":
        assert list(g.keys()) == []
        g.create_array("y", shape=(2,), dtype="i1")[:] = 7
        np.testing.assert_array_equal(zarr.open_group(str(folder), mode="r")["y"][:], [7, 7])
    else:
        np.testing.assert_array_equal(g["x"][:], [5, 5, 5])
    assert folder.is_dir()
