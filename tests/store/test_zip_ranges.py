"""Ranged reads of zip entries cost time linear in what they read: the first ranged read of a
stored entry streams the whole entry once for its CRC-32, keeping only the range. The
compression a store writes with is checked when it opens."""
from __future__ import annotations

import os
import re
import time
import zipfile
import zlib

import numpy as np
import pytest

from zarrx.errors import StoreError
from zarrx.store import ByteRange, ZipStore, zipread


def test_the_first_ranged_read_of_a_stored_entry_keeps_the_range_in_linear_time(
        tmp_path, monkeypatch):
    """The range was grown by appending each streamed block to bytes, copying it whole each
    time: a 96 MiB range took 12 s (a 1 GiB one minutes). With 16-byte blocks, a 4 MiB range
    spans 262,144 of them: about 550 GB of copies before (hours), 4 MiB after. The bound below
    only tells a finished read from one that would not finish."""
    data = os.urandom(1 << 22)
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w") as store:
        store.set("x", data)
    monkeypatch.setattr(zipread, "BLOCK", 16)
    with ZipStore(path) as store:
        began = time.perf_counter()
        got = store.get("x", ByteRange.slice(3, len(data) - 5))
        took = time.perf_counter() - began
        assert got == data[3:-2]
        assert store.get("x", ByteRange.slice(7, 9)) == data[7:16]    # verified: read in place
    assert took < 120


@pytest.mark.parametrize("mode", ["w", "a", "x", "r"])
@pytest.mark.parametrize("compression", [8.0, True, 99, "deflated", None])
def test_a_compression_zipfile_does_not_write_is_refused_when_the_store_opens(
        tmp_path, mode, compression):
    """``compression=8.0`` escaped as struct.error at the first write (in mode ``a``, after the
    archive was copied); other values gave "That compression method is not supported"."""
    path = tmp_path / "a.zip"
    if mode in ("a", "r"):
        with ZipStore(path, mode="w") as store:
            store.set("x", b"1")
    before = os.listdir(tmp_path)
    with pytest.raises(StoreError) as info:
        ZipStore(path, mode=mode, compression=compression)
    assert str(info.value) == (
        f"ZipStore({str(path)!r}, mode={mode!r}): compression: expected one of "
        f"zipfile.ZIP_STORED (0), zipfile.ZIP_DEFLATED (8), zipfile.ZIP_BZIP2 (12), "
        f"zipfile.ZIP_LZMA (14), found {compression!r}")
    assert os.listdir(tmp_path) == before


def test_a_compression_given_as_a_numpy_integer_is_taken(tmp_path):
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w", compression=np.int64(zipfile.ZIP_DEFLATED)) as store:
        store.set("x", b"1" * 100)
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("x").compress_type == zipfile.ZIP_DEFLATED


def test_a_counting_store_over_an_archive_refuses_a_swollen_chunk_unread(tmp_path, monkeypatch):
    """A chunk entry declaring 64 MiB in a few hundred bytes of bzip2 is refused by the size
    the directory gives; through a CountingStore it was inflated whole first, as the wrapper
    did not say that its ranges cost whole entries."""
    import zarrx
    from zarrx.errors import CodecError
    from zarrx.store import CountingStore, MemoryStore
    m = MemoryStore()
    zarrx.create_array(m, shape=(4,), chunks=(2,), dtype="i4", compressors=None)[:] = 1
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_BZIP2) as zf:
        for key in m.list_prefix(""):
            zf.writestr(key, bytes(64 << 20) if key == "c/0" else m.get(key))
    inflated: list[str] = []
    real = zipread.Reader._blocks
    monkeypatch.setattr(zipread.Reader, "_blocks", lambda self, fp, info, *a:
                        inflated.append(info.filename) or real(self, fp, info, *a))
    with ZipStore(path) as inner:
        store = CountingStore(inner)
        assert store.ranges_read_whole and store.stored_size("c/0") < 1000
        z = zarrx.open_array(store, mode="r")
        with pytest.raises(CodecError, match=f"chunk 'c/0': expected 8 bytes .* found {64 << 20}"):
            z[:2]
        np.testing.assert_array_equal(z[2:], [1, 1])
    assert "c/0" not in inflated


