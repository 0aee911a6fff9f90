"""ZipStore against archives whose CRC-32s and sizes lie: every entry's CRC-32 is checked, and
inflation never passes an entry's declared size (deflate, bzip2, LZMA), read whole or by range."""
from __future__ import annotations

import io
import os
import re
import time
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest

from zarrx.errors import StoreError
from zarrx.store import ByteRange, ZipStore
from zarrx.store import zipread

from .zip_archives import _LOCAL, build, deflate, entry


def gib_of_zeros():
    """A raw deflate stream of about 1 MB that inflates to 1 GiB of zeros."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * 1024 + b"\x03\x00"


@pytest.mark.parametrize("method", [0, 8], ids=["stored", "deflated"])
@pytest.mark.parametrize("rng", [None, ByteRange.slice(10, 5), ByteRange.last(3)],
                         ids=["full", "slice", "suffix"])
def test_crc_is_verified_on_every_entry_served(tmp_path, method, rng):
    data = bytes(range(256)) * 40
    stored = data if method == 0 else deflate(data)
    path = build(tmp_path / "a.zip", [entry("good", stored, method=method, usize=len(data),
                                            crc=zlib.crc32(data)),
                                      entry("bad", stored, method=method, usize=len(data),
                                            crc=zlib.crc32(data) ^ 1)])
    with ZipStore(path) as store:
        assert store.get("good", rng) == (data if rng is None else rng.apply(data))
        with pytest.raises(StoreError) as info:
            store.get("bad", rng)
        assert str(info.value) == (f"{store!r}: entry 'bad': CRC-32 mismatch: expected "
                                   f"{zlib.crc32(data) ^ 1:#010x}, found {zlib.crc32(data):#010x}")
        with pytest.raises(StoreError, match="CRC-32 mismatch"):   # and again: not remembered
            store.get("bad", ByteRange.slice(0, 1))


class CountingFile:
    """A file object that counts the bytes read through it."""

    def __init__(self, fp):
        self.fp, self.bytes_read = fp, 0

    def read(self, n=-1):
        data = self.fp.read(n)
        self.bytes_read += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self.fp, name)


def test_a_stored_entry_is_verified_once_then_read_by_range(tmp_path):
    data = os.urandom(1 << 20)
    path = build(tmp_path / "a.zip", [entry("shard", data)])
    with ZipStore(path) as store:
        counted = store._zf.fp = CountingFile(store._zf.fp)
        for i in range(200):
            assert store.get("shard", ByteRange.slice(i * 4000, 16)) == data[i * 4000:i * 4000 + 16]
        assert counted.bytes_read < len(data) + 200 * 16 + 1000   # one pass, then the ranges


def test_an_entry_inflating_past_its_declared_size_is_refused_cheaply(tmp_path):
    bomb = gib_of_zeros()
    path = build(tmp_path / "bomb.zip", [entry("c/0", bomb, method=8, usize=1 << 20,
                                               crc=zlib.crc32(bytes(1 << 20)))])
    assert os.path.getsize(path) < 1_100_000
    with ZipStore(path) as store:
        tracemalloc.start()
        t = time.perf_counter()
        with pytest.raises(StoreError) as info:
            store.get("c/0", ByteRange.slice(0, 10))
        elapsed = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert str(info.value) == (f"{store!r}: entry 'c/0': inflates to more than its declared "
                               f"{1 << 20} bytes")
    assert peak < 16 << 20 and elapsed < 2.0


def test_a_declared_size_deflate_cannot_produce_is_refused_unread(tmp_path):
    packed = deflate(bytes(1000))
    path = build(tmp_path / "a.zip", [entry("c/0", packed, method=8, usize=1 << 30)])
    with ZipStore(path) as store:
        t = time.perf_counter()
        with pytest.raises(StoreError) as info:
            store.get("c/0")
        assert time.perf_counter() - t < 1.0
    assert str(info.value) == (f"{store!r}: entry 'c/0': declares {1 << 30} bytes from "
                               f"{len(packed)} compressed bytes, more than deflate can produce")


def test_an_entry_inflating_short_of_its_declared_size_is_refused(tmp_path):
    path = build(tmp_path / "a.zip", [entry("k", deflate(b"abc" * 100), method=8, usize=400,
                                            crc=zlib.crc32(b"abc" * 100))])
    with ZipStore(path) as store, pytest.raises(StoreError) as info:
        store.get("k")
    assert str(info.value) == f"{store!r}: entry 'k': inflates to 300 bytes, declared 400"


@pytest.mark.parametrize("usize", [1 << 30, 4], ids=["more", "fewer"])
def test_a_stored_entry_whose_sizes_differ_is_refused_when_read(tmp_path, usize):
    """Its name is a key, so it is no absent chunk (which would read as the fill value): the
    key is listed and reading it names the entry and both sizes."""
    path = build(tmp_path / "a.zip", [entry("k", b"12345", usize=usize), entry("ok", b"1")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store = ZipStore(path)
    with store:
        assert list(store.list_prefix("")) == ["k", "ok"]
        for byte_range in (None, ByteRange(1, 3)):
            with pytest.raises(StoreError) as info:
                store.get("k", byte_range)
            assert str(info.value) == (f"ZipStore({str(path)!r}, mode='r'): entry 'k': stored "
                                       f"entry declares {usize} bytes but holds 5")
        assert store.get("ok") == b"1"


@pytest.mark.parametrize("usize,crc", [(0, 0), (7, None)], ids=["declares-none", "range-of-none"])
def test_a_stored_entry_whose_sizes_differ_is_refused_when_no_byte_is_asked(tmp_path, usize, crc):
    """Declaring no bytes (or asked for none of its bytes), the damaged entry is still no
    empty value: ``get`` raises as for any other read."""
    path = build(tmp_path / "a.zip", [entry("k", b"12345", usize=usize, crc=crc)])
    with ZipStore(path) as store:
        asked = None if usize == 0 else ByteRange.slice(2, 0)
        with pytest.raises(StoreError) as info:
            store.get("k", asked)
        assert str(info.value) == (f"{store!r}: entry 'k': stored entry declares {usize} bytes "
                                   f"but holds 5")


def test_an_entry_declaring_no_bytes_with_a_crc_of_some_is_refused(tmp_path):
    path = build(tmp_path / "a.zip", [entry("k", b"", crc=0x1234), entry("ok", b"")])
    with ZipStore(path) as store:
        assert store.get("ok") == b""
        with pytest.raises(StoreError) as info:
            store.get("k")
        assert str(info.value) == (f"{store!r}: entry 'k': CRC-32 mismatch: expected "
                                   f"0x00001234, found 0x00000000 (the entry declares no bytes)")


def test_overlapping_entries_are_refused(tmp_path):
    data = deflate(bytes(100_000))
    path = build(tmp_path / "a.zip", [entry("a", data, method=8, usize=100_000,
                                            crc=zlib.crc32(bytes(100_000))),
                                      entry("b", data, method=8, usize=100_000,
                                            crc=zlib.crc32(bytes(100_000)), cd_name=b"a2",
                                            cd_offset=0)])
    with pytest.raises(StoreError) as info:
        ZipStore(path)
    assert str(info.value) == (f"ZipStore({str(path)!r}, mode='r'): the central directory lies: "
                               f"entry 'a' ({_LOCAL.size + 1 + len(data)} bytes or more at "
                               "offset 0) overlaps entry 'a2' at offset 0")


def test_a_central_directory_naming_another_local_header_is_refused(tmp_path):
    path = build(tmp_path / "a.zip", [entry("abc", b"1"), entry("xyz", b"2", cd_name=b"k")])
    with ZipStore(path) as store, pytest.raises(StoreError) as info:
        store.get("k")
    assert str(info.value) == (f"{store!r}: entry 'k': the local header names 'xyz': the "
                               "central directory lies")


def test_ranged_reads_of_a_deflated_entry_inflate_it_once(tmp_path, monkeypatch):
    data = np.arange(200_000, dtype="<i4").tobytes()
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        store.set("shard", data)
    inflations = []
    real = zlib.decompressobj
    monkeypatch.setattr(zipread.zlib, "decompressobj",
                        lambda *a: inflations.append(a) or real(*a))
    with ZipStore(path) as store:
        for i in range(100):
            assert store.get("shard", ByteRange.slice(i * 7000, 40)) == data[i * 7000:i * 7000 + 40]
        assert store.get("shard", ByteRange.last(8)) == data[-8:]
        assert len(inflations) == 1


def test_entries_too_large_to_cache_inflate_only_up_to_the_range(tmp_path, monkeypatch):
    data = os.urandom(300_000)
    path = tmp_path / "a.zip"
    with ZipStore(path, mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        store.set("shard", data)
    monkeypatch.setattr(zipread, "INFLATE_CACHE_BYTES", 1000)
    with ZipStore(path) as store:
        assert store.get("shard", ByteRange.slice(5, 10)) == data[5:15]      # verifies it all
        store._zf.fp = counted = CountingFile(store._zf.fp)
        assert store.get("shard", ByteRange.slice(100, 10)) == data[100:110]
        assert counted.bytes_read <= zipread.INFLATE_STEP
        assert store.get("shard", ByteRange.last(10)) == data[-10:]


def compressed_entry(method, data):
    """``data`` compressed as zipfile stores it with ``method``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as zf:
        zf.writestr("k", data)
        info = zf.getinfo("k")
    start = info.header_offset + 30 + len("k") + len(info.extra)
    return buf.getvalue()[start:start + info.compress_size]


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_a_bzip2_or_lzma_entry_stops_at_its_declared_size(tmp_path, method):
    data = compressed_entry(method, bytes(1 << 20))
    path = build(tmp_path / "a.zip", [entry("k", data, method=method, usize=1000,
                                            crc=zlib.crc32(bytes(1000)))])
    with ZipStore(path) as store:
        with pytest.raises(StoreError, match=re.escape("entry 'k': inflates to more than its "
                                                       "declared 1000 bytes")):
            store.get("k")


