"""LocalStore: the store contract, plus atomicity, key safety, concurrency, pickling and fork."""
import errno
import multiprocessing
import os
import pickle
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_contract import StoreContract

from zarrx.errors import ConflictError, ReadOnlyError, StoreError, ZarrUserWarning
from zarrx.store import ABSENT, ByteRange, LocalStore
from zarrx.store import local as local_mod


class TestLocalStore(StoreContract):
    snapshot_pins_version = True

    def make_store(self, tmp_path):
        return LocalStore(tmp_path / "root")

    def reopen_read_only(self, store, tmp_path):
        return LocalStore(tmp_path / "root", read_only=True)


class TestLocalStoreFsync(TestLocalStore):
    large_size = 2**20

    def make_store(self, tmp_path):
        return LocalStore(tmp_path / "root", fsync=True)


class PythonWrites(LocalStore):
    """Every write through the Python path (as for keys the write kernel does not take)."""
    _put = None


class TestLocalStorePythonWrites(TestLocalStore):
    def make_store(self, tmp_path):
        return PythonWrites(tmp_path / "root")


@pytest.fixture
def store(tmp_path):
    return LocalStore(tmp_path / "root")


def tree(path):
    """Every file and directory below ``path``, relative to it."""
    out = set()
    for folder, dirs, files in os.walk(path):
        rel = os.path.relpath(folder, path)
        out.update(os.path.join(rel, n) for n in dirs + files)
    return out


# -- hostile keys ------------------------------------------------------------------------------
DOTDOT = "found a '..' segment; keys may not step outside their directory"
DOT = "found a '.' segment; keys may not step outside their directory"
LEADING = "found a leading '/'; keys are relative to the store root"
EMPTY_SEG = "found an empty segment ('//' or a trailing '/')"
BACKSLASH = "found a backslash; '/' is the only separator"
HOSTILE = {
    "dotdot": ("..", DOTDOT),
    "dotdot-escape": ("../escape", DOTDOT),
    "dotdot-deep-escape": ("a/../../escape", DOTDOT),
    "dotdot-last": ("a/..", DOTDOT),
    "dot": (".", DOT),
    "dot-middle": ("a/./b", DOT),
    "absolute": ("/etc/passwd", LEADING),
    "absolute-root": ("/", LEADING),
    "absolute-escape": ("/../escape", LEADING),
    "empty": ("", "expected a non-empty key"),
    "double-slash": ("a//b", EMPTY_SEG),
    "trailing-slash": ("a/", EMPTY_SEG),
    "backslash": ("a\\b", BACKSLASH),
    "backslash-escape": ("..\\escape", BACKSLASH),
    "nul": ("a\x00b", "found a NUL character"),
    "newline": ("a\nb", "found the control character '\\n'"),
    "escape-char": ("a\x1b[2J", "found the control character '\\x1b'"),
    "delete-char": ("a\x7f", "found the control character '\\x7f'"),
    "long-segment": ("x" * 256, "found a segment of 256 bytes; at most 255 bytes are allowed"),
    "long-utf8-segment": ("a/" + "é" * 128,
                          "found a segment of 256 bytes; at most 255 bytes are allowed"),
    "lone-surrogate": ("a\udc80", "found characters that are not encodable as UTF-8"),
    "temp-prefix": (".zarrx-tmp-0123", "found the reserved marker '.zarrx-tmp-'"),
    "temp-prefix-nested": ("a/.zarrx-tmp-x/b", "found the reserved marker '.zarrx-tmp-'"),
    "temp-name": ("a/.k.zarrx-tmp-12-0a1b", "found the reserved marker '.zarrx-tmp-'"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_key_is_refused(tmp_path, store, name):
    key, problem = HOSTILE[name]
    store.set("ok/value", b"1")                         # the root and a subfolder exist
    before = tree(tmp_path), sorted(os.listdir(tmp_path.parent))
    message = f"{store!r}: key {key!r}: {problem}"
    calls = [lambda: store.set(key, b"x"), lambda: store.get(key),
             lambda: store.get(key, ByteRange.last(1)), lambda: store.delete(key),
             lambda: store.exists(key), lambda: store.get_many([(key, None), ("ok/value", None)])]
    for call in calls:
        with pytest.raises(StoreError) as info:
            call()
        assert str(info.value) == message
    assert (tree(tmp_path), sorted(os.listdir(tmp_path.parent))) == before


@pytest.mark.parametrize("key", ["C:", "C:/Windows/x", "a/d:escape", "x:1/zarr.json"])
def test_a_drive_letter_is_an_ordinary_name_on_posix(tmp_path, key):
    """On POSIX file systems ``C:`` names a file below the root like any other (zarr-python
    creates children such as ``x:1``): stored, listed and read there."""
    store = LocalStore(tmp_path / "root")
    store.set(key, b"v")
    assert store.get(key) == b"v" and list(store.list_prefix("")) == [key]
    assert (tmp_path / "root" / key).read_bytes() == b"v"
    store.delete(key)
    assert store.get(key) is None


def test_a_child_the_store_refuses_is_left_out_of_members_with_a_warning(tmp_path):
    """A folder named with a control character (which zarr-python writes) no longer makes
    listing the members of its group fail: it is left out, with a warning naming it."""
    import zarrx
    root = tmp_path / "g.zarr"
    g = zarrx.open_group(str(root), mode="w")
    g.create_array("ok", shape=(2,), dtype="i4")
    g.create_array("x:1", shape=(2,), dtype="i4", fill_value=3)
    (root / "t\x01").mkdir()
    (root / "t\x01" / "zarr.json").write_bytes((root / "ok" / "zarr.json").read_bytes())
    store = LocalStore(root, read_only=True)
    assert store.key_problem("t\x01") == "found the control character '\\x01'"
    assert store.key_problem("x:1") is None
    group = zarrx.open_group(str(root), mode="r")
    with pytest.warns(ZarrUserWarning) as record:
        assert [n for n, _ in group.members()] == ["ok", "x:1"]
    assert [str(w.message) for w in record] == [
        f"{group.store!r}: skipping the child 't\\x01': found the control character '\\x01'"]
    assert group["x:1"][...].tolist() == [3, 3]
    with pytest.warns(ZarrUserWarning):
        assert zarrx.consolidate_metadata(str(root)).keys() is not None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="a./\\:C\x00\né~", max_size=12))
