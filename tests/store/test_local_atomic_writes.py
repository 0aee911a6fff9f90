"""LocalStore writes are atomic: temporary files are never listed, a failed write or replace
keeps the old value, and a write whose temporary file or folder a concurrent delete removes is
written again."""
import errno
import os

import pytest

from zarrx.errors import ConflictError, StoreError
from zarrx.store import ABSENT, LocalStore

from .local_helpers import PythonWrites
from .local_helpers import store  # noqa: F401  (a fixture)


def test_temp_files_are_never_listed(tmp_path, monkeypatch):
    store = PythonWrites(tmp_path / "root")
    store.set("a/k", b"old")
    real_replace = os.replace
    seen = {}

    def spy(src, dst, **kw):
        seen["on-disk"] = sorted(os.listdir(tmp_path / "root" / "a"))
        seen["listed"] = sorted(store.list_prefix(""))
        seen["dir"] = store.list_dir("a")
        real_replace(src, dst, **kw)

    monkeypatch.setattr(os, "replace", spy)
    store.set("a/k", b"new")
    assert len(seen["on-disk"]) == 2
    assert seen["on-disk"][0].startswith(f".k.zarrx-tmp-{os.getpid()}-")
    assert seen["listed"] == ["a/k"] and seen["dir"] == (["k"], [])
    assert os.listdir(tmp_path / "root" / "a") == ["k"]


def test_leftover_temp_file_is_invisible(tmp_path, store):
    store.set("a/k", b"v")
    (tmp_path / "root" / "a" / ".zarrx-tmp-deadbeef").write_bytes(b"torn")
    (tmp_path / "root" / ".zarrx-tmp-dir").mkdir()
    assert sorted(store.list_prefix("")) == ["a/k"]
    assert store.list_dir("") == ([], ["a"]) and store.list_dir("a/") == (["k"], [])


def test_failed_replace_keeps_old_value(tmp_path, monkeypatch):
    store = PythonWrites(tmp_path / "root")
    store.set("a/k", b"old value")

    def boom(src, dst, **kw):
        raise OSError(errno.EIO, "simulated I/O failure")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(StoreError) as info:
        store.set("a/k", b"new value")
    assert str(info.value) == f"{store!r}: cannot write 'a/k': simulated I/O failure"
    assert isinstance(info.value.__cause__, OSError)
    monkeypatch.undo()
    assert store.get("a/k") == b"old value"
    assert os.listdir(tmp_path / "root" / "a") == ["k"]       # the temp file is gone


def test_failed_write_keeps_old_value(tmp_path, monkeypatch):
    store = PythonWrites(tmp_path / "root", fsync=True)
    store.set("a/k", b"old value")

    def full_disk(fd):                                      # fails after the data is written
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(StoreError) as info:
        store.set("a/k", b"new value")
    assert str(info.value) == f"{store!r}: cannot write 'a/k': No space left on device"
    assert store.get("a/k") == b"old value"
    assert os.listdir(tmp_path / "root" / "a") == ["k"]


class _SweptOnce(PythonWrites):
    """The first temporary file staged for a key below ``x/`` is swept right after it is
    written, as a delete of node ``x`` in another process sweeps every temporary file below it
    (``delete_prefix``: writers killed or not)."""

    swept = False

    def _stage(self, d, name, data, after=0):
        tmp, fd = super()._stage(d, name, data, after)
        if not self.swept:
            self.swept = True
            LocalStore(self.root).sweep("x/", older_than=None)
        return tmp, fd


@pytest.mark.parametrize("how", ["set", "create", "replace", "attribute"])
def test_a_write_whose_temporary_file_a_delete_sweeps_is_written_after_it(tmp_path, how):
    """Writes racing a delete of their node (which sweeps the node's temporary files) are
    written after it, or (a conditional replace) see the conflict and re-read: they never fail
    with "No such file or directory" (before: a StoreError, 1-2 times in each trial of 4
    processes x 150 metadata changes of one node, deletes among them)."""
    store = _SweptOnce(tmp_path / "root")
    if how == "attribute":
        import zarrx
        zarrx.create_array(LocalStore(store.root), name="x", shape=(4,), dtype="i4")
        zarrx.open_array(store, path="x", mode="r+").attrs["a"] = 1
        assert dict(zarrx.open_array(LocalStore(store.root), path="x").attrs) == {"a": 1}
        return
    if how == "replace":
        gen = LocalStore(store.root).set_if("x/k", b"old", ABSENT)
        with pytest.raises(ConflictError):          # as if the key had gone with its node
            store.set_if("x/k", b"new", gen)
        store.set_if("x/k", b"new", store.generation("x/k"))
    elif how == "create":
        store.set_if("x/k", b"new", ABSENT)
    else:
        store.set("x/k", b"new")
    assert store.get("x/k") == b"new"
    assert store.sweep("x/", older_than=None) == []


@pytest.mark.parametrize("how", ["set", "create"])
def test_a_write_whose_folder_vanishes_while_it_is_made_makes_it_again(tmp_path, monkeypatch, how):
    """A delete in another process removes a folder it left empty (``c/0`` after the last chunk
    of a row went all fill) while a write is walking down to it: making the next folder in the
    removed one fails with ENOENT. The write walks again (before: StoreError "cannot write
    'c/0/1': No such file or directory")."""
    from zarrx.store.localfs import Tree
    store = PythonWrites(tmp_path / "root")
    walk, pruned = Tree.dir, []

    def dir_pruned_once(tree, parts, create=False):
        if create and not pruned:
            pruned.append(list(parts))
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", parts[-1])
        return walk(tree, parts, create)

    monkeypatch.setattr(Tree, "dir", dir_pruned_once)
    if how == "set":
        store.set("c/0/1", b"new")
    else:
        store.set_if("c/0/1", b"new", ABSENT)
    assert pruned == [["c", "0"]]
    assert store.get("c/0/1") == b"new"
