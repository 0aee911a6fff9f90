"""Sparse arrays on a LocalStore: a read of many chunks of which few are stored costs a look at
each folder (one failed open for a folder that is not there, one listing for one that is),
not one failed open per absent chunk, and still reads every chunk whole: as stored at some
moment of the read, or the fill value. Counts come from the read kernels' own counters
(``lookups()``) and from the system calls a reading process makes (strace, where it runs)."""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import zarrx
from folder_stamps import coarse_stamps, settle
from zarrx.errors import StoreError
from zarrx.store import LocalStore
from zarrx.store import _localbox, _localread

GRID = 64           # chunks per axis
C = 4               # cells per chunk per axis
WRITTEN = [(0, 5), (17, 63), (40, 40)]      # the chunks stored


def lookups() -> dict[str, int]:
    a, b = _localread.lookups(), _localbox.lookups()
    return {k: a[k] + b[k] for k in a}


def counted(fn):
    """``fn()`` and the files and folders the read kernels opened and listed meanwhile."""
    before = lookups()
    out = fn()
    after = lookups()
    return out, {k: after[k] - before[k] for k in after}


LAYOUTS = {
    "v3-zstd": dict(zarr_format=3),                       # the general path
    "v3-raw": dict(zarr_format=3, compressors=None),      # the box kernel
    "v3-dot": dict(zarr_format=3, chunk_key_encoding={"name": "default", "separator": "."}),
    "v2-dot": dict(zarr_format=2),
    "v2-dot-raw": dict(zarr_format=2, compressors=None),
    "v2-nested": dict(zarr_format=2, chunk_key_encoding={"name": "v2", "separator": "/"}),
}


def sparse(path, layout, *, grid=GRID, written=WRITTEN, **kw):
    """A grid x grid array of C x C chunks, fill 7, with ``written`` chunks stored, and the
    numpy array it equals."""
    z = zarrx.create_array(str(path), shape=(grid * C, grid * C), chunks=(C, C),
                           dtype="int32", fill_value=7, **LAYOUTS[layout], **kw)
    expect = np.full(z.shape, 7, dtype="int32")
    for n, (i, j) in enumerate(written):
        block = np.arange(C * C, dtype="int32").reshape(C, C) + 100 * (n + 1)
        z[i * C:(i + 1) * C, j * C:(j + 1) * C] = block
        expect[i * C:(i + 1) * C, j * C:(j + 1) * C] = block
    settle(path)
    return zarrx.open_array(str(path), mode="r"), expect


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_sparse_read_costs_a_look_per_folder_not_an_open_per_chunk(tmp_path, layout):
    z, expect = sparse(tmp_path / "a.zarr", layout)
    got, n = counted(lambda: z[:])
    np.testing.assert_array_equal(got, expect)
    # before: 4,096 file opens (one per chunk); now each of the 3 stored chunks is opened,
    # with at most two absent ones before its folder is listed, and one folder open each
    assert n["file_opens"] <= 3 * 3 + 2 * n["listings"]
    assert n["listings"] <= 3 * max(1, n["folder_opens"])
    total = n["file_opens"] + n["folder_opens"] + n["listings"]
    assert total <= (100 if layout in ("v3-zstd", "v3-raw", "v2-nested") else 60), n


@pytest.mark.parametrize("layout", ["v3-zstd", "v3-raw", "v2-nested"])
def test_a_folder_not_there_costs_one_failed_open(tmp_path, layout):
    """Rows with no chunk stored have no folder: each costs one failed open of the folder,
    none per chunk (these layouts keep a folder per row)."""
    z, expect = sparse(tmp_path / "a.zarr", layout, written=[(3, 3)])
    got, n = counted(lambda: z[8 * C:40 * C])        # rows 8 to 39: no folder
    np.testing.assert_array_equal(got, expect[8 * C:40 * C])
    assert n["file_opens"] == 0 and n["listings"] == 0
    assert 32 <= n["folder_opens"] <= 2 * 32


