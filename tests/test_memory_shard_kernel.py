"""Shard reads from a MemoryStore through the kernel (``zarrx.store._memshard``): one call per
shard looks its kept value up, checks its index and hands the inner chunks wanted on without
copying them. Each read gives what the Python path gives (the kernel turned off:
``MemoryStore.kernel_values`` returning None): the same values on random arrays and
selections, or, on hostile shard bytes, an error of the same class with the same message."""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import zarrx
from zarrx.errors import ShardError, ZarrError
from zarrx.store import MemoryStore
from zarrx.store import _memshard
from zarrx.store._values import Value

from indexing_helpers import NumpySelections
from test_local_shard_hostile import (BE, CRC, KINDS, LAYOUTS, LE, SELS, ZSTD, _damage,
                                      _outcome, _python)

SHAPE, SHARD, INNER = (64, 64), (32, 32), (8, 8)


def _make(store, layout="le-crc-end", inner=(LE, ZSTD), shape=SHAPE, shard=SHARD,
          chunk=INNER, dtype="int16"):
    """An array of ``shape`` in shards of ``shard`` (inner chunks of ``chunk``) in ``store``;
    some inner chunks are all fill (missing from their shard). Returns the values."""
    index_codecs, location = LAYOUTS[layout]
    store.set("zarr.json", json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": -1,
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk), "codecs": list(inner), "index_codecs": index_codecs,
            "index_location": location}}]}).encode())
    v = (np.arange(int(np.prod(shape))) % 30000).astype(dtype).reshape(shape)
    v[8:16, 40:48] = -1                          # shard c/0/1, inner chunk 5: missing
    zarrx.open_array(store, mode="r+")[...] = v
    return v


def _kernel(store, sel, threads=1):
    """:func:`_outcome`, and how many shards the kernel read from their values."""
    before = _memshard.counts()["read"]
    got = _outcome(store, sel, threads)
    return got, _memshard.counts()["read"] - before


def _same(got, want) -> None:
    assert got[0] == want[0], (got, want)
    if got[0] == "values":
        np.testing.assert_array_equal(got[1], want[1])
    else:
        assert got[1] == want[1]


@pytest.mark.parametrize("layout, raw", [("le-crc-end", False), ("le-crc-start", False),
                                         ("be-end", True), ("le-crc-start", True),
                                         ("le-2crc-start", True)])
@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_shard_reads_as_the_python_path_reads_it(monkeypatch, layout, kind, raw):
    if kind == "bad_crc" and "crc" not in layout:
        pytest.skip("no checksum to damage")
    store = MemoryStore()
    _make(store, layout, inner=(LE,) if raw else (LE, ZSTD))
    store.set("c/0/1", _damage(store.get("c/0/1"), kind, layout))
    for name, sel in SELS.items():
        got, read = _kernel(store, sel)
        assert read > 0, name                    # the good shards, at least
        _same(got, _python(monkeypatch, store, sel))


@pytest.mark.parametrize("threads", [1, 2])
def test_a_window_of_many_shards_some_missing_or_damaged(monkeypatch, threads):
    """64 shards read at once, some not stored, one all missing entries, one with missing
    entries; then two damaged among them: the first failing shard's error in either path."""
    store = MemoryStore()
    _make(store, shape=(256, 256))
    for i in range(0, 64, 3):
        store.delete(f"c/{i // 8}/{i % 8}")
    for key, kind in (("c/1/2", "all_missing"), ("c/7/6", "missing_mixed")):
        store.set(key, _damage(store.get(key), kind, "le-crc-end"))
    sels = [lambda z: z[...], lambda z: z[5:250, 3:200], lambda z: z.oindex[::7, ::9],
            lambda z: z.vindex[np.arange(0, 256, 3), np.arange(255, -1, -3)[:86]]]
    for sel in sels:
        got, read = _kernel(store, sel, threads)
        assert got[0] == "values" and read > 0
        _same(got, _python(monkeypatch, store, sel, threads))
    for key in ("c/4/5", "c/6/2"):
        store.set(key, _damage(store.get(key), "past_end", "le-crc-end"))
    for sel in sels[:2]:
        got, _ = _kernel(store, sel, threads)
        assert got[0] != "values" and "c/4/5" in got[1]
        _same(got, _python(monkeypatch, store, sel, threads))


CHAINS = {"raw": [LE], "zstd": [LE, ZSTD], "be-crc": [BE, CRC], "le-zstd-crc": [LE, ZSTD, CRC]}


