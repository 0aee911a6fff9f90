"""Hostile shard files read from a LocalStore through the shard kernel
(``zarrx.store._localshard``): damaged and impossible indexes, files changed between the index
read and the chunks' read, files that are not regular files, and windows of many shards mixing
good, missing and odd ones. Each read gives what the Python path gives on the same files (the
kernel turned off: ``LocalStore.kernel_paths`` returning None): the same values, or an error of
the same class with the same message. None of them hangs, and every one is a ZarrError."""
from __future__ import annotations

import json
import os
import socket
import threading

import numpy as np
import pytest

import zarrx
from zarrx.codecs._crc32c import crc32c
from zarrx.errors import ZarrError
from zarrx.store import LocalStore, MemoryStore
from zarrx.store import _localshard

from indexing_helpers import NumpySelections

M = 2**64 - 1
LE = {"name": "bytes", "configuration": {"endian": "little"}}
BE = {"name": "bytes", "configuration": {"endian": "big"}}
CRC = {"name": "crc32c"}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
# index layouts: (index codecs, location); the entries' words in C order
LAYOUTS = {"le-crc-end": ([LE, CRC], "end"), "le-crc-start": ([LE, CRC], "start"),
           "be-end": ([BE], "end"), "le-2crc-start": ([LE, CRC, CRC], "start")}
SHAPE, SHARD, INNER = (64, 64), (32, 32), (8, 8)
N = 16                                           # inner chunks in a shard
SELS = {
    "whole": lambda z: z[0:32, 32:64],           # the shard nearly whole: the file read whole
    "part": lambda z: z[0:8, 32:48],             # its index, then two chunks
    "corners": lambda z: z.oindex[[0, 31], [32, 63]],      # four chunks far apart
    "points": lambda z: z.vindex[[0, 9, 17, 31, 2], [63, 40, 50, 33, 60]],
    "all": lambda z: z[...],                     # four shards, the damaged one among them
}


def _make(path, layout="le-crc-end", inner=(LE, ZSTD), shape=SHAPE, shard=SHARD,
          chunk=INNER):
    """An int16 array of ``shape`` in shards of ``shard`` (inner chunks of ``chunk``), written
    by zarrx; some inner chunks are all fill (missing from their shard). Returns the values."""
    index_codecs, location = LAYOUTS[layout]
    path.mkdir()
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": -1,
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(chunk), "codecs": list(inner), "index_codecs": index_codecs,
            "index_location": location}}]}))
    v = (np.arange(int(np.prod(shape))) % 30000).astype("i2").reshape(shape)
    v[8:16, 40:48] = -1                          # shard c/0/1, inner chunk 5: missing
    zarrx.open_array(str(path), mode="r+")[...] = v
    return v


def _index_at(blob: bytes, layout: str) -> tuple[int, int]:
    codecs, location = LAYOUTS[layout]
    n = 16 * N + 4 * (len(codecs) - 1)
    return (len(blob) - n if location == "end" else 0), n


def _entries(blob: bytes, layout: str) -> np.ndarray:
    at, _ = _index_at(blob, layout)
    dt = ">u8" if LAYOUTS[layout][0][0] is BE else "<u8"
    return np.frombuffer(blob[at:at + 16 * N], dtype=dt).reshape(N, 2).astype(np.uint64)


def _with_entries(blob: bytes, layout: str, entries) -> bytes:
    """``blob`` with its index's entries replaced by ``entries``, its checksums made valid."""
    at, n = _index_at(blob, layout)
    dt = ">u8" if LAYOUTS[layout][0][0] is BE else "<u8"
    index = bytearray(np.asarray(entries, dtype=np.uint64).astype(dt).tobytes())
    for _ in range(len(LAYOUTS[layout][0]) - 1):
        index += crc32c(bytes(index)).to_bytes(4, "little")
    b = bytearray(blob)
    b[at:at + n] = index
    return bytes(b)


