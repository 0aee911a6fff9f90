"""What another tool put below a ``LocalStore`` root that no key can name: files whose names
break the key rules (bytes that are not UTF-8, control characters, backslashes), symbolic
links, named pipes. A delete of the node or folder holding them removes them with the rest, as
``shutil.rmtree`` (and zarr-python) would (a link itself, never what it points to), never
stopping half way with the node's metadata already gone, nor leaving a node "deleted" whose
folder still holds them."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import ZarrUserWarning
from zarrx.store import LocalStore

FOREIGN = [b"\xfe", b"a\\b", b"x\ny", b"x\x7f"]


def _files(root) -> list[bytes]:
    top = os.fsencode(root)
    return sorted(os.path.relpath(os.path.join(d, f), top)
                  for d, _, fs in os.walk(top) for f in fs)


def _tree(root):
    """A group with an array ``a`` (two chunks) and an array ``keep`` beside it."""
    g = zarrx.open_group(str(root), mode="w")
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    g.create_array("keep", shape=(2,), chunks=(2,), dtype="i1")[:] = 7
    return g


def _foreign(root, *parts: bytes) -> None:
    path = os.path.join(os.fsencode(root), *parts)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"x")


@pytest.mark.parametrize("name", FOREIGN, ids=repr)
def test_deleting_a_node_removes_files_no_key_can_name(tmp_path, name):
    g = _tree(tmp_path)
    _foreign(tmp_path, b"a", b"c", name)
    del g["a"]      # before: StoreError naming the file, a/zarr.json and a/c/0, a/c/1 gone
    assert _files(tmp_path) == [b"keep/c/0", b"keep/zarr.json", b"zarr.json"]
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path), path="keep")[:], 7)


@pytest.mark.parametrize("name", FOREIGN, ids=repr)
def test_overwriting_an_array_removes_files_no_key_can_name(tmp_path, name):
    g = _tree(tmp_path)
    _foreign(tmp_path, b"a", b"c", name)
    a = g.create_array("a", shape=(3,), chunks=(3,), dtype="i2", overwrite=True)
    a[:] = 5                    # before: StoreError, and the old array was half deleted
    assert _files(tmp_path) == [b"a/c/0", b"a/zarr.json", b"keep/c/0", b"keep/zarr.json",
                                b"zarr.json"]


def test_mode_w_empties_a_root_holding_folders_no_key_can_name(tmp_path):
    _tree(tmp_path)
    _foreign(tmp_path, b"bad\xff", b"zarr.json")
    _foreign(tmp_path, b"keep", b"nl\n", b"zarr.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ZarrUserWarning)   # the children it skips
        g = zarrx.open_group(str(tmp_path), mode="w")   # before: StoreError, nothing replaced
    assert _files(tmp_path) == [b"zarr.json"] and list(g.members()) == []
    assert sorted(os.listdir(tmp_path)) == ["zarr.json"]      # no folder left behind


def test_delete_prefix_removes_them_and_keys_still_refuse_them(tmp_path):
    store = LocalStore(str(tmp_path))
    store.set("a/c/0", b"1")
    _foreign(tmp_path, b"a", b"c", b"\xfe")
    _foreign(tmp_path, b"b", b"\xfe")
    assert sorted(store.list_prefix("a/")) == ["a/c/0", "a/c/\udcfe"]
    with pytest.raises(zarrx.StoreError, match="not encodable as UTF-8"):
        store.delete("a/c/\udcfe")          # a key still may not name it
    store.delete_prefix("a/")
    assert _files(tmp_path) == [b"b/\xfe"] and not (tmp_path / "a").exists()
    with pytest.raises(zarrx.ReadOnlyError):
        store.with_read_only(True).delete_prefix("b/")
    assert _files(tmp_path) == [b"b/\xfe"]


def _outside(tmp_path):
    """A folder and a file outside the store, to point links at."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret").write_bytes(b"secret")
    return out


def test_deleting_a_node_removes_links_and_pipes_below_it_not_their_targets(tmp_path):
    root = tmp_path / "root"
    out = _outside(tmp_path)
    g = _tree(root)
    os.symlink(out, root / "a" / "c" / "to-folder")
    os.symlink(out / "secret", root / "a" / "c" / "to-file")
    os.symlink(root / "missing", root / "a" / "dangling")
    os.mkfifo(root / "a" / "c" / "pipe")
    del g["a"]              # before: the links and the pipe kept, and the folders holding them
    assert _files(root) == [b"keep/c/0", b"keep/zarr.json", b"zarr.json"]
    assert sorted(os.listdir(root)) == ["keep", "zarr.json"]
    assert sorted(os.listdir(out)) == ["secret"] and (out / "secret").read_bytes() == b"secret"


def test_mode_w_removes_links_below_the_root_not_their_targets(tmp_path):
    root = tmp_path / "root"
    out = _outside(tmp_path)
    _tree(root)
    os.symlink(out, root / "linked")
    os.symlink(out / "secret", root / "keep" / "c" / "1")
    g = zarrx.open_group(str(root), mode="w")
    assert sorted(os.listdir(root)) == ["zarr.json"] and list(g.members()) == []
    g.create_array("linked", shape=(2,), dtype="i1")[:] = 4   # before: StoreError, a link there
    assert sorted(os.listdir(out)) == ["secret"] and (out / "secret").read_bytes() == b"secret"


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("consolidated", [True, False])
def test_a_child_zarr_python_named_with_a_control_character_is_skipped_either_way(
        tmp_path, zarr_format, consolidated):
    zarr = pytest.importorskip("zarr")
    g = zarr.open_group(str(tmp_path), mode="w", zarr_format=zarr_format)
    for name in ("ok", "tab\tx"):
        g.create_array(name, shape=(3,), chunks=(2,), dtype="i2")[:] = np.arange(3)
    zarr.consolidate_metadata(str(tmp_path))
    ours = zarrx.open_group(str(tmp_path), mode="r", use_consolidated=consolidated)
    with pytest.warns(ZarrUserWarning, match=r"skipping the child 'tab\\tx': found the control "
                                             r"character '\\t'"):
        members = ours.members()     # before, from consolidated metadata: listed, unreadable
    assert [name for name, _ in members] == ["ok"]
    np.testing.assert_array_equal(members[0][1][:], np.arange(3))
