"""Something that is not a file (a directory, a named pipe, a socket) at a key of a
LocalStore is no key: reads take it for a missing one and listings leave it out, so no write
replaces it (whole writes through the C kernel or the Python path, partial writes alike: a
StoreError saying what is there) and no delete removes it."""
from __future__ import annotations

import os
import socket

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import LocalStore

KINDS = {"directory": "a directory", "fifo": "a named pipe", "socket": "a socket"}


def _make(path, kind: str) -> None:
    if kind == "directory":
        os.mkdir(path)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        sock, cwd = socket.socket(socket.AF_UNIX), os.getcwd()
        os.chdir(path.parent)                   # a socket's path is short
        try:
            sock.bind(path.name)
        finally:
            os.chdir(cwd)
            sock.close()


def _array(tmp_path, kind: str):
    z = zarrx.create_array(LocalStore(tmp_path / "a"), shape=(8, 8), chunks=(4, 4), dtype="i4",
                           fill_value=-1)
    z[...] = 1
    os.remove(tmp_path / "a" / "c" / "1" / "1")
    _make(tmp_path / "a" / "c" / "1" / "1", kind)
    return z


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("how", ["whole chunk", "whole array", "partial"])
def test_no_write_replaces_it(tmp_path, kind, how):
    z = _array(tmp_path, kind)
    region = {"whole chunk": np.s_[4:, 4:], "whole array": np.s_[...], "partial": np.s_[5, 5]}
    with pytest.raises(StoreError) as info:
        z[region[how]] = 9
    assert str(info.value) == (f"{z.store!r}: cannot write 'c/1/1': {KINDS[kind]} is there, "
                               f"not a file; remove it")
    assert not os.path.isfile(tmp_path / "a" / "c" / "1" / "1")
    assert os.path.lexists(tmp_path / "a" / "c" / "1" / "1")
    assert z[4:, 4:].tolist() == [[-1] * 4] * 4       # still no stored chunk there


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("kernel", [True, False], ids=["kernel", "python"])
def test_store_set_refuses_it(tmp_path, kind, kernel, monkeypatch):
    store = LocalStore(tmp_path)
    _make(tmp_path / "k", kind)
    if not kernel:
        monkeypatch.setattr(store, "_put", None)
    with pytest.raises(StoreError, match=f"cannot write 'k': {KINDS[kind]} is there, not a "
                                         f"file; remove it"):
        store.set("k", b"data")
    assert store.get("k") is None and list(store.list()) == []


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_delete_removes_it(tmp_path, kind):
    z = _array(tmp_path, kind)
    z[4:, 4:] = -1                                  # all fill: the chunk is deleted
    z.store.delete("c/1/1")
    assert os.path.lexists(tmp_path / "a" / "c" / "1" / "1")
    assert not os.path.isfile(tmp_path / "a" / "c" / "1" / "1")
    assert (z[...] == 1).sum() == 48 and (z[4:, 4:] == -1).all()