def test_ranges_of_a_large_deflated_entry_resume_from_the_last_point_before_them(
        tmp_path, monkeypatch):
    """An entry too large for the inflate cache, read range by range from its end to its
    start: each read inflated everything before its range (about 40 times the entry here, and
    26 s for the 32 inner chunks of a 128 MiB deflated shard); each now resumes from a point
    the first pass left, at most a spacing and a block before its range."""
    from zarrx.store import zipinflate
    data = os.urandom(20_000) + bytes(180_000) + os.urandom(20_000)
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        store.set("x", data)
    monkeypatch.setattr(zipread, "INFLATE_CACHE_BYTES", 1000)
    monkeypatch.setattr(zipread, "BLOCK", 64)
    monkeypatch.setattr(zipinflate, "MIN_SPACING", 4096)
    inflated = _inflated_bytes(monkeypatch)
    with ZipStore(path) as store:
        assert store.get("x", ByteRange.last(10)) == data[-10:]       # verifies it all
        assert inflated[0] == len(data)
        inflated[0] = 0
        starts = range(len(data) - 5000, 0, -5000)
        for start in starts:
            assert store.get("x", ByteRange.slice(start, 100)) == data[start:start + 100]
        with store.snapshot("x") as snap:             # several ranges: one pass
            assert snap.read([ByteRange.slice(150_000, 7), ByteRange.slice(160_000, 9)]) == \
                [data[150_000:150_007], data[160_000:160_009]]
    assert inflated[0] < len(starts) * (4096 + 64 + 100) + 10_000 + 4096 + 64


def _inflated_bytes(monkeypatch) -> list[int]:
    inflated = [0]
    real = zipread.Reader._blocks

    def counted(self, *args):
        for block in real(self, *args):
            inflated[0] += len(block)
            yield block

    monkeypatch.setattr(zipread.Reader, "_blocks", counted)
    return inflated


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_ranges_of_a_large_bzip2_or_lzma_entry_inflate_it_once(tmp_path, monkeypatch, method):
    """bzip2 and LZMA inflaters cannot be copied to resume from: each ranged read of an entry
    too large for the inflate cache inflated it from its start (40 reads of this entry: about
    20 times its length). The first now inflates it whole into a temporary file, which the
    others read; closing the store removes it."""
    data = os.urandom(20_000) + bytes(180_000) + os.urandom(20_000)
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w", compression=method) as store:
        store.set("x", data)
    monkeypatch.setattr(zipread, "INFLATE_CACHE_BYTES", 1000)
    inflated = _inflated_bytes(monkeypatch)
    opened = []
    real = zipread.Spills.start
    monkeypatch.setattr(zipread.Spills, "start", staticmethod(lambda: opened.append(real())
                                                               or opened[-1]))
    with ZipStore(path) as store:
        for start in range(len(data) - 5000, 0, -5000):
            assert store.get("x", ByteRange.slice(start, 100)) == data[start:start + 100]
        with store.snapshot("x") as snap:
            assert snap.read([ByteRange.slice(150_000, 7), ByteRange.last(9)]) == \
                [data[150_000:150_007], data[-9:]]
        assert store.get("x") == data                   # whole: as before, in memory
    assert inflated[0] == 2 * len(data)
    assert len(opened) == 1 and opened[0].closed


def test_a_large_bzip2_entry_is_read_without_a_temporary_file_when_none_can_be_written(
        tmp_path, monkeypatch):
    data = os.urandom(5000) + bytes(50_000)
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w", compression=zipfile.ZIP_BZIP2) as store:
        store.set("x", data)
    monkeypatch.setattr(zipread, "INFLATE_CACHE_BYTES", 1000)

    def full() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipread.Spills, "start", staticmethod(full))
    with ZipStore(path) as store:
        assert store.get("x", ByteRange.slice(4000, 2000)) == data[4000:6000]
        assert store.get("x", ByteRange.last(5)) == data[-5:]


def test_a_large_lzma_entry_with_a_wrong_crc_is_refused_on_its_first_range(tmp_path,
                                                                            monkeypatch):
    data = bytes(range(256)) * 400
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_LZMA) as zf:
        zf.writestr("x", data)
    raw = bytearray(path.read_bytes())
    at = raw.rindex(b"PK\x01\x02") + 16                 # the central directory's CRC-32
    raw[at:at + 4] = (zlib.crc32(data) ^ 1).to_bytes(4, "little")
    local = raw.index(b"PK\x03\x04") + 14                # and the local header's
    raw[local:local + 4] = raw[at:at + 4]
    path.write_bytes(bytes(raw))
    monkeypatch.setattr(zipread, "INFLATE_CACHE_BYTES", 1000)
    with ZipStore(path) as store:
        with pytest.raises(StoreError, match=re.escape(
                f"entry 'x': CRC-32 mismatch: expected {zlib.crc32(data) ^ 1:#010x}, found "
                f"{zlib.crc32(data):#010x}")):
            store.get("x", ByteRange.slice(10, 5))
