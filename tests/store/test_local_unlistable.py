"""A folder below a ``LocalStore`` root that cannot be opened (no permission, no file descriptor
left) is an error of every operation that lists it, never a folder silently left out: a delete
or a shrink that skipped it would report success and leave its keys stored."""
from __future__ import annotations

import errno
import os

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, localfs


@pytest.fixture(params=[errno.EACCES, errno.EMFILE], ids=["no-permission", "no-descriptor"])
def refused(request, monkeypatch, tmp_path):
    """An array ``a`` of 4 × 4 chunks, all 1.0, whose folder ``a/c/3`` then fails to open with
    the parametrised error; the array and the error's text."""
    a = _array(tmp_path)
    child = localfs.Dir.child

    def refusing(self, name):
        if self.rel == "a/c" and name == "3":
            raise OSError(request.param, os.strerror(request.param), "a/c/3")
        return child(self, name)

    monkeypatch.setattr(localfs.Dir, "child", refusing)
    return a, os.strerror(request.param)


def _array(root):
    a = zarrx.create_array(LocalStore(str(root)), name="a", shape=(40, 40), chunks=(10, 10),
                           dtype="f8", fill_value=0.0)
    a[:] = 1.0
    return a


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


def test_listing_a_folder_it_may_not_open_raises(refused):
    a, why = refused
    with pytest.raises(zarrx.StoreError) as info:
        list(a.store.list_prefix("a/"))
    assert str(info.value) == f"{a.store!r}: cannot list 'a/c/3/': {why}"
    with pytest.raises(zarrx.StoreError, match="cannot list 'a/c/3/'"):
        a.store.sweep("a/", older_than=None)


def test_a_shrink_that_cannot_list_a_folder_raises_and_keeps_the_array(tmp_path, refused):
    a, _ = refused
    before = _files(tmp_path)
    with pytest.raises(zarrx.StoreError, match="cannot list 'a/c/3/'"):
        a.resize((20, 40))          # before: returned, leaving rows 30-39 stored outside
    assert _files(tmp_path) == before
    b = zarrx.open_array(str(tmp_path), path="a")
    assert b.shape == (40, 40)
    np.testing.assert_array_equal(b[:], 1.0)


def test_a_delete_that_cannot_list_a_folder_raises_and_removes_nothing(tmp_path, refused):
    # a delete lists the node's objects before removing any (the node documents of the
    # subtree go first), so one it cannot list stops before anything is removed, and says so
    before = _files(tmp_path)
    with pytest.raises(zarrx.StoreError, match="cannot list 'a/c/3/'"):
        zarrx.open_group(str(tmp_path), mode="r+").__delitem__("a")   # before: left a/c/3/*
    assert _files(tmp_path) == before
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path), path="a", mode="r")[:], 1.0)


def test_check_of_a_folder_it_may_not_open_raises(tmp_path, refused):
    import zarrx.tools
    with pytest.raises(zarrx.StoreError, match="cannot list 'a/c/3/'"):
        zarrx.tools.check(str(tmp_path))   # before: a clean report, the folder unseen


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="the owner's permission bits do not bind root")
def test_a_shrink_beside_a_folder_without_permissions_keeps_every_value(tmp_path):
    a = _array(tmp_path)
    os.chmod(tmp_path / "a" / "c" / "3", 0)
    try:
        with pytest.raises(zarrx.StoreError, match="cannot list 'a/c/3/': Permission denied"):
            a.resize((20, 40))
    finally:
        os.chmod(tmp_path / "a" / "c" / "3", 0o755)
    assert zarrx.open_array(str(tmp_path), path="a").shape == (40, 40)
