"""How a large read is split when the version is not known beforehand, against an in-memory
backend whose objects can change between requests: the later parts are conditioned on the
first part's ETag, and a version change anywhere makes the whole read start again."""
from __future__ import annotations

import asyncio
import os

import pytest

from zarrx.errors import ConflictError
from zarrx.store import ByteRange
from zarrx.store.remote.base import Failure, Got, RemoteStore
from zarrx.store.remote.options import RemoteOptions

KiB = 1 << 10


class Backend(RemoteStore):
    """Objects in a dict. ``meanwhile`` runs once a GET has chosen its version, before its
    headers are out: a writer that gets in between requests."""

    def __init__(self, part_size: int, **options: int) -> None:
        super().__init__(read_only=False,
                         options=RemoteOptions(part_size=part_size, **options))
        self.objects: dict[str, tuple[bytes, str]] = {}
        self.meanwhile = lambda key, start: None
        self.gets: list[tuple[int | None, str | None]] = []
        self.version = 0

    def put(self, key: str, data: bytes) -> None:
        self.version += 1
        self.objects[key] = (data, f'"v{self.version}"')

    def _url(self, key: str) -> str:
        return f"mem://{key}"

    async def _get(self, key, start, stop, suffix, if_match, on_meta=None):  # noqa: ANN001
        self.gets.append((start, if_match))
        if key not in self.objects:
            raise Failure("missing", 404)
        data, etag = self.objects[key]
        if if_match is not None and if_match != etag:
            raise Failure("precondition", 412)
        a, b = start or 0, len(data) if stop is None else min(stop, len(data))
        self.meanwhile(key, a)
        if on_meta is not None:
            on_meta(etag, len(data))
        await asyncio.sleep(0)
        return Got(data[a:b], etag, len(data), a)

    async def _head(self, key):  # noqa: ANN001
        data, etag = self.objects[key]
        return etag, len(data)

    def _failure(self, exc: BaseException) -> Failure | None:
        return None


@pytest.fixture
def store():
    s = Backend(part_size=4 * KiB)
    yield s
    s.close()


def test_a_read_split_in_parts_conditions_the_later_parts_on_the_first(store):
    data = os.urandom(10 * KiB)
    store.put("k", data)
    assert store.get("k") == data
    etag = store.objects["k"][1]
    assert store.gets == [(0, None), (4 * KiB, etag)]       # 10 KiB: parts of 4 and 6 KiB


@pytest.mark.parametrize("rng", [None, ByteRange.slice(100, 9 * KiB)])
def test_a_new_version_during_a_split_read_restarts_it(store, rng):
    old, new = os.urandom(10 * KiB), os.urandom(10 * KiB)
    store.put("k", old)
    changed = []

    def swap(key: str, start: int) -> None:           # after the first part, a writer gets in
        if start in (0, 100) and not changed:
            changed.append(1)
            store.put("k", new)

    store.meanwhile = swap
    want = new if rng is None else new[100:100 + 9 * KiB]
    assert store.get("k", rng) == want                # never a mix of the two versions
    assert changed


def test_a_read_that_keeps_losing_the_race_is_a_conflict(store):
    store.put("k", os.urandom(10 * KiB))

    def swap(key: str, start: int) -> None:
        if start == 0:
            store.put("k", os.urandom(10 * KiB))

    store.meanwhile = swap
    with pytest.raises(ConflictError, match="it changed during each of 8 reads"):
        store.get("k")


def test_an_object_that_ends_in_the_first_part_is_one_request(store):
    store.put("k", b"x" * 100)
    assert store.get("k") == b"x" * 100
    assert store.get("k", ByteRange.slice(10, 9 * KiB)) == b"x" * 90
    assert len(store.gets) == 2


def test_a_first_part_retried_at_a_new_version_restarts_the_read():
    """The later parts went out conditioned on the version the first attempt saw; the retried
    first part sees the next version: the halves must not be joined."""
    store = Backend(part_size=4 * KiB)
    store.options = RemoteOptions(part_size=4 * KiB, backoff=0.001)
    old, new = os.urandom(10 * KiB), os.urandom(10 * KiB)
    store.put("k", old)
    real_get = store._get
    failed = []

    async def flaky(key, start, stop, suffix, if_match, on_meta=None):  # noqa: ANN001
        if start == 0 and not failed:                 # headers out, then the body breaks
            failed.append(1)
            on_meta(store.objects[key][1], len(old))
            await asyncio.sleep(0)
            store.put("k", new)
            raise Failure("connection")
        return await real_get(key, start, stop, suffix, if_match, on_meta)

    store._get = flaky
    try:
        assert store.get("k") == new
    finally:
        store.close()


