"""LocalStore across threads and processes: many reads at once, reads after fork, conditional
increments that lose nothing, generations and snapshots."""
import multiprocessing
import os
import threading

import pytest

from zarrx.errors import StoreError
from zarrx.store import ByteRange, LocalStore
from zarrx.store import local as local_mod

from .local_helpers import store  # noqa: F401  (a fixture)


def test_get_many_runs_concurrently_in_order(tmp_path):
    names = []
    lock = threading.Lock()
    second = threading.Event()

    class Recording(LocalStore):
        def _get_batch(self, reqs):
            me = threading.current_thread().name
            with lock:
                names.append(me)
                if len(set(names)) > 1:
                    second.set()
            if len(names) == 1:
                # the first batch waits for a second thread to take one: a pool that runs
                # batches concurrently gets there however loaded the machine is, a serial
                # one never does (and fails below after the timeout)
                second.wait(10)
            return super()._get_batch(reqs)

    s = Recording(tmp_path / "root")
    for i in range(80):
        s.set(f"c/{i}", b"%d" % i)
    reqs = [(f"c/{i}", ByteRange.last(1) if i % 3 else None) for i in reversed(range(90))]
    expected = [None if i >= 80 else (b"%d" % i)[-1:] if i % 3 else b"%d" % i
                for i in reversed(range(90))]
    assert s.get_many(reqs) == expected
    assert len(set(names)) > 1 and any(n.startswith("zarrx") for n in names)
    names.clear()
    second.set()
    assert s.get_many([("c/1", None)]) == [b"1"] and names == [threading.current_thread().name]


def _child_get_many(store, keys):
    return store.get_many([(k, None) for k in keys])


def test_get_many_works_after_fork(tmp_path, store):
    keys = [f"k/{i}" for i in range(3 * local_mod.POOL_MIN)]
    for k in keys:
        store.set(k, k.encode())
    assert store.get_many([(k, None) for k in keys]) == [k.encode() for k in keys]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        values = pool.apply_async(_child_get_many, (store, keys)).get(timeout=60)
    assert values == [k.encode() for k in keys]


def _increment_in_child(root, key, times):
    from generation_contract import increment
    return increment(LocalStore(root), key, times)


def test_multiprocess_increments_lose_nothing(tmp_path):
    """4 processes x 100 read + set_if increments of one counter: exactly 400, none lost."""
    root = str(tmp_path / "root")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        conflicts = pool.starmap(_increment_in_child, [(root, "c/0/counter", 100)] * 4)
    store = LocalStore(root)
    assert store.get("c/0/counter") == b"400"
    assert all(n >= 0 for n in conflicts)
    assert os.listdir(tmp_path / "root" / "c" / "0") == ["counter"]   # no temp file left


def test_generation_is_the_file_identity(store, tmp_path):
    store.set("a/k", b"v")
    gen = store.generation("a/k")
    st = os.stat(tmp_path / "root" / "a" / "k")
    assert gen == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    store.set("a/k", b"v")                              # same bytes, new file, new generation
    assert store.generation("a/k") != gen


def test_snapshot_is_one_open_file(store, tmp_path):
    store.set("a/k", b"0123456789")
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    snap = store.snapshot("a/k")
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before + 1
    store.delete("a/k")                                 # the open file still holds the version
    assert [bytes(v) for v in snap.read([ByteRange.slice(3, 2), ByteRange.last(1)])] == \
        [b"34", b"9"]
    snap.close()
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before
    with pytest.raises(StoreError, match=r"snapshot of 'a/k': read after close$"):
        snap.read([None])
