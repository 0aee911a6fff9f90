"""ShardStore behaviour: round trips, request counts, write-once-per-shard, nesting, listing."""
from __future__ import annotations

import itertools
import random
import re
import threading

import numpy as np
import pytest

from zarrx.errors import ReadOnlyError, ShardError, StoreError
from zarrx.metadata.model import ArrayMeta, DataType, KeyEncoding, RegularGrid, ShardLevel
from zarrx.store.base import ByteRange
from zarrx.store.chunks import KeyedChunks
from zarrx.store.counting import CountingStore
from zarrx import layout
from zarrx.store.memory import MemoryStore
from zarrx.store.sharded import ShardedChunks
from shard_adapter import ShardStore

LOCATIONS = ["end", "start"]


def shard_store(store, *, chunk=(2, 2), shard=(4, 4), loc="end", crc=True, prefix="a/"):
    return ShardStore(KeyedChunks(store, prefix, KeyEncoding()), ShardLevel(chunk, loc, crc),
                      shard, key=prefix.rstrip("/"))


def value(coords) -> bytes:
    return ("v" + "-".join(map(str, coords))).encode() * (1 + sum(coords) % 3)


def shard_major(coords, per_shard):
    """Order inner-chunk coordinates shard by shard (C order within and across shards)."""
    return sorted(coords, key=lambda c: (tuple(x // p for x, p in zip(c, per_shard)), c))


@pytest.mark.parametrize("crc", [True, False], ids=["crc", "no-crc"])
@pytest.mark.parametrize("loc", LOCATIONS)
def test_round_trip(loc, crc):
    mem = MemoryStore()
    s = shard_store(mem, loc=loc, crc=crc)
    coords = list(itertools.product(range(6), range(5)))
    s.set_chunks([(c, value(c)) for c in shard_major(coords, (2, 2))])
    s.flush()
    assert sorted(mem.list_prefix("")) == [f"a/c/{i}/{j}" for i in range(3) for j in range(3)]
    fresh = shard_store(mem, loc=loc, crc=crc)
    assert fresh.get_chunks([(c, None) for c in coords]) == [value(c) for c in coords]
    assert fresh.get_chunks([((7, 7), None), ((100, 3), None)]) == [None, None]
    assert sorted(fresh.list_chunks()) == sorted(coords)
    # layout: packed in slot order, index at the requested end
    blob = mem.get("a/c/0/0")
    n_idx = 64 + (4 if crc else 0)
    body = b"".join(value(c) for c in [(0, 0), (0, 1), (1, 0), (1, 1)])
    assert (blob[:-n_idx] if loc == "end" else blob[n_idx:]) == body


@pytest.mark.parametrize("loc", LOCATIONS)
def test_byte_ranges_are_relative_to_the_inner_chunk(loc):
    mem = MemoryStore()
    s = shard_store(mem, loc=loc)
    s.set_chunks([((0, 0), b"0123456789"), ((0, 1), b"abcdef")])
    s.flush()
    fresh = shard_store(mem, loc=loc)
    cases = [(ByteRange.slice(2, 3), b"234"), (ByteRange.last(4), b"6789"),
             (ByteRange.slice(8, 100), b"89"), (ByteRange.slice(50, 1), b""),
             (ByteRange.last(100), b"0123456789"), (ByteRange.full(), b"0123456789")]
    got = fresh.get_chunks([((0, 0), rng) for rng, _ in cases] + [((0, 1), ByteRange.last(2))])
    assert got == [want for _, want in cases] + [b"ef"]


def test_zero_length_inner_chunk_is_present():
    s = shard_store(MemoryStore())
    s.set("c/0/0", b"")
    assert s.get("c/0/0") == b"" and s.exists("c/0/0") and not s.exists("c/0/1")
    assert list(s.list_prefix("")) == ["c/0/0"]


def test_overwrite_and_delete_keep_neighbours():
    mem = MemoryStore()
    s = shard_store(mem)
    s.set_many([("c/0/0", b"a" * 10), ("c/0/1", b"b" * 3), ("c/1/1", b"c")])
    s.set("c/0/1", b"B" * 7)
    assert s.get_many([("c/0/0", None), ("c/0/1", None), ("c/1/1", None)]) == \
        [b"a" * 10, b"B" * 7, b"c"]
    s.delete("c/0/0")
    s.delete("c/1/1")
    assert list(mem.list_prefix("")) == ["a/c/0/0"]
    s.delete("c/0/1")                      # last inner chunk gone: the shard is deleted
    assert list(mem.list_prefix("")) == []


def test_none_deletes_within_one_write():
    mem = MemoryStore()
    s = shard_store(mem)
    s.set_chunks([((0, 0), b"x"), ((0, 1), b"y")])
    s.flush()
    s.set_chunks([((0, 0), None), ((0, 1), None), ((1, 0), None), ((1, 1), None)])
    s.flush()
    assert list(mem.list_prefix("")) == []


# -- request counts --------------------------------------------------------------------------
def written(loc="end", present=((0, 0), (0, 1), (1, 1))):
    counting = CountingStore(MemoryStore())
    s = shard_store(counting, loc=loc)
    s.set_chunks([(c, value(c)) for c in present])
    s.flush()
    counting.reset()
    return counting, shard_store(counting, loc=loc)


@pytest.mark.parametrize("loc", LOCATIONS)
def test_one_inner_chunk_cold_then_warm(loc):
    counting, s = written(loc)
    assert s.get_chunks([((0, 1), None)]) == [value((0, 1))]
    assert counting.counts["get"] == 2 and counting.counts["get_range"] == 2
    assert counting.bytes_read == 68 + len(value((0, 1)))        # never the whole shard
    counting.reset()
    assert s.get_chunks([((1, 1), None)]) == [value((1, 1))]
    assert counting.counts["get"] == 1


def test_all_chunks_of_a_shard():
    counting, s = written()
    coords = [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert s.get_chunks([(c, None) for c in coords]) == \
        [value((0, 0)), value((0, 1)), None, value((1, 1))]
    assert counting.counts["get"] == 1 + 3                       # index + present chunks
    assert counting.counts["snapshot_read"] == 2                     # one batch each


def test_missing_shard_costs_one_request_per_batch():
    counting, s = written()
    assert s.get_chunks([((2, 2), None), ((3, 3), None), ((2, 3), None)]) == [None] * 3
    assert counting.counts["get"] == 1


def test_batches_index_requests_of_several_shards():
    counting = CountingStore(MemoryStore())
    s = shard_store(counting)
    coords = [(0, 0), (0, 2), (2, 0), (2, 2)]      # one inner chunk in each of 4 shards
    s.set_chunks([(c, value(c)) for c in coords])
    s.flush()
    counting.reset()
    fresh = shard_store(counting)
    assert fresh.get_chunks([(c, None) for c in coords]) == [value(c) for c in coords]
    # each shard is read through a snapshot of its own: one index and one data batch each
    assert counting.counts["snapshot"] == 4
    assert counting.counts["snapshot_read"] == 8 and counting.counts["get"] == 8


def test_index_cache_is_lru_of_16():
    counting = CountingStore(MemoryStore())
    s = shard_store(counting, chunk=(1,), shard=(2,))
    s.set_chunks([((i,), b"x") for i in range(0, 40, 2)])
    s.flush()
    fresh = shard_store(counting, chunk=(1,), shard=(2,))
    fresh.get_chunks([((i,), None) for i in range(0, 34, 2)])   # 17 shards: the first evicted
    counting.reset()
    fresh.get_chunks([((32,), None)])
    assert counting.counts["get"] == 1
    fresh.get_chunks([((0,), None)])
    assert counting.counts["get"] == 3


def test_writer_refreshes_its_index_cache():
    counting = CountingStore(MemoryStore())
    s = shard_store(counting)
    s.set("c/0/0", b"one")
    assert s.get("c/0/0") == b"one"
    s.set("c/0/0", b"two!")
    counting.reset()
    assert s.get("c/0/0") == b"two!"
    assert counting.counts["get"] == 1


# -- writes: one store write per shard --------------------------------------------------------
def region(rows, cols):
    return [(i, j) for i in rows for j in cols]


def test_each_shard_written_once_for_an_unaligned_region():
    counting = CountingStore(MemoryStore())
    s = shard_store(counting)                          # 2 x 2 inner chunks per shard
    before = region(range(8), range(8))
    s.set_chunks([(c, b"old") for c in shard_major(before, (2, 2))])
    s.flush()
    counting.reset()
    chunks = shard_major(region(range(1, 6), range(1, 8)), (2, 2))   # unaligned, 12 shards
    s.set_chunks([(c, value(c)) for c in chunks])
    s.flush()
    shards = {f"a/c/{i // 2}/{j // 2}" for i, j in chunks}
    assert len(shards) == 12
    assert dict(counting.sets_by_key) == {k: 1 for k in shards}
    # partly covered shards are seeded by one full read each; fully covered ones are not read
    full_reads = [k for k, n in counting.gets_by_key.items() if n]
    assert counting.counts["get_range"] == 0
    covered = {f"a/c/{i}/{j}" for i in (1, 2) for j in (1, 2, 3)}   # rows 2-5, cols 2-7
    assert sorted(full_reads) == sorted(shards - covered)
    fresh = shard_store(counting)
    got = fresh.get_chunks([(c, None) for c in before])
    assert got == [value(c) if c in set(chunks) else b"old" for c in before]


def test_c_order_writes_rewrite_shards():
    """Why callers present chunks shard-major: a C-order walk re-enters shards."""
    counting = CountingStore(MemoryStore())
    s = shard_store(counting)
    s.set_chunks([(c, b"x") for c in region(range(4), range(4))])
    s.flush()
    assert max(counting.sets_by_key.values()) == 2


def test_read_only_source_refuses_writes():
    mem = MemoryStore()
    shard_store(mem).set("c/0/0", b"x")
    ro = shard_store(MemoryStore(dict(mem._data), read_only=True))
    assert ro.read_only and ro.get("c/0/0") == b"x"
    with pytest.raises(ReadOnlyError):
        ro.set("c/0/0", b"y")
    with pytest.raises(ReadOnlyError):
        ro.delete("c/0/0")


# -- nesting -----------------------------------------------------------------------------------
def nested(store, outer_loc="end", inner_loc="end"):
    outer = ShardStore(KeyedChunks(store, "n/", KeyEncoding()), ShardLevel((4, 4), outer_loc),
                       (8, 8), key="n")
    return ShardStore(outer, ShardLevel((2, 2), inner_loc, False), (4, 4), key="n")


def nested_major(coords):
    return sorted(coords, key=lambda c: (c[0] // 4, c[1] // 4, c[0] // 2, c[1] // 2, c))


@pytest.mark.parametrize("outer_loc, inner_loc", [("end", "end"), ("start", "end"),
                                                  ("end", "start"), ("start", "start")])
def test_nested_round_trip(outer_loc, inner_loc):
    counting = CountingStore(MemoryStore())
    s = nested(counting, outer_loc, inner_loc)
    rng = random.Random(3)
    coords = [c for c in region(range(12), range(10)) if rng.random() < 0.7]
    s.set_chunks([(c, value(c)) for c in nested_major(coords)])
    s.flush()
    assert dict(counting.sets_by_key) == {f"n/c/{i}/{j}": 1 for i in range(3) for j in range(3)}
    fresh = nested(counting, outer_loc, inner_loc)
    every = region(range(12), range(10))
    assert fresh.get_chunks([(c, None) for c in every]) == \
        [value(c) if c in set(coords) else None for c in every]
    assert sorted(fresh.list_chunks()) == sorted(coords)
    counting.reset()
    cold = nested(counting, outer_loc, inner_loc)
    c = coords[-1]
    assert cold.get_chunks([(c, ByteRange.last(3))]) == [value(c)[-3:]]
    assert counting.counts["get"] == 3           # outer index, inner index, data
    assert counting.counts["get_range"] == 3


def test_nested_partial_update_keeps_the_rest():
    mem = MemoryStore()
    s = nested(mem)
    every = region(range(8), range(8))
    s.set_chunks([(c, value(c)) for c in nested_major(every)])
    s.flush()
    s.set_chunks([((5, 6), b"new"), ((1, 1), None)])
    s.flush()
    fresh = nested(mem)
    got = fresh.get_chunks([(c, None) for c in every])
    expect = {c: value(c) for c in every} | {(5, 6): b"new", (1, 1): None}
    assert got == [expect[c] for c in every]


# -- string API and listing ---------------------------------------------------------------------
def test_string_keys():
    s = shard_store(MemoryStore())
    s.set_many([("c/0/0", b"a"), ("c/3/1", b"b"), ("c/10/0", b"c")])
    assert sorted(s.list_prefix("")) == ["c/0/0", "c/10/0", "c/3/1"]
    assert sorted(s.list_prefix("c/1")) == ["c/10/0"]
    assert s.list_dir("c/") == ([], ["0", "10", "3"])
    assert s.list_dir("c/3") == (["1"], [])
    for foreign in ("zarr.json", "c/0", "c/0/0/0", "c/-1/0", "c/01/0", "c.0.0", "c"):
        assert s.get(foreign) is None and not s.exists(foreign)
        s.delete(foreign)
    with pytest.raises(StoreError, match=r"key 'c/0': expected an inner chunk key like "
                                         r"'c/0/0' with 2 coordinates"):
        s.set("c/0", b"x")
    with pytest.raises(StoreError, match="expected str"):
        s.get(5)  # type: ignore[arg-type]


def test_zero_dimensional():
    mem = MemoryStore()
    s = ShardStore(KeyedChunks(mem, "", KeyEncoding()), ShardLevel(()), (), key="")
    s.set("c", b"scalar")
    assert list(mem.list_prefix("")) == ["c"]
    assert s.get("c") == b"scalar" and list(s.list_prefix("")) == ["c"]
    assert s.get_chunks([((), ByteRange.slice(1, 2))]) == [b"ca"]


def test_bad_configuration():
    src = KeyedChunks(MemoryStore(), "a/", KeyEncoding())
    with pytest.raises(ShardError, match=re.escape(
            "sharding_indexed: chunk_shape (2, 3): expected inner chunk lengths that divide the "
            "shard shape (4, 4)")):
        ShardStore(src, ShardLevel((2, 3)), (4, 4), key="a")
    with pytest.raises(ShardError, match=re.escape(
            "sharding_indexed: chunk_shape (2,): expected inner chunk lengths that divide the "
            "shard shape (4, 4)")):
        ShardStore(src, ShardLevel((2,)), (4, 4), key="a")
    s = ShardStore(src, ShardLevel((2, 2)), (4, 4), key="a")
    with pytest.raises(StoreError, match="expected non-negative coordinates"):
        s.get_chunks([((0, -1), None)])
    with pytest.raises(StoreError, match="expected 2 values each"):
        s.get_chunks([((0, 1, 2), None)])


def test_parallel_reads():
    mem = MemoryStore()
    s = shard_store(mem, chunk=(1, 1), shard=(4, 4))
    coords = region(range(16), range(16))
    s.set_chunks([(c, value(c)) for c in shard_major(coords, (4, 4))])
    s.flush()
    reader = shard_store(mem, chunk=(1, 1), shard=(4, 4))
    errors = []

    def work(seed):
        try:
            r = random.Random(seed)
            for _ in range(30):
                batch = r.sample(coords, 7)
                assert reader.get_chunks([(c, None) for c in batch]) == [value(c) for c in batch]
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


# -- zarrx.layout: the chunk source of an array ------------------------------------------------
def meta(shape, grid, levels):
    return ArrayMeta(shape=shape, data_type=DataType("uint8", np.dtype("u1")),
                     chunk_grid=RegularGrid(grid), key_encoding=KeyEncoding(), fill_value=0,
                     codecs=(), shard_levels=levels)


def test_layout_chunk_source():
    mem = MemoryStore()
    plain = layout.chunk_source(mem, "x", meta((8,), (4,), ()))
    assert isinstance(plain, KeyedChunks) and plain.objects is plain
    m = meta((16, 16), (8, 8), (ShardLevel((4, 4)), ShardLevel((2, 2), "start")))
    src = layout.chunk_source(mem, "x", m)
    assert isinstance(src, ShardedChunks) and src.objects.prefix == "x/"
    assert [g.shard_shape for g in m.layout.shards] == [(8, 8), (4, 4)]
    assert [g.per_shard for g in m.layout.shards] == [(2, 2), (2, 2)]
    assert m.layout.read_shape == (2, 2) and m.chunk_shape == (2, 2)
    assert layout.visit_order(m) == [(4, 4), (2, 2)]
    src.commit((1, 1), [((7, 7), b"corner")], lambda j, old: None)
    assert list(mem.list_prefix("")) == ["x/c/1/1"]
    again = layout.chunk_source(mem, "x", m)
    assert again.get_chunks([((7, 7), None)]) == [b"corner"]
    assert list(layout.stored_objects(again)) == [(1, 1)]
    assert list(again.list_chunks()) == [(7, 7)]


def test_layout_transposed_shards():
    """A sharding codec after a transpose sees the transposed shard shape; the transpose is
    pushed down into the read unit's codec chain."""
    from zarrx.metadata.model import CodecSpec
    level = ShardLevel((3, 2), outer_codecs=(CodecSpec("transpose", {"order": [1, 0]}),))
    m = meta((8, 12), (4, 6), (level,))
    (g,) = m.layout.shards
    assert g.shard_shape == (6, 4) and g.per_shard == (2, 2) and g.perm == (1, 0)
    assert m.layout.read_shape == (2, 3)
    assert m.layout.read_codecs[0] == CodecSpec("transpose", {"order": [1, 0]})
    src = layout.chunk_source(MemoryStore(), "", m)
    # read unit (0, 1) is the second inner chunk along array axis 1 = codec axis 0: slot 2
    _, slots, _ = src._locate([(0, 1), (1, 0)])
    assert slots[:, 0].tolist() == [2, 1]
