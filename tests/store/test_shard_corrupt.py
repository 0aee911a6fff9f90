"""Corrupt shards: every malformed index or shard is a ShardError with an exact message."""
from __future__ import annotations

import re
import struct

import crc32c
import pytest

from zarrx.errors import ShardError, ZarrError
from zarrx.metadata.model import KeyEncoding, ShardLevel
from zarrx.store.chunks import KeyedChunks
from zarrx.store.memory import MemoryStore
from shard_adapter import ShardStore

M = 2**64 - 1
DATA = b"0123456789abcdef"
NAME = "array 'a' shard 'a/c/0/0'"          # the error's location fields, as str() puts them
ALL = [(0, 0), (0, 1), (1, 0), (1, 1)]


def index(entries, crc=True) -> bytes:
    raw = struct.pack(f"<{2 * len(entries)}Q", *[w for e in entries for w in e])
    return raw + (crc32c.crc32c(raw).to_bytes(4, "little") if crc else b"")


def shard(entries=None, loc="end", crc=True, data=DATA) -> bytes:
    base = 0 if loc == "end" else 64 + 4 * crc
    if entries is None:
        entries = [(base + 4 * i, 4) for i in range(4)]
    idx = index(entries, crc)
    return data + idx if loc == "end" else idx + data


def with_entry(i, entry, loc="end", crc=True) -> bytes:
    base = 0 if loc == "end" else 64 + 4 * crc
    entries = [(base + 4 * k, 4) for k in range(4)]
    entries[i] = entry
    return shard(entries, loc, crc)


def flip(blob: bytes, pos: int) -> bytes:
    return blob[:pos] + bytes([blob[pos] ^ 0x40]) + blob[pos + 1:]


def crc_message(blob: bytes, loc="end") -> str:
    idx = blob[-68:] if loc == "end" else blob[:68]
    stored = int.from_bytes(idx[64:], "little")
    return (f"{NAME}: index checksum mismatch: stored crc32c {stored:#010x}, computed "
            f"{crc32c.crc32c(idx[:64]):#010x} over the 64-byte index")


def entry(i, coords) -> str:
    return f"{NAME}: index entry {i} (inner chunk {coords})"


