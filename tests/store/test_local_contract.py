"""LocalStore: the store contract (plain, with fsync, and with Python's own writes), and how it
behaves on the file system: umask, the root made lazily, modes, OS errors and pickling."""
import os
import pickle

import pytest
from store_contract import StoreContract

from zarrx.errors import ReadOnlyError, StoreError
from zarrx.store import ByteRange, LocalStore

from .local_helpers import PythonWrites
from .local_helpers import store  # noqa: F401  (a fixture)


class TestLocalStore(StoreContract):
    snapshot_pins_version = True

    def make_store(self, tmp_path):
        return LocalStore(tmp_path / "root")

    def reopen_read_only(self, store, tmp_path):
        return LocalStore(tmp_path / "root", read_only=True)


class TestLocalStoreFsync(TestLocalStore):
    large_size = 2**20

    def make_store(self, tmp_path):
        return LocalStore(tmp_path / "root", fsync=True)


class TestLocalStorePythonWrites(TestLocalStore):
    def make_store(self, tmp_path):
        return PythonWrites(tmp_path / "root")


def test_fsync_flushes_file_and_directory(tmp_path, monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    s = PythonWrites(tmp_path / "root", fsync=True)
    s.set("a/b/c", b"durable")
    assert s.get("a/b/c") == b"durable" and len(calls) == 2
    calls.clear()
    PythonWrites(tmp_path / "root").set("a/b/d", b"fast")
    assert calls == []


def test_files_respect_umask(tmp_path, store):
    mask = os.umask(0o022)
    os.umask(mask)
    store.set("k", b"v")
    assert (tmp_path / "root" / "k").stat().st_mode & 0o777 == 0o666 & ~mask


def test_root_is_created_lazily_and_never_removed(tmp_path):
    s = LocalStore(tmp_path / "root")
    assert not (tmp_path / "root").exists()
    assert s.get("a") is None and list(s.list_prefix("")) == [] and s.list_dir("") == ([], [])
    s.set("a/b/c", b"1")
    s.delete("a/b/c")
    assert os.listdir(tmp_path / "root") == []              # empty folders pruned, root kept
    s.set("x/y", b"1")
    s.set("x/z", b"1")
    s.delete_prefix("")
    assert os.listdir(tmp_path / "root") == []


def test_delete_of_a_directory_is_a_noop(tmp_path, store):
    store.set("c/0/0", b"1")
    store.delete("c/0")
    assert store.get("c/0/0") == b"1"


def test_os_errors_become_store_errors(tmp_path, store):
    store.set("file", b"1")
    store.set("c/0", b"1")
    with pytest.raises(StoreError) as info:
        store.set("file/child", b"x")                       # a file where a folder should be
    assert str(info.value) == f"{store!r}: cannot write 'file/child': Not a directory"
    assert isinstance(info.value.__cause__, OSError)
    with pytest.raises(StoreError) as info:
        store.set("c", b"x")                                # a folder where the file should go
    assert str(info.value) == (f"{store!r}: cannot write 'c': a directory is there, not a file; "
                               f"remove it")
    assert sorted(store.list_prefix("")) == ["c/0", "file"]
    assert os.listdir(tmp_path / "root" / "c") == ["0"]    # no temp file left behind


def test_huge_range_reads_only_what_exists(store):
    store.set("k", b"abc")
    assert store.get("k", ByteRange.slice(1, 2**62)) == b"bc"
    assert store.get("k", ByteRange.last(2**62)) == b"abc"


def test_read_only_and_modes(tmp_path):
    s = LocalStore(tmp_path / "root", mode="r")
    assert s.read_only and not LocalStore(tmp_path, mode="a").read_only
    with pytest.raises(ReadOnlyError) as info:
        s.set("k", b"v")
    assert str(info.value) == f"{s!r}: cannot write 'k': the store is read-only"
    assert not (tmp_path / "root").exists()
    with pytest.raises(StoreError) as info:
        LocalStore(tmp_path, mode="rw")
    assert str(info.value) == (f"LocalStore({str(tmp_path)!r}): mode: expected one of "
                               "r, r+, a, w, w-, found 'rw'")


def test_pickle_round_trip(tmp_path):
    s = LocalStore(tmp_path / "root", fsync=True)
    s.set("a", b"1")
    t = pickle.loads(pickle.dumps(s))
    assert (t.root, t.read_only, t.fsync) == (s.root, False, True) and t == s
    assert t.get("a") == b"1"
    r = pickle.loads(pickle.dumps(LocalStore(tmp_path / "root", read_only=True)))
    assert r.read_only and r == s           # equal as in zarr-python: the same root


@pytest.mark.parametrize("mode", [None, "q"])
def test_a_root_of_another_type_is_a_store_error(mode):
    with pytest.raises(StoreError) as info:
        LocalStore(None, mode=mode)
    detail = "mode: expected one of r, r+, a, w, w-, found 'q'" if mode else \
        "root: expected the path of a directory, found a NoneType"
    assert str(info.value) == f"LocalStore(None): {detail}"
