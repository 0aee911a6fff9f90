"""The batch methods of the stores that have them (``get_versioned_many``, ``set_if_many``:
``MemoryStore``, ``LocalStore``) do what their single-object methods do one after the other:
for random sets of keys present, missing and repeated, read, then changed, deleted or created
by another writer before the write, the same values, generations, conflicts and errors, and
the same objects (files) left. A LocalStore also gets keys its kernels leave to the Python path
(not plain, invalid, reserved), values that are not contiguous, a folder and a link where a
key should be, and generations that are not a file's."""
from __future__ import annotations

import os
import re
import tempfile
import time

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from folder_stamps import coarse_stamps
from zarrx.errors import ConflictError, ReadOnlyError, ZarrError
from zarrx.store import ByteRange, LocalStore, MemoryStore
from zarrx.store.base import ABSENT
from zarrx.store.localfs import TMP_MARK
from zarrx.store.localsnap import RecentGeneration

PLAIN = ["c/0/0", "c/0/1", "c/1/0", "top", "d/e/f/g", "d/e/h"]
ODD = ["c/\u00e9", "../up", "c//x", f"c/a{TMP_MARK}1", "dir", "link", "link/x", 7]
RANGES = [None, ByteRange.slice(1, 3), ByteRange.slice(0, 2), ByteRange.last(2),
          ByteRange.slice(5, None), ByteRange.last(100)]


def _values(draw_from: st.DataObject, i: int) -> object:
    kind = draw_from.draw(st.sampled_from(["bytes", "bytearray", "view", "strided", "none"]))
    raw = b"v%d-" % i * (i % 3 + 1)
    return {"bytes": raw, "bytearray": bytearray(raw), "view": memoryview(raw),
            "strided": memoryview(raw + raw)[::2], "none": None}[kind]


class Twins:
    """Two stores of one kind holding the same objects: the batch methods run on one, the
    single calls on the other."""

    def __init__(self, kind: str, top: str | None) -> None:
        self.kind = kind
        if kind == "memory":
            self.stores = [MemoryStore(), MemoryStore()]
            self.roots = ["", ""]
        else:
            self.roots = [os.path.join(top, "batch"), os.path.join(top, "single")]
            self.stores = [LocalStore(r) for r in self.roots]
            for r in self.roots:
                os.makedirs(os.path.join(r, "dir"))
                os.symlink(os.path.join(r, "c"), os.path.join(r, "link"))

    def objects(self, i: int) -> dict:
        store = self.stores[i]
        if self.kind == "memory":
            return {k: bytes(store.get(k)) for k in store.list_prefix("")}
        out = {}
        for folder, dirs, files in os.walk(self.roots[i]):
            rel = os.path.relpath(folder, self.roots[i])
            for n in dirs + files:
                path = os.path.join(folder, n)
                out[os.path.join(rel, n)] = None if os.path.isdir(path) or \
                    os.path.islink(path) else open(path, "rb").read()
        assert not [k for k in out if TMP_MARK in k]        # no temporary file left
        return out

    def words(self, exc: BaseException, i: int) -> tuple[type, str]:
        return type(exc), str(exc).replace(self.roots[i], "<root>") if self.roots[i] \
            else str(exc)


def _singles(store, items) -> tuple[list[int], BaseException | None]:
    failed = []
    for i, (key, new, gen) in enumerate(items):
        try:
            if new is not None:
                store.set_if(key, new, gen)
            else:
                store.delete_if(key, gen)
        except ConflictError:
            failed.append(i)
        except ZarrError as exc:
            return failed, exc
    return failed, None


def _batch(store, items) -> tuple[list[int], BaseException | None]:
    try:
        return store.set_if_many(items), None
    except ZarrError as exc:
        return [], exc


