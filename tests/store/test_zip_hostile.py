"""ZipStore against hostile archives and failing disks.

Archives are built byte by byte (``build``), so each can tell exactly the lie under test: bad
names, wrong CRC-32s, sizes that do not match, a central directory that points entries at each
other, a deflate stream that inflates to 1 GiB.
"""
from __future__ import annotations

import errno
import io
import os
import re
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
import warnings
import zipfile
import zlib

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import ByteRange, ZipStore
from zarrx.store import zipread

_LOCAL = struct.Struct("<4s5H3I2H")
_CENTRAL = struct.Struct("<4s6H3I5H2I")
_END = struct.Struct("<4s4H2IH")


def entry(name, data, *, method=0, usize=None, crc=None, **lies):
    """One entry: ``data`` is stored as is (already deflated for ``method=8``); ``lies`` may
    override ``cd_name``, ``cd_offset``, ``cd_usize`` and ``cd_csize`` in the central directory."""
    return dict(name=name.encode() if isinstance(name, str) else name, data=data, method=method,
                usize=len(data) if usize is None else usize,
                crc=zlib.crc32(data) if crc is None else crc, **lies)


def build(path, entries):
    out, central = bytearray(), bytearray()
    for e in entries:
        offset = len(out)
        out += _LOCAL.pack(b"PK\x03\x04", 20, 0, e["method"], 0, 0x21, e["crc"], len(e["data"]),
                           e["usize"], len(e["name"]), 0) + e["name"] + e["data"]
        name = e.get("cd_name", e["name"])
        central += _CENTRAL.pack(b"PK\x01\x02", 20, 20, 0, e["method"], 0, 0x21, e["crc"],
                                 e.get("cd_csize", len(e["data"])), e.get("cd_usize", e["usize"]),
                                 len(name), 0, 0, 0, 0, 0, e.get("cd_offset", offset)) + name
    out += central + _END.pack(b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central),
                               len(out), 0)
    path.write_bytes(bytes(out))
    return path


def deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def gib_of_zeros():
    """A raw deflate stream of about 1 MB that inflates to 1 GiB of zeros."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
    return block * 1024 + b"\x03\x00"


GROUP = b'{"zarr_format": 3, "node_type": "group"}'


# -- names ---------------------------------------------------------------------------------
BAD_NAMES = {
    b"../evil": "found a '..' segment; keys may not step outside their directory",
    b"/etc/passwd": "found a leading '/'; keys are relative to the store root",
    b"a\\b": "found a backslash; '/' is the only separator",
    b"x\x00zarr.json": "found a NUL character",
    b"c//0": "found an empty segment ('//' or a trailing '/')",
}


def test_unsafe_member_names_are_skipped_with_a_warning(tmp_path):
    path = build(tmp_path / "a.zip", [entry("zarr.json", GROUP)] +
                 [entry(n, b"bad") for n in BAD_NAMES] + [entry("ok/zarr.json", GROUP)])
    with pytest.warns(UserWarning) as caught:
        store = ZipStore(path)
    where = f"ZipStore({str(path)!r}, mode='r')"
    assert [str(w.message) for w in caught] == [
        f"{where}: skipping zip entry {n.decode()!r}: {why}" for n, why in BAD_NAMES.items()]
    with store:
        assert sorted(store.list_prefix("")) == ["ok/zarr.json", "zarr.json"]
        assert store.list_dir("") == (["zarr.json"], ["ok"])
        assert store.get("x") is None
        g = zarrx.open_group(store, mode="r")
        assert [name for name, _ in g.members()] == ["ok"]


def test_duplicate_member_names_keep_the_last(tmp_path):
    # zipfile and zarr-python read the last entry of a name
    path = build(tmp_path / "a.zip", [entry("k", b"first"), entry("j", b"j"),
                                      entry("k", b"second")])
    with pytest.warns(UserWarning) as caught:
        store = ZipStore(path)
    assert [str(w.message) for w in caught] == [
        f"ZipStore({str(path)!r}, mode='r'): skipping zip entry 'k' at offset 0: a later entry "
        "of the same name (at offset 68) replaces it"]
    with store:
        assert store.get("k") == b"second"
        assert sorted(store.list_prefix("")) == ["j", "k"]
    with zipfile.ZipFile(path) as zf:
        assert zf.read("k") == b"second"


def test_metadata_zarr_python_updated_in_an_archive_reads_as_zarr_python_reads_it(tmp_path):
    # zarr-python's ZipStore writes a node's zarr.json again when its attributes change
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "a.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # zarr-python's "Duplicate name"
        zs = zarr.storage.ZipStore(path, mode="w")
        g = zarr.open_group(zs, mode="w", zarr_format=3)
        g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")[:] = [1, 2, 3, 4]
        g.attrs["title"] = "t"
        zs.close()
    with pytest.warns(UserWarning, match="skipping zip entry 'zarr.json' at offset 0"):
        g = zarrx.open_group(path, mode="r")
    assert dict(g.attrs) == {"title": "t"}
    assert g["a"][:].tolist() == [1, 2, 3, 4]


# -- CRC-32 --------------------------------------------------------------------------------
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


# -- sizes and inflation -------------------------------------------------------------------
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


def test_a_stored_entry_whose_sizes_differ_is_skipped(tmp_path):
    path = build(tmp_path / "a.zip", [entry("k", b"12345", usize=1 << 30), entry("ok", b"1")])
    with pytest.warns(UserWarning, match=re.escape(
            f"skipping zip entry 'k': stored entry declares {1 << 30} bytes but holds 5")):
        store = ZipStore(path)
    with store:
        assert list(store.list_prefix("")) == ["ok"]


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


# -- a failing disk never costs the previous archive --------------------------------------
def previous(path):
    with ZipStore(path, mode="w") as store:
        store.set("zarr.json", GROUP)
        store.set("c/0", b"old chunk")
    return path.read_bytes()


class FullDisk:
    """Wraps the archive file: writes fail with ENOSPC once ``budget`` bytes are written."""

    def __init__(self, fp, budget):
        self.fp, self.budget = fp, budget

    def write(self, data):
        self.budget -= len(data)
        if self.budget < 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.fp.write(data)

    def __getattr__(self, name):
        return getattr(self.fp, name)


@pytest.mark.parametrize("mode", ["a", "w"])
def test_a_failed_write_keeps_the_previous_archive(tmp_path, mode):
    path = tmp_path / "data.zip"
    before = previous(path)
    store = ZipStore(path, mode=mode)
    store.set("c/1", b"new chunk")
    store._zf.fp = FullDisk(store._zf.fp, budget=100)
    with pytest.raises(StoreError) as info:
        store.set("c/2", os.urandom(10_000))
    assert str(info.value) == (f"{store!r}: cannot write entry 'c/2': [Errno 28] No space left "
                               "on device")
    with pytest.raises(StoreError, match=re.escape(
            "cannot write entry 'c/3': an earlier write failed ([Errno 28] No space left on "
            "device); closing keeps the previous archive")):
        store.set("c/3", b"x")
    store.close()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]      # no temporary archive left


def test_a_failed_close_keeps_the_previous_archive(tmp_path):
    path = tmp_path / "data.zip"
    before = previous(path)
    store = ZipStore(path, mode="a")
    store.set("c/1", b"new chunk")
    store._zf.fp = FullDisk(store._zf.fp, budget=10)          # the central directory fails
    with pytest.raises(StoreError) as info:
        store.close()
    assert str(info.value) == (f"{store!r}: cannot finish the archive: [Errno 28] No space left "
                               "on device; the previous archive is unchanged")
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]
    store.close()                                             # closed: idempotent


def test_a_file_size_limit_keeps_the_previous_archive(tmp_path):
    """A real write failure: the writer runs under RLIMIT_FSIZE and gets EFBIG."""
    pytest.importorskip("resource")
    path = tmp_path / "data.zip"
    before = previous(path)
    code = textwrap.dedent(f"""
        import os, resource, signal
        from zarrx.store import ZipStore
        from zarrx.errors import StoreError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        store = ZipStore({str(path)!r}, mode="a")
        try:
            store.set("big", os.urandom(200_000))
        except StoreError as exc:
            print("refused:", exc)
        store.close()
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert "refused:" in out and "File too large" in out
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]


def test_writing_replaces_the_archive_only_when_closed(tmp_path):
    path = tmp_path / "data.zip"
    previous(path)
    store = ZipStore(path, mode="w")
    store.set("zarr.json", GROUP)
    with ZipStore(path) as reader:                            # still the previous archive
        assert reader.get("c/0") == b"old chunk"
    store.close()
    with ZipStore(path) as reader:
        assert sorted(reader.list_prefix("")) == ["zarr.json"]
    with pytest.raises(StoreError, match="cannot open in mode 'x'"):
        ZipStore(path, mode="x")