def test_accepted_keys_stay_below_the_root(key):
    store = LocalStore("/srv/root")
    try:
        path = store._path(key)
    except StoreError:
        return
    assert os.path.normpath(path) == path and path.startswith("/srv/root/")
    assert path[len("/srv/root/"):].split(os.sep) == key.split("/")


def test_non_str_key_message(store):
    with pytest.raises(StoreError) as info:
        store.set(b"bytes", b"x")  # type: ignore[arg-type]
    assert str(info.value) == f"{store!r}: key b'bytes': expected str, found bytes"


def test_hostile_prefixes_list_nothing(tmp_path, store):
    store.set("a/b", b"1")
    (tmp_path / "outside").write_bytes(b"secret")
    for prefix in ("../", "../outside", "/", "/a", "a/../", "a\\", "C:/"):
        assert list(store.list_prefix(prefix)) == []
        assert store.list_dir(prefix) == ([], [])


# -- atomic writes -----------------------------------------------------------------------------
def test_temp_files_are_never_listed(tmp_path, monkeypatch):
    store = PythonWrites(tmp_path / "root")
    store.set("a/k", b"old")
    real_replace = os.replace
    seen = {}

    def spy(src, dst, **kw):
        seen["on-disk"] = sorted(os.listdir(tmp_path / "root" / "a"))
        seen["listed"] = sorted(store.list_prefix(""))
        seen["dir"] = store.list_dir("a")
        real_replace(src, dst, **kw)

    monkeypatch.setattr(os, "replace", spy)
    store.set("a/k", b"new")
    assert len(seen["on-disk"]) == 2
    assert seen["on-disk"][0].startswith(f".k.zarrx-tmp-{os.getpid()}-")
    assert seen["listed"] == ["a/k"] and seen["dir"] == (["k"], [])
    assert os.listdir(tmp_path / "root" / "a") == ["k"]


