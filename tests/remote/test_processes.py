"""Remote stores in other processes: pickled into a spawned process and written through there,
and used in a forked child (obstore's runtime does not survive a fork: a clear error, never a
request that waits for ever; fsspec's filesystems are remade in the child)."""
from __future__ import annotations

import multiprocessing
import os
import pickle
import signal

import numpy as np
import pytest

import zarrx

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")
pytest.importorskip("s3fs", reason="s3fs is not installed (pip install s3fs)")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _store(s3_server, backend, url):
    if backend == "obstore":
        return ObjectStore(url, storage_options=s3_server.options, in_flight=5)
    return FsspecStore(url, storage_options=s3_server.fsspec_options, in_flight=5)


def _write_in_child(blob: bytes, key: str) -> tuple[bytes | None, int]:
    store = pickle.loads(blob)
    store.set(key, b"from the child")
    store.set_if(key + ".new", b"created", None)
    return store.get(key), store.options.in_flight


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_store_pickled_into_a_spawned_process_writes_there(s3_server, backend):
    store = _store(s3_server, backend, s3_server.url())
    store.set("warm", b"1")                          # the parent's client is in use
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.apply(_write_in_child, (pickle.dumps(store), "k"))
    assert got == (b"from the child", 5)
    assert store.get("k") == b"from the child" and store.get("k.new") == b"created"


def _in_fork(fn) -> tuple[str, str]:
    """``fn()`` in a forked child: ("ok", repr of its result) or (exception class, message).
    The child ends itself after a minute at most (a request waiting for ever)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                      # the child
        os.close(read)
        signal.alarm(60)
        try:
            out = ("ok", repr(fn()))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            out = (type(exc).__name__, str(exc))
        os.write(write, pickle.dumps(out))
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert data, f"the child ended without an answer (status {status})"
    return pickle.loads(data)


def test_obstore_in_a_forked_child_says_to_spawn_instead_of_waiting_for_ever(s3_server):
    """A request of an ObjectStore in a child forked after the parent's obstore requests
    waited for ever (obstore's runtime threads are not in the child)."""
    url = s3_server.url()
    store = _store(s3_server, "obstore", url)
    store.set("k", b"v")
    expected = ("StoreError", f"{store!r}: cannot send requests in this process: it was forked "
                "from a process that had used obstore, whose runtime does not survive a fork "
                "(the requests would wait for ever); start worker processes with the 'spawn' or "
                "'forkserver' method (multiprocessing.get_context('spawn')), or use FsspecStore")
    assert _in_fork(lambda: store.get("k")) == expected
    fresh = _store(s3_server, "obstore", url)
    assert _in_fork(lambda: fresh.get("k")) == expected
    assert store.get("k") == b"v"                     # the parent's store still works


def test_fsspec_store_inherited_by_a_forked_child_works_there(s3_server):
    """It raised fsspec's bare RuntimeError 'This class is not fork-safe'."""
    store = _store(s3_server, "fsspec", s3_server.url())
    store.set("k", b"v")

    def child():
        store.set("c", b"child")
        z = zarrx.create_array(store, shape=(4,), chunks=(2,), dtype="i1")
        z[...] = 3
        return store.get("k"), z[...].tolist()

    assert _in_fork(child) == ("ok", repr((b"v", [3, 3, 3, 3])))
    assert store.get("c") == b"child"
    assert np.array_equal(zarrx.open_array(store, mode="r")[...], [3, 3, 3, 3])
