"""Shards holding unused bytes: inner chunks anywhere in the shard, in any order, with gaps
before, between and after them (what writers that update a shard in place, appending the
rewritten chunks and the index, leave behind; and tools that pad chunks to alignment). Such a
shard may be longer than any shard packed without gaps: it reads and takes partial writes
(written back compact), at a cost of its index and the inner chunks used, never of its length;
an index entry past the object's end or longer than an inner chunk can be is still refused."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.codecs import Crc32c, Zstd
from zarrx.errors import CodecError, ShardError
from zarrx.store import CountingStore, LocalStore, MemoryStore

MISSING = 2**64 - 1


def with_holes(blob: bytes, n: int, gaps: list[int], order: list[int] | None = None) -> bytes:
    """The shard ``blob`` (``n`` slots, index with crc32c at the end) rebuilt with its inner
    chunks in ``order`` (default: slot order), ``gaps[k]`` unused bytes before the k-th one
    stored and ``gaps[-1]`` before the index, the index entries fixed up."""
    L = 16 * n + 4
    entries = np.frombuffer(blob[-L:-4], "<u8").reshape(n, 2).copy()
    present = [i for i in range(n) if entries[i, 0] != MISSING]
    out = bytearray()
    for gap, slot in zip(gaps, order or present):
        out += b"\xab" * gap
        off, nb = (int(v) for v in entries[slot])
        entries[slot, 0] = len(out)
        out += blob[off:off + nb]
    out += b"\xcd" * gaps[-1]
    index = entries.astype("<u8").tobytes()
    return bytes(out + index + Crc32c().encode(index)[-4:])


def _stores(tmp_path):
    return {"local": LocalStore(tmp_path / "a.zarr"), "memory": MemoryStore()}


def _zarr_python(store):
    import zarr
    from zarr.storage import LocalStore as ZLocal, MemoryStore as ZMemory
    if isinstance(store, LocalStore):
        zs = ZLocal(str(store.root), read_only=True)
    else:
        zs = ZMemory({k: zarr.core.buffer.cpu.Buffer.from_bytes(store.get(k))
                      for k in store.list_prefix("")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(zs, mode="r")[:]


CASES = {
    "raw-one-byte-before": (None, [1, 0, 0, 0, 0], None),
    "raw-gaps-shuffled": (None, [3, 17, 0, 64, 9], [2, 0, 3, 1]),
    "zstd-gaps-shuffled": ([Zstd(level=1)], [100, 0, 7, 4096, 1], [3, 1, 0, 2]),
}


@pytest.mark.parametrize("where", ["local", "memory"])
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_shard_with_unused_bytes_reads_and_takes_partial_writes(tmp_path, where, case):
    compressors, gaps, order = CASES[case]
    store = _stores(tmp_path)[where]
    z = zarrx.create_array(store, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                           compressors=compressors)
    want = np.arange(64, dtype="i4")
    z[:] = want
    compact = store.get("c/0")
    store.set("c/0", with_holes(compact, 4, gaps, order))
    np.testing.assert_array_equal(_zarr_python(store), want)        # the oracle reads it
    z = zarrx.open_array(store, mode="r+")
    np.testing.assert_array_equal(z[:], want)
    np.testing.assert_array_equal(z[8:16], want[8:16])
    np.testing.assert_array_equal(z[13], want[13])
    z[9:11] = -1                        # before: refused as longer than any shard can be
    z[16:24] = -2                       # a whole inner chunk replaced, the others kept
    want[9:11], want[16:24] = -1, -2
    np.testing.assert_array_equal(z[:], want)
    np.testing.assert_array_equal(_zarr_python(store), want)
    assert len(store.get("c/0")) <= len(compact)                   # written back compact


def _hostile(store, first_gap: int, entry: tuple[int, int] | None = None) -> int:
    """The shard ``c/0`` of a raw int32 array (4 slots of 8 items) made ``first_gap`` bytes
    longer before its chunks (sparse on a local store); ``entry``: slot 0's entry instead."""
    z = zarrx.create_array(store, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                           compressors=None)
    z[:] = np.arange(64)
    blob = store.get("c/0")
    entries = np.frombuffer(blob[-68:-4], "<u8").reshape(4, 2).copy()
    entries[:, 0] += first_gap
    if entry is not None:
        entries[0] = entry
    index = entries.astype("<u8").tobytes()
    path = store.root / "c" / "0"
    with open(path, "r+b") as f:
        f.truncate(0)
        f.seek(first_gap)
        f.write(blob[:-68] + index + Crc32c().encode(index)[-4:])
    return first_gap + len(blob)