@pytest.mark.parametrize("method, name, ratio", [
    (zipfile.ZIP_BZIP2, "bzip2", zipread.MAX_BZIP2_RATIO),
    (zipfile.ZIP_LZMA, "LZMA", zipread.MAX_LZMA_RATIO)], ids=["bzip2", "lzma"])
def test_a_declared_size_bzip2_or_lzma_cannot_produce_is_refused_unread(tmp_path, monkeypatch,
                                                                        method, name, ratio):
    packed = compressed_entry(method, bytes(1 << 20))
    usize = ratio * len(packed) + 65
    path = build(tmp_path / "a.zip", [entry("c/0", packed, method=method, usize=usize)])

    def unread(*args):
        raise AssertionError("inflated")
    monkeypatch.setattr(zipread.Reader, "_blocks", unread)
    with ZipStore(path) as store, pytest.raises(StoreError) as info:
        store.get("c/0")
    assert str(info.value) == (f"{store!r}: entry 'c/0': declares {usize} bytes from "
                               f"{len(packed)} compressed bytes, more than {name} can produce")


@pytest.mark.parametrize("method", [zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA], ids=["bzip2", "lzma"])
def test_bzip2_and_lzma_entries_expanding_past_deflates_ratio_read(tmp_path, method):
    data = bytes(1 << 20)
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        zf.writestr("k", data)
        assert zf.getinfo("k").compress_size * zipread.MAX_DEFLATE_RATIO < len(data)
    with ZipStore(path) as store:
        assert store.get("k") == data