LAYOUT = "(4 entries x 16 B + 4 B crc32c)"
# id: (index_location, crc32c, shard bytes, action, message)
CASES = {
    "past-end-read": ("end", True, with_entry(1, (80, 20)), "read",
                      f"{entry(1, (0, 1))}: bytes [80, 100) extend past the end of the 84-byte "
                      f"shard"),
    "past-end-write": ("end", True, with_entry(1, (80, 20)), "write",
                       f"{entry(1, (0, 1))}: bytes [80, 100) extend past the end of the 84-byte "
                       f"shard"),
    "past-end-far": ("end", True, with_entry(1, (2**40, 20)), "read",
                     f"{entry(1, (0, 1))}: bytes [1099511627776, 1099511627796) extend past the "
                     f"end of the 84-byte shard"),
    "past-end-start-read": ("start", True, with_entry(3, (80, 20), "start"), "read",
                            f"{entry(3, (1, 1))}: bytes [80, 100) extend past the end of the "
                            f"84-byte shard"),
    "zero-length-past-end-write": ("end", True, with_entry(1, (100, 0)), "write",
                                   f"{entry(1, (0, 1))}: bytes [100, 100) extend past the end "
                                   f"of the 84-byte shard"),
    "overflow-read": ("end", True, with_entry(2, (M - 1, 4)), "read",
                      f"{entry(2, (1, 0))}: offset 18446744073709551614 + nbytes 4 overflows "
                      f"uint64"),
    "overflow-write": ("end", True, with_entry(2, (M - 1, 4)), "write",
                       f"{entry(2, (1, 0))}: offset 18446744073709551614 + nbytes 4 overflows "
                       f"uint64"),
    "overflow-start": ("start", True, with_entry(0, (4, M - 3), "start"), "read",
                       f"{entry(0, (0, 0))}: offset 4 + nbytes 18446744073709551612 overflows "
                       f"uint64"),
    "overflow-with-index": ("end", True, with_entry(1, (2**64 - 70, 4)), "read",
                            f"{entry(1, (0, 1))}: offset 18446744073709551546 + nbytes 4 + the "
                            f"68-byte index overflows uint64"),
    "too-large": ("end", True, with_entry(1, (2**63 - 80, 20)), "read",
                  f"{entry(1, (0, 1))}: bytes [9223372036854775728, 9223372036854775748) and the "
                  f"68-byte index after them reach past 2^63-1, the largest possible shard"),
    "too-large-start": ("start", True, with_entry(1, (2**63, 0), "start"), "read",
                        f"{entry(1, (0, 1))}: bytes [9223372036854775808, 9223372036854775808) "
                        f"reach past 2^63-1, the largest possible shard"),
    "overlap-end-write": ("end", True, with_entry(3, (10, 20)), "write",
                          f"{entry(3, (1, 1))}: bytes [10, 30) overlap the index at bytes "
                          f"[16, 84) of the 84-byte shard"),
    "overlap-start-read": ("start", True, with_entry(0, (0, 8), "start"), "read",
                           f"{entry(0, (0, 0))}: bytes [0, 8) overlap the index at bytes [0, 68) "
                           f"of the 84-byte shard"),
    "overlap-start-write": ("start", True, with_entry(1, (60, 8), "start"), "write",
                            f"{entry(1, (0, 1))}: bytes [60, 68) overlap the index at bytes "
                            f"[0, 68) of the 84-byte shard"),
    "half-sentinel-offset": ("end", True, with_entry(1, (M, 4)), "read",
                             f"{entry(1, (0, 1))}: offset 18446744073709551615, nbytes 4: "
                             f"expected both words 2^64-1 (missing chunk) or neither"),
    "half-sentinel-nbytes": ("end", True, with_entry(1, (4, M)), "read",
                             f"{entry(1, (0, 1))}: offset 4, nbytes 18446744073709551615: "
                             f"expected both words 2^64-1 (missing chunk) or neither"),
    "half-sentinel-no-crc": ("end", False, with_entry(2, (M, 0), crc=False), "read",
                             f"{entry(2, (1, 0))}: offset 18446744073709551615, nbytes 0: "
                             f"expected both words 2^64-1 (missing chunk) or neither"),
    "half-sentinel-start-write": ("start", True, with_entry(3, (M, 4), "start"), "write",
                                  f"{entry(3, (1, 1))}: offset 18446744073709551615, nbytes 4: "
                                  f"expected both words 2^64-1 (missing chunk) or neither"),
    "bad-entry-elsewhere": ("end", True, with_entry(3, (4, M)), "read-first",
                            f"{entry(3, (1, 1))}: offset 4, nbytes 18446744073709551615: "
                            f"expected both words 2^64-1 (missing chunk) or neither"),
    "bad-crc-entry-byte": ("end", True, flip(shard(), 16 + 9), "read",
                           crc_message(flip(shard(), 16 + 9))),
    "bad-crc-checksum-byte": ("end", True, flip(shard(), 83), "read",
                              crc_message(flip(shard(), 83))),
    "bad-crc-write": ("end", True, flip(shard(), 20), "write", crc_message(flip(shard(), 20))),
    "bad-crc-start": ("start", True, flip(shard(loc="start"), 3), "read",
                      crc_message(flip(shard(loc="start"), 3), "start")),
    "truncated-end": ("end", True, shard()[-10:], "read",
                      f"{NAME}: truncated: 10 bytes, shorter than its 68-byte index {LAYOUT} "
                      f"at the end"),
    "truncated-start": ("start", True, shard(loc="start")[:67], "read",
                        f"{NAME}: truncated: 67 bytes, shorter than its 68-byte index {LAYOUT} "
                        f"at the start"),
    "truncated-no-crc": ("end", False, shard(crc=False)[-63:], "read",
                         f"{NAME}: truncated: 63 bytes, shorter than its 64-byte index "
                         f"(4 entries x 16 B) at the end"),
    "truncated-write": ("end", True, b"\x00" * 5, "write",
                        f"{NAME}: truncated: 5 bytes, shorter than its 68-byte index {LAYOUT} "
                        f"at the end"),
    "empty-end": ("end", True, b"", "read",
                  f"{NAME}: empty (0 bytes); expected at least its 68-byte index {LAYOUT} at the "
                  f"end"),
    "empty-start": ("start", True, b"", "read",
                    f"{NAME}: empty (0 bytes); expected at least its 68-byte index {LAYOUT} at "
                    f"the start"),
    "empty-write": ("end", False, b"", "write",
                    f"{NAME}: empty (0 bytes); expected at least its 64-byte index "
                    f"(4 entries x 16 B) at the end"),
}


def store_with(blob: bytes, loc: str, crc: bool) -> ShardStore:
    mem = MemoryStore({"a/c/0/0": blob})
    return ShardStore(KeyedChunks(mem, "a/", KeyEncoding()), ShardLevel((2, 2), loc, crc), (4, 4),
                      key="a")


