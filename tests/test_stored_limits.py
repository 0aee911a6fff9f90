"""A stored object longer than any encoding of what it holds is refused without being read
whole: its key, its size and the limit (worked out from the codec chain) are named, and
refusing it costs about the limit, not the object (a sparse 1 GiB file where a 1 KiB chunk
belongs)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.codecs import LZ4, Blosc, Crc32c, Gzip, Zstd
from zarrx.codecs.plan import CodecPipeline
from zarrx.errors import CodecError
from zarrx.store import MemoryStore, ZipStore

HUGE = 1 << 30
ROOT = Path(__file__).resolve().parent.parent

# (compressors, the limit of a 256-item int32 chunk, the chain as messages name it)
CHAINS = {
    "bytes": (None, 1024, "bytes"),
    "crc32c": ([Crc32c()], 1028, "bytes -> crc32c"),
    "zstd": ([Zstd(level=1)], 1024 + 4 + (128 * 1024 - 1024 >> 11), "bytes -> zstd"),
    # deflateBound for any settings, and gzip's header and trailer with its optional fields
    "gzip": ([Gzip(level=1)], 1024 + 128 + 16 + 5 + 18 + 2 + 65535 + 2 * 4096 + 2,
             "bytes -> gzip"),
    "blosc": ([Blosc()], 1024 + 16, "bytes -> blosc"),
    "lz4": ([LZ4()], 4 + 1024 + 1024 // 255 + 16, "bytes -> numcodecs.lz4"),
}

# a child process: reads and writes an array whose chunk c/0 is a sparse 1 GiB file, printing
# each error and how much the peak resident memory grew meanwhile
CHILD = textwrap.dedent("""
    import os, resource, sys, json
    import numpy as np
    import zarrx
    path = sys.argv[1]
    key = os.path.join(path, *sys.argv[2].split("/"))
    os.truncate(key, int(sys.argv[3]))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    errors = []
    def attempt(f):
        try:
            f()
            errors.append(None)
        except zarrx.ZarrError as exc:
            errors.append([type(exc).__name__, str(exc)])
    z = zarrx.open_array(path, mode="r+")
    attempt(lambda: z[:])                     # the chunk alone
    attempt(lambda: z[3])                     # one element of it
    attempt(lambda: z[...])                   # with the other chunks, in one window
    attempt(lambda: z.__setitem__(slice(0, 3), 7))   # read-modify-write
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(json.dumps({"errors": errors, "grew_mib": grew}))
""")


def _child(path: Path, key: str, size: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), key, str(size)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("chain", CHAINS, ids=list(CHAINS))
def test_an_oversized_chunk_file_is_refused_unread(tmp_path, chain):
    compressors, limit, names = CHAINS[chain]
    z = zarrx.create_array(tmp_path, shape=(1024,), chunks=(256,), dtype="i4",
                           compressors=compressors)
    z[:] = np.arange(1024)
    assert CodecPipeline.resolve(z.metadata.codecs, "i4", (256,)).stored_limit == limit
    got = _child(tmp_path, "c/0", HUGE)
    want = (f"array '/' chunk 'c/0': {HUGE} bytes stored, more than the {limit} bytes a chunk "
            f"of shape (256,) and data type int32 encoded by {names} can take")
    if compressors is None:             # stored as its bytes alone: worded as any wrong size
        want = (f"array '/' chunk 'c/0': expected 1024 bytes for a chunk of shape (256,) and "
                f"data type int32, found {HUGE}")
    assert got["errors"] == [["CodecError", want]] * 4
    assert got["grew_mib"] < 64            # before: the whole 1 GiB was read


def test_an_inner_chunk_entry_past_the_limit_is_refused_unread(tmp_path):
    z = zarrx.create_array(tmp_path, shape=(64,), chunks=(8,), shards=(64,), dtype="i4",
                           compressors=None)
    z[:] = np.arange(64)
    key = tmp_path / "c" / "0"
    entries = np.frombuffer(key.read_bytes()[-132:-4], "<u8").reshape(8, 2).copy()
    entries[0] = (0, HUGE)                    # inner chunk 0 spans a sparse 1 GiB
    index = entries.astype("<u8").tobytes()
    with open(key, "r+b") as f:
        f.truncate(HUGE)
        f.seek(HUGE)
        f.write(index + Crc32c().encode(index)[-4:])
    with pytest.raises(CodecError, match=re.escape(
            f"array '/' shard 'c/0' inner chunk 'c/0': expected 32 bytes for a chunk of shape "
            f"(8,) and data type int32, found {HUGE}")):
        zarrx.open_array(tmp_path, mode="r")[:8]
    np.testing.assert_array_equal(zarrx.open_array(tmp_path, mode="r")[8:], np.arange(8, 64))
    # a write into the shard, longer than any shard packed without gaps, reads its index and
    # the inner chunks it keeps by ranges: the entry of the kept chunk 0 is refused unread
    got = _child(tmp_path, "c/0", HUGE + 132)
    inner = (f"array '/' shard 'c/0' inner chunk 'c/0': expected 32 bytes for a chunk of shape "
             f"(8,) and data type int32, found {HUGE}")
    assert got["errors"][3] == ["CodecError", inner]
    assert key.stat().st_size == HUGE + 132              # left as it is
    assert got["grew_mib"] < 64


def test_a_shard_encoded_whole_past_its_limit_is_refused_unread(tmp_path):
    import zarr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path), shape=(32,), chunks=(32,), dtype="i4",
                              serializer=zarr.codecs.ShardingCodec(chunk_shape=(8,)),
                              compressors=[zarr.codecs.ZstdCodec(level=1)])
        z[:] = np.arange(32)
    decoded = 4 * 16 + 4 + 4 * 32              # the index (+ crc32c) and 4 raw inner chunks
    got = _child(tmp_path, "c/0", HUGE)
    limit = decoded + ((128 << 10) - decoded >> 11)      # ZSTD_compressBound of that
    want = (f"array '/' shard 'c/0': {HUGE} bytes stored, more than the {limit} bytes a shard "
            f"of at most {decoded} bytes encoded by zstd can take")
    assert got["errors"] == [["CodecError", want]] * 4
    assert got["grew_mib"] < 64


def _inflations(monkeypatch) -> list[str]:
    """The names of the zip entries inflated from now on (listed as they are)."""
    from zarrx.store import zipread
    inflated: list[str] = []
    real = zipread.Reader._blocks
    monkeypatch.setattr(zipread.Reader, "_blocks",
                        lambda self, fp, info, *a: inflated.append(info.filename)
                        or real(self, fp, info, *a))
    return inflated


def test_an_oversized_zip_entry_is_refused_without_inflating_it(tmp_path, monkeypatch):
    """A deflated entry of 1 GiB of zeros is 1 MB of archive; its size is in the central
    directory, so it is refused without inflating it (before: inflated whole for its CRC-32,
    seconds per GiB)."""
    path = tmp_path / "a.zip"
    store = ZipStore(path, mode="w")
    zarrx.create_array(store, shape=(256,), chunks=(256,), dtype="i4", compressors=None)[:] = 1
    store.close()
    with zipfile.ZipFile(path) as zin:
        doc = zin.read("zarr.json")
    path.unlink()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        zout.writestr("zarr.json", doc)
        with zout.open("c/0", "w", force_zip64=True) as w:
            block = bytes(1 << 24)
            for _ in range(HUGE // len(block)):
                w.write(block)
    inflated = _inflations(monkeypatch)
    z = zarrx.open_array(ZipStore(path, mode="r"), mode="r")
    with pytest.raises(CodecError, match=re.escape(
            f"array '/' chunk 'c/0': expected 1024 bytes for a chunk of shape (256,) and data "
            f"type int32, found {HUGE}")):
        z[:]
    assert "c/0" not in inflated


def test_an_oversized_chunk_in_memory_is_refused():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(256,), chunks=(256,), dtype="i4",
                           compressors=[Zstd(level=1)])
    z[:] = 1
    store.set("c/0", Zstd(level=1).encode(np.arange(256, dtype="i4").tobytes()) + bytes(2000))
    stored = len(store.get("c/0"))
    with pytest.raises(CodecError, match=re.escape(
            f"array '/' chunk 'c/0': {stored} bytes stored, more than the 1091 bytes a chunk "
            f"of shape (256,) and data type int32 encoded by bytes -> zstd can take")):
        z[:]


def test_gzip_members_with_header_fields_still_read(tmp_path):
    """The gzip bound leaves room for a header's optional fields (name, comment, an extra
    field of up to 64 KiB), which writers other than zarr may add."""
    z = zarrx.create_array(tmp_path, shape=(256,), chunks=(256,), dtype="i4",
                           compressors=[Gzip(level=1)])
    z[:] = 0
    raw = np.arange(256, dtype="<i4").tobytes()
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = deflate.compress(raw) + deflate.flush()
    extra = b"zx" + (60000).to_bytes(2, "little") + bytes(60000)
    header = (b"\x1f\x8b\x08" + bytes([4 | 8 | 16]) + bytes(6) + len(extra).to_bytes(2, "little")
              + extra + b"n" * 3000 + b"\0" + b"c" * 3000 + b"\0")
    member = header + body + zlib.crc32(raw).to_bytes(4, "little") + len(raw).to_bytes(4, "little")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "0").write_bytes(member)
    np.testing.assert_array_equal(zarrx.open_array(tmp_path, mode="r")[:], np.arange(256))


def test_an_oversized_metadata_entry_of_a_zip_archive_is_refused_without_inflating_it(
        tmp_path, monkeypatch):
    """A deflated ``zarr.json`` of 1 GiB (1 MB of archive) is refused by the size the zip
    directory gives (before: inflated whole for its CRC-32 at each open, about 8 s)."""
    from zarrx.errors import MetadataError
    from zarrx.metadata.json import max_document_bytes
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        with zout.open("zarr.json", "w", force_zip64=True) as w:
            w.write(b'{"zarr_format": 3, "node_type": "group", "attributes": {"a": "')
            for _ in range(HUGE // (1 << 24)):
                w.write(b" " * (1 << 24))
            w.write(b'"}}')
    size = zipfile.ZipFile(path).getinfo("zarr.json").file_size
    inflated = _inflations(monkeypatch)
    want = re.escape(f"zarr.json: expected a document of at most {max_document_bytes()} bytes, "
                     f"found {size} bytes")
    for opening in (zarrx.open, zarrx.open_group):
        with pytest.raises(MetadataError, match=want):
            opening(ZipStore(path, mode="r"), mode="r")
    assert inflated == []


def test_a_shard_entry_expanding_past_deflates_most_is_refused_without_inflating_it(
        tmp_path, monkeypatch):
    """A shard's index is read by a range, which costs a compressed entry's inflating whole
    for its CRC-32: a shard entry longer than any shard packed without gaps, declaring more
    than deflate's 1032 bytes per compressed byte (64 MiB of zeros in a few hundred bytes of
    bzip2), is refused by the sizes the directory gives, unread."""
    path = tmp_path / "a.zip"
    store = ZipStore(path, mode="w")
    zarrx.create_array(store, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                       compressors=None)[:] = np.arange(64)
    store.close()
    with zipfile.ZipFile(path) as zin:
        items = {name: zin.read(name) for name in zin.namelist()}
    path.unlink()
    big = 64 << 20
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_BZIP2) as zout:
        for name, value in items.items():
            zout.writestr(name, bytes(big) + value if name == "c/0" else value)
        held = zout.getinfo("c/0").compress_size
    inflated = _inflations(monkeypatch)
    z = zarrx.open_array(ZipStore(path, mode="r"), mode="r")
    with pytest.raises(CodecError, match=re.escape(
            f"array '/' shard 'c/0': {big + 196} bytes stored in {held} compressed bytes: "
            f"longer than the 196 bytes a shard packed without gaps takes, and reading any of "
            f"it inflates all of it, more than 1032 bytes per compressed byte (deflate's "
            f"most)")):
        z[:8]
    assert "c/0" not in inflated
    np.testing.assert_array_equal(z[32:], np.arange(32, 64))


def test_zstd_skippable_frames_read_within_the_limit_and_are_refused_past_it() -> None:
    """A zstd chunk behind a skippable frame reads while it fits ``ZSTD_compressBound`` of the
    chunk (``docs/guide/migrating.md``); past it, it is refused unread, naming its key."""
    a = zarrx.create_array(MemoryStore(), shape=(6,), chunks=(6,), dtype="<i4",
                           compressors=[Zstd(level=1)])
    frame = Zstd(level=1).encode(np.arange(6, dtype="<i4").tobytes())
    limit = 24 + ((128 * 1024 - 24) >> 11)                  # 87 bytes
    for pad in (limit - len(frame) - 8, limit - len(frame) - 7):
        skippable = (0x184D2A50).to_bytes(4, "little") + pad.to_bytes(4, "little") + b"\0" * pad
        a.store.set("c/0", skippable + frame)
        if 8 + pad + len(frame) <= limit:
            assert a[...].tolist() == list(range(6))
        else:
            with pytest.raises(CodecError, match=rf"chunk 'c/0': {limit + 1} bytes stored, "
                                                 rf"more than the {limit} bytes"):
                a[...]