def test_leftover_temp_file_is_invisible(tmp_path, store):
    store.set("a/k", b"v")
    (tmp_path / "root" / "a" / ".zarrx-tmp-deadbeef").write_bytes(b"torn")
    (tmp_path / "root" / ".zarrx-tmp-dir").mkdir()
    assert sorted(store.list_prefix("")) == ["a/k"]
    assert store.list_dir("") == ([], ["a"]) and store.list_dir("a/") == (["k"], [])


def test_failed_replace_keeps_old_value(tmp_path, monkeypatch):
    store = PythonWrites(tmp_path / "root")
    store.set("a/k", b"old value")

    def boom(src, dst, **kw):
        raise OSError(errno.EIO, "simulated I/O failure")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(StoreError) as info:
        store.set("a/k", b"new value")
    assert str(info.value) == f"{store!r}: cannot write 'a/k': simulated I/O failure"
    assert isinstance(info.value.__cause__, OSError)
    monkeypatch.undo()
    assert store.get("a/k") == b"old value"
    assert os.listdir(tmp_path / "root" / "a") == ["k"]       # the temp file is gone


def test_failed_write_keeps_old_value(tmp_path, monkeypatch):
    store = PythonWrites(tmp_path / "root", fsync=True)
    store.set("a/k", b"old value")

    def full_disk(fd):                                      # fails after the data is written
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(StoreError) as info:
        store.set("a/k", b"new value")
    assert str(info.value) == f"{store!r}: cannot write 'a/k': No space left on device"
    assert store.get("a/k") == b"old value"
    assert os.listdir(tmp_path / "root" / "a") == ["k"]


def test_fsync_flushes_file_and_directory(tmp_path, monkeypatch):
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real(fd))[1])
    s = PythonWrites(tmp_path / "root", fsync=True)
    s.set("a/b/c", b"durable")
    assert s.get("a/b/c") == b"durable" and len(calls) == 2
    calls.clear()
    PythonWrites(tmp_path / "root").set("a/b/d", b"fast")
    assert calls == []


def test_files_respect_umask(tmp_path, store):
    mask = os.umask(0o022)
    os.umask(mask)
    store.set("k", b"v")
    assert (tmp_path / "root" / "k").stat().st_mode & 0o777 == 0o666 & ~mask


# -- filesystem behaviour ----------------------------------------------------------------------
def test_root_is_created_lazily_and_never_removed(tmp_path):
    s = LocalStore(tmp_path / "root")
    assert not (tmp_path / "root").exists()
    assert s.get("a") is None and list(s.list_prefix("")) == [] and s.list_dir("") == ([], [])
    s.set("a/b/c", b"1")
    s.delete("a/b/c")
    assert os.listdir(tmp_path / "root") == []              # empty folders pruned, root kept
    s.set("x/y", b"1")
    s.set("x/z", b"1")
    s.delete_prefix("")
    assert os.listdir(tmp_path / "root") == []


def test_delete_of_a_directory_is_a_noop(tmp_path, store):
    store.set("c/0/0", b"1")
    store.delete("c/0")
    assert store.get("c/0/0") == b"1"


def test_os_errors_become_store_errors(tmp_path, store):
    store.set("file", b"1")
    store.set("c/0", b"1")
    with pytest.raises(StoreError) as info:
        store.set("file/child", b"x")                       # a file where a folder should be
    assert str(info.value) == f"{store!r}: cannot write 'file/child': Not a directory"
    assert isinstance(info.value.__cause__, OSError)
    with pytest.raises(StoreError) as info:
        store.set("c", b"x")                                # a folder where the file should go
    assert str(info.value) == (f"{store!r}: cannot write 'c': a directory is there, not a file; "
                               f"remove it")
    assert sorted(store.list_prefix("")) == ["c/0", "file"]
    assert os.listdir(tmp_path / "root" / "c") == ["0"]    # no temp file left behind


def test_huge_range_reads_only_what_exists(store):
    store.set("k", b"abc")
    assert store.get("k", ByteRange.slice(1, 2**62)) == b"bc"
    assert store.get("k", ByteRange.last(2**62)) == b"abc"


