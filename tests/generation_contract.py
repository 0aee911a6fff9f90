"""The generation part of the store contract: versions, conditional reads and writes, snapshots.

:class:`~store_contract.StoreContract` inherits these tests, so every store runs them. Stores
without conditional writes (``supports_conditional_writes`` false) must refuse them with a
StoreError; stores whose snapshots pin a version (``snapshot_pins_version``) must serve the
old bytes after a replace, the others must raise ConflictError.
"""
from __future__ import annotations

import re
import threading

import pytest

from zarrx.errors import ConflictError, StoreError
from zarrx.store.base import ABSENT, ByteRange, Store

DIGITS = b"0123456789"


def _state(gen: object) -> str:
    return "no object" if gen is None else f"generation {gen!r}"


def conflict_text(action: str, key: str, expected: object, found: object) -> str:
    """The part of a ConflictError message after the store's repr, as a regex."""
    want = "no object" if expected is ABSENT else _state(expected)
    return re.escape(f": cannot {action} {key!r}: expected {want}, found {_state(found)}") + "$"


def increment(store: Store, key: str, times: int) -> int:
    """Add 1 to the decimal counter at ``key`` ``times`` times with read + set_if retry loops;
    returns the number of conflicts met."""
    conflicts = 0
    for _ in range(times):
        while True:
            got = store.get_versioned(key)
            value, gen = (0, ABSENT) if got is None else (int(bytes(got[0])), got[1])
            try:
                store.set_if(key, b"%d" % (value + 1), gen)
                break
            except ConflictError:
                conflicts += 1
    return conflicts