def _damage(blob: bytes, kind: str, layout: str) -> bytes:
    at, n = _index_at(blob, layout)
    data_lo = 0 if LAYOUTS[layout][1] == "end" else n
    e = _entries(blob, layout)

    def entry(i: int, off: int, nb: int) -> bytes:
        e[i] = off, nb
        return _with_entries(blob, layout, e)

    if kind == "empty":
        return b""
    if kind == "shorter_than_index":
        return blob[:n - 1] if at == 0 else blob[-(n - 1):]
    if kind == "index_only":
        return blob[at:at + n]
    if kind == "junk_before":           # every offset now points 100 bytes early
        return bytes(100) + blob if at else blob[:n] + bytes(100) + blob[n:]
    if kind == "past_end":
        return entry(3, len(blob) - 4, 5)
    if kind == "offset_2_63":
        return entry(3, 2**63, 4)
    if kind == "offset_2_63_less_1":
        return entry(3, 2**63 - 1, 1)
    if kind == "length_2_63":
        return entry(3, data_lo, 2**63)
    if kind == "length_2_62":
        return entry(3, data_lo, 2**62)
    if kind == "lengths_summing_past_2_64":
        for i in range(N):
            e[i] = data_lo, 2**62
        return _with_entries(blob, layout, e)
    if kind == "wrapping":
        return entry(3, 2**64 - 20, 16)
    if kind == "both_words_huge":
        return entry(3, M - 1, M - 1)
    if kind == "missing_offset_only":
        return entry(3, M, 8)
    if kind == "missing_length_only":
        return entry(3, data_lo, M)
    if kind == "into_the_index":
        return entry(3, at, 8)
    if kind == "zero_length":
        return entry(3, data_lo, 0)
    if kind == "overlapping":           # entry 3 reads entry 2's bytes; entry 4 half of them
        e[3] = e[2]
        e[4] = e[2][0], e[2][1] // 2
        return _with_entries(blob, layout, e)
    if kind == "all_the_same":
        e[:] = e[0]
        return _with_entries(blob, layout, e)
    if kind == "swapped":
        e[[2, 6]] = e[[6, 2]]
        return _with_entries(blob, layout, e)
    if kind == "missing_mixed":         # the empty-entry marker beside real entries
        e[[1, 4, 7, 15]] = M
        return _with_entries(blob, layout, e)
    if kind == "all_missing":
        e[:] = M
        return _with_entries(blob, layout, e)
    if kind == "bad_crc":
        b = bytearray(blob)
        b[at + n - 1] ^= 0x01
        return bytes(b)
    if kind == "junk_index":            # random words, valid checksums
        rng = np.random.default_rng(3)
        return _with_entries(blob, layout, rng.integers(0, 2**63, (N, 2), dtype=np.uint64))
    raise AssertionError(kind)


KINDS = ["empty", "shorter_than_index", "index_only", "junk_before", "past_end", "offset_2_63",
         "offset_2_63_less_1", "length_2_63", "length_2_62", "lengths_summing_past_2_64",
         "wrapping", "both_words_huge", "missing_offset_only", "missing_length_only",
         "into_the_index", "zero_length", "overlapping", "all_the_same", "swapped",
         "missing_mixed", "all_missing", "bad_crc", "junk_index"]


def _outcome(path, sel, threads=1):
    """The values a read gives, or its error's class and message (``path``: a folder or a
    store)."""
    z = zarrx.open_array(path, mode="r")
    with zarrx.config.set(threads=threads):
        try:
            return "values", sel(z)
        except ZarrError as exc:
            return type(exc), str(exc)


def _python(monkeypatch, path, sel, threads=1):
    """:func:`_outcome` with the kernels turned off: every shard read by the Python path."""
    with monkeypatch.context() as m:
        m.setattr(LocalStore, "kernel_paths", lambda self: None)
        m.setattr(MemoryStore, "kernel_values", lambda self: None)
        return _outcome(path, sel, threads)


def _same(got, want) -> None:
    assert got[0] == want[0], (got, want)
    if got[0] == "values":
        np.testing.assert_array_equal(got[1], want[1])
    else:
        assert got[1] == want[1]