def test_read_only_and_modes(tmp_path):
    s = LocalStore(tmp_path / "root", mode="r")
    assert s.read_only and not LocalStore(tmp_path, mode="a").read_only
    with pytest.raises(ReadOnlyError) as info:
        s.set("k", b"v")
    assert str(info.value) == f"{s!r}: cannot write 'k': the store is read-only"
    assert not (tmp_path / "root").exists()
    with pytest.raises(StoreError) as info:
        LocalStore(tmp_path, mode="rw")
    assert str(info.value) == (f"LocalStore({str(tmp_path)!r}): mode: expected one of "
                               "r, r+, a, w, w-, found 'rw'")


def test_pickle_round_trip(tmp_path):
    s = LocalStore(tmp_path / "root", fsync=True)
    s.set("a", b"1")
    t = pickle.loads(pickle.dumps(s))
    assert (t.root, t.read_only, t.fsync) == (s.root, False, True) and t == s
    assert t.get("a") == b"1"
    r = pickle.loads(pickle.dumps(LocalStore(tmp_path / "root", read_only=True)))
    assert r.read_only and r == s           # equal as in zarr-python: the same root


# -- concurrency -------------------------------------------------------------------------------
def test_get_many_runs_concurrently_in_order(tmp_path):
    names = []
    lock = threading.Lock()
    second = threading.Event()

    class Recording(LocalStore):
        def _get_batch(self, reqs):
            me = threading.current_thread().name
            with lock:
                names.append(me)
                if len(set(names)) > 1:
                    second.set()
            if len(names) == 1:
                # the first batch waits for a second thread to take one: a pool that runs
                # batches concurrently gets there however loaded the machine is, a serial
                # one never does (and fails below after the timeout)
                second.wait(10)
            return super()._get_batch(reqs)

    s = Recording(tmp_path / "root")
    for i in range(80):
        s.set(f"c/{i}", b"%d" % i)
    reqs = [(f"c/{i}", ByteRange.last(1) if i % 3 else None) for i in reversed(range(90))]
    expected = [None if i >= 80 else (b"%d" % i)[-1:] if i % 3 else b"%d" % i
                for i in reversed(range(90))]
    assert s.get_many(reqs) == expected
    assert len(set(names)) > 1 and any(n.startswith("zarrx") for n in names)
    names.clear()
    second.set()
    assert s.get_many([("c/1", None)]) == [b"1"] and names == [threading.current_thread().name]


def _child_get_many(store, keys):
    return store.get_many([(k, None) for k in keys])


def test_get_many_works_after_fork(tmp_path, store):
    keys = [f"k/{i}" for i in range(3 * local_mod.POOL_MIN)]
    for k in keys:
        store.set(k, k.encode())
    assert store.get_many([(k, None) for k in keys]) == [k.encode() for k in keys]
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        values = pool.apply_async(_child_get_many, (store, keys)).get(timeout=60)
    assert values == [k.encode() for k in keys]


# -- generations and conditional writes across processes ----------------------------------------
def _increment_in_child(root, key, times):
    from generation_contract import increment
    return increment(LocalStore(root), key, times)


def test_multiprocess_increments_lose_nothing(tmp_path):
    """4 processes x 100 read + set_if increments of one counter: exactly 400, none lost."""
    root = str(tmp_path / "root")
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(4) as pool:
        conflicts = pool.starmap(_increment_in_child, [(root, "c/0/counter", 100)] * 4)
    store = LocalStore(root)
    assert store.get("c/0/counter") == b"400"
    assert all(n >= 0 for n in conflicts)
    assert os.listdir(tmp_path / "root" / "c" / "0") == ["counter"]   # no temp file left


def test_generation_is_the_file_identity(store, tmp_path):
    store.set("a/k", b"v")
    gen = store.generation("a/k")
    st = os.stat(tmp_path / "root" / "a" / "k")
    assert gen == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    store.set("a/k", b"v")                              # same bytes, new file, new generation
    assert store.generation("a/k") != gen


def test_snapshot_is_one_open_file(store, tmp_path):
    store.set("a/k", b"0123456789")
    before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    snap = store.snapshot("a/k")
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before + 1
    store.delete("a/k")                                 # the open file still holds the version
    assert [bytes(v) for v in snap.read([ByteRange.slice(3, 2), ByteRange.last(1)])] == \
        [b"34", b"9"]
    snap.close()
    if before is not None:
        assert len(os.listdir("/proc/self/fd")) == before
    with pytest.raises(StoreError, match=r"snapshot of 'a/k': read after close$"):
        snap.read([None])