def test_a_huge_shard_with_a_small_index_costs_its_index_and_chunks(tmp_path):
    """A sparse 1 GiB shard whose valid index points at 4 inner chunks at its end: reads and
    a partial write cost the index, the chunks and the bounded head read, not 1 GiB."""
    root = LocalStore(tmp_path / "a.zarr")
    size = _hostile(root, 1 << 30)
    store = CountingStore(root)
    z = zarrx.open_array(store, mode="r+")
    np.testing.assert_array_equal(z[:32], np.arange(32))
    np.testing.assert_array_equal(z[8:16], np.arange(8, 16))
    assert store.bytes_read < 4096
    store.reset()
    z[3] = 100
    assert store.bytes_read < 4096          # the head (one byte past the limit), index, chunks
    want = np.arange(64)
    want[3] = 100
    np.testing.assert_array_equal(zarrx.open_array(root, mode="r")[:], want)
    assert (root.root / "c" / "0").stat().st_size == 196 < size
    np.testing.assert_array_equal(_zarr_python(root), want)


def test_a_long_shard_with_an_entry_past_its_end_is_still_refused(tmp_path):
    root = LocalStore(tmp_path / "a.zarr")
    size = _hostile(root, 4096, entry=(1 << 40, 32))
    z = zarrx.open_array(root, mode="r+")
    with pytest.raises(ShardError, match=re.escape(
            f"array '/' shard 'c/0': index entry 0 (inner chunk (0,)): bytes [{1 << 40}, "
            f"{(1 << 40) + 32}) extend past the end of the {size}-byte shard")):
        z[3] = 100
    assert (root.root / "c" / "0").stat().st_size == size           # left as it was


def test_a_long_shard_with_an_entry_over_its_index_is_still_refused(tmp_path):
    root = LocalStore(tmp_path / "a.zarr")
    size = _hostile(root, 4096, entry=(4096 + 128 + 4, 32))         # 36 bytes into the index
    z = zarrx.open_array(root, mode="r+")
    with pytest.raises(ShardError, match=re.escape(
            f"array '/' shard 'c/0': index entry 0 (inner chunk (0,)): bytes [4228, 4260) "
            f"overlap the index at bytes [4224, 4292) of the {size}-byte shard")):
        z[3] = 100
    assert (root.root / "c" / "0").stat().st_size == size


def test_a_long_shard_with_an_entry_longer_than_a_chunk_is_still_refused(tmp_path):
    root = LocalStore(tmp_path / "a.zarr")
    size = _hostile(root, 1 << 30, entry=(0, 1 << 30))
    z = zarrx.open_array(root, mode="r+")
    with pytest.raises(CodecError, match=re.escape(
            f"array '/' shard 'c/0' inner chunk 'c/0': expected 32 bytes for a chunk of shape "
            f"(8,) and data type int32, found {1 << 30}")):
        z[10] = 100                      # slot 0 is kept: its entry is checked before reading
    assert (root.root / "c" / "0").stat().st_size == size


def test_a_shard_replaced_while_it_is_compacted_loses_no_update():
    """Another writer replaces the long shard between the bounded read and the range reads of
    its index and chunks: those reads fail on the generation, and the update starts again from
    the new shard, keeping the other writer's chunks."""
    class Racing(MemoryStore):
        race: bytes | None = None

        def get_versioned(self, key, byte_range=None, *, if_generation=None):
            got = super().get_versioned(key, byte_range, if_generation=if_generation)
            if self.race is not None and key == "c/0" and if_generation is None:
                theirs, self.race = self.race, None
                self.set(key, theirs)                 # after the read, before the write
            return got

    store = Racing()
    z = zarrx.create_array(store, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                           compressors=None)
    z[:] = np.arange(64)
    z[8:16] = -5
    theirs = with_holes(store.get("c/0"), 4, [7, 0, 0, 0, 3])     # -5 at 8:16
    z[:16] = np.arange(16)
    store.set("c/0", with_holes(store.get("c/0"), 4, [1, 2, 3, 4, 5]))
    z = zarrx.open_array(store, mode="r+")
    store.race = theirs
    z[3] = 100                              # ours, over the first long shard
    want = np.arange(64)
    want[3], want[8:16] = 100, -5
    np.testing.assert_array_equal(z[:], want)
    assert store.race is None                           # the other writer did get in
