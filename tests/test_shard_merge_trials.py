"""Partial writes merged inside a shard's update (``zarrx.shard_merge``) against other writers:
the shard is read with its generation and written conditionally, a shard changed between the
read and the write is merged again from its new bytes (never the stale merge written back),
and a write stopped part way leaves the shard as it was."""
from __future__ import annotations

import multiprocessing as mp
import threading

import numpy as np
import pytest

import zarrx
from zarrx import shard_merge
from zarrx.codecs import Zstd
from zarrx.store import LocalStore, MemoryStore

WRITES = {"steps": lambda z, v: z.__setitem__(np.s_[::2, :], v),
          "index array": lambda z, v: z.oindex.__setitem__((np.arange(0, 32, 2), slice(None)), v),
          "box": lambda z, v: z.__setitem__(np.s_[2:30, 2:30], v)}


def _store(kind, tmp_path):
    return MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "a.zarr"))


def _array(store):
    z = zarrx.create_array(store, shape=(32, 32), chunks=(4, 4), shards=(32, 32), dtype="i4",
                           fill_value=0, compressors=Zstd(level=0))
    z[...] = -1
    return z


def _counting(monkeypatch):
    calls = []
    merge = shard_merge.merge_many

    def counted(*args, **kw):
        calls.append(1)
        return merge(*args, **kw)
    monkeypatch.setattr(shard_merge, "merge_many", counted)
    return calls


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("write", list(WRITES))
def test_a_shard_replaced_after_the_read_is_merged_again(tmp_path, monkeypatch, kind, write):
    """Another writer's version of the shard (cell [1, 1], which the write does not touch)
    lands right after the write read the shard: the write's conditional write fails, and its
    retry merges into that version, so both writes are kept."""
    side = _array(MemoryStore())
    side[1, 1] = 99
    newer = side.store.get("c/0/0")
    store = _store(kind, tmp_path)
    z = _array(store)
    cls, read = type(store), type(store).get_versioned
    replaced = []

    def get_versioned(self, key, *args, **kw):
        got = read(self, key, *args, **kw)
        if key == "c/0/0" and not replaced:
            replaced.append(key)
            cls.set(self, key, newer)            # no lock of this process: another writer's
        return got
    calls = _counting(monkeypatch)
    monkeypatch.setattr(cls, "get_versioned", get_versioned)
    WRITES[write](z, 5)
    monkeypatch.undo()
    want = np.full((32, 32), -1, dtype="i4")
    want[1, 1] = 99
    if write == "box":
        want[2:30, 2:30] = 5
    else:
        want[::2] = 5
    assert replaced and len(calls) == 2           # merged together, then again after the conflict
    np.testing.assert_array_equal(z[...], want)


def test_a_shard_the_merge_leaves_all_fill_is_deleted_only_if_unchanged(monkeypatch):
    """``write_empty_chunks=False``: a stepped write making every cell of a shard the fill
    value deletes the shard only on the generation it read; another writer's cell landing
    right after the read keeps the shard, merged again (and the delete, alone, happens)."""
    def make(store):
        z = zarrx.create_array(store, shape=(32, 32), chunks=(4, 4), shards=(32, 32),
                               dtype="i4", fill_value=0, compressors=Zstd(level=0),
                               config={"write_empty_chunks": False})
        z[::2, :] = 3
        return z
    side = make(MemoryStore())
    side[1, 1] = 99
    newer = side.store.get("c/0/0")
    store = MemoryStore()
    z = make(store)
    read, replaced = MemoryStore.get_versioned, []

    def get_versioned(self, key, *args, **kw):
        got = read(self, key, *args, **kw)
        if key == "c/0/0" and not replaced:
            replaced.append(key)
            MemoryStore.set(self, key, newer)
        return got
    calls = _counting(monkeypatch)
    monkeypatch.setattr(MemoryStore, "get_versioned", get_versioned)
    z[::2, :] = 0
    monkeypatch.undo()
    want = np.zeros((32, 32), dtype="i4")
    want[1, 1] = 99
    assert replaced and len(calls) == 2
    np.testing.assert_array_equal(z[...], want)
    z[1, 1] = 0
    assert list(store.list_prefix("c/")) == []


def test_a_write_stopped_while_encoding_leaves_the_shard_as_it_was(monkeypatch):
    """An exception that is no ZarrError (here a BaseException, as KeyboardInterrupt is)
    raised by the merged encode passes through, and nothing is stored."""
    import zarrx.codecs.plan_many as plan_many
    store = MemoryStore()
    z = _array(store)
    before = {k: store.get(k) for k in store.list_prefix("c/")}

    class Stop(BaseException):
        pass

    def stop(*args, **kw):
        raise Stop("stopped")
    monkeypatch.setattr(plan_many, "encode_rows", stop)
    with pytest.raises(Stop):
        z[::2, :] = 7
    assert {k: store.get(k) for k in store.list_prefix("c/")} == before


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("consistency", ["strict", "none"])
def test_threads_incrementing_interleaved_rows_of_one_shard_lose_nothing(tmp_path, monkeypatch,
                                                                         kind, consistency):
    """4 threads, each adding 1 to its own rows (``z[t::4, :]``: every inner chunk of the shard
    covered in part by each of them) 15 times: every row ends at 15 (with
    ``consistency="none"`` too, which keeps the turns of one process's threads)."""
    z = _array(_store(kind, tmp_path))
    z[...] = 0
    calls = _counting(monkeypatch)
    errors = []

    def work(t):
        try:
            for _ in range(15):
                z[t::4, :] = z[t::4, :] + 1
        except BaseException as exc:             # noqa: BLE001 - reported below
            errors.append(exc)
    with zarrx.config.set(consistency=consistency):
        threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == [] and len(calls) >= 60       # every write merged (a retry merges again)
    np.testing.assert_array_equal(z[...], np.full((32, 32), 15, dtype="i4"))


def _increment_rows(root: str, first: int, times: int) -> None:
    seen = []
    merge = shard_merge.merge_many

    def counted(*args, **kw):
        seen.append(1)
        return merge(*args, **kw)
    shard_merge.merge_many = counted
    z = zarrx.open_array(LocalStore(root), mode="r+")
    for _ in range(times):
        z[first::2, :] = z[first::2, :] + 1
    if len(seen) < times:
        raise SystemExit(3)                      # the merge of shard_merge never ran


def test_processes_incrementing_interleaved_rows_of_one_shard_lose_nothing(tmp_path):
    """2 processes, each adding 1 to every other row of one shard (all of its inner chunks
    covered in part by both) 40 times: every row ends at 40."""
    root = str(tmp_path / "a.zarr")
    z = _array(LocalStore(root))
    z[...] = 0
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_increment_rows, args=(root, first, 40)) for first in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0, 0]
    np.testing.assert_array_equal(z[...], np.full((32, 32), 40, dtype="i4"))
