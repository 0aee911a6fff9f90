"""Batch merges (``zarrx/batch_merge.py``): the chunks a write covers in part (a box not
aligned to the chunk grid, slices with steps, chunks past the array's end) read, merged and
stored a slab of chunks at a time. What they store must be what the general path stores (same
keys, same bytes, chunks that become all fill deleted), on every codec, fill value, format,
order and store; concurrent writers of cells of the same chunks lose nothing; and they make
few Python calls per chunk (counted, never timed)."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import batch_merge
from zarrx.store import LocalStore, MemoryStore

from call_counts import calls_made

CODECS = {
    "raw": {"compressors": None},
    "zstd": {"compressors": zarrx.codecs.Zstd(level=1)},
    "crc32c": {"compressors": zarrx.codecs.Crc32c()},
    "gzip": {"compressors": zarrx.codecs.Gzip()},
    "blosc": {"compressors": zarrx.codecs.Blosc()},
}
V2_CODECS = {"raw": {"compressors": None}, "zstd": {"compressors": zarrx.codecs.Zstd(level=1)},
             "gzip": {"compressors": zarrx.codecs.Gzip()},
             "blosc": {"compressors": zarrx.codecs.Blosc()}}

SHAPE = (45, 38)
CHUNKS = (4, 5)
# (selection, whether the value is the fill value): unaligned boxes, boxes reaching the
# array's end, steps, a write of the fill value emptying chunks, one missing chunks
WRITES = [
    (np.s_[2:43, 3:37], False),
    (np.s_[::2, :], False),
    (np.s_[1:, 1::3], False),
    (np.s_[3:45, 7:38], False),
    (np.s_[5::7, 2:30:4], False),
    (np.s_[1:41, 1:36], True),
    (np.s_[10:30, 12], False),
]


def _objects(store) -> dict[str, bytes]:
    return {k: bytes(store.get(k)) for k in store.list_prefix("")
            if k.rpartition("/")[2] not in ("zarr.json", ".zarray", ".zattrs", ".zgroup")}


def _count_slabs(monkeypatch) -> list:
    """Count the slabs the batched path merges (to know it ran)."""
    seen: list = []
    merge = batch_merge._merge_slab

    def counted(*args):
        left = merge(*args)
        seen.append(left)
        return left
    monkeypatch.setattr(batch_merge, "_merge_slab", counted)
    return seen


def _make(store, fmt, codecs, fill, order, empty):
    kw = (V2_CODECS if fmt == 2 else CODECS)[codecs]
    extra = {"order": order} if fmt == 2 else {}
    return zarrx.create_array(store, shape=SHAPE, chunks=CHUNKS, dtype="f4", fill_value=fill,
                              zarr_format=fmt, write_empty_chunks=empty, **kw, **extra)


def _run(z, fill, want):
    """Write the partial writes of ``WRITES`` (and check each against numpy)."""
    rng = np.random.default_rng(5)
    for sel, as_fill in WRITES:
        shape = want[sel].shape
        value = np.full(shape, fill, "f4") if as_fill else \
            rng.integers(-50, 50, shape).astype("f4")
        z[sel] = value
        want[sel] = value
        np.testing.assert_array_equal(z[...], want)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("fill", [0, 7, float("nan")], ids=["fill0", "fill7", "fillnan"])
@pytest.mark.parametrize("fmt,codecs,order", [(3, c, "C") for c in CODECS]
                         + [(2, c, o) for c in V2_CODECS for o in "CF"])
def test_partial_writes_store_what_the_general_path_stores(monkeypatch, tmp_path, threads,
                                                          where, fill, fmt, codecs, order):
    stored = {}
    for way in ("batch", "general"):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / way)
        z = _make(store, fmt, codecs, fill, order, False)
        want = np.full(SHAPE, fill, "f4")
        # some chunks stored, others missing: every other band of rows
        for r in range(0, SHAPE[0], 8):
            z[r:r + 4] = 3.5
            want[r:r + 4] = 3.5
        with monkeypatch.context() as m, zarrx.config.set(threads=threads):
            m.setattr(batch_merge, "ENABLED", way == "batch")
            seen = _count_slabs(m)
            _run(z, fill, want)
        if way == "batch":
            assert seen and all(left is None for left in seen)  # it ran, and left nothing
        if way == "general":
            assert not seen
        stored[way] = _objects(store)
    assert stored["batch"].keys() == stored["general"].keys()
    assert stored["batch"] == stored["general"]


@pytest.mark.parametrize("where", ["memory", "local"])
def test_writing_every_chunk_stores_empty_chunks_as_the_general_path(monkeypatch, tmp_path,
                                                                      where):
    """``write_empty_chunks=True``: chunks all fill are stored, as the general path does."""
    stored = {}
    for way in ("batch", "general"):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / way)
        z = _make(store, 3, "zstd", 0, "C", True)
        with monkeypatch.context() as m:
            m.setattr(batch_merge, "ENABLED", way == "batch")
            _run(z, 0, np.zeros(SHAPE, "f4"))
        stored[way] = _objects(store)
    assert stored["batch"] == stored["general"]


def test_a_chunk_that_does_not_decode_is_named_by_the_partial_write(monkeypatch):
    store = MemoryStore()
    z = _make(store, 3, "zstd", 0, "C", False)
    z[...] = 1
    store.set("c/0/3", b"not zstd")        # a chunk the write covers in part
    with pytest.raises(zarrx.ZarrError, match="c/0/3"):
        z[1:43, 1:37] = 2
    assert z[0, 0] == 1                     # the slabs before it were written


@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("codecs", ["raw", "zstd"])
def test_partial_writes_make_few_python_calls_per_chunk(codecs, where, tmp_path):
    """A stepped write touching every chunk of a 64 x 64 grid of small chunks, and an
    unaligned box: far fewer calls than the general path's dozens per chunk (on local files
    too: their versioned reads and conditional writes are batched, where each chunk's
    ``get_versioned`` and ``set_if`` made about 150 calls)."""
    store = MemoryStore() if where == "memory" else LocalStore(tmp_path / "a")
    z = zarrx.create_array(store, shape=(256, 256), chunks=(4, 4), dtype="f4",
                           fill_value=0, **CODECS[codecs])
    z[...] = 1
    a = np.arange(128 * 256, dtype="f4").reshape(128, 256)
    n = calls_made(lambda: z.__setitem__(np.s_[::2, :], a))
    assert n < 0.5 * 64 * 64
    box = np.ones((250, 250), "f4")
    n = calls_made(lambda: z.__setitem__(np.s_[3:253, 3:253], box))
    # (on local files each chunk the box covers whole is a ``set`` call, 2 calls, when
    # compressed; the box writer of raw ones makes sure of each row's folder, 45 a row)
    assert n < (0.5 if where == "memory" else 3) * 64 * 64
    np.testing.assert_array_equal(z[3:253, 3:253], box)


@pytest.mark.parametrize("where", ["memory", "local"])
def test_threads_writing_interleaved_cells_of_the_same_chunks_lose_nothing(monkeypatch,
                                                                          tmp_path, where):
    """4 threads, each writing its own column of every 4-column chunk (``z[:, t::4]``) and
    rows of them (``z[r, t::4]``), 30 times (8 on a local store): every cell ends at its writer's last value."""
    store = MemoryStore() if where == "memory" else LocalStore(tmp_path / "a")
    z = zarrx.create_array(store, shape=(32, 64), chunks=(4, 4), dtype="i4", fill_value=0,
                           compressors=zarrx.codecs.Zstd(level=1))
    seen = _count_slabs(monkeypatch)
    rounds = 30 if where == "memory" else 8
    barrier = threading.Barrier(4)

    def writer(t: int) -> None:
        barrier.wait()
        for r in range(1, rounds + 1):
            z[:, t::4] = 1000 * t + r
            z[r % 32, t::4] = 1000 * t + r
            z[:, t::4] = 1000 * t + r

    with zarrx.config.set(threads=1):
        ts = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
        for th in ts:
            th.start()
        for th in ts:
            th.join()
    got = zarrx.open_array(store, mode="r")[...]
    for t in range(4):
        assert (got[:, t::4] == 1000 * t + rounds).all()
    assert seen                             # the batched path ran


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_random_partial_and_stepped_writes_match_numpy(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 30), min_size=1, max_size=3)))
    chunks = tuple(data.draw(st.integers(1, 6)) for _ in shape)
    fill = data.draw(st.sampled_from([0, 5]))
    codecs = data.draw(st.sampled_from(["raw", "zstd"]))
    z = zarrx.create_array(MemoryStore(), shape=shape, chunks=chunks, dtype="i2",
                           fill_value=fill, **CODECS[codecs])
    want = np.full(shape, fill, "i2")
    for i in range(data.draw(st.integers(1, 3))):
        sel = []
        for n in shape:
            start = data.draw(st.integers(0, n - 1))
            stop = data.draw(st.integers(start + 1, n))
            step = data.draw(st.integers(1, 4))
            sel.append(start if data.draw(st.integers(0, 5)) == 0 else slice(start, stop, step))
        sel = tuple(sel)
        value = np.empty(want[sel].shape, "i2")
        value[...] = np.arange(value.size).reshape(value.shape) + i
        if data.draw(st.booleans()):
            value[...] = fill
        z[sel] = value
        want[sel] = value
        np.testing.assert_array_equal(z[...], want)


