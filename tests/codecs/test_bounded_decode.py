"""Decoders are bounded: a size no input of its length can decode to is refused with a
CodecError before anything is allocated; a failed allocation is a CodecError naming the size;
and the bounds never refuse the densest real streams."""
from __future__ import annotations

import gzip
import os
import re
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.codecs import _blosc, _lz4, _zlib, _zstd
from zarrx.codecs.blosc import Blosc
from zarrx.codecs.bytes_ import Bytes
from zarrx.codecs.deflate import Gzip, Zlib
from zarrx.codecs.lz4 import LZ4
from zarrx.codecs.plan import CodecPipeline
from zarrx.codecs.zstd import Zstd
from zarrx.errors import CodecError

TIB = 1 << 40
WHERE = "arr/c/0"
# AddressSanitizer aborts on a TiB request instead of failing it, and reserves more address
# space than an RLIMIT_AS leaves room for
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def zstd_frame(*blocks: tuple[int, int, bytes]) -> bytes:
    """A frame without a content size: magic, header (no size; window descriptor), then the
    blocks as (type, size, content); the last one is marked last."""
    out = b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x70])
    for i, (btype, size, content) in enumerate(blocks):
        out += (size << 3 | btype << 1 | int(i == len(blocks) - 1)).to_bytes(3, "little")
        out += content
    return out


RLE, RAW = 1, 0
FRAME_13 = zstd_frame((RLE, 100, b"\x07"), (RAW, 0, b""))     # 13 bytes, decodes to 100


def raises(msg: str):
    return pytest.raises(CodecError, match=f"^{re.escape(msg)}$")


# -- the bound, before allocation -------------------------------------------------------------

def test_13_byte_zstd_frame_under_a_tib_chunk() -> None:
    assert len(FRAME_13) == 13
    msg = ("zstd: 13 bytes of input cannot decode to 1099511627776 bytes (zstd expands at most "
           "32768-fold: 425984 bytes)")
    with raises(msg):
        _zstd.decompress(FRAME_13, TIB)
    with raises(f"{WHERE}: {msg}"):
        Zstd().decode(FRAME_13, TIB, TIB, WHERE)
    with raises("zstd: 13 bytes of input cannot decode to 1048576 bytes (zstd expands at most "
                "32768-fold: 425984 bytes)"):
        _zstd.decompress_into(FRAME_13, np.empty(1 << 20, np.uint8))
    assert _zstd.decompress(FRAME_13, 100) == b"\x07" * 100


def test_zstd_declared_size_is_checked_first() -> None:
    frame = _zstd.compress(b"")
    with raises(f"{WHERE}: zstd: frame decodes to 0 bytes, expected 1099511627776"):
        Zstd().decode(frame, TIB, TIB, WHERE)


def test_zstd_unknown_size_search_stays_within_the_ratio() -> None:
    # variable-size chunks: the growing output never exceeds what the input can decode to
    assert Zstd().decode(FRAME_13, None, TIB, WHERE) == b"\x07" * 100


@pytest.mark.parametrize("wrapper", ["gzip", "zlib", "raw"])
def test_deflate_bound(wrapper: str) -> None:
    stream = {"gzip": gzip.compress(b"", mtime=0), "zlib": zlib.compress(b""),
              "raw": zlib.compress(b"")[2:-4]}[wrapper]
    n = len(stream)
    msg = (f"{wrapper}: {n} bytes of input cannot decode to 1073741824 bytes ({wrapper} "
           f"expands at most 1032-fold: {1032 * n} bytes)")
    with raises(msg):
        _zlib.decompress(stream, 1 << 30, wrapper)
    with raises(f"{wrapper}: {n} bytes of input cannot decode to 16777216 bytes ({wrapper} "
                f"expands at most 1032-fold: {1032 * n} bytes)"):
        _zlib.decompress_into(stream, np.empty(1 << 24, np.uint8), wrapper)


@pytest.mark.parametrize("codec", [Gzip(), Zlib()], ids=["gzip", "zlib"])
def test_deflate_codec_allocates_nothing_for_a_tib(codec) -> None:
    stream = codec.encode(b"")
    with raises(f"{WHERE}: {codec.wrapper}: {len(stream)} bytes of input cannot decode to "
                f"1099511627776 bytes ({codec.wrapper} expands at most 1032-fold: "
                f"{1032 * len(stream)} bytes)"):
        codec.decode(stream, TIB, TIB, WHERE)


def blosc_header(nbytes: int, blocksize: int, cbytes: int) -> bytes:
    return bytes([2, 1, 0x01 | 0x20, 8]) + struct.pack("<iii", nbytes, blocksize, cbytes)


