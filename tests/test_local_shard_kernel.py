"""Shard reads from a LocalStore through the kernel (``zarrx.store._localshard``): one call per
shard opens its file, reads its index and the inner chunks wanted through that descriptor, and
hands everything but the plain case to the Python path. What a user sees is unchanged: one
version of a shard per read even while it is replaced, missing shards as fill, damaged shards
refused with the Python path's error naming the key, links refused, and the file read only
where its index says."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import zarrx
from zarrx.errors import ShardError, StoreError, ZarrError
from zarrx.store import LocalStore
from zarrx.store import _localshard

C = zarrx.codecs


class PythonReads(LocalStore):
    """A store whose ``snapshot`` is its own: its shards are read by the Python path."""

    def snapshot(self, key):  # type: ignore[override]
        return super().snapshot(key)


def _make(path, location="end", codecs=None, shape=(64, 64), shards=(32, 32), chunks=(8, 8),
          dtype="f4"):
    z = zarrx.create_array(str(path), shape=shape, chunks=chunks, dtype=dtype,
                           fill_value=1 if dtype == "u1" else -1, compressors=codecs,
                           shards={"shape": shards, "index_location": location})
    a = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    z[...] = a
    return z, a


@pytest.fixture
def hook():
    """Set ``_localshard.after_index`` for one test."""
    old = _localshard.after_index()
    yield _localshard.after_index
    _localshard.after_index(old)


def _counts() -> dict:
    return dict(_localshard.counts())


def test_a_read_of_many_shards_opens_each_file_once_by_the_kernel(tmp_path):
    _, a = _make(tmp_path / "a.zarr")
    z = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    before = _counts()
    with zarrx.config.set(threads=1):
        np.testing.assert_array_equal(z[...], a)
        np.testing.assert_array_equal(z[5:60, 3:40], a[5:60, 3:40])        # a box
        np.testing.assert_array_equal(z[::3, 1::2], a[::3, 1::2])          # outer, stepped
        pts = (np.arange(0, 64, 5), np.arange(63, -1, -5)[:13])
        np.testing.assert_array_equal(z.vindex[pts], a[pts])               # points
    after = _counts()
    assert after["handed_on"] == before["handed_on"]
    assert after["opened"] - before["opened"] == 4 + 4 + 4 + 2     # (the points: 2 shards)


def test_a_subclass_with_its_own_snapshot_reads_through_it(tmp_path):
    _, a = _make(tmp_path / "a.zarr")
    seen: list = []

    class Watching(LocalStore):
        def snapshot(self, key):  # type: ignore[override]
            seen.append(key)
            return super().snapshot(key)

    before = _counts()
    z = zarrx.open_array(Watching(str(tmp_path / "a.zarr")), mode="r")
    np.testing.assert_array_equal(z[...], a)
    assert sorted(seen) == ["c/0/0", "c/0/1", "c/1/0", "c/1/1"]
    assert _counts()["opened"] == before["opened"]


@pytest.mark.parametrize("location", ["end", "start"])
def test_a_shard_replaced_while_it_is_read_is_read_at_one_version(tmp_path, hook, location):
    """The file is replaced (a write of other values) right after the kernel read its index:
    the chunks still come from the version the index was read from, never the new one."""
    z, a = _make(tmp_path / "a.zarr", location)
    other = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r+")
    done: list = []

    def replace(path: bytes) -> None:
        if not done:
            done.append(path)
            other[0:32, 0:32] = np.full((32, 32), 1000, "f4")      # shard c/0/0 rewritten

    hook(replace)
    with zarrx.config.set(threads=1):
        # wanted nearly whole (read with one read) and in part (the index, then the chunks)
        got = z[0:32, 0:32]
        np.testing.assert_array_equal(got, a[0:32, 0:32])
        done.clear()
        part = z[0:16, 0:8]
    assert done and done[0].endswith(b"/c/0/0")
    np.testing.assert_array_equal(part, np.full((16, 8), 1000, "f4"))      # the second write
    hook(None)
    np.testing.assert_array_equal(z[0:32, 0:32], np.full((32, 32), 1000, "f4"))


def test_shards_rewritten_by_another_thread_are_never_mixed(tmp_path):
    """A writer rewrites every shard, each whole with one value per version, while reads run:
    every shard a read returns holds one value (one version), never parts of two."""
    shape, shards = (64, 64), (16, 16)
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=shape, chunks=(4, 4), dtype="i4",
                           shards=shards, fill_value=0, compressors=C.Zstd(level=1))
    z[...] = np.ones(shape, "i4")
    stop = threading.Event()
    versions = [1]

    def write() -> None:
        w = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r+")
        v = 1
        while not stop.is_set() and v < 400:
            v += 1
            w[...] = np.full(shape, v, "i4")
            versions.append(v)

    t = threading.Thread(target=write)
    t.start()
    r = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    try:
        for _ in range(60):
            got = r[...]
            for i in range(0, 64, 16):
                for j in range(0, 64, 16):
                    block = got[i:i + 16, j:j + 16]
                    assert (block == block[0, 0]).all(), (i, j, np.unique(block))
    finally:
        stop.set()
        t.join()
    assert len(versions) > 1


@pytest.mark.parametrize("location", ["end", "start"])
def test_a_shard_truncated_in_place_after_its_index_is_read_is_never_read_short(
        tmp_path, hook, location):
    """A file shrinking between the index read and the chunks' read (truncated in place, which
    zarrx never does): the kernel's read comes back short, and the shard is read again by the
    Python path, which finds the file as it is now and refuses it naming the key."""
    _make(tmp_path / "a.zarr", location)
    z = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    path = tmp_path / "a.zarr" / "c" / "0" / "0"
    size = path.stat().st_size

    def shrink(p: bytes) -> None:
        if p.endswith(b"/c/0/0") and path.stat().st_size == size:
            os.truncate(path, 16 * 16 + 4 + 10)     # its index's size and 10 bytes

    hook(shrink)
    before = _counts()
    with pytest.raises(ShardError) as info:
        z[0:16, 0:8]                    # its index, then its chunks
    assert info.value.key == "c/0/0"
    assert _counts()["handed_on"] == before["handed_on"] + 1
    # the Python path on the truncated file words the same error
    with pytest.raises(ShardError) as py:
        zarrx.open_array(PythonReads(str(tmp_path / "a.zarr")), mode="r")[0:16, 0:8]
    assert str(py.value) == str(info.value)


def _damage(blob: bytes, kind: str, location: str, n: int) -> bytes:
    """``blob`` (a shard of ``n`` inner chunks, index with a crc32c) damaged as ``kind``
    says; entries changed keep a valid checksum, so the entry check refuses them."""
    from zarrx.codecs._crc32c import crc32c
    L = 16 * n + 4
    b = bytearray(blob)
    at = len(b) - L if location == "end" else 0

    def entry(i: int, off: int, nb: int) -> None:
        b[at + 16 * i:at + 16 * i + 16] = off.to_bytes(8, "little") + nb.to_bytes(8, "little")
        b[at + L - 4:at + L] = crc32c(bytes(b[at:at + L - 4])).to_bytes(4, "little")

    if kind == "empty":
        return b""
    if kind == "shorter_than_index":
        return bytes(b[:L - 5])
    if kind == "short_by_one":
        return bytes(b[:-1])
    if kind == "past_end":
        entry(3, len(b) - 8, 16)
    elif kind == "huge_offset":
        entry(3, 2**64 - 20, 16)
    elif kind == "huge_length":
        entry(3, 0 if location == "end" else L, 2**63)
    elif kind == "past_2_63":
        entry(3, 2**63 - 8, 4)
    elif kind == "half_missing":
        entry(3, 2**64 - 1, 8)
    elif kind == "overlap_index":
        entry(3, at, 8)
    elif kind == "bad_crc":
        b[at + 5] ^= 0x40
    return bytes(b)


KINDS = ["empty", "shorter_than_index", "short_by_one", "past_end", "huge_offset",
         "huge_length", "past_2_63", "half_missing", "overlap_index", "bad_crc"]


@pytest.mark.parametrize("location", ["end", "start"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sel", ["whole", "part"])
def test_a_damaged_shard_is_refused_as_the_python_path_refuses_it(tmp_path, kind, location, sel):
    _make(tmp_path / "a.zarr", location, codecs=C.Zstd(level=1))
    path = tmp_path / "a.zarr" / "c" / "0" / "1"
    path.write_bytes(_damage(path.read_bytes(), kind, location, 16))
    box = np.s_[0:32, 32:64] if sel == "whole" else np.s_[0:8, 32:48]
    z = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    before = _counts()
    with pytest.raises(ZarrError) as info:
        z[box]
    assert _counts()["handed_on"] == before["handed_on"] + 1     # the Python path words it
    assert isinstance(info.value, (ShardError, StoreError)), info.value
    assert info.value.key == "c/0/1"
    with pytest.raises(ZarrError) as py:
        zarrx.open_array(PythonReads(str(tmp_path / "a.zarr")), mode="r")[box]
    assert (type(py.value), str(py.value)) == (type(info.value), str(info.value))


def test_a_damaged_entry_of_a_chunk_not_wanted_is_refused_too(tmp_path):
    """Every entry of an index is validated, not only those of the chunks a read wants."""
    _make(tmp_path / "a.zarr")
    path = tmp_path / "a.zarr" / "c" / "0" / "0"
    path.write_bytes(_damage(path.read_bytes(), "past_end", "end", 16))    # entry 3
    with pytest.raises(ShardError, match="index entry 3 "):
        zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")[0:8, 0:8]     # entry 0 wanted


def test_missing_and_empty_shards_read_as_fill_or_are_refused(tmp_path):
    _, a = _make(tmp_path / "a.zarr")
    os.remove(tmp_path / "a.zarr" / "c" / "1" / "0")
    z = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    want = a.copy()
    want[32:, :32] = -1
    np.testing.assert_array_equal(z[...], want)
    np.testing.assert_array_equal(z[30:40, 20:40], want[30:40, 20:40])


def test_a_shard_file_that_is_a_link_is_refused(tmp_path):
    _make(tmp_path / "a.zarr")
    c = tmp_path / "a.zarr" / "c"
    os.remove(c / "1" / "1")
    os.symlink(c / "0" / "0", c / "1" / "1")
    z = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    with pytest.raises(StoreError, match="symbolic link"):
        z[...]
    with pytest.raises(StoreError, match="symbolic link"):
        z[40:48, 40:48]


def test_a_large_index_of_which_few_chunks_are_wanted_is_read_once(tmp_path, monkeypatch):
    """A shard of 2^14 inner chunks (a 256 KiB index): a read of one inner chunk is handed to
    the Python path, which keeps the index cached, so a second read reads the chunk alone."""
    from zarrx.store import localsnap
    z, a = _make(tmp_path / "a.zarr", shape=(128, 128), shards=(128, 128), chunks=(1, 1),
                 dtype="u1")
    from folder_stamps import settle
    settle(tmp_path / "a.zarr" / "c" / "0" / "0")     # (an index read at a recent stamp is
    r = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")    # not cached: localsnap)
    reads: list = []
    real = localsnap._pread_into
    monkeypatch.setattr(localsnap, "_pread_into",
                        lambda fd, buf, off: reads.append(len(buf)) or real(fd, buf, off))
    np.testing.assert_array_equal(r[3:5, 7:9], a[3:5, 7:9])
    assert max(reads) == 16 * 2**14 + 4                            # the index, once
    reads.clear()
    np.testing.assert_array_equal(r[60:62, 7:9], a[60:62, 7:9])
    assert reads and max(reads) < 1024                             # the chunks alone


def _files(tmp_path, **kw):
    """A ShardFiles over the one shard of a 1-d array of 4 inner chunks (index at the end)."""
    from zarrx.store.localboxes import READ_FLAGS, RESOLVE
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(8,), chunks=(2,), shards=(8,),
                           dtype="u1", compressors=None)
    z[...] = np.arange(8, dtype="u1")
    args = dict(n_chunks=4, n_crc=1, word_at=None, fallback=lambda i, s: "fallback")
    args.update(kw)
    return _localshard.ShardFiles(str(tmp_path / "a.zarr").encode(), ["c/0"], READ_FLAGS,
                                  RESOLVE, args["n_chunks"], args["n_crc"], True, False,
                                  args["word_at"], -1, 16 << 20, 1 << 20, 1 << 16,
                                  args["fallback"])


@pytest.mark.parametrize("slot", [-2**63, -1, 4, 2**63 - 1])
def test_the_kernel_refuses_a_slot_outside_the_index(tmp_path, slot):
    files = _files(tmp_path)
    buf, starts, lengths = files.read(0, np.array([0, 3], dtype=np.int64))
    assert bytes(buf[starts[1]:starts[1] + lengths[1]]) == bytes([6, 7])
    with pytest.raises(ShardError, match=f"slot {slot} out of range for 4 entries"):
        files.read(0, np.array([0, slot], dtype=np.int64))


@pytest.mark.parametrize("kw, message", [
    ({"n_chunks": 0}, "expected 1 to 2\\^58 index entries, found 0"),
    ({"n_chunks": 2**58 + 1}, "expected 1 to 2\\^58 index entries"),
    ({"n_crc": -1}, "expected 0 to 64 crc32c checksums, found -1"),
    ({"n_crc": 65}, "expected 0 to 64 crc32c checksums, found 65"),
])
def test_the_kernel_refuses_an_impossible_index(tmp_path, kw, message):
    with pytest.raises(ShardError, match=message):
        _files(tmp_path, **kw)


@pytest.mark.parametrize("positions", [np.arange(7), np.array([0, 1, 2, 3, 4, 5, 6, 8]),
                                       np.array([-1, 1, 2, 3, 4, 5, 6, 7])])
def test_the_kernel_refuses_word_positions_outside_the_index(tmp_path, positions):
    files = _files(tmp_path, word_at=lambda: positions.astype(np.int64))
    with pytest.raises(ShardError, match="word position|word positions"):
        files.read(0, np.array([0], dtype=np.int64))


def test_keys_the_kernel_is_not_sure_of_go_to_the_python_path(tmp_path):
    from zarrx.store.localboxes import READ_FLAGS, RESOLVE
    root = str(tmp_path).encode()
    keys = ["../x", "a//b", "a/./b", "a\\b", "é", "a/.zarrx-tmp-1", "x" * 256, 5]
    files = _localshard.ShardFiles(root, keys, READ_FLAGS, RESOLVE, 4, 1, True, False, None,
                                   -1, 16 << 20, 1 << 20, 1 << 16, lambda i, s: ("python", i))
    for i in range(len(keys)):
        assert files.read(i, np.array([0], dtype=np.int64)) == ("python", i)


def test_a_slot_changed_after_it_was_checked_goes_to_the_python_path(tmp_path, hook):
    # the slots are the caller's array: code the read runs after checking them may change
    # them before they index the entries
    slots = np.array([0, 3], dtype=np.int64)
    files = _files(tmp_path, fallback=lambda i, s: ("python", i, s.tolist()))
    hook(lambda path: slots.__setitem__(1, 1 << 40))
    assert files.read(0, slots) == ("python", 0, [0, 1 << 40])