def _trial(data: st.DataObject, kind: str, top: str | None) -> None:
    twins = Twins(kind, top)
    keys = PLAIN + (ODD if kind == "local" else [])
    written = [k for k in keys if isinstance(k, str) and data.draw(st.booleans(), label=k)]
    for s in twins.stores:
        for k in written:
            try:
                s.set(k, b"old " + str(k).encode())
            except ZarrError:
                pass
    assert twins.objects(0) == twins.objects(1)
    # the read: batch and single calls of one store agree exactly (generations included)
    readable = [k for k in keys if isinstance(k, str) and k not in ("../up", "c//x") and
                TMP_MARK not in k and k not in ("link", "link/x")]
    asked = data.draw(st.lists(st.sampled_from(readable), max_size=10), label="read")
    rng = data.draw(st.sampled_from(RANGES), label="range")
    gens = []
    for s in twins.stores:
        got = s.get_versioned_many(asked, rng)
        assert got == [s.get_versioned(k, rng) for k in asked]
        assert [type(g[1]) for g in got if g] == [RecentGeneration] * sum(map(bool, got)) \
            or kind == "memory"
        gens.append({k: ABSENT if g is None else g[1] for k, g in zip(asked, got)})
    # another writer, between the read and the write
    for k in data.draw(st.lists(st.sampled_from(PLAIN), max_size=4, unique=True), label="race"):
        act = data.draw(st.sampled_from(["change", "delete"]), label=f"race {k}")
        for s in twins.stores:
            if act == "change":
                s.set(k, b"theirs " + k.encode())
            else:
                s.delete(k)
    # the write: the generations each store read, ABSENT, None or ones no file has
    n = data.draw(st.integers(0, 10), label="items")
    often = PLAIN * 10 + (ODD if kind == "local" else [])     # keys raising errors: rarely
    picks = [(data.draw(st.sampled_from(often), label="key"),
              data.draw(st.sampled_from(["read", "absent", "none", "other", "short"]),
                        label="generation")) for _ in range(n)]
    values = [_values(data, i) for i in range(n)]
    results = []
    for j, s in enumerate(twins.stores):
        items = []
        for (k, how), v in zip(picks, values):
            g = {"read": gens[j].get(k, ABSENT), "absent": ABSENT, "none": None,
                 "other": (0, 0, 0, 0, 0), "short": ("x",)}[how]
            items.append((k, v, g))
        failed, exc = (_batch if j == 0 else _singles)(s, items)
        results.append((failed, None if exc is None else twins.words(exc, j)))
    event(f"conflicts: {bool(results[1][0])}; error: "
          f"{'none' if results[1][1] is None else results[1][1][0].__name__}")
    if results[0][1] is None:
        assert results[0] == results[1]
    else:                       # the batch raised: the items before it were written alike
        assert results[0][1] == results[1][1]
    assert twins.objects(0) == twins.objects(1)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_memory_batches_do_what_single_calls_do(data):
    _trial(data, "memory", None)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_local_batches_do_what_single_calls_do(data):
    with coarse_stamps(), tempfile.TemporaryDirectory() as top:
        _trial(data, "local", top)


def test_two_items_of_one_key_are_written_in_turn(tmp_path):
    """The second write of a key from the generation both were read at is refused, as the
    second of two single calls is (before, a MemoryStore batch wrote both)."""
    for store in (MemoryStore(), LocalStore(tmp_path)):
        store.set("k", b"1")
        g = store.generation("k")
        assert store.set_if_many([("k", b"2", g), ("k", b"3", g)]) == [1]
        assert bytes(store.get("k")) == b"2"
        assert store.set_if_many([("k", None, store.generation("k")), ("k", b"4", ABSENT),
                                  ("k", b"5", ABSENT)]) == [2]
        assert bytes(store.get("k")) == b"4"


def test_settled_files_read_at_plain_generations(tmp_path):
    """Generations of files whose stamps are older than the clock's tick are plain tuples,
    as ``get_versioned`` gives them; recent ones are ``RecentGeneration``, equal to them."""
    store = LocalStore(tmp_path)
    store.set("a/b", b"x")
    with coarse_stamps():
        (_, recent), = store.get_versioned_many(["a/b"])
    give_up = time.monotonic() + 5      # until the clock's tick passed the file's stamps
    while type(store.get_versioned("a/b")[1]) is RecentGeneration and \
            time.monotonic() < give_up:
        time.sleep(0.001)
    (_, plain), = store.get_versioned_many(["a/b"])
    assert type(recent) is RecentGeneration and type(plain) is tuple and recent == plain
    assert store.get_versioned("a/b")[1] == plain


def test_a_read_only_store_refuses_a_batch_as_set_if_does(tmp_path):
    LocalStore(tmp_path).set("k", b"1")
    store = LocalStore(tmp_path, read_only=True)
    g = store.get_versioned_many(["k"])[0][1]
    with pytest.raises(ReadOnlyError, match=re.escape(
            f"{store!r}: cannot write 'k': the store is read-only")):
        store.set_if_many([("k", b"2", g)])
    assert store.get("k") == b"1"


def test_durable_batches_write_what_they_write_otherwise(tmp_path):
    """With ``fsync=True`` (each file and its folder flushed) a batch writes the same."""
    store = LocalStore(tmp_path, fsync=True)
    store.set("c/0", b"0")
    g = store.generation("c/0")
    assert store.set_if_many([("c/0", b"new", g), ("c/1", b"one", ABSENT),
                              ("e/f", b"made", None), ("c/0", None, g)]) == [3]
    assert {k: store.get(k) for k in store.list_prefix("")} == {
        "c/0": b"new", "c/1": b"one", "e/f": b"made"}
