"""How LocalStore's write kernel (zarrx.store._localwrite) names the unnamed files it writes:
the file a thread links in is the one that thread wrote, whatever its table of descriptors."""
from __future__ import annotations

import ctypes
import os
import threading

import pytest

from zarrx.store import LocalStore
from zarrx.store._localwrite import link_method, set_link_method

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
