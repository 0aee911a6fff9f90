"""Several processes, each with several threads, updating the same files of a LocalStore
through its batch methods (``get_versioned_many``, ``set_if_many``) and its single ones: no
update is lost. At the store (counters incremented a batch at a time, some deleted when they
wrap) and through arrays (partial writes of border chunks shared between writers, merged a
slab at a time by ``zarrx.batch_merge``)."""
from __future__ import annotations

import multiprocessing as mp
import threading

import numpy as np

import zarrx
from zarrx.store import LocalStore
from zarrx.store.base import ABSENT

PROCESSES, THREADS = 3, 3
KEYS = [f"c/{i}/{j}" for i in range(3) for j in range(5)]
WRAP = 7            # the counters of "c/2/..." count modulo WRAP, stored missing at 0


def _bump(store: LocalStore, keys: list[str], batch: bool) -> int:
    """Add 1 to each counter of ``keys`` (read, then written conditionally; those another
    writer changed meanwhile read and written again); the conflicts met."""
    conflicts = 0
    while keys:
        if batch:
            got = store.get_versioned_many(keys)
        else:
            got = [store.get_versioned(k) for k in keys]
        items = []
        for k, g in zip(keys, got):
            old, gen = (0, ABSENT) if g is None else (int(g[0]), g[1])
            new = old + 1
            if k.startswith("c/2/"):
                new %= WRAP
            items.append((k, None if new == 0 else b"%d" % new, gen))
        if batch:
            failed = store.set_if_many(items)
        else:
            failed = []
            for i, (k, v, gen) in enumerate(items):
                try:
                    store.set_if(k, v, gen) if v is not None else store.delete_if(k, gen)
                except zarrx.errors.ConflictError:
                    failed.append(i)
        conflicts += len(failed)
        keys = [keys[i] for i in failed]
    return conflicts


def _counting(root: str, rounds: int, barrier, out) -> None:
    """THREADS threads with their own store handles, one of them by single calls."""
    totals = []

    def worker(t: int) -> None:
        store = LocalStore(root)
        barrier.wait()
        totals.append(sum(_bump(store, list(KEYS), t != 0) for _ in range(rounds)))

    ts = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in ts:
        th.start()
    for th in ts:
        th.join()
    out.put(sum(totals))


def _run(target, args_list) -> list:
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(len(args_list) * THREADS)
    out = ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args, barrier, out)) for args in args_list]
    for p in procs:
        p.start()
    got = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0] * len(procs)
    return got


def test_batched_increments_from_threads_of_several_processes_lose_nothing(tmp_path):
    """3 processes x 3 threads x 20 rounds, each round adding 1 to 15 counters in 3 folders
    (two threads a batch at a time, one by single calls): every counter ends at 180 (modulo
    7 for those deleted when they wrap to 0), and no temporary file is left."""
    root = str(tmp_path / "root")
    rounds = 20
    _run(_counting, [(root, rounds)] * PROCESSES)
    store = LocalStore(root)
    total = PROCESSES * THREADS * rounds
    for k in KEYS:
        want = total % WRAP if k.startswith("c/2/") else total
        assert store.get(k) == (None if want == 0 else b"%d" % want), k
    assert sorted(store.list_prefix("")) == sorted(KEYS)
    assert not [p for p in (tmp_path / "root").rglob("*") if "zarrx-tmp" in p.name]


WRITERS = PROCESSES * THREADS
SHAPE = (32, 64)


def _writes(root: str, first: int, rounds: int, barrier, out) -> None:
    """THREADS writers (``first`` + thread) of their columns of ``step`` (``z[:, w::9]``,
    then a row of them) and of their band of ``band`` (``z[1:31, 5w+1:5w+6]``, whose edges
    cut chunks shared with the next writers), each through its own handle; the batch calls
    made go back through ``out``."""
    calls = [0]
    many = LocalStore.set_if_many

    def counted(self, items):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return many(self, items)

    LocalStore.set_if_many = counted      # (set on the class: still the store's batch)

    def worker(w: int) -> None:
        step = zarrx.open_array(LocalStore(f"{root}/step"), mode="r+")
        band = zarrx.open_array(LocalStore(f"{root}/band"), mode="r+")
        barrier.wait()
        for r in range(1, rounds + 1):
            step[:, w::WRITERS] = 1000 * w + r
            step[r % 32, w::WRITERS] = 1000 * w + r
            band[1:31, 5 * w + 1:5 * w + 6] = 1000 * w + r

    with zarrx.config.set(threads=1):
        ts = [threading.Thread(target=worker, args=(first + t,)) for t in range(THREADS)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
    out.put(calls[0])


def test_partial_writes_of_shared_chunks_from_threads_of_several_processes_lose_nothing(
        tmp_path):
    """9 writers (3 processes x 3 threads), 6 rounds each, of cells of their own in chunks
    they share (every 4x4 chunk of ``step`` holds columns of 4 writers; the chunks at the
    edges of each band are shared with the next band): every cell ends at its writer's last
    value, and the batched path wrote through ``LocalStore.set_if_many``."""
    root = str(tmp_path)
    for name in ("step", "band"):
        zarrx.create_array(LocalStore(f"{root}/{name}"), shape=SHAPE, chunks=(4, 4),
                           dtype="i4", fill_value=0, compressors=zarrx.codecs.Zstd(level=1))
    rounds = 6
    calls = _run(_writes, [(root, p * THREADS, rounds) for p in range(PROCESSES)])
    assert all(c > 0 for c in calls)
    step = zarrx.open_array(LocalStore(f"{root}/step"), mode="r")[...]
    band = zarrx.open_array(LocalStore(f"{root}/band"), mode="r")[...]
    want_step = np.zeros(SHAPE, "i4")
    want_band = np.zeros(SHAPE, "i4")
    for w in range(WRITERS):
        want_step[:, w::WRITERS] = 1000 * w + rounds
        want_band[1:31, 5 * w + 1:5 * w + 6] = 1000 * w + rounds
    np.testing.assert_array_equal(step, want_step)
    np.testing.assert_array_equal(band, want_band)
