"""Reads from a LocalStore on several threads: each thread reads whole chunk files into its own
reused buffer (an arena) and decodes them before reading more, so every selection agrees with
numpy however the windows fall."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx


@pytest.fixture(params=[1, 2, 4], ids=lambda n: f"threads={n}")
def threads(request):
    with zarrx.config.set(threads=request.param):
        yield request.param


@pytest.mark.parametrize("codec, chunks", [(None, (128, 512)), ("zstd", (128, 128)),
                                           (None, (16, 16)), ("zstd", (16, 16))],
                         ids=["raw-256KiB", "zstd-64KiB", "raw-1KiB", "zstd-1KiB"])
def test_whole_and_partial_reads_match_numpy(tmp_path, threads, codec, chunks):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1000, size=(1024, 1536)).astype("f4")
    compressors = None if codec is None else zarrx.codecs.Zstd(level=1)
    z = zarrx.create_array(tmp_path / "a.zarr", shape=a.shape, dtype="f4", chunks=chunks,
                           compressors=compressors, fill_value=-1)
    z[...] = a
    z[100:300, 1000:1400] = -1                         # some chunks end up absent
    a[100:300, 1000:1400] = -1
    z = zarrx.open_array(tmp_path / "a.zarr", mode="r")
    np.testing.assert_array_equal(z[...], a)
    for sel in [np.s_[5:1000:3, 7:1500:5], np.s_[900:, :40]]:
        np.testing.assert_array_equal(z[sel], a[sel])
    np.testing.assert_array_equal(z.oindex[[3, 900, 17], 10:1000], a[[3, 900, 17], 10:1000])
    out = np.zeros_like(a)
    z.get_basic_selection(Ellipsis, out=out)
    np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("crc", [False, True], ids=["raw", "crc32c"])
def test_shards_assembled_in_a_reused_slab_are_each_whole(tmp_path, threads, crc):
    """A writing thread assembles every shard it writes to a LocalStore in one slab, which the
    store copies out before the next shard is assembled in it: every shard holds its own data."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1 << 30, size=(512, 768)).astype("i4")
    b = -a
    compressors = [zarrx.codecs.Crc32c()] if crc else None
    za = zarrx.create_array(tmp_path / "a.zarr", shape=a.shape, dtype="i4", chunks=(32, 32),
                            shards=(128, 128), compressors=compressors)
    zb = zarrx.create_array(tmp_path / "b.zarr", shape=a.shape, dtype="i4", chunks=(32, 32),
                            shards=(128, 128), compressors=None)
    for _ in range(2):
        za[...] = a
        zb[...] = b                                  # same slab size, another array
        za[128:384, 256:512] = a[128:384, 256:512] + 1
    a[128:384, 256:512] += 1
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "a.zarr", mode="r")[...], a)
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "b.zarr", mode="r")[...], b)


