"""The Cython shard index kernels: decode/encode, statuses, locate, and fuzzing."""
from __future__ import annotations

import struct

import crc32c
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.errors import ShardError, ZarrError
from zarrx.metadata.model import KeyEncoding, ShardLevel
from zarrx.store import _shard_index as k
from zarrx.store.chunks import KeyedChunks
from zarrx.store.memory import MemoryStore
from shard_adapter import ShardStore

M = 2**64 - 1


def raw(entries, crc=True) -> bytes:
    body = struct.pack(f"<{2 * len(entries)}Q", *[w for e in entries for w in e])
    return body + (crc32c.crc32c(body).to_bytes(4, "little") if crc else b"")


@pytest.mark.parametrize("crc", [True, False], ids=["crc", "no-crc"])
@pytest.mark.parametrize("n", [0, 1, 5, 64])
def test_encode_matches_the_format_and_round_trips(n, crc):
    entries = np.array([(M, M) if i % 3 == 1 else (10 * i, 7) for i in range(n)], dtype=np.uint64)
    entries = entries.reshape(n, 2)
    blob = k.encode_index(entries, crc)
    assert blob == raw(entries.tolist(), crc)
    assert k.index_nbytes(n, crc) == len(blob) == 16 * n + 4 * crc
    got, status, bad = k.decode_index(blob, n, -1, True, crc)
    assert (status, bad) == (k.OK, -1)
    assert got.dtype == np.uint64 and got.shape == (n, 2)
    np.testing.assert_array_equal(got, entries)


@pytest.mark.parametrize("entries, size, loc, status, bad", [   # 2 entries + crc: 36-byte index
    ([(0, 4), (4, 4)], 44, "end", k.OK, -1),
    ([(0, 4), (4, 4)], 43, "end", k.OVERLAP_INDEX, 1),
    ([(0, 4), (44, 0)], 44, "end", k.OK, -1),
    ([(0, 4), (45, 0)], 44, "end", k.PAST_END, 1),
    ([(0, 4), (M, M)], -1, "end", k.OK, -1),
    ([(M, 0), (M, M)], -1, "end", k.HALF_SENTINEL, 0),
    ([(0, M)], -1, "end", k.HALF_SENTINEL, 0),
    ([(M - 1, 1)], -1, "start", k.TOO_LARGE, 0),
    ([(M - 1, 2)], -1, "start", k.OVERFLOW, 0),
    ([(M - 1, 1)], -1, "end", k.OVERFLOW, 0),
    ([(M - 21, 1)], -1, "end", k.TOO_LARGE, 0),
    ([(M - 20, 1)], -1, "end", k.OVERFLOW, 0),
    ([(2**63 - 22, 1)], -1, "end", k.OK, -1),
    ([(2**63 - 21, 1)], -1, "end", k.TOO_LARGE, 0),
    ([(2**63 - 1, 0)], -1, "start", k.OK, -1),
    ([(2**63 - 1, 1)], -1, "start", k.TOO_LARGE, 0),
    ([(36, 4), (35, 4)], -1, "start", k.OVERLAP_INDEX, 1),
    ([(36, 4), (0, 0)], -1, "start", k.OK, -1),
    ([(20, 4)], 24, "start", k.OK, -1),
    ([(20, 4)], 23, "start", k.PAST_END, 0),
    ([(0, 4)], 19, "end", k.SHARD_TOO_SMALL, -1),
], ids=lambda v: None)
def test_decode_statuses(entries, size, loc, status, bad):
    blob = raw(entries)
    assert k.decode_index(blob, len(entries), size, loc == "end", True)[1:] == (status, bad)


def test_decode_length_and_crc():
    blob = raw([(0, 1), (1, 1)])
    assert k.decode_index(blob[:-1], 2, -1, True, True)[1] == k.BAD_LENGTH
    assert k.decode_index(blob + b"x", 2, -1, True, True)[1] == k.BAD_LENGTH
    assert k.decode_index(b"", 2, -1, True, True)[1] == k.BAD_LENGTH
    assert k.decode_index(blob[:-4], 2, -1, True, False)[1] == k.OK
    bad = blob[:-1] + bytes([blob[-1] ^ 1])
    assert k.decode_index(bad, 2, -1, True, True)[1:] == (k.BAD_CRC, -1)
    assert k.stored_crc(bad, True) == (int.from_bytes(bad[-4:], "little"), crc32c.crc32c(blob[:-4]))
    assert k.decode_index(memoryview(bytearray(blob)), 2, -1, False, True)[1] == k.OVERLAP_INDEX