@pytest.mark.parametrize("seed", range(12))
def test_random_arrays_and_selections_read_as_the_python_path_reads_them(monkeypatch, seed):
    """Random shapes, shards and inner chunks, index layouts and chains, shards small
    (``bytes``) and large (pooled values), some shards not stored; boxes, outer and point
    selections: the kernel's values are the Python path's and numpy's."""
    rng = np.random.default_rng(seed)
    large = seed % 3 == 0                       # shards of 64 KiB and more: pooled values
    chunk = tuple(int(c) for c in rng.integers(4 if large else 2, 9, 2))
    ratio = tuple(int(r) for r in rng.integers(2, 7, 2)) if not large else (40, 40)
    shard = tuple(c * r for c, r in zip(chunk, ratio))
    shape = tuple(int(s * rng.integers(1, 4) - rng.integers(0, s)) for s in shard)
    if large:                                   # the first shard whole
        shape = tuple(s + int(rng.integers(0, s)) for s in shard)
    layout = list(LAYOUTS)[seed % len(LAYOUTS)]
    store = MemoryStore()
    chain = ("raw", "be-crc")[seed % 2] if large else list(CHAINS)[seed % len(CHAINS)]
    v = _make(store, layout, inner=CHAINS[chain], shape=shape,
              shard=shard, chunk=chunk, dtype="int32")
    keys = list(store.list_prefix("c/"))
    want = v.copy()
    for k in keys[::3][1:]:
        store.delete(k)
        i, j = map(int, k.split("/")[1:])
        want[i * shard[0]:(i + 1) * shard[0], j * shard[1]:(j + 1) * shard[1]] = -1
    assert any(isinstance(store._data[k], Value) for k in store.list_prefix("c/")) == large
    got, read = _kernel(store, lambda z: z[...])
    assert read == len(keys) - len(keys[::3][1:])
    np.testing.assert_array_equal(got[1], want)
    for _ in range(6):
        a = [int(rng.integers(0, s)) for s in shape]
        b = [int(rng.integers(x + 1, s + 1)) for x, s in zip(a, shape)]
        st = [int(rng.integers(1, 4)) for _ in shape]
        idx = tuple(np.sort(rng.choice(s, min(s, 7), replace=False)) for s in shape)
        pts = tuple(rng.integers(0, s, 30) for s in shape)
        for sel in (lambda z: z[a[0]:b[0], a[1]:b[1]],
                    lambda z: z[a[0]::st[0], a[1]:b[1]:st[1]],
                    lambda z: z.oindex[idx], lambda z: z.vindex[pts]):
            got, read = _kernel(store, sel)
            assert got[0] == "values"
            _same(got, _python(monkeypatch, store, sel))
            np.testing.assert_array_equal(got[1], sel(NumpySelections(want)))


def test_a_read_of_many_shards_reads_each_by_the_kernel_once():
    store = MemoryStore()
    v = _make(store)
    z = zarrx.open_array(store, mode="r")
    before = _memshard.counts()
    with zarrx.config.set(threads=1):
        np.testing.assert_array_equal(z[...], v)
        np.testing.assert_array_equal(z[5:60, 3:40], v[5:60, 3:40])
        np.testing.assert_array_equal(z[::3, 1::2], v[::3, 1::2])
    after = _memshard.counts()
    assert after["handed_on"] == before["handed_on"]
    assert after["read"] - before["read"] == 4 + 4 + 4


def test_a_subclass_with_its_own_snapshot_reads_through_it():
    seen: list = []

    class Watching(MemoryStore):
        def snapshot(self, key):  # type: ignore[override]
            seen.append(key)
            return super().snapshot(key)

    store = Watching()
    v = _make(store)
    before = _memshard.counts()["read"]
    np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[...], v)
    assert sorted(seen) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]
    assert _memshard.counts()["read"] == before


def test_a_store_over_the_callers_dict_reads_through_the_python_path():
    """The caller may change the values of a dict it passes as a store: its shards are read
    as the store reads its values, not by the kernel."""
    data: dict = {}
    z = zarrx.create_array(store=data, shape=(64,), chunks=(4,), shards=(16,), dtype="u1",
                           compressors=None)
    z[...] = np.arange(64, dtype="u1")
    data["c/1"] = bytearray(data["c/1"])         # a value the caller may change in place
    before = _memshard.counts()["read"]
    np.testing.assert_array_equal(z[...], np.arange(64, dtype="u1"))
    data["c/1"][:4] = bytes(4)
    np.testing.assert_array_equal(z[16:20], np.zeros(4, "u1"))
    assert _memshard.counts()["read"] == before