@pytest.mark.parametrize("case", list(CASES))
def test_corrupt_shard(case):
    loc, crc, blob, action, message = CASES[case]
    s = store_with(blob, loc, crc)
    with pytest.raises(ShardError) as info:
        if action == "read":
            s.get_chunks([(c, None) for c in ALL])
        elif action == "read-first":
            s.get_chunks([((0, 0), None)])
        else:
            s.set_chunks([((0, 0), b"new")])
            s.flush()
    assert str(info.value) == message
    assert (info.value.array, info.value.key, info.value.inner) == ("a", "a/c/0/0", None)
    assert str(info.value) == f"{NAME}: {info.value.detail}"     # the shard is named once
    assert isinstance(info.value, ValueError)


def test_valid_shards_of_the_table_read_back():
    for loc in ("end", "start"):
        for crc in (True, False):
            s = store_with(shard(loc=loc, crc=crc), loc, crc)
            assert s.get_chunks([(c, None) for c in ALL]) == [b"0123", b"4567", b"89ab", b"cdef"]


def test_corrupt_store_write_keeps_the_store_usable():
    s = store_with(b"", "end", True)
    with pytest.raises(ShardError):
        s.set("c/0/0", b"x")
    s.set("c/2/2", b"elsewhere")          # another shard: the failed assembly was dropped
    assert s.get("c/2/2") == b"elsewhere"


def test_nested_level_validates_against_the_known_size():
    mem = MemoryStore()
    outer = ShardStore(KeyedChunks(mem, "n/", KeyEncoding()), ShardLevel((4, 4)), (8, 8), key="n")
    outer.set_chunks([((0, 0), with_entry(1, (80, 20)))])       # an 84-byte inner-level shard
    outer.flush()
    inner = ShardStore(ShardStore(KeyedChunks(mem, "n/", KeyEncoding()), ShardLevel((4, 4)),
                                  (8, 8), key="n"), ShardLevel((2, 2)), (4, 4), key="n")
    with pytest.raises(ShardError) as info:
        inner.get_chunks([((0, 0), None)])
    assert str(info.value) == ("array 'n' shard 'n/c/0/0' inner chunk 'c/0/0': index entry 1 "
                               "(inner chunk (0, 1)): bytes [80, 100) extend past the end of the "
                               "84-byte shard")
    assert (info.value.array, info.value.key, info.value.inner) == ("n", "n/c/0/0", "c/0/0")


class SizeHidingStore(MemoryStore):
    """A store whose snapshots do not know the object's size (as an object store's do not
    before the first read): the shard's size is then unknown when its index is decoded."""

    def snapshot(self, key):
        snap = super().snapshot(key)
        if snap is not None:
            snap.size = None
        return snap


# id: (shard bytes, index_location, message) when the shard's size is not known at decode
LAZY = {
    "past-end": (with_entry(1, (80, 20)), "end",
                 f"{entry(1, (0, 1))}: bytes [80, 100) extend past the end of the shard "
                 f"(a read of bytes [80, 100) returned 4 bytes)"),
    "past-end-far": (with_entry(1, (2**40, 20)), "end",
                     f"{entry(1, (0, 1))}: bytes [1099511627776, 1099511627796) extend past the "
                     f"end of the shard (a read of bytes [1099511627776, 1099511627796) returned "
                     f"0 bytes)"),
    "past-end-start": (with_entry(3, (80, 20), "start"), "start",
                       f"{entry(3, (1, 1))}: bytes [80, 100) extend past the end of the shard (a "
                       f"read of bytes [80, 100) returned 4 bytes)"),
    "overlap-start": (with_entry(0, (0, 8), "start"), "start",
                      f"{entry(0, (0, 0))}: bytes [0, 8) overlap the index at bytes [0, 68) of "
                      f"the shard"),
}


@pytest.mark.parametrize("case", list(LAZY))
def test_corrupt_shard_of_unknown_size(case):
    blob, loc, message = LAZY[case]
    mem = SizeHidingStore({"a/c/0/0": blob})
    s = ShardStore(KeyedChunks(mem, "a/", KeyEncoding()), ShardLevel((2, 2), loc, True), (4, 4),
                   key="a")
    with pytest.raises(ShardError) as info:
        s.get_chunks([(c, None) for c in ALL])
    assert str(info.value) == message


