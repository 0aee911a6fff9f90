"""A store path holding ``..`` after a symbolic link names what the system names: ``..`` goes
up from the folder the link points to, as ``open``, the shell and zarr-python resolve it, not
from the link's own folder (``os.path.abspath``). Taken from the text, mode ``"w"`` emptied a
directory the user never named."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, ZipStore
from zarrx.tools.location import resolve

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Windows takes '..' from the text")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """``real/sub``, a link ``other/l`` to it, and an array ``other/t.zarr`` beside the link
    (what ``other/l/../t.zarr`` names when ``..`` is taken from the text)."""
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "other").mkdir()
    os.symlink(os.path.join("..", "real", "sub"), tmp_path / "other" / "l")
    beside = zarrx.create_array(str(tmp_path / "other" / "t.zarr"), shape=(3,), dtype="i4")
    beside[:] = [1, 2, 3]
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _beside_kept(tmp_path) -> None:
    a = zarrx.open_array(str(tmp_path / "other" / "t.zarr"), mode="r")
    np.testing.assert_array_equal(a[:], [1, 2, 3])


def test_local_store_root_goes_up_from_where_the_link_points(tree):
    store = LocalStore(os.path.join("other", "l", "..", "t.zarr"))
    assert store.root == tree / "real" / "t.zarr"
    g = zarrx.open_group(os.path.join("other", "l", "..", "t.zarr"), mode="w")
    g.create_array("x", shape=(2,), dtype="i1")[:] = 5   # before: emptied other/t.zarr
    assert sorted(os.listdir(tree / "real" / "t.zarr")) == ["x", "zarr.json"]
    _beside_kept(tree)


def test_parts_after_the_last_dotdot_are_kept_as_written(tree):
    os.symlink(os.path.join("real", "sub"), tree / "root-link")
    store = LocalStore(os.path.join("other", "..", "root-link"))
    assert store.root == tree / "root-link"             # a root that is a link stays a link
    assert LocalStore(os.path.join("other", "l", ".", "..", ".", "t.zarr", "")).root == \
        tree / "real" / "t.zarr"


def test_zip_store_path_goes_up_from_where_the_link_points(tree):
    with ZipStore(os.path.join("other", "l", "..", "t.zip"), mode="w") as z:
        z.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    assert z.path == tree / "real" / "t.zip"
    assert (tree / "real" / "t.zip").is_file() and not (tree / "other" / "t.zip").exists()


def test_tool_locations_go_up_from_where_the_link_points(tree):
    loc = resolve(os.path.join("other", "l", "..", "t.zarr"), mode="w")
    assert loc.store.root == tree / "real" / "t.zarr"
    zarrx.tools.copy(str(tree / "other" / "t.zarr"), os.path.join("other", "l", "..", "t.zarr"))
    np.testing.assert_array_equal(zarrx.open_array(str(tree / "real" / "t.zarr"))[:], [1, 2, 3])
    _beside_kept(tree)


@pytest.mark.parametrize("path", ["rel.zarr", os.path.join("a", "..", "b.zarr"), "."])
def test_a_relative_path_once_the_current_directory_is_gone_is_a_store_error(tmp_path,
                                                                               monkeypatch, path):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    makers = [(LocalStore, path), (lambda p: ZipStore(p, mode="w"), path + ".zip"),
              (lambda p: zarrx.open_group(p, mode="w"), path)]
    for make, shown in makers:
        with pytest.raises(zarrx.StoreError) as info:
            make(shown)                 # before: FileNotFoundError from os.getcwd
        assert str(info.value).startswith(f"{shown!r}: expected a path the system can "
                                          f"resolve: it is relative and the current "
                                          f"directory is gone")
    assert LocalStore(str(tmp_path / "x" / ".." / "y")).root == tmp_path / "y"


@pytest.mark.parametrize("path", ["a\x00.zip", os.path.join("x", "..", "a\x00.zip"),
                                  os.path.join("x\x00", "..", "a.zip")], ids=repr)
def test_a_path_holding_a_nul_character_is_a_store_error(tmp_path, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(zarrx.StoreError, match="NUL character"):
        ZipStore(path, mode="w")            # before: ValueError from os.path.realpath
    with pytest.raises(zarrx.StoreError, match="NUL character"):
        zarrx.open(path, mode="r")
    with pytest.raises(zarrx.StoreError, match="NUL character"):
        resolve(path.replace(".zip", ".zarr"), mode="r")
    assert os.listdir(tmp_path) == []
