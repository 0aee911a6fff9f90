"""The contract every zarrx Store fulfils, as a reusable test base class.

Subclass :class:`StoreContract` in a ``test_*.py`` module, name the subclass ``Test...``, and
implement ``make_store`` (a new, empty, writable store) and ``reopen_read_only`` (the same data,
opened read-only). Switch off what a store cannot do with the class flags. The tests speak only
of the Store interface, so wrappers (CountingStore, ShardStore) run them too. The generation
tests (versions, conditional writes, snapshots) live in ``generation_contract.py`` and are
inherited.
"""
from __future__ import annotations

import os
import random
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from generation_contract import GenerationContract

from zarrx.errors import ReadOnlyError, StoreError
from zarrx.store.base import ByteRange, Store

TREE = {
    "zarr.json": b"{}",
    "c/0/0": b"chunk-0-0",
    "c/0/1": b"chunk-0-1",
    "c/1/0": b"chunk-1-0",
    "c/10/0": b"chunk-10-0",
    "sub/zarr.json": b'{"node_type": "group"}',
    "sub/c/0": b"sub-chunk",
}
DIGITS = b"0123456789"

VALUES = {
    "bytes": (b"abc", b"abc"),
    "bytearray": (bytearray(b"abc"), b"abc"),
    "memoryview": (memoryview(b"xabcx")[1:4], b"abc"),
    "numpy-f8-2d": (np.arange(6, dtype="<f8").reshape(2, 3), np.arange(6, dtype="<f8").tobytes()),
    "numpy-u1": (np.frombuffer(b"abc", dtype="u1"), b"abc"),
    "numpy-strided": (np.arange(10, dtype="<i4")[::2], np.arange(10, dtype="<i4")[::2].tobytes()),
    "memoryview-of-numpy": (memoryview(np.arange(4, dtype="<u2")),
                            np.arange(4, dtype="<u2").tobytes()),
}

RANGES = {   # over DIGITS (10 bytes)
    "none": (None, DIGITS),
    "full": (ByteRange.full(), DIGITS),
    "slice-inside": (ByteRange.slice(2, 3), b"234"),
    "slice-to-end": (ByteRange.slice(7), b"789"),
    "slice-past-end-clipped": (ByteRange.slice(8, 100), b"89"),
    "offset-at-end": (ByteRange.slice(10, 5), b""),
    "offset-past-end": (ByteRange.slice(50, 5), b""),
    "slice-zero-length": (ByteRange.slice(3, 0), b""),
    "suffix-smaller": (ByteRange.last(4), b"6789"),
    "suffix-equal": (ByteRange.last(10), DIGITS),
    "suffix-larger": (ByteRange.last(100), DIGITS),
    "suffix-zero": (ByteRange.last(0), b""),
}


def fill(store: Store, items: dict[str, bytes] = TREE) -> None:
    for key, value in items.items():
        store.set(key, value)