def _kernel(path, sel, threads=1):
    """:func:`_outcome`, and how many shard files the kernel opened for it."""
    before = _localshard.counts()["opened"]
    got = _outcome(path, sel, threads)
    return got, _localshard.counts()["opened"] - before


@pytest.mark.parametrize("layout, raw", [("le-crc-end", False), ("le-crc-start", False),
                                         ("be-end", True), ("le-crc-start", True)])
@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_index_reads_as_the_python_path_reads_it(tmp_path, monkeypatch, layout, kind,
                                                           raw):
    if kind == "bad_crc" and "crc" not in layout:
        pytest.skip("no checksum to damage")
    _make(tmp_path / "a", layout, inner=(LE,) if raw else (LE, ZSTD))
    f = tmp_path / "a" / "c" / "0" / "1"
    f.write_bytes(_damage(f.read_bytes(), kind, layout))
    for name, sel in SELS.items():
        got, opened = _kernel(tmp_path / "a", sel)
        assert opened >= 1, name
        _same(got, _python(monkeypatch, tmp_path / "a", sel))


@pytest.mark.parametrize("kind", ["bad_crc", "junk_index", "missing_mixed", "index_only"])
def test_an_index_of_two_checksums_at_the_start(tmp_path, monkeypatch, kind):
    _make(tmp_path / "a", "le-2crc-start")
    f = tmp_path / "a" / "c" / "0" / "1"
    f.write_bytes(_damage(f.read_bytes(), kind, "le-2crc-start"))
    for sel in SELS.values():
        _same(_kernel(tmp_path / "a", sel)[0], _python(monkeypatch, tmp_path / "a", sel))


@pytest.mark.parametrize("kind", ["past_end", "missing_mixed", "swapped", "overlapping",
                                  "length_2_62", "zero_length"])
def test_far_apart_chunks_of_a_large_shard(tmp_path, monkeypatch, kind):
    """A shard of 2 MiB whose wanted chunks lie far apart: each is read alone."""
    v = _make(tmp_path / "a", "le-crc-end", inner=(LE,), shape=(1024, 1024),
              shard=(1024, 1024), chunk=(32, 32))
    f = tmp_path / "a" / "c" / "0" / "0"
    assert f.stat().st_size > 2 * 2**20
    sel = lambda z: z.oindex[[0, 1023], [0, 1023]]    # noqa: E731
    reads: list = []
    old = _localshard.trace(reads)
    try:
        got = _outcome(tmp_path / "a", sel)
    finally:
        _localshard.trace(old)
    np.testing.assert_array_equal(got[1], v[np.ix_([0, 1023], [0, 1023])])
    assert max(n for _, n in reads) < 2**20             # (the chunks read apart)
    blob = f.read_bytes()
    n = 16 * 1024
    e = np.frombuffer(blob[len(blob) - n - 4:-4], "<u8").reshape(-1, 2).copy()
    # the same damage, on the entries of the chunks read: the first and the last
    first, last = 0, 1023
    if kind == "past_end":
        e[last] = len(blob) - 4, 5
    elif kind == "missing_mixed":
        e[first] = M
    elif kind == "swapped":
        e[[first, last]] = e[[last, first]]
    elif kind == "overlapping":
        e[last] = e[first]
    elif kind == "length_2_62":
        e[last, 1] = 2**62
    elif kind == "zero_length":
        e[first, 1] = 0
    idx = e.astype("<u8").tobytes()
    f.write_bytes(blob[:len(blob) - n - 4] + idx + crc32c(idx).to_bytes(4, "little"))
    _same(_kernel(tmp_path / "a", sel)[0], _python(monkeypatch, tmp_path / "a", sel))


def _fifo_or_socket(path, kind):
    if kind == "fifo":
        os.mkfifo(path)
        return None
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    return s


@pytest.mark.parametrize("kind", ["directory", "nonempty_directory", "fifo", "socket",
                                  "link_to_a_shard", "link_to_a_directory", "dangling_link",
                                  "linked_folder", "unreadable", "char_device"])
