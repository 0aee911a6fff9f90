"""A process forked at any moment can use zarrx: every lock zarrx keeps beyond one call is
unlocked again in the child, caches that may be half updated are dropped, and the pool is made
again. Each case holds one lock in a thread, forks, and has the child use zarrx; a child that
hangs on the lock is killed after a few seconds and fails the case."""
from __future__ import annotations

import os
import select
import threading
from collections.abc import Callable

import numpy as np
import pytest

import zarrx
from zarrx import config, storage
from zarrx.metadata import parse_cache
from zarrx.store import CountingStore, MemoryStore, ZipStore

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

TIMEOUT = 10.0


def _in_child(child: Callable[[], object], held: object | None = None,
              during: Callable[[], None] | None = None) -> str:
    """Fork while a thread holds ``held`` (having run ``during`` under it); the child runs
    ``child`` and reports ``"ok"``, its error, or nothing (it hung and was killed: ``"hang"``)."""
    got, release = threading.Event(), threading.Event()

    def holder() -> None:
        with held:  # type: ignore[attr-defined]
            if during is not None:
                during()
            got.set()
            release.wait()

    t = None
    if held is not None:
        t = threading.Thread(target=holder)
        t.start()
        got.wait()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # pragma: no cover - the child
        os.close(r)
        try:
            res = child()
            msg = "ok" if res is True else f"wrong: {res!r}"
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            msg = f"{type(exc).__name__}: {exc}"
        os.write(w, msg.encode()[:4000])
        os._exit(0)
    os.close(w)
    release.set()
    if t is not None:
        t.join()
    try:
        ready, _, _ = select.select([r], [], [], TIMEOUT)
        if ready:
            out = os.read(r, 4096).decode()
        else:
            os.kill(pid, 9)
            out = "hang"
        os.waitpid(pid, 0)
    finally:
        os.close(r)
    return out


def _sharded(store: object) -> zarrx.Array:
    a = zarrx.create_array(store, shape=(100,), chunks=(10,), shards=(50,), dtype="i4")
    a[:] = np.arange(100)
    return a


def _reads(a: zarrx.Array) -> Callable[[], bool]:
    return lambda: bool((a[:] == np.arange(100)).all())


def case_parse_cache():
    store = MemoryStore()
    _sharded(store)
    return parse_cache._parsed_lock, lambda: _reads(zarrx.open_array(store, mode="r"))()


def case_config():
    def child() -> bool:
        config.set(write_empty_chunks=True)
        return config.get("write_empty_chunks") is True

    return config._lock, child


def case_dict_store():
    return storage._STATES_LOCK, lambda: zarrx.open_group({}, mode="w").attrs.asdict() == {}


def case_memory_store():
    store = MemoryStore()
    a = _sharded(store)
    def child() -> bool:
        a[:5] = 7
        return bool((a[:5] == 7).all())

    return store._lock, child


def case_shard_index_cache():
    a = zarrx.open_array(_sharded(MemoryStore()).store, mode="r")
    a[:]
    return a._io.source._cache._lock, _reads(a)


def case_array_handle_property():
    store = MemoryStore()
    _sharded(store)
    prop = type(zarrx.open_array(store, mode="r")).__dict__["_io"]
    if getattr(prop, "lock", None) is None:
        pytest.skip("cached_property holds no lock on this Python")
    return prop.lock, lambda: _reads(zarrx.open_array(store, mode="r"))()


def case_counting_store():
    store = CountingStore(MemoryStore())
    a = _sharded(store)
    return store._lock, _reads(a)


def case_zip_store(tmp_path):
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w") as zs:
        _sharded(zs)
    zs = ZipStore(path, mode="r")
    a = zarrx.open_array(zs, mode="r")
    return zs._lock, lambda: zs.get("zarr.json") is not None and _reads(a)()


CASES = {f.__name__[5:]: f for f in (case_parse_cache, case_config, case_dict_store,
                                     case_memory_store, case_shard_index_cache,
                                     case_array_handle_property, case_counting_store,
                                     case_zip_store)}


@pytest.mark.parametrize("case", list(CASES))
def test_a_child_forked_while_a_thread_holds_a_lock_uses_zarrx(case, tmp_path):
    make = CASES[case]
    held, child = make(tmp_path) if case == "zip_store" else make()
    with config.set(write_empty_chunks=False):
        assert _in_child(child, held) == "ok"


def test_a_memory_store_forked_during_a_write_is_consistent_in_the_child():
    store = MemoryStore()
    a = _sharded(store)
    a[:]
    before = store.generation("c/0")

    def half_written() -> None:          # a write stopped between its value and generation
        store._data["c/0"] = store._data["c/1"]
        store._data["extra"] = b"x"

    def child() -> object:
        keys = list(store.list_prefix(""))
        if "extra" not in keys or store.generation("extra") is None:
            return ("listing", keys)
        if store.generation("c/0") == before:       # the value changed, so must its generation
            return "generation kept"
        b = zarrx.open_array(store, mode="r")
        return bool((b[:] == np.tile(np.arange(50, 100), 2)).all())

    assert _in_child(child, store._lock, half_written) == "ok"


def test_a_child_forked_while_pool_workers_run_reads_and_writes_arrays(tmp_path):
    src = zarrx.create_array(tmp_path / "big", shape=(512, 512), chunks=(32, 32),
                             shards=(128, 128), dtype="f8")
    data = np.random.default_rng(1).random((512, 512))
    src[:] = data
    stop = threading.Event()
    started = threading.Event()

    def busy() -> None:
        with config.set(threads=4):
            while not stop.is_set():
                started.set()
                src[:]
                src[:256] = data[:256]

    t = threading.Thread(target=busy)
    t.start()
    started.wait()

    def child() -> object:
        with config.set(threads=4):
            dst = zarrx.create_array(tmp_path / f"child{os.getpid()}", shape=(512, 512), chunks=(32, 32),
                                     shards=(128, 128), dtype="f8")
            dst[:] = data
            return bool((dst[:] == data).all() and (src[256:] == data[256:]).all())

    try:
        outs = [_in_child(child) for _ in range(3)]
    finally:
        stop.set()
        t.join()
    assert outs == ["ok"] * 3