def test_a_shard_the_disk_cannot_read_is_a_store_error_naming_it(tmp_path, monkeypatch):
    import errno

    import zarrx
    z = zarrx.create_array(str(tmp_path), shape=(8,), chunks=(2,), shards=(4,), dtype="i4",
                           compressors=None)
    z[...] = 1

    def failing(fd, buffers, offset):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "preadv", failing)
    z = zarrx.open_array(str(tmp_path), mode="r")
    store = f"LocalStore({str(tmp_path)!r}, read_only=True)"
    with pytest.raises(StoreError) as info:         # the index: 2 entries + crc32c at the end
        z[5]
    assert str(info.value) == (f"{store}: snapshot of 'c/1': cannot read 36 bytes at offset "
                               f"16: Input/output error")
    with pytest.raises(StoreError) as info:
        z[...]
    assert str(info.value).startswith(f"{store}: snapshot of 'c/0': cannot read ")


def test_an_object_too_large_for_memory_is_a_store_error(store, tmp_path):
    store.set("big", b"")
    try:
        os.truncate(tmp_path / "root" / "big", 8 << 40)     # a sparse 8 TiB file
    except OSError:
        pytest.skip("the file system cannot hold a sparse 8 TiB file")
    with pytest.raises(StoreError) as info:
        store.get("big")
    assert str(info.value) == f"{store!r}: cannot read 'big': {8 << 40} bytes do not fit in memory"
    with store.snapshot("big") as snap, pytest.raises(StoreError, match="do not fit in memory"):
        snap.read([None])
    assert store.get("big", ByteRange.last(4)) == bytes(4) and store.getsize("big") == 8 << 40


@pytest.mark.parametrize("make", [os.mkdir, os.mkfifo], ids=["directory", "fifo"])
def test_a_non_file_at_a_chunk_key_is_a_store_error_at_once(tmp_path, make):
    import time

    import zarrx
    z = zarrx.create_array(str(tmp_path), shape=(8,), chunks=(4,), dtype="i4")
    z[...] = 1
    os.remove(tmp_path / "c" / "0")
    make(tmp_path / "c" / "0")
    t0 = time.monotonic()
    with pytest.raises(StoreError, match=r"cannot write 'c/0': a (directory|named pipe) is "
                                         r"there, not a file; remove it"):
        zarrx.open_array(str(tmp_path), mode="r+")[0] = 5
    assert time.monotonic() - t0 < 2          # no retries against something never replaced
    assert zarrx.open_array(str(tmp_path), mode="r")[4:].tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("make", [os.mkdir, os.mkfifo, "socket"],
                         ids=["directory", "fifo", "socket"])
def test_a_non_file_at_a_chunk_key_reads_as_missing(tmp_path, make):
    """Whatever is not a regular file at a chunk key is no stored chunk: it reads as the fill
    value (a socket, which cannot be opened, as a named pipe or a directory does)."""
    import socket

    import zarrx
    z = zarrx.create_array(str(tmp_path), shape=(8,), chunks=(4,), dtype="i4", fill_value=7)
    z[...] = 1
    os.remove(tmp_path / "c" / "0")
    if make == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(tmp_path / "c" / "0"))
        sock.close()
    else:
        make(tmp_path / "c" / "0")
    for threads in (1, 4):
        with zarrx.config.set(threads=threads):
            z = zarrx.open_array(str(tmp_path), mode="r")
            assert z[...].tolist() == [7, 7, 7, 7, 1, 1, 1, 1]
            assert z[2] == 7 and z[3:5].tolist() == [7, 1]
    assert LocalStore(str(tmp_path)).get("c/0") is None


class _SweptOnce(PythonWrites):
    """The first temporary file staged for a key below ``x/`` is swept right after it is
    written, as a delete of node ``x`` in another process sweeps every temporary file below it
    (``delete_prefix``: writers killed or not)."""

    swept = False

    def _stage(self, d, name, data, after=0):
        tmp, fd = super()._stage(d, name, data, after)
        if not self.swept:
            self.swept = True
            LocalStore(self.root).sweep("x/", older_than=None)
        return tmp, fd