class GenerationContract:
    supports_overwrite = True
    supports_delete = True
    snapshot_pins_version = False   # snapshots keep serving a replaced version
    generations_per_write = True    # False: equal bytes get equal generations (S3 ETags)

    def test_generation_of_missing_key(self, store: Store) -> None:
        assert store.generation("nothing/here") is None
        assert store.get_versioned("nothing/here") is None
        assert store.get_versioned("nothing", ByteRange.last(2)) is None
        assert store.snapshot("nothing") is None

    def test_generation_stays_on_reads(self, store: Store) -> None:
        store.set("g/k", DIGITS)
        gen = store.generation("g/k")
        assert gen is not None
        hash(gen)
        store.get("g/k")
        store.get_many([("g/k", ByteRange.slice(2, 3))])
        assert store.exists("g/k") and store.getsize("g/k") == 10
        assert store.get_versioned("g/k") == (DIGITS, gen)
        with store.snapshot("g/k") as snap:
            assert [bytes(v) for v in snap.read([ByteRange.last(1)])] == [b"9"]
        assert store.generation("g/k") == gen

    def test_generations_of_several_keys_are_each_keys_generation(self, store: Store) -> None:
        store.set("g/k", DIGITS)
        store.set("g/sub/\u00e9", b"x")        # not a plain key: each store's own path
        keys = ["g/k", "nothing/here", "g/sub/\u00e9", "g/missing", "g/k"]
        assert store.generations(keys) == [store.generation(k) for k in keys]
        assert store.generations([]) == []

    def test_generation_changes_on_every_write(self, store: Store) -> None:
        if not self.supports_overwrite:
            pytest.skip("the store cannot overwrite a key")
        seen = []
        for value in (b"one", b"two", b"three!", b"two"):
            store.set("g/k", value)
            seen.append(store.generation("g/k"))
            assert store.get_versioned("g/k") == (value, seen[-1])
        if store.supports_conditional_writes and self.generations_per_write:
            # generations are per write, not per content
            store.set("g/k", b"two")
            seen.append(store.generation("g/k"))
            assert len(set(seen)) == len(seen)
        else:
            assert len(set(seen[:3])) == 3
        if self.supports_delete:
            store.delete("g/k")
            assert store.generation("g/k") is None
            store.set("g/k", b"one")
            assert store.generation("g/k") not in seen[1:]

    @pytest.mark.parametrize("rng, expected", [
        (None, DIGITS), (ByteRange.slice(2, 3), b"234"), (ByteRange.last(4), b"6789"),
        (ByteRange.slice(8, 100), b"89"), (ByteRange.slice(50, 1), b""),
    ], ids=["full", "slice", "suffix", "clipped", "past-end"])
    def test_get_versioned_ranges(self, store: Store, rng: ByteRange | None,
                                  expected: bytes) -> None:
        store.set("g/d", DIGITS)
        gen = store.generation("g/d")
        value, got = store.get_versioned("g/d", rng)
        assert (bytes(value), got) == (expected, gen)
        value, got = store.get_versioned("g/d", rng, if_generation=gen)
        assert (bytes(value), got) == (expected, gen)

    def test_get_versioned_conditions(self, store: Store) -> None:
        store.set("g/d", DIGITS)
        gen = store.generation("g/d")
        stale = ("not", "a", "generation")
        with pytest.raises(ConflictError, match=conflict_text("read", "g/d", stale, gen)):
            store.get_versioned("g/d", ByteRange.last(2), if_generation=stale)
        with pytest.raises(ConflictError, match=conflict_text("read", "g/none", gen, None)):
            store.get_versioned("g/none", if_generation=gen)
        with pytest.raises(ConflictError, match=conflict_text("read", "g/d", ABSENT, gen)):
            store.get_versioned("g/d", if_generation=ABSENT)
        assert store.get_versioned("g/none", if_generation=ABSENT) is None

    # -- conditional writes ------------------------------------------------------------------
    def test_conditional_writes_refused_when_unsupported(self, store: Store) -> None:
        if store.supports_conditional_writes:
            pytest.skip("the store supports conditional writes")
        for call in (lambda: store.set_if("k", b"v", ABSENT), lambda: store.delete_if("k", ABSENT)):
            with pytest.raises(StoreError, match="does not support conditional writes"):
                call()
        assert store.get("k") is None

    def test_set_if_absent(self, store: Store) -> None:
        if not store.supports_conditional_writes:
            pytest.skip("the store has no conditional writes")
        gen = store.set_if("g/new", b"first", ABSENT)
        assert store.get_versioned("g/new") == (b"first", gen) and store.generation("g/new") == gen
        for absent in (ABSENT, None):
            with pytest.raises(ConflictError,
                               match=conflict_text("conditionally write", "g/new", ABSENT, gen)):
                store.set_if("g/new", b"second", absent)
        assert store.get("g/new") == b"first"
        assert store.set_if("g/other", b"x", None) == store.generation("g/other")
        assert sorted(store.list_prefix("g/")) == ["g/new", "g/other"]

    def test_set_if_generation(self, store: Store) -> None:
        if not store.supports_conditional_writes or not self.supports_overwrite:
            pytest.skip("the store cannot replace a key conditionally")
        store.set("g/k", b"v1")
        g1 = store.generation("g/k")
        g2 = store.set_if("g/k", b"v2", g1)
        assert g2 != g1 and store.get_versioned("g/k") == (b"v2", g2)
        with pytest.raises(ConflictError,
                           match=conflict_text("conditionally write", "g/k", g1, g2)):
            store.set_if("g/k", b"stale", g1)
        store.set("g/k", b"v3")                 # a plain write moves the generation on too
        g3 = store.generation("g/k")
        with pytest.raises(ConflictError,
                           match=conflict_text("conditionally write", "g/k", g2, g3)):
            store.set_if("g/k", b"stale", g2)
        with pytest.raises(ConflictError,
                           match=conflict_text("conditionally write", "g/gone", g3, None)):
            store.set_if("g/gone", b"x", g3)
        assert store.get("g/k") == b"v3" and store.get("g/gone") is None
        assert list(store.list_prefix("g/")) == ["g/k"]

    def test_delete_if(self, store: Store) -> None:
        if not store.supports_conditional_writes:
            pytest.skip("the store has no conditional writes")
        store.delete_if("g/none", ABSENT)       # absent as expected: nothing to do
        store.delete_if("g/none", None)
        store.set("g/k", b"v")
        gen = store.generation("g/k")
        with pytest.raises(ConflictError,
                           match=conflict_text("conditionally delete", "g/k", ABSENT, gen)):
            store.delete_if("g/k", ABSENT)
        with pytest.raises(ConflictError,
                           match=conflict_text("conditionally delete", "g/none", gen, None)):
            store.delete_if("g/none", gen)
        if not self.supports_delete:
            return
        stale = ("stale",)
        with pytest.raises(ConflictError,
                           match=conflict_text("conditionally delete", "g/k", stale, gen)):
            store.delete_if("g/k", stale)
        assert store.get("g/k") == b"v"
        store.delete_if("g/k", gen)
        assert store.get("g/k") is None and list(store.list_prefix("")) == []
        with pytest.raises(ConflictError,
                           match=conflict_text("conditionally delete", "g/k", gen, None)):
            store.delete_if("g/k", gen)

    def test_concurrent_increments_lose_nothing(self, store: Store) -> None:
        if not store.supports_conditional_writes or not self.supports_overwrite:
            pytest.skip("the store cannot replace a key conditionally")
        errors: list[BaseException] = []

        def work() -> None:
            try:
                increment(store, "counter", 25)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, errors[0]
        assert store.get("counter") == b"100"

    # -- snapshots ---------------------------------------------------------------------------
    def test_snapshot_reads(self, store: Store) -> None:
        store.set("g/d", DIGITS)
        gen = store.generation("g/d")
        snap = store.snapshot("g/d")
        try:
            assert snap.key == "g/d" and snap.size in (None, 10)
            assert snap.generation in (None, gen)
            ranges = [None, ByteRange.full(), ByteRange.slice(2, 3), ByteRange.last(4),
                      ByteRange.slice(8, 100), ByteRange.slice(50, 1), ByteRange.last(0)]
            got = snap.read(ranges)
            assert [bytes(v) for v in got] == [DIGITS, DIGITS, b"234", b"6789", b"89", b"", b""]
            assert snap.generation == gen
            assert snap.read([]) == []
        finally:
            snap.close()
        snap.close()

    def test_snapshot_across_a_replace(self, store: Store) -> None:
        if not self.supports_overwrite:
            pytest.skip("the store cannot overwrite a key")
        store.set("g/d", DIGITS)
        with store.snapshot("g/d") as snap:
            first = snap.read([ByteRange.slice(0, 2)])
            store.set("g/d", b"abcdefghijklmnop")
            if self.snapshot_pins_version:
                assert [bytes(v) for v in snap.read([ByteRange.last(3), None])] == \
                    [b"789", DIGITS]
            else:
                with pytest.raises(ConflictError):
                    snap.read([ByteRange.last(3)])
        assert bytes(first[0]) == b"01"
        assert store.get("g/d") == b"abcdefghijklmnop"

    def test_snapshot_consistent_under_concurrent_replace(self, store: Store) -> None:
        if not self.supports_overwrite:
            pytest.skip("the store cannot overwrite a key")
        values = [bytes([65 + i]) * (2000 + 700 * i) for i in range(6)]
        store.set("g/s", values[0])
        stop = threading.Event()

        def write() -> None:
            i = 0
            while not stop.is_set():
                i += 1
                store.set("g/s", values[i % len(values)])

        writer = threading.Thread(target=write)
        writer.start()
        reads = conflicts = 0
        try:
            for _ in range(200):
                snap = store.snapshot("g/s")
                with snap:
                    try:
                        head, tail, whole = snap.read([ByteRange.slice(0, 1), ByteRange.last(1),
                                                       None])
                    except ConflictError:
                        conflicts += 1
                        continue
                reads += 1
                assert bytes(whole) in values          # one whole version, never a mix
                assert bytes(head) == bytes(tail) == bytes(whole)[:1]
                assert snap.size in (None, len(whole))
        finally:
            stop.set()
            writer.join()
        if self.snapshot_pins_version:
            assert conflicts == 0
        assert reads + conflicts == 200