@pytest.mark.parametrize("layout", ["v3-zstd", "v3-raw", "v2-dot"])
def test_dense_reads_and_reads_of_a_few_chunks_never_list(tmp_path, layout):
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(32 * C, 32 * C), chunks=(C, C),
                           dtype="int32", fill_value=0, **LAYOUTS[layout])
    data = np.arange(z.size, dtype="int32").reshape(z.shape) + 1
    z[:] = data
    got, n = counted(lambda: z[:])
    np.testing.assert_array_equal(got, data)
    assert n["listings"] == 0 and n["file_opens"] == 32 * 32
    z[:, 16 * C:] = 0                                 # half of each row left to the fill
    got, n = counted(lambda: z[:2 * C, 12 * C:19 * C])  # 14 chunks, 6 of them absent
    np.testing.assert_array_equal(got, np.where(np.arange(z.shape[1]) < 16 * C, data, 0)
                                  [:2 * C, 12 * C:19 * C])
    assert n["listings"] == 0 and n["file_opens"] == 14


def test_a_folder_with_many_more_entries_than_keys_wanted_is_not_listed_whole(tmp_path):
    """A read of 20 chunks in a folder of 4,096 stored ones: the listing is given up (past
    4 entries per key left, plus 64: here the folder's size tells so before any entry is
    read) and the chunks are opened one by one."""
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(64 * C, 64 * C), chunks=(C, C),
                           dtype="int32", fill_value=0, zarr_format=2, compressors=None)
    z[:] = 5
    z[C:2 * C, :20 * C] = 0                           # 20 chunks of the row deleted
    assert len(os.listdir(tmp_path / "a.zarr")) > 4000
    got, n = counted(lambda: z[C:2 * C, :20 * C])
    assert (got == 0).all()
    assert n["listings"] == 1 and n["file_opens"] == 20


def test_a_sharded_read_skips_shards_not_stored(tmp_path, monkeypatch):
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(1024, 1024), chunks=(16, 16),
                           shards=(64, 64), dtype="int32", fill_value=3)
    expect = np.full(z.shape, 3, dtype="int32")
    for i, j in [(0, 0), (5, 9), (15, 15)]:           # 3 of 256 shards
        z[i * 64:(i + 1) * 64, j * 64:j * 64 + 32] = i + j + 10
        expect[i * 64:(i + 1) * 64, j * 64:j * 64 + 32] = i + j + 10
    settle(tmp_path / "a.zarr")
    opened: list[str] = []
    orig = LocalStore.snapshot
    monkeypatch.setattr(LocalStore, "snapshot",
                        lambda self, key: opened.append(key) or orig(self, key))
    from zarrx.store import _localshard
    z = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
    kernel = _localshard.counts()["opened"]
    np.testing.assert_array_equal(z[:], expect)       # box reads, shard by shard
    # (by the shard kernel, which opens the files itself)
    assert len(opened) + _localshard.counts()["opened"] - kernel <= 3, opened   # before: 256
    opened.clear()
    kernel = _localshard.counts()["opened"]
    np.testing.assert_array_equal(z[::3, 1::2], expect[::3, 1::2])    # the general path
    assert len(opened) + _localshard.counts()["opened"] - kernel <= 3, opened