# -- archives zipfile itself refuses -------------------------------------------------------
FUZZ_CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus", "fuzz_zip")


def _flag_utf8(path):
    blob = bytearray(path.read_bytes())
    at = blob.index(b"PK\x01\x02")
    blob[at + 9] |= 0x08                    # general purpose flag bit 11: the name is UTF-8
    path.write_bytes(bytes(blob))
    return path


def test_archives_zipfile_refuses_are_store_errors(tmp_path):
    """Regressions (fuzz/corpus/fuzz_zip/regression-*): zipfile's NotImplementedError (a
    version it does not support) and UnicodeDecodeError (a name flagged UTF-8 that is not)
    escaped ZipStore."""
    version = os.path.join(FUZZ_CORPUS, "regression-zip-version-unsupported")
    with pytest.raises(StoreError, match=re.escape("cannot open in mode 'r': zip file version "
                                                   "11.4")):
        ZipStore(version)
    path = _flag_utf8(build(tmp_path / "a.zip", [entry(b"\xffname", b"x")]))
    with pytest.raises(StoreError, match=re.escape("cannot open in mode 'r': 'utf-8' codec can't "
                                                   "decode byte 0xff in position 0")):
        ZipStore(path)


def test_an_empty_member_name_is_skipped(tmp_path):
    """Regression (fuzz/corpus/fuzz_zip/regression-zip-empty-name): zipfile's is_dir() raised
    IndexError on an entry with an empty name."""
    path = build(tmp_path / "a.zip", [entry(b"", b"x"), entry("zarr.json", GROUP)])
    with pytest.warns(UserWarning, match="skipping zip entry '': "):
        store = ZipStore(path)
    with store:
        assert list(store.list_prefix("")) == ["zarr.json"]


def test_an_unsupported_compression_method_names_the_entry(tmp_path):
    path = build(tmp_path / "a.zip", [entry("zarr.json", GROUP), entry("c/0", b"xx", method=93)])
    with ZipStore(path) as store:
        assert store.get("zarr.json") == GROUP
        with pytest.raises(StoreError) as info:
            store.get("c/0")
    assert str(info.value) == (f"ZipStore({str(path)!r}, mode='r'): entry 'c/0': compression "
                               "method 93 is not supported (stored, deflated, bzip2 and LZMA "
                               "are)")


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


def test_names_not_flagged_utf8_are_read_as_utf8_when_they_are(tmp_path):
    """Info-ZIP's zip (cd data.zarr && zip -r ../a.zip .) stores UTF-8 names without the UTF-8
    flag; names that are not UTF-8 stay CP437, as the zip format says."""
    path = build(tmp_path / "a.zip", [
        entry("zarr.json", GROUP),
        entry("donn\u00e9es/zarr.json".encode(), GROUP),
        entry(b"caf\x82/zarr.json", GROUP),             # CP437 for "café"
    ])
    with ZipStore(path) as store:
        assert sorted(store.list_prefix("")) == ["café/zarr.json", "données/zarr.json",
                                                 "zarr.json"]
        assert store.get("données/zarr.json") == GROUP
        assert sorted(zarrx.open_group(store, mode="r").keys()) == ["café", "données"]


@pytest.mark.parametrize("mode", ["r", "a"])
@pytest.mark.parametrize("what", ["a named pipe", "a character device", "a directory"])
def test_an_archive_path_that_is_no_file_is_refused_at_once(tmp_path, mode, what):
    """A named pipe at the archive's path made opening it wait forever, and a link to
    /dev/zero made it read without end: anything but a file is refused before zipfile reads."""
    path = str(tmp_path / "a.zip")
    {"a named pipe": os.mkfifo, "a character device": lambda p: os.symlink("/dev/zero", p),
     "a directory": os.mkdir}[what](path)
    with pytest.raises(StoreError) as info:
        ZipStore(path, mode=mode)
    assert str(info.value) == (f"ZipStore({path!r}, mode={mode!r}): cannot open in mode "
                               f"{mode!r}: {path!r} is {what}, not a zip archive")
    if what != "a directory":       # (zarrx.open: a directory store, as zarr-python's)
        with pytest.raises(StoreError, match=re.escape(f"{path!r} is {what}, not a zip archive")):
            zarrx.open(path, mode="r")
