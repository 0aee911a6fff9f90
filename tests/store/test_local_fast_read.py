"""LocalStore's whole-file read kernel (zarrx.store._localread) answers exactly as the Python
path does: same bytes, same None, and every key it is unsure of handed back to that path."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from zarrx.errors import StoreError
from zarrx.store import LocalStore
from zarrx.store.base import ByteRange
from zarrx.store import local as local_mod
from zarrx.store._localread import read_whole
from zarrx.store.localfs import open_how

pytestmark = pytest.mark.skipif(LocalStore("/")._tree.real_root() is None,
                                reason="no openat2 here: every read takes the Python path")

SLOW = object()


@pytest.fixture
def store(tmp_path):
    return LocalStore(tmp_path / "root")


def kernel(store, keys):
    return read_whole(store._tree.real_root(), keys, local_mod.READ_FLAGS, open_how(), SLOW)


@pytest.mark.parametrize("key", ["a", "c/0.0.1", "x/y/z.-_9", "A" * 255])
def test_plain_keys_are_read_by_the_kernel(store, key):
    store.set(key, b"v" * 7)
    assert kernel(store, [key]) == [b"v" * 7]
    assert store.get(key) == b"v" * 7 and store.get_many([(key, None)]) == [b"v" * 7]


@pytest.mark.parametrize("key", ["é/ü", "with space", "a+b", "B" * 256, "a/./b", "a/../b",
                                 "a//b", "/abs", "x.zarrx-tmp-1", "", "a/"])
def test_other_keys_go_to_the_python_path(store, key):
    assert kernel(store, [key]) == [SLOW]


@pytest.mark.parametrize("key", ["é/ü", "with space", "a+b"])
def test_keys_the_python_path_reads_give_the_same_answer(store, key):
    store.set(key, b"data")
    assert store.get(key) == b"data"
    assert store.get_many([(key, None), ("missing", None)]) == [b"data", None]


@pytest.mark.parametrize("key, message", [
    ("x.zarrx-tmp-1", "found the reserved marker"),
    ("a/../b", "'..'"),
    ("a//b", "empty"),
])
def test_refused_keys_raise_as_before(store, key, message):
    with pytest.raises(StoreError, match=message):
        store.get(key)
    with pytest.raises(StoreError, match=message):
        store.get_many([("ok", None), (key, None)])


def test_absent_empty_directory_and_fifo(store, tmp_path):
    store.set("empty", b"")
    store.set("d/x", b"1")
    os.mkfifo(tmp_path / "root" / "fifo")
    assert kernel(store, ["missing", "empty", "d", "fifo", "d/x", "d/x/y"]) == \
        [None, b"", None, None, b"1", SLOW]      # ENOTDIR: the walk decides
    assert store.get_many([(k, None) for k in ["missing", "empty", "d", "fifo", "d/x/y"]]) == \
        [None, b"", None, None, None]


def test_links_are_never_followed(store, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret")
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret", root / "file")
    assert kernel(store, ["link/secret", "file"]) == [SLOW, SLOW]
    for key in ("link/secret", "file"):
        with pytest.raises(StoreError, match="symbolic link"):
            store.get(key)


def test_non_str_items_and_ranges_are_left_to_the_caller(store):
    store.set("a", b"abc")
    assert kernel(store, [None, b"a", "a"]) == [SLOW, SLOW, b"abc"]


def test_a_large_file_is_read_whole(store):
    blob = os.urandom(3 << 20) + b"end"
    store.set("big", blob)
    assert store.get("big") == blob


def test_an_arena_is_reused_and_grows(store):
    store.set("a", b"x" * 10)
    store.set("b", b"y" * 3000)
    arena = store.new_arena()
    first = store.get_many_buffers([("a", None), ("missing", None), ("b", None)], arena=arena)
    assert [None if v is None else bytes(v) for v in first] == [b"x" * 10, None, b"y" * 3000]
    buf = arena.buf
    again = store.get_many_buffers([("b", None), ("a", None)], arena=arena)
    assert arena.buf is buf                               # the same memory, laid out again
    assert [bytes(v) for v in again] == [b"y" * 3000, b"x" * 10]
    big = os.urandom(5 << 20)
    store.set("big", big)
    views = store.get_many_buffers([("a", None), ("big", None)], arena=arena)
    assert bytes(views[1]) == big and bytes(views[0]) == b"x" * 10   # grown: both still hold


def test_arena_reads_hand_other_keys_to_the_python_path(store):
    store.set("é", b"1")
    store.set("r", b"0123456789")
    arena = store.new_arena()
    got = store.get_many_buffers([("é", None), ("r", ByteRange(2, 3))], arena=arena)
    assert [bytes(v) for v in got] == [b"1", b"234"]


@pytest.fixture
def huge_file_store():
    """A store holding ``small`` (10 bytes) and ``huge``, a sparse file of 2**63 - 1 bytes: on
    tmpfs, which allows files that long (skipped where there is none)."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no tmpfs at /dev/shm")
    d = tempfile.mkdtemp(dir="/dev/shm")
    try:
        store = LocalStore(os.path.join(d, "root"))
        store.set("small", b"s" * 10)
        store.set("huge", b"")
        try:
            os.truncate(os.path.join(d, "root", "huge"), 2**63 - 1)
        except OSError as exc:
            pytest.skip(f"no file of 2**63 - 1 bytes on /dev/shm: {exc}")
        yield store
    finally:
        shutil.rmtree(d)


def test_a_file_longer_than_a_bytes_object_holds_is_worded(huge_file_store):
    """The kernel and the Python path let an OverflowError out of a read of such a file, and
    in an arena its size wrapped the arena's offset, which later reads then wrote through."""
    store = huge_file_store
    message = "cannot read 'huge': 9223372036854775807 bytes do not fit in memory"
    with pytest.raises(StoreError, match=message):
        store.get("huge")
    with pytest.raises(StoreError, match=message):
        store.get_many([("small", None), ("huge", None)])
    assert kernel(store, ["huge", "small"]) == [SLOW, b"s" * 10]
    arena = store.new_arena()
    got = read_whole(store._tree.real_root(), ["small", "huge", "small"], local_mod.READ_FLAGS,
                     open_how(), SLOW, arena)
    assert got[1] is SLOW and [bytes(got[0]), bytes(got[2])] == [b"s" * 10] * 2
    with pytest.raises(StoreError, match=message):
        store.get_many_buffers([("small", None), ("huge", None)], arena=store.new_arena())


@pytest.mark.parametrize("length", [2**63 - 1, 2**63, 2**70])
def test_a_head_range_longer_than_any_file_reads_the_whole_file(store, length):
    """A range from 0 longer than 2**63 - 1 bytes made the kernel raise an OverflowError."""
    store.set("a", b"0123456789")
    rng = ByteRange(0, length)
    assert store.get("a", rng) == b"0123456789"
    assert store.get_many([("a", rng)]) == [b"0123456789"]
    got = store.get_many_buffers([("a", rng)], arena=store.new_arena())
    assert [bytes(v) for v in got] == [b"0123456789"]
