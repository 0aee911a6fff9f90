"""What may follow a complete compressed stream in a chunk. Valid continuations read: gzip
members, bz2 and xz streams, xz stream padding, zstd frames and skippable frames. Bytes that
are not one are refused, for every codec, with the offset where the stream ended (zarr-python
reads some of them, tensorstore none: see docs/guide/migrating.md). A chunk of very many
streams decodes in time linear in its size."""
from __future__ import annotations

import bz2
import gzip
import lzma
import re

import numcodecs
import numpy as np
import pytest

import zarrx

DATA = np.arange(1000, dtype="<i4")
RAW = DATA.tobytes()
HALF = len(RAW) // 2
SKIPPABLE = (0x184D2A50).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"hello"
COMPRESSORS = {"zlib": numcodecs.Zlib(), "gzip": numcodecs.GZip(), "bz2": numcodecs.BZ2(),
               "lzma": numcodecs.LZMA(), "zstd": numcodecs.Zstd(), "blosc": numcodecs.Blosc(),
               "lz4": numcodecs.LZ4()}


def _chunk(tmp_path, name: str, blob: bytes, n: int = 1000) -> zarrx.Array:
    z = zarrx.create_array(str(tmp_path / f"{name}.zarr"), shape=(n,), chunks=(n,),
                           dtype="<i4" if n == 1000 else "u1",
                           compressors=COMPRESSORS[name].get_config(), zarr_format=2)
    (tmp_path / f"{name}.zarr" / "0").write_bytes(blob)
    return z


def _zstd(b: bytes) -> bytes:
    return numcodecs.Zstd().encode(b)


VALID = {
    "gzip-two-members": ("gzip", lambda: gzip.compress(RAW[:HALF]) + gzip.compress(RAW[HALF:])),
    "bz2-two-streams": ("bz2", lambda: bz2.compress(RAW[:HALF]) + bz2.compress(RAW[HALF:])),
    "xz-two-streams": ("lzma", lambda: lzma.compress(RAW[:HALF]) + lzma.compress(RAW[HALF:])),
    "xz-padding-between": ("lzma", lambda: lzma.compress(RAW[:HALF]) + bytes(4)
                           + lzma.compress(RAW[HALF:])),
    "xz-padding-after": ("lzma", lambda: lzma.compress(RAW) + bytes(8)),
    "zstd-two-frames": ("zstd", lambda: _zstd(RAW[:HALF]) + _zstd(RAW[HALF:])),
    "zstd-skippable-after": ("zstd", lambda: _zstd(RAW) + SKIPPABLE),
    "zstd-skippable-before": ("zstd", lambda: SKIPPABLE + _zstd(RAW)),
}


@pytest.mark.parametrize("case", VALID, ids=list(VALID))
def test_valid_continuations_read(tmp_path, case):
    name, blob = VALID[case]
    np.testing.assert_array_equal(_chunk(tmp_path, name, blob())[:], DATA)


def _refusal(name: str, end: int, tail: bytes) -> str:
    k = len(tail)
    return {
        "zlib": f"zlib: trailing garbage: {k} more bytes after the stream ending at offset {end}",
        "gzip": f"gzip: trailing garbage: {k} more bytes after the stream ending at offset {end}",
        "bz2": f"bz2: {k} bytes after the stream ending at offset {end} do not decode as a bz2 "
               "stream",
        "lzma": f"lzma: {k} zero bytes after the stream ending at offset {end}: stream padding "
                "is a multiple of 4 bytes" if tail == bytes(k) else
                f"lzma: {k} bytes after the stream ending at offset {end} are not a complete "
                "lzma stream",
        "zstd": f"zstd: {k} bytes after the frame ending at offset {end} are not a complete "
                "zstd frame",
        "blosc": f"{end + k} bytes stored, more than the",
        "lz4": "lz4: corrupt block",
    }[name]


@pytest.mark.parametrize("tail", [b"\x00", b"\x00" * 7, b"garbage!"],
                         ids=["one-zero", "seven-zeros", "garbage"])
@pytest.mark.parametrize("name", list(COMPRESSORS))
def test_bytes_after_the_stream_that_continue_nothing_are_refused(tmp_path, name, tail):
    enc = COMPRESSORS[name].encode(RAW)
    z = _chunk(tmp_path, name, enc + tail)
    with pytest.raises(zarrx.CodecError, match=re.escape(_refusal(name, len(enc), tail))):
        z[:]


class _Fed:
    """A decompressor that counts the bytes handed to it."""
    fed = 0

    def __init__(self, real, *args):
        self._d = real(*args)

    def decompress(self, data, max_length=-1):
        _Fed.fed += len(data)
        return self._d.decompress(data, max_length)

    eof = property(lambda self: self._d.eof)
    needs_input = property(lambda self: self._d.needs_input)
    unused_data = property(lambda self: self._d.unused_data)


@pytest.mark.parametrize("name, empty", [("bz2", bz2.compress(b"")),
                                         ("lzma", lzma.compress(b""))], ids=["bz2", "xz"])
def test_a_chunk_of_many_empty_streams_costs_linear_work(tmp_path, monkeypatch, name, empty):
    """Each stream was handed all the bytes after it (a copy of them as its unused data): 4x
    the streams cost 16x the bytes handed over, and a chunk of a million streams minutes."""
    module, cls = (bz2, "BZ2Decompressor") if name == "bz2" else (lzma, "LZMADecompressor")
    real = getattr(module, cls)
    monkeypatch.setattr(module, cls, lambda *args: _Fed(real, *args))
    fed = []
    for n in (1 << 13, 1 << 15):
        (tmp_path / str(n)).mkdir()
        z = _chunk(tmp_path / str(n), name, empty * (n // len(empty)), n)
        _Fed.fed = 0
        with pytest.raises(zarrx.CodecError, match=f"{name}: stream decodes to 0 bytes"):
            z[:]
        fed.append(_Fed.fed)
    assert fed[1] < 5 * fed[0], fed