@pytest.mark.parametrize("crc", [True, False])
def test_big_endian_index_round_trips(crc):
    entries = np.array([[0, 5], [5, 7], [M, M]], dtype=np.uint64)
    blob = k.encode_index(entries, crc, True)
    assert blob[:16] == struct.pack(">2Q", 0, 5)
    if crc:
        assert blob[-4:] == crc32c.crc32c(blob[:-4]).to_bytes(4, "little")
    got, status, bad = k.decode_index(blob, 3, -1, True, crc, True)
    assert (status, bad) == (k.OK, -1) and np.array_equal(got, entries)


def test_bad_arguments_are_shard_errors():
    with pytest.raises(ShardError, match="expected 0 <= n_chunks"):
        k.index_nbytes(-1, True)
    with pytest.raises(ShardError, match=r"expected an \(n, 2\) array of entries, found shape \(3,\)"):
        k.encode_index(np.zeros(3, dtype=np.uint64), True)


def test_locate():
    coords = np.array([[0, 0], [1, 3], [1, 2], [2, 0], [5, 5], [4, 4]], dtype=np.int64)
    shards, slots, runs, status, bad = k.locate(coords, np.array([2, 2], dtype=np.int64))
    assert (status, bad) == (k.OK, -1)
    assert shards.tolist() == [[0, 0], [0, 1], [0, 1], [1, 0], [2, 2], [2, 2]]
    assert slots.tolist() == [0, 3, 2, 0, 3, 0]
    assert runs.tolist() == [0, 1, 3, 4]
    *_, status, bad = k.locate(np.array([[0, 0], [0, -1]], dtype=np.int64),
                               np.array([2, 2], dtype=np.int64))
    assert (status, bad) == (k.NEGATIVE_COORD, 1)
    shards, slots, runs, status, _ = k.locate(np.zeros((3, 0), dtype=np.int64),
                                              np.zeros(0, dtype=np.int64))
    assert shards.shape == (3, 0) and slots.tolist() == [0, 0, 0] and runs.tolist() == [0]
    with pytest.raises(ShardError, match="expected > 0"):
        k.locate(np.zeros((1, 1), dtype=np.int64), np.zeros(1, dtype=np.int64))
    with pytest.raises(ShardError, match="coordinates have 2 dimensions"):
        k.locate(np.zeros((1, 2), dtype=np.int64), np.ones(1, dtype=np.int64))


# -- fuzzing ---------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(blob=st.binary(max_size=200), n=st.integers(0, 12), size=st.integers(-1, 400),
       loc=st.sampled_from(["end", "start"]), crc=st.booleans())
def test_decode_index_fuzz(blob, n, size, loc, crc):
    entries, status, bad = k.decode_index(blob, n, size, loc == "end", crc)
    assert status in range(10) and status != k.NEGATIVE_COORD
    assert entries.shape == ((0, 2) if status == k.BAD_LENGTH else (n, 2))
    assert (bad >= 0) == (status in (k.HALF_SENTINEL, k.OVERFLOW, k.PAST_END, k.OVERLAP_INDEX,
                                     k.TOO_LARGE))


def _entry_words(total):
    word = st.one_of(st.integers(0, total + 8), st.just(M), st.integers(0, M))
    return st.lists(st.tuples(word, word), min_size=4, max_size=4)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), loc=st.sampled_from(["end", "start"]), crc=st.booleans(),
       fix_crc=st.booleans())
def test_shard_store_fuzz(data, loc, crc, fix_crc):
    """Random shard bytes (random data, structured or random index): only ZarrError escapes,
    on reads (with byte ranges) and on read-modify-write."""
    payload = data.draw(st.binary(max_size=40))
    if data.draw(st.booleans()):
        idx = raw(data.draw(_entry_words(len(payload) + 68)), crc and fix_crc)
        if crc and not fix_crc:
            idx += data.draw(st.binary(min_size=4, max_size=4))
    else:
        idx = data.draw(st.binary(max_size=80))
    blob = payload + idx if loc == "end" else idx + payload
    mem = MemoryStore({"c/0": blob})
    s = ShardStore(KeyedChunks(mem, "", KeyEncoding()), ShardLevel((1,), loc, crc), (4,))
    rng = data.draw(st.sampled_from([None, "last", "slice"]))
    from zarrx.store.base import ByteRange
    br = {None: None, "last": ByteRange.last(3), "slice": ByteRange.slice(1, 2)}[rng]
    try:
        got = s.get_chunks([((i,), br) for i in range(4)])
        assert all(g is None or isinstance(g, (bytes, memoryview)) for g in got)
    except ZarrError:
        pass
    try:
        s.set_chunks([((1,), b"new")])
        s.flush()
        assert s.get_chunks([((1,), None)]) == [b"new"]
    except ZarrError:
        pass
