"""Remote stores in other processes: pickled into a spawned process and written through there,
and used in a forked child (obstore's runtime does not survive a fork: a clear error, never a
request that waits for ever; fsspec's filesystems are remade in the child)."""
from __future__ import annotations

import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path

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


_FORK_POOL = """
import json, multiprocessing, sys
from zarrx.errors import StoreError
from zarrx.store.remote import ObjectStore


def read(store):
    return store.get("k")


store = ObjectStore(sys.argv[1], storage_options=json.loads(sys.argv[2]))
store.set("k", b"v")
with multiprocessing.get_context("fork").Pool(2) as pool:
    try:
        print(pool.map(read, [store, store]))
    except StoreError as exc:
        print(type(exc).__name__, exc)
"""


def test_a_fork_pool_over_obstore_stores_raises_in_the_parent(s3_server):
    """The workers' first requests refuse, and pool.map raises that error in the parent
    instead of waiting for ever (in a process of its own, which ends within a minute)."""
    url = s3_server.url()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _FORK_POOL, url, json.dumps(s3_server.options)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == (
        f"StoreError ObjectStore({url!r}): cannot send requests in this process: it was forked "
        "from a process that had used obstore, whose runtime does not survive a fork (the "
        "requests would wait for ever); start worker processes with the 'spawn' or "
        "'forkserver' method (multiprocessing.get_context('spawn')), or use FsspecStore")


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


_FORK_POOL_ARRAYS = """
import json, multiprocessing, sys
import zarrx
from zarrx.errors import StoreError
from zarrx.store.remote import ObjectStore


def total(node):
    return int((node["a"] if isinstance(node, zarrx.Group) else node)[...].sum())


store = ObjectStore(sys.argv[1], storage_options=json.loads(sys.argv[2]))
g = zarrx.open_group(store, mode="w")
a = g.create_array("a", shape=(8,), chunks=(4,), dtype="i4")
a[...] = 1
with multiprocessing.get_context("fork").Pool(2) as pool:
    for job in ([a, a], [g, g]):
        try:
            print(pool.map(total, job))
        except StoreError as exc:
            print(type(exc).__name__, str(exc).split(": ")[1])
"""


def test_a_fork_pool_over_obstore_arrays_raises_in_the_parent(s3_server):
    """Arrays and groups unpickle without a request (they carry their metadata), so the
    refusal comes in the workers' first read and pool.map raises it in the parent. Before, the
    refusal came while the pool unpickled the task, which the pool took for its pipe closing:
    the task was lost and map waited for ever."""
    url = s3_server.url()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _FORK_POOL_ARRAYS, url,
                           json.dumps(s3_server.options)],
                          env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == ["StoreError cannot send requests in this process"] * 2