def test_overlap_with_trailing_index():
    """When the shard's size is known (local and memory stores), an entry reaching into the
    trailing index is refused on reads too. Documented limit: when it is not (a suffix read of
    an object store), such an entry reads index bytes; writes always catch it."""
    blob = with_entry(3, (10, 20))
    message = (f"{entry(3, (1, 1))}: bytes [10, 30) overlap the index at bytes [16, 84) of the "
               f"84-byte shard")
    with pytest.raises(ShardError, match=re.escape(message)):
        store_with(blob, "end", True).get_chunks([((1, 1), None)])
    hidden = ShardStore(KeyedChunks(SizeHidingStore({"a/c/0/0": blob}), "a/", KeyEncoding()),
                        ShardLevel((2, 2), "end", True), (4, 4), key="a")
    assert hidden.get_chunks([((1, 1), None)]) == [blob[10:30]]
    with pytest.raises(ShardError, match=re.escape(message)):
        store_with(blob, "end", True).set("c/0/0", b"x")


def test_zero_dimensional_shard_errors_name_the_entry():
    mem = MemoryStore({"s/c": index([(M, 3)])})
    s = ShardStore(KeyedChunks(mem, "s/", KeyEncoding()), ShardLevel(()), (), key="s")
    with pytest.raises(ShardError) as info:
        s.get("c")
    assert str(info.value) == ("array 's' shard 's/c': index entry 0 (inner chunk ()): offset "
                               "18446744073709551615, nbytes 3: expected both words 2^64-1 "
                               "(missing chunk) or neither")


READS = [case for case, (_, _, _, action, _) in CASES.items() if action == "read"]


@pytest.mark.parametrize("case", READS)
def test_corrupt_shard_read_whole_from_a_file(tmp_path, monkeypatch, case):
    """A local shard wanted whole is read with one read of its file; its index is checked
    against the file's size as when the index is read first."""
    from zarrx.store import LocalStore, localsnap
    loc, crc, blob, _, message = CASES[case]
    local = LocalStore(str(tmp_path / "s"))
    local.set("a/c/0/0", blob)
    reads: list = []
    real = localsnap._pread_into
    monkeypatch.setattr(localsnap, "_pread_into",
                        lambda fd, buf, off: reads.append((off, len(buf))) or real(fd, buf, off))
    s = ShardStore(KeyedChunks(local, "a/", KeyEncoding()), ShardLevel((2, 2), loc, crc), (4, 4),
                   key="a")
    with pytest.raises(ShardError) as info:
        s.get_chunks([(c, None) for c in ALL])
    assert str(info.value) == message
    assert (info.value.array, info.value.key, info.value.inner) == ("a", "a/c/0/0", None)
    assert reads == [(0, len(blob))]


def test_valid_shards_read_whole_from_a_file(tmp_path):
    from zarrx.store import LocalStore
    local = LocalStore(str(tmp_path / "s"))
    for loc in ("end", "start"):
        for crc in (True, False):
            local.set("a/c/0/0", shard(loc=loc, crc=crc))
            s = ShardStore(KeyedChunks(local, "a/", KeyEncoding()), ShardLevel((2, 2), loc, crc),
                           (4, 4), key="a")
            assert [bytes(v) for v in s.get_chunks([(c, None) for c in ALL])] == \
                [b"0123", b"4567", b"89ab", b"cdef"]
            assert [bytes(v) for v in s.get_chunks([(c, None) for c in ALL[1:3]])] == \
                [b"4567", b"89ab"]


def test_nested_level_read_whole_from_a_file_validates_against_the_known_size(tmp_path):
    from zarrx.store import LocalStore
    local = LocalStore(str(tmp_path / "s"))
    outer = ShardStore(KeyedChunks(local, "n/", KeyEncoding()), ShardLevel((4, 4)), (8, 8),
                       key="n")
    outer.set_chunks([((0, 0), with_entry(1, (80, 20)))])       # an 84-byte inner-level shard
    outer.flush()
    inner = ShardStore(ShardStore(KeyedChunks(local, "n/", KeyEncoding()), ShardLevel((4, 4)),
                                  (8, 8), key="n"), ShardLevel((2, 2)), (4, 4), key="n")
    with pytest.raises(ShardError) as info:       # every read unit of the stored shard
        inner.get_chunks([((i, j), None) for i in range(4) for j in range(4)])
    assert str(info.value) == ("array 'n' shard 'n/c/0/0' inner chunk 'c/0/0': index entry 1 "
                               "(inner chunk (0, 1)): bytes [80, 100) extend past the end of the "
                               "84-byte shard")
