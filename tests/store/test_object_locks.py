"""The in-process locks that make threads take turns on one stored object: updates of one
object are serialised, updates of different objects never wait for each other, and no lock
outlives its last user."""
from __future__ import annotations

import threading
import time

import numpy as np

import zarrx
from zarrx.store import MemoryStore
from zarrx.store.localfs import thread_lock
from zarrx.store.locks import _identity, held_objects, object_lock


def _keys_sharing_a_slot(store, slots: int = 1024) -> tuple[str, str]:
    """Two keys that a table of ``slots`` striped locks would give the same lock."""
    seen: dict[int, str] = {}
    for i in range(100_000):
        key = f"c/{i}"
        slot = hash((_identity(store), key)) % slots
        if slot in seen:
            return seen[slot], key
        seen[slot] = key
    raise AssertionError("no two keys share a slot")


def test_updates_of_different_objects_do_not_wait_for_each_other():
    store = MemoryStore()
    a, b = _keys_sharing_a_slot(store)
    entered = threading.Event()

    def take_b() -> None:
        with object_lock(store, b):
            entered.set()

    with object_lock(store, a):
        t = threading.Thread(target=take_b)
        t.start()
        assert entered.wait(10)                  # b was taken while a is held
        t.join()
    assert held_objects() == 0


def test_updates_of_one_object_take_turns():
    store = MemoryStore()
    inside, most = [0], [0]

    def update() -> None:
        for _ in range(50):
            with object_lock(store, "k"):
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                time.sleep(0.0001)
                inside[0] -= 1

    threads = [threading.Thread(target=update) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert held_objects() == 0


def test_two_stores_of_one_root_share_the_lock_of_an_object(tmp_path):
    one, two = zarrx.store.LocalStore(str(tmp_path)), zarrx.store.LocalStore(str(tmp_path))
    taken = threading.Event()

    def take() -> None:
        with object_lock(two, "k"):
            taken.set()

    with object_lock(one, "k"):
        t = threading.Thread(target=take)
        t.start()
        assert not taken.wait(0.2)               # waits for the first holder
    assert taken.wait(10)
    t.join()
    assert held_objects() == 0


class _SlowStore(MemoryStore):
    """Each chunk write lasts until ``together`` chunk writes are in progress at once (or 10 s
    have passed), as remote writes overlap; counts chunk writes in progress."""

    parallel_writes = True

    def __init__(self, together: int) -> None:
        super().__init__()
        self.together = together
        self.now = self.most = 0
        self.count = threading.Condition()

    def set(self, key, value):  # noqa: ANN001
        if not key.startswith("c/"):             # metadata: written alone
            return super().set(key, value)
        with self.count:
            self.now += 1
            self.most = max(self.most, self.now)
            self.count.notify_all()
            self.count.wait_for(lambda: self.most >= self.together, timeout=10)
        super().set(key, value)
        with self.count:
            self.now -= 1


def test_a_write_of_many_chunks_keeps_every_thread_writing():
    store = _SlowStore(together=64)
    z = zarrx.create_array(store, shape=(64, 16), chunks=(1, 16), dtype="f4")
    with zarrx.config.set(threads=64):
        z[...] = np.arange(64 * 16, dtype="f4").reshape(64, 16)
    assert store.most == 64
    assert held_objects() == 0
    np.testing.assert_array_equal(z[...], np.arange(64 * 16, dtype="f4").reshape(64, 16))


def test_conditional_writers_of_different_files_do_not_wait_for_each_other(tmp_path):
    root = str(tmp_path)
    seen: dict[int, str] = {}
    for i in range(10_000):                      # two keys a table of 64 locks would share
        key = f"c/{i}"
        slot = hash((root, key)) % 64
        if slot in seen:
            a, b = seen[slot], key
            break
        seen[slot] = key
    entered = threading.Event()

    def take_b() -> None:
        with thread_lock(root, b):
            entered.set()

    with thread_lock(root, a):
        t = threading.Thread(target=take_b)
        t.start()
        assert entered.wait(10)
        t.join()