class StoreContract(GenerationContract):
    supports_delete = True       # delete of an existing key
    supports_overwrite = True    # set of an existing key
    snapshot_pins_version = False  # snapshots serve a replaced version (else ConflictError)
    large_size = 3 * 2**20 + 17

    def make_store(self, tmp_path: Path) -> Store:
        raise NotImplementedError

    def reopen_read_only(self, store: Store, tmp_path: Path) -> Store:
        """The data of ``store`` (which the caller stops using) opened read-only."""
        raise NotImplementedError

    @pytest.fixture
    def store(self, tmp_path: Path):
        s = self.make_store(tmp_path)
        yield s
        s.close()

    # -- reads -------------------------------------------------------------------------------
    def test_get_missing_is_none(self, store: Store) -> None:
        assert store.get("nothing/here") is None
        assert store.get("nothing", ByteRange.last(3)) is None
        assert store.get("nothing", ByteRange.slice(1, 2)) is None

    @pytest.mark.parametrize("name", list(VALUES))
    def test_round_trip(self, store: Store, name: str) -> None:
        value, expected = VALUES[name]
        store.set("k", value)
        got = store.get("k")
        assert type(got) is bytes
        assert got == expected

    def test_empty_value(self, store: Store) -> None:
        store.set("empty", b"")
        assert store.get("empty") == b""
        assert store.exists("empty")
        assert store.get("empty", ByteRange.last(4)) == b""
        assert store.get("empty", ByteRange.slice(0, 4)) == b""
        assert "empty" in set(store.list_prefix(""))

    @pytest.mark.parametrize("name", list(RANGES))
    def test_byte_range(self, store: Store, name: str) -> None:
        rng, expected = RANGES[name]
        store.set("d/digits", DIGITS)
        assert store.get("d/digits", rng) == expected
        assert store.get_many([("d/digits", rng)]) == [expected]

    def test_get_many_order(self, store: Store) -> None:
        fill(store)
        requests = [("c/0/1", None), ("missing", None), ("zarr.json", ByteRange.slice(1, 5)),
                    ("c/0/0", ByteRange.last(3)), ("missing/too", ByteRange.last(1)),
                    ("c/0/1", ByteRange.slice(6))]
        expected = [b"chunk-0-1", None, b"}", b"0-0", None, b"0-1"]
        assert store.get_many(requests) == expected
        assert store.get_many(iter(requests)) == expected          # any iterable
        assert store.get_many([]) == []

    def test_getsize(self, store: Store) -> None:
        fill(store)
        assert store.getsize("c/0/1") == len(b"chunk-0-1")
        assert store.getsize("missing") is None
        assert store.getsize("c") is None             # a "directory" is not an object

    def test_get_many_buffers_match_get_many(self, store: Store) -> None:
        fill(store)
        requests = [("c/0/1", None), ("missing", None), ("zarr.json", ByteRange.slice(1, 5)),
                    ("c/0/0", ByteRange.last(3)), ("c/0/1", ByteRange.slice(6))]
        got = store.get_many_buffers(requests)
        assert [None if v is None else bytes(v) for v in got] == store.get_many(requests)

    def test_get_many_large_batch_keeps_order(self, store: Store) -> None:
        items = {f"m/{i}": b"v%d" % i for i in range(60)}
        fill(store, items)
        keys = list(items) + [f"m/x{i}" for i in range(10)]
        random.Random(7).shuffle(keys)
        got = store.get_many([(k, None) for k in keys])
        assert got == [items.get(k) for k in keys]

    def test_exists(self, store: Store) -> None:
        fill(store)
        assert store.exists("c/0/0")
        assert not store.exists("c/0/2")
        assert not store.exists("nothing")

    def test_directory_is_not_a_key(self, store: Store) -> None:
        fill(store)
        assert store.get("c") is None
        assert store.get("c/0", ByteRange.last(1)) is None
        assert not store.exists("sub")

    # -- listing -----------------------------------------------------------------------------
    def test_list_prefix(self, store: Store) -> None:
        fill(store)
        assert sorted(store.list_prefix("")) == sorted(TREE)
        assert sorted(store.list_prefix("c/")) == ["c/0/0", "c/0/1", "c/1/0", "c/10/0"]
        assert sorted(store.list_prefix("c/0/")) == ["c/0/0", "c/0/1"]
        assert sorted(store.list_prefix("c/1")) == ["c/1/0", "c/10/0"]   # a plain string prefix
        assert sorted(store.list_prefix("sub/zarr")) == ["sub/zarr.json"]
        assert sorted(store.list_prefix("zarr.json")) == ["zarr.json"]
        assert list(store.list_prefix("nothing/")) == []
        assert list(store.list_prefix("../")) == []
        assert sorted(store.list()) == sorted(TREE)

    @pytest.mark.parametrize("prefix, expected", [
        ("", (["zarr.json"], ["c", "sub"])),
        ("c/", ([], ["0", "1", "10"])),
        ("c", ([], ["0", "1", "10"])),
        ("c/0/", (["0", "1"], [])),
        ("sub/", (["zarr.json"], ["c"])),
        ("sub/c/", (["0"], [])),
        ("nothing/", ([], [])),
    ], ids=["root", "c-slash", "c-no-slash", "nested", "sub", "sub-nested", "missing"])
    def test_list_dir(self, store: Store, prefix: str, expected: tuple) -> None:
        fill(store)
        assert store.list_dir(prefix) == expected

    # -- writes ------------------------------------------------------------------------------
    def test_set_many(self, store: Store) -> None:
        store.set_many(TREE.items())
        assert {k: store.get(k) for k in TREE} == TREE

    def test_overwrite(self, store: Store) -> None:
        if not self.supports_overwrite:
            pytest.skip("the store cannot overwrite a key")
        store.set("c/0/0", b"first value")
        store.set("c/0/0", b"second")
        assert store.get("c/0/0") == b"second"
        assert list(store.list_prefix("c/")) == ["c/0/0"]

    def test_delete_missing_is_noop(self, store: Store) -> None:
        store.delete("nothing")
        store.delete("nothing/at/all")
        store.delete_many(["x", "y/z"])
        assert list(store.list_prefix("")) == []

    def test_delete(self, store: Store) -> None:
        if not self.supports_delete:
            pytest.skip("the store cannot delete")
        fill(store)
        store.delete("c/0/0")
        assert store.get("c/0/0") is None
        assert not store.exists("c/0/0")
        assert store.get("c/0/1") == TREE["c/0/1"]
        store.delete_many(["c/0/1", "c/1/0", "never"])
        assert sorted(store.list_prefix("c/")) == ["c/10/0"]
        assert store.list_dir("c/") == ([], ["10"])

    def test_delete_prefix(self, store: Store) -> None:
        if not self.supports_delete:
            pytest.skip("the store cannot delete")
        fill(store)
        store.delete_prefix("c/")
        assert sorted(store.list_prefix("")) == ["sub/c/0", "sub/zarr.json", "zarr.json"]
        assert store.list_dir("") == (["zarr.json"], ["sub"])
        store.delete_prefix("")
        assert list(store.list_prefix("")) == []
        store.delete_prefix("nothing/")

    def test_read_only_refuses_writes(self, store: Store, tmp_path: Path) -> None:
        fill(store)
        ro = self.reopen_read_only(store, tmp_path)
        try:
            assert ro.read_only
            assert ro.get("c/0/0") == TREE["c/0/0"]
            assert ro.get_many([("zarr.json", None)]) == [TREE["zarr.json"]]
            writes = [lambda: ro.set("c/0/0", b"x"), lambda: ro.set("new", b"x"),
                      lambda: ro.set_many([("new", b"x")]), lambda: ro.delete("c/0/0"),
                      lambda: ro.delete_many(["c/0/0"]), lambda: ro.delete_prefix("c/")]
            for write in writes:
                with pytest.raises(ReadOnlyError):
                    write()
            assert {k: ro.get(k) for k in ro.list_prefix("")} == TREE
        finally:
            ro.close()

    def test_large_value(self, store: Store) -> None:
        value = os.urandom(self.large_size)
        store.set("big/value", value)
        assert store.get("big/value") == value
        mid = self.large_size // 2
        assert store.get("big/value", ByteRange.slice(mid, 1000)) == value[mid:mid + 1000]
        assert store.get("big/value", ByteRange.last(70000)) == value[-70000:]

    def test_bad_value_is_store_error(self, store: Store) -> None:
        for bad in (123, "text", None):
            with pytest.raises(StoreError, match="expected bytes-like"):
                store.set("k", bad)  # type: ignore[arg-type]
        assert store.get("k") is None

    def test_non_str_key_is_store_error(self, store: Store) -> None:
        with pytest.raises(StoreError, match="expected str"):
            store.get(5)  # type: ignore[arg-type]

    @pytest.mark.parametrize("prefix", [5, None, b"a/"], ids=repr)
    def test_non_str_prefix_is_store_error(self, store: Store, prefix: object) -> None:
        store.set("a/k", b"1")
        calls = [lambda: list(store.list_prefix(prefix)), lambda: store.list_dir(prefix),
                 lambda: store.delete_prefix(prefix)]
        for call in calls:      # before: AttributeError / TypeError, or nothing listed
            with pytest.raises(StoreError, match=f"prefix {re.escape(repr(prefix))}: "
                                                 f"expected str, found {type(prefix).__name__}"):
                call()  # type: ignore[arg-type]
        assert store.get("a/k") == b"1"

    def test_concurrent_set_get(self, store: Store) -> None:
        errors: list[BaseException] = []

        def work(t: int) -> None:
            try:
                for i in range(20):
                    key, value = f"t{t}/{i}", b"%d-%d" % (t, i) * (i + 1)
                    store.set(key, value)
                    assert store.get(key) == value
                    assert store.get_many([(key, ByteRange.last(2)), ("none", None)]) == \
                        [value[-2:], None]
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert not errors, errors[0]
        assert len(list(store.list_prefix("t"))) == 8 * 20

    def test_concurrent_overwrite_is_never_torn(self, store: Store) -> None:
        if not self.supports_overwrite:
            pytest.skip("the store cannot overwrite a key")
        values = [bytes([i]) * (1000 + 5000 * i) for i in range(4)]
        store.set("shared", values[0])
        stop = threading.Event()
        seen: list[bytes | None] = []

        def read() -> None:
            while not stop.is_set():
                seen.append(store.get("shared"))

        readers = [threading.Thread(target=read) for _ in range(3)]
        for th in readers:
            th.start()
        for i in range(40):
            store.set("shared", values[i % 4])
        stop.set()
        for th in readers:
            th.join()
        assert seen and all(v in values for v in seen)

    def test_close_twice(self, store: Store) -> None:
        store.set("k", b"v")
        store.close()
        store.close()
