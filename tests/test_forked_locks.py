"""A process forked while zarrx holds a file lock (a pool worker started while another thread
writes) never keeps that lock: every later writer of the file, the parent included, can take it
at once (docs/RELIABILITY.md, crash hygiene); nor does one forked while
consolidated metadata is parsed keep the garbage collector off."""
from __future__ import annotations

import fcntl
import gc
import os

import numpy as np
import pytest

import zarrx
from zarrx.errors import ConflictError
from zarrx.store import LocalStore, ZipStore
from zarrx.store import localcond

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


class Worker:
    """A forked process that only waits (as an idle pool worker does) until it is released."""

    def __init__(self) -> None:
        self._r, self._w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:                   # the child: wait for the pipe to close, then leave
            os.close(self._w)
            os.read(self._r, 1)
            os._exit(0)
        os.close(self._r)

    def release(self) -> None:
        os.close(self._w)
        os.waitpid(self.pid, 0)


class ForkWhileLocked:
    """``fcntl`` for zarrx's conditional writes that starts a :class:`Worker` right after each
    exclusive lock is taken, so the worker holds a copy of the locked descriptor."""

    def __init__(self) -> None:
        self.workers: list[Worker] = []

    def __getattr__(self, name: str):        # LOCK_EX, LOCK_UN, ...
        return getattr(fcntl, name)

    def flock(self, fd: int, op: int) -> None:
        fcntl.flock(fd, op)
        if op & fcntl.LOCK_EX:
            self.workers.append(Worker())


def free(path) -> bool:
    """Whether another open file of ``path`` can take its exclusive lock now."""
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)                        # (a lock taken goes with the descriptor)
    return True


@pytest.fixture
def forking(monkeypatch):
    shim = ForkWhileLocked()
    monkeypatch.setattr(localcond, "fcntl", shim)
    yield shim
    for worker in reversed(shim.workers):  # a worker holds the pipes of those before it
        worker.release()


@pytest.mark.parametrize("write", ["set_if", "delete_if"])
def test_a_refused_conditional_write_leaves_no_lock_with_a_process_forked_meanwhile(
        tmp_path, forking, write):
    store = LocalStore(str(tmp_path / "s"))
    store.set("k", b"old")
    stale = store.generation("k")
    store.set("k", b"new")
    with pytest.raises(ConflictError):
        if write == "set_if":
            store.set_if("k", b"mine", stale)
        else:
            store.delete_if("k", stale)
    assert len(forking.workers) == 1
    # before: the worker's copy of the descriptor kept the lock, and the next conditional
    # write of the key waited for the worker to end
    assert free(tmp_path / "s" / "k")
    store.set_if("k", b"mine", store.generation("k"))
    assert store.get("k") == b"mine"


def test_a_zip_archive_written_before_a_fork_can_be_added_to_at_once(tmp_path):
    path = tmp_path / "d.zip"
    store = ZipStore(str(path), mode="w")
    zarrx.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    worker = Worker()                       # forked while the archive is being written
    try:
        store.close()
        # before: the worker kept the lock of the temporary archive, now the archive, and a
        # session adding to it waited in close until the worker ended
        assert free(path)
        with ZipStore(str(path), mode="a") as more:
            zarrx.create_array(more, name="b", shape=(4,), chunks=(2,), dtype="i4")[:] = 2
    finally:
        worker.release()
    with ZipStore(str(path), mode="r") as store:
        np.testing.assert_array_equal(zarrx.open_array(store, path="b")[:], 2)


def test_a_process_forked_while_metadata_is_parsed_collects_garbage():
    from zarrx.metadata.json import gc_paused

    assert gc.isenabled()
    with gc_paused():               # as a thread parsing consolidated metadata holds it
        pid = os.fork()
        if pid == 0:                # the child: that thread is not there to end the pause
            os._exit(0 if gc.isenabled() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0       # before: the collector stayed off
    assert gc.isenabled()
