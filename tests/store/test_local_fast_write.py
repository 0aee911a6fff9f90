"""LocalStore's write kernel (zarrx.store._localwrite): a plain key is written in C through an
unnamed file linked in (or a temporary file renamed, where unnamed files cannot be linked),
with the same result as the Python path; any failing system call leaves nothing behind and
hands the write to the Python path, which words the error."""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from link_methods import linking  # noqa: F401  (a fixture)

from zarrx.errors import StoreError
from zarrx.store import LocalStore
from zarrx.store._localwrite import link_method, put, set_link_method, temp_name
from zarrx.store.localfs import is_temp_name, open_how, temp_owner

pytestmark = pytest.mark.skipif(LocalStore("/")._tree.real_root() is None,
                                reason="no openat2 here: every write takes the Python path")


@pytest.fixture
def store(tmp_path):
    s = LocalStore(tmp_path / "root")
    s.set("zarr.json", b"{}")                     # the root exists
    return s


def kernel(store, key, data, sync=False):
    return put(store._tree.real_root(), key, data, open_how(), sync)


def files(path):
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*"))


@pytest.mark.parametrize("key", ["a", "c/0.0.1", "x/y/z.-_9", "A" * 255])
@pytest.mark.parametrize("data", [b"", b"v" * 7, os.urandom(3 << 20)])
def test_plain_keys_are_written_by_the_kernel(store, tmp_path, key, data):
    parent = os.path.dirname(key)
    if parent:
        os.makedirs(tmp_path / "root" / parent, exist_ok=True)
    before = set(files(tmp_path / "root"))
    assert kernel(store, key, data) == 0
    assert store.get(key) == data
    assert set(files(tmp_path / "root")) - before <= {key}     # no temporary file left
    gen = store.generation(key)
    assert kernel(store, key, data, sync=True) == 0
    assert store.generation(key) != gen                       # a new file, stamped anew


@pytest.mark.parametrize("key", ["é/ü", "with space", "a+b", "B" * 256, "a/./b", "a/../b",
                                 "a//b", "/abs", "x.zarrx-tmp-1", "", "a/"])
def test_other_keys_are_not_tried(store, key):
    assert kernel(store, key, b"x") == -1


def test_failures_report_the_errno_and_leave_nothing(store, tmp_path):
    root = tmp_path / "root"
    assert kernel(store, "missing/k", b"x") == errno.ENOENT
    store.set("file", b"1")
    assert kernel(store, "file/k", b"x") == errno.ENOTDIR
    store.set("c/0", b"1")
    assert kernel(store, "c", b"x") in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST)
    os.symlink(root / "c", root / "link")
    assert kernel(store, "link/k", b"x") == errno.ELOOP
    assert files(root) == ["c", "c/0", "file", "link", "zarr.json"]


def test_a_missing_folder_is_made_by_the_python_path(store, tmp_path):
    store.set("a/b/c", b"v")
    assert store.get("a/b/c") == b"v"
    with pytest.raises(StoreError, match="'link' is a symbolic link"):
        os.symlink(tmp_path / "root" / "a", tmp_path / "root" / "link")
        store.set("link/k", b"x")


def test_temporary_names_say_whose_they_are():
    names = {temp_name("c.0") for _ in range(100)}
    assert len(names) == 100
    for n in names:
        assert is_temp_name(n) and temp_owner(n) == "c.0"
        assert n.startswith(f".c.0.zarrx-tmp-{os.getpid()}-") and len(n.rsplit("-", 1)[1]) == 16
    assert temp_owner(temp_name("x" * 255)) == "x" * 100
    with pytest.raises(ValueError):
        temp_name("a/b")


