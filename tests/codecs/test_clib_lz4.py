"""The _lz4 kernel, through zarrx.codecs.lz4 (which words its statuses): numcodecs-framed LZ4
blocks, interop and corrupt input."""
from __future__ import annotations

import contextlib
import re
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.codecs import lz4
from zarrx.errors import CodecError

MIB = 1 << 20
SIZES = {"0B": 0, "1B": 1, "7B": 7, "4KiB": 4096, "1MiB+3": MIB + 3, "5MiB": 5 * MIB}
PATTERNS = ("zeros", "random", "ramp")

numcodecs = pytest.importorskip("numcodecs")


@pytest.mark.parametrize("acceleration", [1, 8, 1000], ids=lambda a: f"accel{a}")
@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
@pytest.mark.parametrize("pattern", PATTERNS)
def test_round_trip(data, pattern: str, size: int, acceleration: int) -> None:
    raw = data(pattern, size)
    enc = lz4.compress(raw, acceleration)
    assert struct.unpack_from("<I", enc)[0] == size
    assert lz4.decompress(enc, size) == raw
    out = np.empty(size, np.uint8)
    lz4.decompress_into(enc, out)
    assert out.tobytes() == raw


@pytest.mark.parametrize("size", [0, 7, 4096, 100_003], ids=["0B", "7B", "4KiB", "100KB"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_numcodecs_interop(data, pattern: str, size: int) -> None:
    raw = data(pattern, size)
    for accel in (1, 10):
        theirs = numcodecs.LZ4(accel).encode(raw)
        assert lz4.decompress(theirs, size) == raw
        ours = lz4.compress(raw, accel)
        if size:  # numcodecs refuses to decode even its own encoding of b"" (same bytes)
            assert bytes(numcodecs.LZ4().decode(ours)) == raw
        else:
            assert ours == theirs


def test_bad_arguments() -> None:
    with pytest.raises(CodecError, match=r"lz4: acceleration 0 is out of range, expected 1\.\."):
        lz4.compress(b"x", 0)
    with pytest.raises(CodecError, match="lz4: expected decoded size must be >= 0"):
        lz4.decompress(lz4.compress(b""), -1)


# --- corrupt input --------------------------------------------------------------------------

def test_header_lying() -> None:
    raw = bytes(range(256)) * 10
    enc = lz4.compress(raw)
    for claim in (0, len(raw) - 1, len(raw) + 1, 2**32 - 1):
        lie = struct.pack("<I", claim) + enc[4:]
        with pytest.raises(CodecError, match=rf"^lz4: header declares {claim} decoded bytes, "
                                             rf"expected {len(raw)}$"):
            lz4.decompress(lie, len(raw))
        if claim < 100_000:
            with pytest.raises(CodecError, match="^lz4: "):
                lz4.decompress(lie, claim)


def test_header_claiming_4gib_allocates_nothing() -> None:
    enc = struct.pack("<I", 2**32 - 1) + b"\x00"
    with pytest.raises(CodecError, match="expected 16"):
        lz4.decompress(enc, 16)


def test_size_beyond_the_largest_ratio_allocates_nothing() -> None:
    enc = struct.pack("<I", 2**30) + bytes(10)
    msg = ("lz4: 10 bytes of input cannot decode to 1073741824 bytes (lz4 expands at most "
           "255-fold: 2550 bytes)")
    with pytest.raises(CodecError, match=re.escape(msg)):
        lz4.decompress(enc, 2**30)
    enc = struct.pack("<I", 2**20) + bytes(10)
    with pytest.raises(CodecError, match=re.escape("lz4: 10 bytes of input cannot decode to "
                                                   "1048576 bytes")):
        lz4.decompress_into(enc, np.empty(2**20, np.uint8))


def test_empty_and_short() -> None:
    for blob in (b"", b"\x01", b"\x01\x00\x00"):
        with pytest.raises(CodecError, match="shorter than the 4-byte size header"):
            lz4.decompress(blob, 0)


@pytest.mark.parametrize("tail", [b"\x00", b"junk", bytes(16)], ids=["nul", "text", "zeros16"])
def test_trailing_garbage(tail: bytes) -> None:
    raw = b"abcdefgh" * 500
    with pytest.raises(CodecError, match="^lz4: "):
        lz4.decompress(lz4.compress(raw) + tail, len(raw))


def test_truncated_everywhere(data) -> None:
    raw = data("random", 2000) + data("ramp", 2000)
    enc = lz4.compress(raw)
    for cut in range(len(enc)):
        with pytest.raises(CodecError, match="^lz4: "):
            lz4.decompress(enc[:cut], len(raw))


def test_flipped_bytes_never_crash(flip, data) -> None:
    raw = data("ramp", 20_000)
    enc = lz4.compress(raw)
    for pos in range(len(enc)):
        for mask in (0x01, 0x80, 0xFF):
            with contextlib.suppress(CodecError):
                assert len(lz4.decompress(flip(enc, pos, mask), len(raw))) == len(raw)


@settings(max_examples=200, deadline=None)
@given(blob=st.binary(max_size=300), expected=st.integers(0, 5000))
def test_fuzz_random_input(blob: bytes, expected: int) -> None:
    with contextlib.suppress(CodecError):
        lz4.decompress(struct.pack("<I", expected) + blob, expected)
