"""LocalStore on a disk that fails or holds odd things: unreadable shards, objects too large for
memory, non-files at chunk keys, and folders nested past the recursion limit."""
import os

import pytest

from zarrx.errors import StoreError
from zarrx.store import ByteRange, LocalStore

from .local_helpers import store  # noqa: F401  (a fixture)


def test_a_shard_the_disk_cannot_read_is_a_store_error_naming_it(tmp_path, monkeypatch):
    import errno

    import zarrx
    z = zarrx.create_array(str(tmp_path), shape=(8,), chunks=(2,), shards=(4,), dtype="i4",
                           compressors=None)
    z[...] = 1

    def failing(fd, buffers, offset):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    from zarrx.store import _localshard
    monkeypatch.setattr(os, "preadv", failing)
    z = zarrx.open_array(str(tmp_path), mode="r")
    store = f"LocalStore({str(tmp_path)!r}, read_only=True)"
    # the shard kernel's reads fail too: it hands the shard to the Python path, which words it
    old = _localshard.fail_reads(True)
    try:
        handed = _localshard.counts()["handed_on"]
        with pytest.raises(StoreError) as info:     # the index: 2 entries + crc32c at the end
            z[5]
        assert str(info.value) == (f"{store}: snapshot of 'c/1': cannot read 36 bytes at "
                                   f"offset 16: Input/output error")
        with pytest.raises(StoreError) as info:
            z[...]
        assert str(info.value).startswith(f"{store}: snapshot of 'c/0': cannot read ")
        assert _localshard.counts()["handed_on"] == handed + 2
    finally:
        _localshard.fail_reads(old)


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