def test_links_in_a_sparse_read_are_refused_as_before(tmp_path):
    z, _ = sparse(tmp_path / "a.zarr", "v3-zstd", written=[(0, 0), (1, 1), (2, 2)])
    root = tmp_path / "a.zarr" / "c"
    os.symlink(root / "1" / "1", root / "2" / "9")        # a link to a chunk in a listed folder
    with pytest.raises(StoreError, match="symbolic link"):
        z[2 * C:3 * C]
    os.remove(root / "2" / "9")
    shutil.move(root / "1", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", root / "1")        # a row folder that is a link
    with pytest.raises(StoreError, match="symbolic link"):
        z[:]


def _uniform_chunks(got: np.ndarray, fill: int, seen: set) -> None:
    """Every chunk of ``got`` holds one value: the fill, or one write's counter."""
    blocks = got.reshape(got.shape[0] // C, C, got.shape[1] // C, C).transpose(0, 2, 1, 3)
    flat = blocks.reshape(blocks.shape[0], blocks.shape[1], -1)
    torn = np.argwhere((flat != flat[..., :1]).any(axis=-1))
    assert not len(torn), f"chunks {torn[:4].tolist()} hold values of two versions"
    seen.update(np.unique(flat[..., 0]).tolist())


@pytest.mark.parametrize("layout", ["v3-zstd", "v3-raw", "v2-dot"])
def test_reads_racing_a_writer_see_each_chunk_whole(tmp_path, layout):
    """One thread rewrites and deletes chunks of a sparse array (each write gives all the
    cells of a chunk one new counter value; a write of the fill deletes the chunk) while
    another reads the whole array at least 40 times (once the writer has written, and until
    reads have seen several of its writes): every chunk read is all fill or all one value,
    and no read fails."""
    rows, cols = 8, 64
    z = zarrx.create_array(str(tmp_path / "a.zarr"), shape=(rows * C, cols * C), chunks=(C, C),
                           dtype="int32", fill_value=0, config={"write_empty_chunks": False},
                           **LAYOUTS[layout])
    hot = [(i, j) for i in range(rows) for j in range(0, cols, 7)]   # the chunks written
    stop, started = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        rnd = random.Random(1)
        counter = 0
        try:
            while not stop.is_set() and counter < 100_000:
                counter += 1
                i, j = rnd.choice(hot)
                value = 0 if counter % 3 == 0 else counter
                z[i * C:(i + 1) * C, j * C:(j + 1) * C] = value
                if counter == 8:
                    started.set()
        except BaseException as exc:        # noqa: BLE001 (reported by the test)
            errors.append(exc)

    thread = threading.Thread(target=writer)
    seen: set = set()
    before = lookups()
    thread.start()
    try:
        reader = zarrx.open_array(str(tmp_path / "a.zarr"), mode="r")
        started.wait(60)        # (a busy machine may run the reader first for a long while)
        reads = 0
        while reads < 40 or (len(seen) <= 2 and reads < 400 and thread.is_alive()):
            _uniform_chunks(reader[:], 0, seen)
            reads += 1
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    assert len(seen) > 2                    # reads saw the fill and several writes
    assert lookups()["listings"] > before["listings"]     # and went through listings


def test_the_read_makes_a_few_dozen_opens_where_it_made_4096(tmp_path):
    """The system calls themselves, as strace counts them in a process reading a 64 x 64
    chunk array holding 3 chunks: opens (openat, openat2) and listings (getdents64), less
    those of a process that only opens the array."""
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    sparse(tmp_path / "a.zarr", "v3-zstd")
    script = ("import sys, zarrx; z = zarrx.open_array(sys.argv[1], mode='r'); "
              "x = z[:] if sys.argv[2] == 'read' else None")

    def calls(what: str) -> int:
        out = tmp_path / f"strace-{what}.txt"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(["strace", "-f", "-c", "-o", str(out), "-e",
                               "trace=openat,openat2,getdents64", sys.executable, "-c", script,
                               str(tmp_path / "a.zarr"), what], env=env, capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"strace cannot trace here: {done.stderr.decode()[-200:]}")
        total = [line for line in out.read_text().splitlines() if line.rstrip().endswith("total")]
        return int(total[0].split()[3])

    extra = calls("read") - calls("open")
    assert extra <= 120, extra                        # before: about 4,100


def too_recent() -> int:
    return _localread.listings_too_recent() + _localbox.listings_too_recent()


@pytest.fixture
def coarse():
    """File systems whose timestamps step by an hour: every folder changed within the last
    hour is too recent to be listed."""
    with coarse_stamps():
        yield


@pytest.mark.parametrize("layout", ["v3-zstd", "v3-raw", "v2-dot"])
def test_a_folder_stamped_at_or_after_the_clock_is_opened_key_by_key(tmp_path, layout):
    """A folder whose timestamps are not older than the clock (changed within its current
    tick, as coarse clocks stamp) could change during a listing without its timestamps
    showing it: its keys are opened one by one, as when a listing is given up (before: listed,
    and a chunk replaced during the listing could read as the fill value). Once its timestamps
    are older than a tick, it is listed again."""
    z, expect = sparse(tmp_path / "a.zarr", layout)
    folder = tmp_path / "a.zarr" / ("c/17" if layout.startswith("v3") else "")
    future = (int(os.stat(folder).st_mtime) + 3600) * 10**9
    os.utime(folder, ns=(future, future))
    rows = (slice(17 * C, 18 * C), slice(None))
    before = too_recent()
    got, n = counted(lambda: z[rows])
    np.testing.assert_array_equal(got, expect[rows])
    assert n["file_opens"] == GRID, n                   # before: 3 (then the listing)
    assert too_recent() > before
    keys = [f"c/17/{j}" if layout.startswith("v3") else f"17.{j}" for j in range(GRID)]
    assert not any(LocalStore(str(tmp_path / "a.zarr")).known_absent(keys))
    past = future - 2 * 3600 * 10**9                    # an hour ago
    os.utime(folder, ns=(past, past))
    settle(folder)                                      # its ctime (now) a tick old
    got, n = counted(lambda: z[rows])
    np.testing.assert_array_equal(got, expect[rows])
    assert n["file_opens"] <= 3 and n["listings"] == 1, n
    assert LocalStore(str(tmp_path / "a.zarr")).known_absent(keys) == [j != 63 for j in
                                                                       range(GRID)]


def test_a_folder_changed_within_the_granularity_of_coarse_stamps_is_not_listed(
        tmp_path, coarse):
    z, expect = sparse(tmp_path / "a.zarr", "v3-zstd", written=[(3, 3), (3, 40)])
    before = too_recent()
    got, n = counted(lambda: z[3 * C:4 * C])
    np.testing.assert_array_equal(got, expect[3 * C:4 * C])
    assert n["file_opens"] == GRID and too_recent() == before + 1, n
    _localread.min_timestamp_grain(0)                   # stamps of nanoseconds again
    got, n = counted(lambda: z[3 * C:4 * C])
    np.testing.assert_array_equal(got, expect[3 * C:4 * C])
    assert n["file_opens"] <= 4 and too_recent() == before + 1, n


S = 10**9


@pytest.mark.parametrize("now,ctime,mtime,recent", [
    ((100, 0), (99, 999_999_998), (50, 7), False),     # nanosecond stamps, older than now
    ((100, 0), (99, 999_999_999), (50, 7), True),      # not older than now less 1 ns
    ((100, 5), (100, 5), (50, 7), True),                # stamped at the clock's reading
    ((100, 5), (50, 7), (100, 6), True),                # mtime after it
    ((100, 5), (100, 4), (50, 7), True),                # within 1 ns (its granularity)
    ((100, 5), (101, 3), (50, 7), True),                # in the future
    ((100, 0), (98, 0), (50, 7), True),                 # whole seconds: a granularity of 2 s
    ((100, 1), (98, 0), (50, 7), False),
    ((100, 0), (99, 990_000_000), (50, 7), True),       # ends in 7 zeros: 10 ms
    ((100, 0), (99, 980_000_000), (50, 7), False),
    ((100, 0), (99, 999_999_000), (50, 7), True),       # 1 us
])
def test_the_rule_for_recent_folders(now, ctime, mtime, recent):
    """A folder is too recent when its ctime or mtime is not strictly older than the clock's
    reading less the granularity its stamps suggest (their trailing zeros; 2 s for whole
    seconds)."""
    assert _localread.stamps_recent(now, ctime, mtime) is recent
    assert _localread.stamps_recent(now, mtime, ctime) is recent


def test_a_coarser_granularity_can_be_set_for_tests(coarse):
    assert _localread.stamps_recent((5000, 0), (1500, 1), (1, 1))
    assert not _localread.stamps_recent((5000, 0), (1399, 1), (1, 1))