class _Raced(MemoryStore):
    """A memory store where another writer replaces the chunk ``c/0/0`` (with ``bytes_then``)
    right after a batched read took it: the batched write of it must be refused and merged
    again, keeping the other writer's cell."""

    bytes_then: bytes = b""
    raced = 0

    def get_versioned_many(self, keys, byte_range=None):
        got = super().get_versioned_many(keys, byte_range)
        if "c/0/0" in keys and not self.raced:
            self.raced += 1
            MemoryStore.set(self, "c/0/0", self.bytes_then)
        return got


def test_a_chunk_another_writer_changed_meanwhile_is_merged_again():
    twin = _make(MemoryStore(), 3, "zstd", 0, "C", False)
    twin[...] = 1
    twin[0, 0] = 9                          # the other writer's change of a cell
    store = _Raced()
    store.bytes_then = bytes(twin.store.get("c/0/0"))
    z = _make(store, 3, "zstd", 0, "C", False)
    z[...] = 1
    z[1:43, 1:37] = 2
    assert store.raced == 1
    want = np.ones(SHAPE, "f4")
    want[0, 0] = 9
    want[1:43, 1:37] = 2
    np.testing.assert_array_equal(z[...], want)


@pytest.mark.parametrize("where", ["memory", "local"])
def test_appends_of_rows_merge_the_edge_chunks_as_the_general_path(monkeypatch, tmp_path,
                                                                    where):
    """Appending one row at a time to an array 40 chunks wide updates 40 edge chunks each
    time: batched, storing what the general path stores."""
    stored = {}
    rows = [np.arange(200, dtype="f4") * (i + 1) for i in range(6)]
    for way in ("batch", "general"):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / way)
        z = zarrx.create_array(store, shape=(2, 200), chunks=(4, 5), dtype="f4", fill_value=0,
                               compressors=zarrx.codecs.Zstd(level=1))
        with monkeypatch.context() as m:
            m.setattr(batch_merge, "ENABLED", way == "batch")
            seen = _count_slabs(m)
            for r in rows:
                z.append(r[None])
        assert bool(seen) == (way == "batch")
        np.testing.assert_array_equal(z[2:], np.stack(rows))
        stored[way] = _objects(store)
    assert stored["batch"] == stored["general"]