@pytest.mark.parametrize("how", ["set", "create", "replace", "attribute"])
def test_a_write_whose_temporary_file_a_delete_sweeps_is_written_after_it(tmp_path, how):
    """Writes racing a delete of their node (which sweeps the node's temporary files) are
    written after it, or (a conditional replace) see the conflict and re-read: they never fail
    with "No such file or directory" (before: a StoreError, 1-2 times in each trial of 4
    processes x 150 metadata changes of one node, deletes among them)."""
    store = _SweptOnce(tmp_path / "root")
    if how == "attribute":
        import zarrx
        zarrx.create_array(LocalStore(store.root), name="x", shape=(4,), dtype="i4")
        zarrx.open_array(store, path="x", mode="r+").attrs["a"] = 1
        assert dict(zarrx.open_array(LocalStore(store.root), path="x").attrs) == {"a": 1}
        return
    if how == "replace":
        gen = LocalStore(store.root).set_if("x/k", b"old", ABSENT)
        with pytest.raises(ConflictError):          # as if the key had gone with its node
            store.set_if("x/k", b"new", gen)
        store.set_if("x/k", b"new", store.generation("x/k"))
    elif how == "create":
        store.set_if("x/k", b"new", ABSENT)
    else:
        store.set("x/k", b"new")
    assert store.get("x/k") == b"new"
    assert store.sweep("x/", older_than=None) == []


@pytest.mark.parametrize("how", ["set", "create"])
def test_a_write_whose_folder_vanishes_while_it_is_made_makes_it_again(tmp_path, monkeypatch, how):
    """A delete in another process removes a folder it left empty (``c/0`` after the last chunk
    of a row went all fill) while a write is walking down to it: making the next folder in the
    removed one fails with ENOENT. The write walks again (before: StoreError "cannot write
    'c/0/1': No such file or directory")."""
    from zarrx.store.localfs import Tree
    store = PythonWrites(tmp_path / "root")
    walk, pruned = Tree.dir, []

    def dir_pruned_once(tree, parts, create=False):
        if create and not pruned:
            pruned.append(list(parts))
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", parts[-1])
        return walk(tree, parts, create)

    monkeypatch.setattr(Tree, "dir", dir_pruned_once)
    if how == "set":
        store.set("c/0/1", b"new")
    else:
        store.set_if("c/0/1", b"new", ABSENT)
    assert pruned == [["c", "0"]]
    assert store.get("c/0/1") == b"new"


def test_folders_nested_past_the_recursion_limit_are_listed_checked_and_swept(tmp_path):
    import sys

    import zarrx
    root = tmp_path / "d.zarr"
    zarrx.create_array(str(root), name="a", shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    depth = sys.getrecursionlimit() + 100
    deep = root / "a" / "c"
    for _ in range(depth):                  # os.makedirs would recurse
        deep = deep / "d"
        deep.mkdir()
    (deep / "f").write_bytes(b"x")
    (deep / ".f.zarrx-tmp-1-0").write_bytes(b"")
    stray = "a/c/" + "d/" * depth + "f"
    store = LocalStore(str(root))
    assert sorted(store.list_prefix("a/")) == ["a/c/0", "a/c/1", stray, "a/zarr.json"]
    report = zarrx.check(str(root))
    assert [(f.kind, f.key) for f in report.findings] == [("orphaned", stray)]
    assert report.recent_temporary == ["a/c/" + "d/" * depth + ".f.zarrx-tmp-1-0"]
    assert store.sweep(older_than=None) == ["a/c/" + "d/" * depth + ".f.zarrx-tmp-1-0"]
    store.delete_prefix("a/c/")
    assert sorted(os.listdir(root / "a")) == ["zarr.json"]


@pytest.mark.parametrize("mode", [None, "q"])
def test_a_root_of_another_type_is_a_store_error(mode):
    with pytest.raises(StoreError) as info:
        LocalStore(None, mode=mode)
    detail = "mode: expected one of r, r+, a, w, w-, found 'q'" if mode else \
        "root: expected the path of a directory, found a NoneType"
    assert str(info.value) == f"LocalStore(None): {detail}"