def test_a_chunk_over_its_limit_is_refused_as_the_python_path_refuses_it(monkeypatch):
    """An entry saying an inner chunk holds far more than a chunk may (within the shard's
    bytes): refused unread, worded by the Python path."""
    store = MemoryStore()
    _make(store, "le-crc-start", inner=(LE,), shape=(1024, 1024), shard=(1024, 1024),
          chunk=(8, 8))
    blob = bytearray(store.get("c/0/0"))
    n = 16 * (128 * 128) + 4
    e = np.frombuffer(bytes(blob[:n - 4]), "<u8").reshape(-1, 2).copy()
    e[3] = n, len(blob) - n                      # chunk 3: every byte after the index
    from zarrx.codecs._crc32c import crc32c
    index = e.astype("<u8").tobytes()
    blob[:n] = index + crc32c(index).to_bytes(4, "little")
    store.set("c/0/0", bytes(blob))
    sel = lambda z: z[0:8, 0:40]                 # noqa: E731 (chunks 0 to 4 of the row)
    got, _ = _kernel(store, sel)
    assert got[0] != "values" and issubclass(got[0], ZarrError) and "c/0/0" in got[1]
    _same(got, _python(monkeypatch, store, sel))


def test_shards_rewritten_by_another_thread_are_never_mixed():
    """A writer replaces every shard, each version all one value, while reads run: each
    shard read is all one version (the value looked up is its snapshot)."""
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(256, 256), chunks=(16, 16), shards=(64, 64),
                           dtype="f4", compressors=None, fill_value=0)
    z[...] = 1
    stop = threading.Event()

    def write() -> None:
        k = 2
        while not stop.is_set():
            z[...] = k
            k += 1

    t = threading.Thread(target=write)
    t.start()
    try:
        reads = 0
        for _ in range(60):
            with zarrx.config.set(threads=1):
                got = zarrx.open_array(store, mode="r")[...]
            for i in range(4):
                for j in range(4):
                    part = got[64 * i:64 * i + 64, 64 * j:64 * j + 64]
                    assert (part == part[0, 0]).all(), (i, j)
            reads += 1
    finally:
        stop.set()
        t.join()
    assert reads == 60


@pytest.mark.parametrize("slot", [-2**63, -1, 4, 2**63 - 1])
def test_the_kernel_refuses_a_slot_outside_the_index(slot):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(8,), chunks=(2,), shards=(8,), dtype="u1",
                           compressors=None)
    z[...] = np.arange(8, dtype="u1")
    values = _memshard.ShardValues(store._data, ["c/0", "c/1"], 4, 1, True, False, None, -1,
                                   1 << 16, lambda i, s: "fallback")
    buf, starts, lengths = values.read(0, np.array([0, 3], dtype=np.int64))
    assert bytes(memoryview(buf)[starts[1]:starts[1] + lengths[1]]) == bytes([6, 7])
    assert values.read(1, np.array([0], dtype=np.int64)) is None      # not stored
    with pytest.raises(ShardError, match=f"slot {slot} out of range for 4 entries"):
        values.read(0, np.array([0, slot], dtype=np.int64))
    with pytest.raises(ShardError, match="shard values: expected 1 to 2\\^58 index entries"):
        _memshard.ShardValues(store._data, ["c/0"], 0, 1, True, False, None, -1, 1 << 16,
                              lambda i, s: "fallback")


def test_a_slot_changed_after_it_was_checked_goes_to_the_python_path():
    # the slots are the caller's array: code the read runs (here the index's word positions,
    # asked for after the slots were checked) may change them before they index the entries
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(8,), chunks=(2,), shards=(8,), dtype="u1",
                           compressors=None)
    z[...] = np.arange(8, dtype="u1")
    slots = np.array([0, 3], dtype=np.int64)

    def word_at():
        slots[1] = 1 << 40
        return np.arange(8, dtype=np.int64)

    values = _memshard.ShardValues(store._data, ["c/0"], 4, 1, True, False, word_at, -1,
                                   1 << 16, lambda i, s: ("python", i, s.tolist()))
    assert values.read(0, slots) == ("python", 0, [0, 1 << 40])