def test_a_shard_that_is_not_a_regular_file(tmp_path, monkeypatch, kind):
    """Not a regular file: read as the Python path reads it (missing for a folder, a FIFO, a
    socket or a device: never opened blocking, never read), links refused naming the link."""
    _make(tmp_path / "a")
    c = tmp_path / "a" / "c"
    f = c / "0" / "1"
    held = None
    if kind == "unreadable":
        os.chmod(f, 0)
        try:
            open(f, "rb").close()
            pytest.skip("this user reads files without read permission")
        except PermissionError:
            pass
    else:
        os.remove(f)
    if kind == "directory":
        f.mkdir()
    elif kind == "nonempty_directory":
        f.mkdir()
        (f / "0").write_bytes(b"x")
    elif kind in ("fifo", "socket"):
        held = _fifo_or_socket(f, kind)
    elif kind == "link_to_a_shard":
        os.symlink(c / "0" / "0", f)
    elif kind == "link_to_a_directory":
        os.symlink(c, f)
    elif kind == "dangling_link":
        os.symlink(c / "nowhere", f)
    elif kind == "linked_folder":
        os.rename(c / "0", c / "zero")
        os.symlink(c / "zero", c / "0")
    elif kind == "char_device":
        try:
            os.mknod(f, 0o600 | 0o020000, os.makedev(1, 5))        # as /dev/zero
        except PermissionError:
            pytest.skip("no permission to make a device node")
    try:
        for sel in SELS.values():
            done: list = []
            t = threading.Thread(target=lambda: done.append(_kernel(tmp_path / "a", sel)[0]),
                                 daemon=True)
            t.start()
            t.join(120)
            assert done, f"the read of a shard that is a {kind} did not return"
            _same(done[0], _python(monkeypatch, tmp_path / "a", sel))
    finally:
        if held is not None:
            held.close()


@pytest.fixture
def hook():
    old = _localshard.after_index()
    yield _localshard.after_index
    _localshard.after_index(old)


@pytest.mark.parametrize("layout", ["le-crc-end", "le-crc-start"])
@pytest.mark.parametrize("change", ["truncated_to_0", "truncated_to_the_index",
                                    "truncated_by_one", "grown", "replaced_by_a_directory",
                                    "replaced_by_a_fifo", "removed", "rewritten_in_place"])
def test_a_shard_changed_after_its_index_is_read(tmp_path, monkeypatch, hook, layout, change):
    """The file changes right after the kernel read the index (a hook): a file replaced or
    removed is still read through the descriptor at the version the index came from; one
    changed in place (which zarrx never does) either reads as that version or, when a read
    comes back short, is read again by the Python path as it now is, with its error."""
    v = _make(tmp_path / "a", layout)
    f = tmp_path / "a" / "c" / "0" / "1"
    blob = f.read_bytes()
    at, n = _index_at(blob, layout)
    done: list = []

    def change_it(path: bytes) -> None:
        if done or not path.endswith(b"/c/0/1"):
            return
        done.append(path)
        if change.startswith("truncated"):
            keep = {"truncated_to_0": 0, "truncated_to_the_index": n,
                    "truncated_by_one": len(blob) - 1}[change]
            os.truncate(f, keep)
        elif change == "grown":
            with open(f, "ab") as out:
                out.write(b"\xff" * 2**20)
        elif change == "rewritten_in_place":
            with open(f, "r+b") as out:
                out.write(b"\x00" * len(blob))
        else:
            os.rename(f, tmp_path / "old")
            if change == "replaced_by_a_directory":
                f.mkdir()
            elif change == "replaced_by_a_fifo":
                os.mkfifo(f)

    for name, sel in SELS.items():
        hook(change_it)
        got, _ = _kernel(tmp_path / "a", sel)
        hook(None)
        assert done, name
        now = _python(monkeypatch, tmp_path / "a", sel)
        old = ("values", sel(NumpySelections(v)))        # the version the index came from
        if name in ("whole", "all"):                    # (the file read whole: one read)
            _same(got, old)
        elif change == "truncated_to_0":
            _same(got, now)                              # read short: as the file is now
        elif change.startswith("truncated"):            # the chunks read before the end, or
            if got[0] == "values":                       # read short: as the file is now
                _same(got, old)
            else:
                _same(got, now)
        elif change == "rewritten_in_place":            # zeros, refused as chunks or index
            assert got[0] == "values" or issubclass(got[0], ZarrError)
        else:
            _same(got, old)
        # put the shard back for the next selection
        if f.is_dir():
            f.rmdir()
        elif f.exists() or f.is_symlink():
            f.unlink()
        f.write_bytes(blob)
        (tmp_path / "old").unlink(missing_ok=True)
        done.clear()