def test_a_whole_read_of_a_known_version_conditions_every_part(store):
    data = os.urandom(10 * KiB)
    store.put("k", data)
    gen = store.generation("k")
    store.gets.clear()
    assert store.get_versioned("k", if_generation=gen) == (data, gen)
    assert store.gets == [(0, gen.value), (4 * KiB, gen.value)]
    store.put("k", os.urandom(10 * KiB))
    with pytest.raises(ConflictError):
        store.get_versioned("k", if_generation=gen)


def _starts(store: Backend) -> list[int | None]:
    return sorted(start or 0 for start, _ in store.gets)


@pytest.mark.parametrize("snapshot", [False, True])
def test_a_batch_that_would_leave_requests_idle_reads_in_smaller_parts(snapshot):
    """One 64 KiB range with 16 requests allowed in flight: parts of 4 KiB, not two of
    32 KiB, so the bytes stream over all 16 (a link that caps each connection gives the read
    16 connections' worth)."""
    store = Backend(part_size=32 * KiB, min_part_size=KiB, in_flight=16, tail_prefetch=0)
    data = os.urandom(200 * KiB)
    store.put("k", data)
    try:
        if snapshot:
            snap = store.snapshot("k")
            store.gets.clear()
            assert snap.read([ByteRange.slice(KiB, 64 * KiB)]) == [data[KiB:65 * KiB]]
        else:
            assert store.get("k", ByteRange.slice(KiB, 64 * KiB)) == data[KiB:65 * KiB]
        assert _starts(store) == [KiB + i * 4 * KiB for i in range(16)]
        etag = store.objects["k"][1]
        assert all(cond == etag for start, cond in store.gets if start != KiB or snapshot)
    finally:
        store.close()


def test_parts_never_shrink_below_the_minimum_part_size():
    store = Backend(part_size=32 * KiB, min_part_size=16 * KiB, in_flight=64)
    data = os.urandom(200 * KiB)
    store.put("k", data)
    try:
        assert store.get("k", ByteRange.slice(0, 64 * KiB)) == data[:64 * KiB]
        assert _starts(store) == [0, 16 * KiB, 32 * KiB, 48 * KiB]
    finally:
        store.close()


def test_a_batch_that_fills_the_requests_in_flight_is_not_split_further():
    """16 ranges far apart, 16 requests allowed: one request each, whatever their size."""
    store = Backend(part_size=32 * KiB, min_part_size=KiB, in_flight=16, coalesce_gap=0)
    data = os.urandom(16 * 40 * KiB)
    store.put("k", data)
    try:
        ranges = [ByteRange.slice(i * 40 * KiB, 32 * KiB) for i in range(16)]
        got = store.get_many([("k", r) for r in ranges])
        assert got == [data[r.offset:r.offset + r.length] for r in ranges]
        assert _starts(store) == [i * 40 * KiB for i in range(16)]
    finally:
        store.close()


def test_whole_objects_in_a_batch_leave_their_requests_to_the_ranges():
    """Two whole-object reads and one range, 6 requests allowed: the range gets the other 4."""
    store = Backend(part_size=32 * KiB, min_part_size=KiB, in_flight=6)
    for key in "abk":
        store.put(key, os.urandom(40 * KiB if key == "k" else KiB))
    try:
        store.get_many([("a", None), ("b", None), ("k", ByteRange.slice(0, 32 * KiB))])
        assert sorted(start or 0 for start, _ in store.gets) == [0, 0, 0, 8 * KiB, 16 * KiB,
                                                                 24 * KiB]
    finally:
        store.close()


def test_a_tiny_part_size_splits_a_large_read_into_at_most_max_parts():
    """part_size=1 on a 6 MiB object: a bounded number of requests, not one per byte."""
    from zarrx.store.remote.coalesce import MAX_PARTS
    store = Backend(part_size=1, min_part_size=1, tail_prefetch=0)
    try:
        data = os.urandom(6 << 20)
        store.put("big", data)
        assert store.get("big") == data
        assert len(store.gets) <= MAX_PARTS + 1
    finally:
        store.close()
