"""How LocalStore's write kernel (zarrx.store._localwrite) names the unnamed files it writes:
the file a thread links in is the one that thread wrote, whatever its table of descriptors, and
a file system without unnamed files is written through named temporary files without changing
how the rest of the process writes."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import threading

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore
from zarrx.store._localwrite import link_method, set_link_method
from zarrx.store.localfs import TMP_MARK

pytestmark = pytest.mark.skipif(LocalStore("/")._tree.real_root() is None,
                                reason="no openat2 here: every write takes the Python path")

CLONE_FILES = 0x400


def unshare_files() -> None:
    """Give the calling thread a table of descriptors of its own (a copy of the process's)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_FILES) != 0:
        pytest.skip(f"unshare(CLONE_FILES): {os.strerror(ctypes.get_errno())}")


@pytest.mark.skipif(not os.path.isdir("/proc/thread-self/fd"), reason="needs /proc")
@pytest.mark.parametrize("how", ["fd", "proc"])
def test_a_thread_with_its_own_descriptors_links_the_file_it_wrote(tmp_path, how):
    """The main thread holds other files at the descriptors the writing thread's unnamed file
    gets in its own table. Before, ``/proc/self/fd/N`` (the main thread's table) linked one of
    those files in as the key: the key read b"not the value" and was a hard link to it."""
    store = LocalStore(tmp_path / "root")
    store.set("a/old", b"old")
    other = tmp_path / "other"
    other.write_bytes(b"not the value")
    ready, go, failed = threading.Event(), threading.Event(), []

    def writer():
        try:
            unshare_files()
            ready.set()
            go.wait()
            store.set("a/new", b"the value")
            store.set("a/old", b"replaced")
        except BaseException as exc:        # noqa: BLE001  (reported below)
            failed.append(exc)
            ready.set()

    before = link_method()
    set_link_method(how)
    held = []
    try:
        t = threading.Thread(target=writer)
        t.start()
        ready.wait()
        held = [os.open(other, os.O_RDONLY) for _ in range(16)]    # the main thread's next fds
        go.set()
        t.join()
        assert link_method() == how
    finally:
        for fd in held:
            os.close(fd)
        set_link_method(before)
    if failed and isinstance(failed[0], pytest.skip.Exception):
        raise failed[0]
    assert not failed, failed
    assert (store.get("a/new"), store.get("a/old")) == (b"the value", b"replaced")
    assert os.stat(other).st_nlink == 1
    assert sorted(os.listdir(tmp_path / "root" / "a")) == ["new", "old"]


@pytest.fixture
def fuse_folder(tmp_path):
    """A folder of a FUSE file system without unnamed files (bindfs over a folder of
    ``tmp_path``): (the mount point, the folder behind it)."""
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse") or not shutil.which("bindfs"):
        pytest.skip("needs root, /dev/fuse and bindfs")
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    src.mkdir()
    mnt.mkdir()
    run = subprocess.run(["bindfs", str(src), str(mnt)], capture_output=True, text=True)
    if run.returncode != 0:
        pytest.skip(f"bindfs cannot mount here: {run.stderr.strip()}")
    try:
        try:
            os.close(os.open(mnt, os.O_TMPFILE | os.O_WRONLY, 0o600))
        except OSError:
            pass
        else:
            pytest.skip("this FUSE file system makes unnamed files")
        yield mnt, src
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.parametrize("how", ["fd", "proc"])
def test_a_file_system_without_unnamed_files_takes_temporary_files_for_itself_only(
        tmp_path, fuse_folder, how):
    mnt, src = fuse_folder
    before = link_method()
    set_link_method(how)
    try:
        s = LocalStore(mnt / "root")
        s.set("a/k", b"first")
        s.set("a/k", b"second")                          # replaced under the lock
        s.set("a/n", b"fresh")
        z = zarrx.create_array(s, path="arr", shape=(8, 8), dtype="i4", chunks=(2, 2),
                               fill_value=0)
        v = np.arange(64, dtype="i4").reshape(8, 8)
        z[:] = v
        z[:4] = 7
        v[:4] = 7
        assert link_method() == how                      # the rest of the process unchanged
        local = LocalStore(tmp_path / "local")           # a file system with unnamed files
        local.set("a/k", b"x")
        local.set("a/k", b"y")
        assert link_method() == how
    finally:
        set_link_method(before)
    assert (s.get("a/k"), s.get("a/n"), local.get("a/k")) == (b"second", b"fresh", b"y")
    np.testing.assert_array_equal(zarrx.open_array(s, path="arr", mode="r")[...], v)
    assert [p for p in src.rglob("*") if TMP_MARK in p.name] == []
    assert [p for p in (tmp_path / "local").rglob("*") if TMP_MARK in p.name] == []