@pytest.mark.parametrize("codec", [None, "zstd"])
def test_sharded_reads_through_the_arena_match_numpy(tmp_path, threads, codec):
    """Inner chunks of one shard lying close together are read with one pread into the
    reading thread's arena; several shards share one arena within a window."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 1000, size=(1024, 1536)).astype("f4")
    compressors = None if codec is None else zarrx.codecs.Zstd(level=1)
    z = zarrx.create_array(tmp_path / "s.zarr", shape=a.shape, dtype="f4", chunks=(64, 128),
                           shards=(256, 512), compressors=compressors, fill_value=-1)
    z[...] = a
    z[300:700, 100:900] = -1                          # some inner chunks absent
    a[300:700, 100:900] = -1
    z = zarrx.open_array(tmp_path / "s.zarr", mode="r")
    np.testing.assert_array_equal(z[...], a)
    for sel in [np.s_[5:1000:3, 7:1500:5], np.s_[900:, :40], np.s_[::7, ::11]]:
        np.testing.assert_array_equal(z[sel], a[sel])


def test_a_snapshot_reads_dense_ranges_once_and_sparse_ones_apart(tmp_path):
    from zarrx.store import LocalStore
    from zarrx.store.base import ByteRange

    store = LocalStore(tmp_path / "r")
    blob = bytes(range(256)) * 64                     # 16 KiB
    store.set("k", blob)
    arena = store.new_arena()
    arena.reset()
    with store.snapshot("k") as snap:
        dense = snap.read([ByteRange(0, 100), ByteRange(120, 50), ByteRange(300, 10)], arena=arena)
        assert [bytes(v) for v in dense] == [blob[0:100], blob[120:170], blob[300:310]]
        assert all(isinstance(v, memoryview) for v in dense)
        sparse = snap.read([ByteRange(0, 10), ByteRange(16000, 10)], arena=arena)
        assert [bytes(v) for v in sparse] == [blob[0:10], blob[16000:16010]]
        assert bytes(dense[1]) == blob[120:170]       # the sparse read left the arena alone


def _count_preads(monkeypatch, request) -> list:
    """Count the reads LocalStore snapshots make (one ``preadv`` each, for files this small)
    and those of the shard kernel (``zarrx.store._localshard``, one ``pread`` each)."""
    from zarrx.store import _localshard, localsnap
    calls: list = []
    old = _localshard.trace(calls)
    request.addfinalizer(lambda: _localshard.trace(old))
    real = localsnap._pread_into

    def counted(fd, buf, offset):
        calls.append((offset, len(buf)))
        return real(fd, buf, offset)

    monkeypatch.setattr(localsnap, "_pread_into", counted)
    return calls


@pytest.mark.parametrize("location", ["end", "start"])
def test_a_shard_nearly_all_wanted_is_read_with_one_read(tmp_path, threads, monkeypatch, location,
                                                         request):
    """A read wanting nearly all of a shard (at least half its inner chunks, and at most a
    sixteenth of them left out before the first wanted one and after the last) reads the shard's
    file whole, once, and takes the index and the chunks from those bytes; any other read reads
    the index, then the chunks."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1000, size=(512, 512)).astype("f4")
    z = zarrx.create_array(tmp_path / "s.zarr", shape=a.shape, dtype="f4", chunks=(64, 64),
                           shards={"shape": (256, 256), "index_location": location},
                           compressors=None, fill_value=0)
    z[...] = a
    whole = 256 * 256 * 4 + 16 * 16 + 4                  # the inner chunks and the index

    def reads(sel) -> list:
        r = zarrx.open_array(tmp_path / "s.zarr", mode="r")       # no index cached
        calls.clear()
        np.testing.assert_array_equal(r[sel], a[sel])
        return list(calls)

    calls = _count_preads(monkeypatch, request)
    assert reads(np.s_[...]) == [(0, whole)] * 4                # the 4 files, each read whole
    assert reads(np.s_[0:256, 320:512]) == [(0, whole)]         # 12 of 16 chunks, from slot 1
    top = reads(np.s_[0:128, 256:512])                          # 8 of 16: slots 0 to 7
    assert len(top) == 2 and top[1][1] == 8 * 64 * 64 * 4       # the index, then the chunks
    assert len(reads(np.s_[0:64, 0:256])) == 2                  # 4 of 16


@pytest.mark.parametrize("location", ["end", "start"])
def test_a_shard_file_much_longer_than_its_chunks_is_not_read_whole(tmp_path, monkeypatch,
                                                                    location, request):
    """Bytes no index entry points at (left by a writer, or appended after the index at the
    start) are not read: a shard file larger than ``WHOLE_READ_MAX`` is read as its index,
    then its chunks, however much of it is wanted."""
    from zarrx.store.sharded import WHOLE_READ_MAX
    a = np.arange(64 * 64, dtype="u1").reshape(64, 64)
    z = zarrx.create_array(tmp_path / "s.zarr", shape=a.shape, dtype="u1", chunks=(16, 16),
                           shards={"shape": (64, 64), "index_location": location},
                           compressors=None, fill_value=0)
    z[...] = a
    path = tmp_path / "s.zarr" / "c" / "0" / "0"
    blob = path.read_bytes()
    index = 16 * 16 + 4
    chunks, idx = (blob[index:], blob[:index]) if location == "start" else \
        (blob[:-index], blob[-index:])
    gap = bytes(WHOLE_READ_MAX)                # a run of bytes no entry points at
    if location == "start":                    # after the chunks
        path.write_bytes(idx + chunks + gap)
    else:                                      # before them, the entries moved past it
        entries = np.frombuffer(idx[:-4], "<u8").reshape(-1, 2).copy()
        entries[:, 0] += len(gap)
        from zarrx.codecs._crc32c import crc32c
        body = entries.astype("<u8").tobytes()
        path.write_bytes(gap + chunks + body + crc32c(body).to_bytes(4, "little"))
    calls = _count_preads(monkeypatch, request)
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "s.zarr", mode="r")[...], a)
    assert max(n for _, n in calls) <= len(chunks)