def test_blosc_bound() -> None:
    blob = blosc_header(2**31 - 17, 2**16, 32) + bytes(16)
    msg = ("blosc: 32 bytes of input cannot decode to 2147483631 bytes (blosc expands at most "
           "32768-fold: 1048576 bytes)")
    with raises(msg):
        _blosc.decompress(blob, 2**31 - 17)
    with raises(f"{WHERE}: {msg}"):
        Blosc().decode(blob, None, 2**31, WHERE)


def test_blosc_blocksize_beyond_nbytes() -> None:
    blob = blosc_header(512, 1 << 30, 64) + bytes(48)
    msg = "blosc: header declares blocksize=1073741824, larger than nbytes=512"
    with raises(msg):
        _blosc.decompress(blob, 512)
    with raises(msg):
        _blosc.decompress_into(blob, np.empty(512, np.uint8))


def test_lz4_codec_bound() -> None:
    blob = struct.pack("<I", 1 << 30) + bytes(10)
    with raises(f"{WHERE}: lz4: 10 bytes of input cannot decode to 1073741824 bytes (lz4 "
                "expands at most 255-fold: 2550 bytes)"):
        LZ4().decode(blob, None, 1 << 31, WHERE)


@pytest.mark.skipif(ASAN, reason="AddressSanitizer aborts on a TiB allocation")
def test_plan_decode_new_of_a_tib_chunk() -> None:
    plan = CodecPipeline.resolve([Bytes(), Zstd()], "<f8", (TIB // 8,), key="arr")
    with pytest.raises(CodecError) as info:
        plan.decode_new(FRAME_13)
    msg = str(info.value)
    if msg.startswith("arr chunk: cannot allocate"):      # the usual case: no TiB to map
        assert msg == ("arr chunk: cannot allocate 1099511627776 bytes for a chunk of shape "
                       "(137438953472,) and data type float64")
    else:                                                 # mapped lazily, never touched
        assert msg == ("arr chunk: zstd: 13 bytes of input cannot decode to 1099511627776 "
                       "bytes (zstd expands at most 32768-fold: 425984 bytes)")


# -- the bounds hold for the densest real streams ---------------------------------------------

def test_densest_zstd_frame_decodes() -> None:
    k = 64
    frame = zstd_frame(*[(RLE, 128 << 10, b"\x00")] * k)       # 4 bytes per 128 KiB block
    assert _zstd.decompress(frame, k << 17) == bytes(k << 17)
    assert len(frame) * _zstd.MAX_RATIO >= k << 17


@pytest.mark.parametrize("level", [1, 9])
def test_densest_deflate_streams_decode(level: int) -> None:
    raw = bytes(16 << 20)
    for wrapper, blob in (("zlib", zlib.compress(raw, level)),
                          ("gzip", gzip.compress(raw, level, mtime=0)),
                          ("raw", _zlib.compress(raw, level, "raw", "zlib"))):
        assert len(blob) * _zlib.MAX_RATIO >= len(raw)
        assert _zlib.decompress(blob, len(raw), wrapper) == raw


def test_densest_lz4_and_blosc_decode() -> None:
    raw = bytes(16 << 20)
    blob = _lz4.compress(raw)
    assert _lz4.decompress(blob, len(raw)) == raw
    for cname in ("zstd", "zlib", "lz4", "blosclz"):
        blob = _blosc.compress(raw, 8, 9, 1, cname)
        assert _blosc.decompress(blob, len(raw)) == raw


# -- a failed allocation is a CodecError naming the size --------------------------------------

CHILD = textwrap.dedent("""
    import resource, sys
    from zarrx.codecs import _zstd
    from zarrx.errors import CodecError
    block = (128 << 10 << 3 | 1 << 1).to_bytes(3, "little") + b"\\0"
    n = 8192                                             # 1 GiB in RLE blocks
    frame = b"\\x28\\xb5\\x2f\\xfd\\x00\\x70" + block * (n - 1) + (
        (128 << 10 << 3 | 1 << 1 | 1).to_bytes(3, "little") + b"\\0")
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), resource.RLIM_INFINITY))
    try:
        _zstd.decompress(frame, n << 17)
    except CodecError as exc:
        print(exc)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
@pytest.mark.skipif(ASAN, reason="AddressSanitizer reserves more address space than the limit "
                    "allows")
def test_failed_allocation_is_a_codec_error() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "zstd: cannot allocate 1073741824 bytes for the decoded data"]