@pytest.mark.parametrize("threads", [1, 2])
def test_a_window_of_many_shards_some_missing_or_odd(tmp_path, monkeypatch, threads):
    """64 shards read at once: some removed, one a folder, one a FIFO, one all missing
    entries, one with a missing entry; then one damaged among them, the first failing shard's
    error raised in either path."""
    shape = (256, 256)
    _make(tmp_path / "a", shape=shape)
    c = tmp_path / "a" / "c"
    for i in range(0, 64, 3):
        os.remove(c / str(i // 8) / str(i % 8))
    os.mkdir(c / "0" / "0")
    os.mkfifo(c / "0" / "3")
    f = c / "1" / "2"
    f.write_bytes(_damage(f.read_bytes(), "all_missing", "le-crc-end"))
    f = c / "7" / "6"
    f.write_bytes(_damage(f.read_bytes(), "missing_mixed", "le-crc-end"))
    sels = [lambda z: z[...], lambda z: z[5:250, 3:200], lambda z: z.oindex[::7, ::9],
            lambda z: z.vindex[np.arange(0, 256, 3), np.arange(255, -1, -3)[:86]]]
    for sel in sels:
        got, opened = _kernel(tmp_path / "a", sel, threads)
        assert got[0] == "values" and opened > 0
        _same(got, _python(monkeypatch, tmp_path / "a", sel, threads))
    for key in ("4/5", "6/2"):                   # two damaged shards: the first one's error
        f = c / key
        f.write_bytes(_damage(f.read_bytes(), "past_end", "le-crc-end"))
    for sel in sels[:2]:
        got, _ = _kernel(tmp_path / "a", sel, threads)
        assert got[0] != "values" and "c/4/5" in got[1]
        _same(got, _python(monkeypatch, tmp_path / "a", sel, threads))


def test_reads_that_fail_are_read_again_by_the_python_path(tmp_path, monkeypatch):
    v = _make(tmp_path / "a")
    old = _localshard.fail_reads(True)
    try:
        before = _localshard.counts()["handed_on"]
        for sel in SELS.values():
            _same(_outcome(tmp_path / "a", sel), ("values", sel(NumpySelections(v))))
        assert _localshard.counts()["handed_on"] - before >= len(SELS)
    finally:
        _localshard.fail_reads(old)


def test_a_huge_sparse_shard_file_is_refused_unread(tmp_path, monkeypatch):
    """A shard file of 2^40 bytes (sparse), its index at the end pointing at chunks of 2^39
    bytes and at 2^40 - 100: refused as the Python path refuses it, before any chunk is read."""
    _make(tmp_path / "a")
    f = tmp_path / "a" / "c" / "0" / "1"
    blob = f.read_bytes()
    size = 2**40
    e = _entries(blob, "le-crc-end")
    e[3] = 2**40 - 2**39 - 1000, 2**39
    index = _with_entries(blob, "le-crc-end", e)[-(16 * N + 4):]
    try:
        with open(f, "r+b") as out:
            out.truncate(size)
            out.seek(size - len(index))
            out.write(index)
    except OSError:
        pytest.skip("the file system holds no file of 2^40 bytes")
    reads: list = []
    old = _localshard.trace(reads)
    try:
        for sel in SELS.values():
            got, _ = _kernel(tmp_path / "a", sel)
            _same(got, _python(monkeypatch, tmp_path / "a", sel))
    finally:
        _localshard.trace(old)
    assert reads and max(n for _, n in reads) < 2**20