def test_a_write_the_file_system_refuses_keeps_the_old_value(tmp_path):
    """A real write failure inside the kernel (the file-size limit: EFBIG): the temporary file
    is removed, the Python path words the error, the old value stays."""
    root = tmp_path / "root"
    code = textwrap.dedent(f"""
        import os, resource, signal
        from zarrx.errors import StoreError
        from zarrx.store import LocalStore
        from zarrx.store._localwrite import put
        from zarrx.store.localfs import open_how
        s = LocalStore({str(root)!r})
        s.set("a/k", b"old value")
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 16, 1 << 16))
        print(put(s._tree.real_root(), "a/k", b"x" * (1 << 17), open_how(), False))
        try:
            s.set("a/k", b"x" * (1 << 17))
        except StoreError as exc:
            print(exc)
        print(s.get("a/k"), sorted(os.listdir({str(root / "a")!r})))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    store = LocalStore(root)
    assert out == [str(errno.EFBIG), f"{store!r}: cannot write 'a/k': File too large",
                   "b'old value' ['k']"]


def test_a_bad_key_is_reported_before_a_bad_value(store):
    with pytest.raises(StoreError, match=r"key '\.\./x': found a '\.\.' segment"):
        store.set("../x", 5)
    with pytest.raises(StoreError, match="store value for 'x': expected bytes-like, found int"):
        store.set("x", 5)


@pytest.mark.parametrize("value", [bytearray(b"abc"), memoryview(b"abc"),
                                   memoryview(bytes(range(8))).cast("I"), b"abc"])
def test_bytes_like_values_are_written_whole(store, value):
    store.set("k", value)
    assert store.get("k") == bytes(value)


@pytest.mark.parametrize("key", ["k", "c/0.1"])
@pytest.mark.parametrize("sync", [False, True])
def test_each_way_of_naming_writes_new_and_existing_keys(store, tmp_path, linking, key, sync):
    root = tmp_path / "root"
    os.makedirs((root / key).parent, exist_ok=True)
    before = set(files(root))
    assert kernel(store, key, b"first", sync) == 0
    first = os.stat(root / key).st_mtime_ns
    assert kernel(store, key, b"second value", sync) == 0     # replaced under the lock
    assert store.get(key) == b"second value"
    assert os.stat(root / key).st_mtime_ns > first
    assert set(files(root)) - before == {key}                  # no temporary file left
    assert link_method() == linking


def test_set_link_method_names_the_ways():
    with pytest.raises(ValueError, match=r"expected one of \['fd', 'proc', 'none'\], "
                                         r"found 'path'"):
        set_link_method("path")


@pytest.mark.skipif(not (shutil.which("unshare") and os.geteuid() == 0),
                    reason="needs root and unshare(1) to hide /proc")
@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="the sanitizer runtime preloaded into unshare and sh needs /proc")
def test_a_process_that_cannot_link_unnamed_files_writes_temporary_ones(tmp_path):
    """Linking through /proc fails when /proc is not there: the write is made through a
    temporary file instead, and the process writes temporary files from then on."""
    root = tmp_path / "root"
    code = textwrap.dedent(f"""
        from zarrx.store import LocalStore
        from zarrx.store._localwrite import link_method, set_link_method
        s = LocalStore({str(root)!r})
        s.set("a/k", b"old")
        set_link_method("proc")
        s.set("a/k", b"new")
        s.set("a/n", b"fresh")
        print(link_method(), s.get("a/k"), s.get("a/n"))
    """)
    run = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                          'mount -t tmpfs none /proc && exec "$0" -c "$1"', sys.executable,
                          code], capture_output=True, text=True)
    if "mount" in run.stderr or "unshare" in run.stderr:
        pytest.skip(f"cannot hide /proc here: {run.stderr.strip()}")
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["none", "b'new'", "b'fresh'"]
    assert sorted(os.listdir(root / "a")) == ["k", "n"]


@pytest.mark.parametrize("stamp", [10_400_000_000 * 10**9 + 5,          # the year 2299
                                   9_223_372_036 * 10**9 + 999_999_999,  # just past 2**63 ns
                                   9_223_372_035 * 10**9 + 999_999_999])  # just below
def test_a_file_stamped_past_2262_is_replaced_by_a_later_one(store, tmp_path, stamp):
    """A file whose mtime lies after the clock is replaced by a file stamped one nanosecond
    later than it (two versions never share a stamp), also past 2262-04-11, where the
    nanoseconds since 1970 exceed 64 bits (they wrapped to a negative number, and the new
    file kept the clock's earlier stamp)."""
    store.set("k", b"a")
    os.utime(tmp_path / "root" / "k", ns=(stamp, stamp))
    if os.stat(tmp_path / "root" / "k").st_mtime_ns != stamp:
        pytest.skip(f"the file system of {tmp_path} does not keep the stamp {stamp}")
    assert kernel(store, "k", b"b") == 0
    assert (tmp_path / "root" / "k").read_bytes() == b"b"
    assert os.stat(tmp_path / "root" / "k").st_mtime_ns == stamp + 1
