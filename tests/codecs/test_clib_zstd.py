"""The _zstd kernel, through zarrx.codecs.zstd (which words its statuses): round trips, numcodecs /
zstd CLI interop, corrupt input, GIL release."""
from __future__ import annotations

import contextlib
import struct
import subprocess
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.codecs import zstd
from zarrx.errors import CodecError

MIB = 1 << 20
SIZES = {"0B": 0, "1B": 1, "7B": 7, "4KiB": 4096, "1MiB+3": MIB + 3, "5MiB": 5 * MIB}
PATTERNS = ("zeros", "random", "ramp")

numcodecs = pytest.importorskip("numcodecs")

LEVELS = [-7, -1, 0, 1, 3, 9, 19]


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
@pytest.mark.parametrize("pattern", PATTERNS)
def test_round_trip(data, pattern: str, size: int) -> None:
    raw = data(pattern, size)
    enc = zstd.compress(raw)
    assert zstd.content_size(enc) == size
    assert zstd.decompress(enc, size) == raw
    out = np.empty(size, np.uint8)
    zstd.decompress_into(enc, out)
    assert out.tobytes() == raw


# Level 19 is slow on large inputs, so it runs on the small ones only.
PARAMS = [(size, level) for size in (7, 4096, MIB + 3) for level in LEVELS
          if level < 19 or size <= 4096]


@pytest.mark.parametrize("checksum", [False, True], ids=["nocheck", "checksum"])
@pytest.mark.parametrize(("size", "level"), PARAMS, ids=[f"{s}B-level{v}" for s, v in PARAMS])
def test_round_trip_params(data, size: int, level: int, checksum: bool) -> None:
    raw = data("ramp", size)
    enc = zstd.compress(raw, level, checksum)
    assert zstd.decompress(enc, size) == raw
    assert numcodecs.Zstd().decode(enc) == raw


def test_level_range() -> None:
    with pytest.raises(CodecError, match=r"zstd: compression level 1000 is out of range"):
        zstd.compress(b"x", 1000)


@pytest.mark.parametrize("kind", ["bytearray", "memoryview", "float32-view"])
def test_buffer_kinds(kind: str) -> None:
    arr = np.arange(1000, dtype="f4")
    src = {"bytearray": bytearray(arr.tobytes()), "memoryview": memoryview(arr.tobytes()),
           "float32-view": arr.view(np.uint8).reshape(-1)}[kind]
    enc = zstd.compress(src)
    out = np.zeros(1000, "f4")
    zstd.decompress_into(enc, out.view(np.uint8).reshape(-1))
    np.testing.assert_array_equal(out, arr)


# --- interop ------------------------------------------------------------------------------

@pytest.mark.parametrize("checksum", [False, True], ids=["nocheck", "checksum"])
@pytest.mark.parametrize("level", [-3, 1, 5, 22], ids=lambda v: f"level{v}")
@pytest.mark.parametrize("pattern", PATTERNS)
def test_numcodecs_interop(data, pattern: str, level: int, checksum: bool) -> None:
    raw = data(pattern, 100_003)
    theirs = numcodecs.Zstd(level=level, checksum=checksum).encode(raw)
    assert zstd.decompress(theirs, len(raw)) == raw
    ours = zstd.compress(raw, min(level, 19), checksum)
    assert bytes(numcodecs.Zstd().decode(ours)) == raw


def _cli(exe: str, raw: bytes, *args: str) -> bytes:
    # Fed through a pipe, the CLI cannot know the size: the frame has no content-size field.
    return subprocess.run([exe, "-q", "-c", *args], input=raw, capture_output=True,
                          check=True).stdout


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
def test_frame_without_content_size(zstd_cli, data, size: int) -> None:
    raw = data("ramp", size)
    enc = _cli(zstd_cli, raw)
    assert zstd.content_size(enc) == (None if size else 0)  # the CLI knows an empty pipe
    assert zstd.decompress(enc, size) == raw
    with pytest.raises(CodecError, match=rf"zstd: frame decodes to more than {size - 1} bytes"
                       if size else "zstd: frame decodes to 0 bytes, expected 1"):
        zstd.decompress(enc, size - 1 if size else 1)
    with pytest.raises(CodecError, match=rf"zstd: frame decodes to {size} bytes, "
                                         rf"expected {size + 1}"):
        zstd.decompress(enc, size + 1)


def test_unknown_size_truncated_and_checksum(flip, zstd_cli, data) -> None:
    raw = data("random", 200_000)
    enc = _cli(zstd_cli, raw, "--check")
    for cut in (len(enc) - 1, len(enc) - 4, len(enc) // 2, 13):
        with pytest.raises(CodecError, match="zstd: "):
            zstd.decompress(enc[:cut], len(raw))
    with pytest.raises(CodecError, match="zstd: corrupt frame"):
        zstd.decompress(flip(enc, len(enc) - 2), len(raw))


@pytest.mark.parametrize("order", ["cli+ours", "ours+cli", "ours+ours", "cli+cli+cli"])
def test_concatenated_frames(zstd_cli, data, order: str) -> None:
    parts = [data("ramp", 50_000), data("random", 3_000), data("zeros", 70_000)]
    frames = [
        _cli(zstd_cli, parts[i]) if kind == "cli" else zstd.compress(parts[i])
        for i, kind in enumerate(order.split("+"))
    ]
    raw = b"".join(parts[:len(frames)])
    enc = b"".join(frames)
    assert zstd.decompress(enc, len(raw)) == raw
    with pytest.raises(CodecError, match="zstd: "):
        zstd.decompress(enc, len(raw) - 1)
    with pytest.raises(CodecError, match="zstd: "):
        zstd.decompress(enc, len(raw) + 1)


def test_skippable_frame_is_allowed() -> None:
    skip = struct.pack("<II", 0x184D2A50, 5) + b"hello"
    raw = b"payload" * 100
    assert zstd.decompress(zstd.compress(raw) + skip, len(raw)) == raw


# --- corrupt input --------------------------------------------------------------------------

def _frame_claiming(size: int) -> bytes:
    """A single-segment frame whose 8-byte content-size field says ``size``, then an empty
    last raw block."""
    return struct.pack("<IB", 0xFD2FB528, 0xE0) + struct.pack("<Q", size) + b"\x01\x00\x00"


def test_header_claiming_a_terabyte_is_refused_before_allocating() -> None:
    enc = _frame_claiming(2**40)
    assert zstd.content_size(enc) == 2**40
    with pytest.raises(CodecError, match=r"zstd: frame decodes to 1099511627776 bytes, "
                                         r"expected 4096"):
        zstd.decompress(enc, 4096)
    with pytest.raises(CodecError, match="expected 4096"):
        zstd.decompress_into(enc, bytearray(4096))


def test_header_lying_about_size_is_refused() -> None:
    raw = bytes(range(256)) * 16
    enc = zstd.compress(raw)
    with pytest.raises(CodecError, match=r"^zstd: frame decodes to 4096 bytes, expected 1000$"):
        zstd.decompress(enc, 1000)
    with pytest.raises(CodecError, match=r"^zstd: frame decodes to 4096 bytes, expected 8192$"):
        zstd.decompress_into(enc, np.empty(8192, np.uint8))


def test_empty_and_garbage() -> None:
    with pytest.raises(CodecError, match="zstd: empty input"):
        zstd.decompress(b"", 0)
    with pytest.raises(CodecError, match="not a complete zstd frame"):
        zstd.decompress(b"not zstd at all", 10)
    with pytest.raises(CodecError, match="zstd: empty input"):
        zstd.content_size(b"")
    with pytest.raises(CodecError, match="does not start with a valid zstd frame header"):
        zstd.content_size(b"garbage!")
    with pytest.raises(CodecError, match="expected decoded size must be >= 0"):
        zstd.decompress(zstd.compress(b""), -1)


@pytest.mark.parametrize("tail", [b"\x00", b"xyz", b"\x28\xb5\x2f\xfd", bytes(20)],
                         ids=["nul", "text", "magic-only", "zeros20"])
def test_trailing_garbage(tail: bytes) -> None:
    raw = b"abc" * 1000
    with pytest.raises(CodecError, match="after the frame ending at offset"):
        zstd.decompress(zstd.compress(raw) + tail, len(raw))


@pytest.mark.parametrize("checksum", [False, True], ids=["nocheck", "checksum"])
def test_truncated_everywhere(data, checksum: bool) -> None:
    raw = data("random", 5000) + data("ramp", 5000)
    enc = zstd.compress(raw, 3, checksum)
    for cut in range(len(enc)):
        with pytest.raises(CodecError, match="^zstd: "):
            zstd.decompress(enc[:cut], len(raw))


def test_flipped_bytes_with_checksum_always_detected(flip, data) -> None:
    raw = data("ramp", 20_000)
    enc = zstd.compress(raw, 3, True)
    for pos in range(6, len(enc)):              # past the frame header's window/size fields
        with pytest.raises(CodecError, match="^zstd: "):
            zstd.decompress(flip(enc, pos), len(raw))


def test_flipped_bytes_never_crash(flip, data) -> None:
    raw = data("ramp", 20_000)
    enc = zstd.compress(raw, 3)
    for pos in range(len(enc)):
        for mask in (0x01, 0x80, 0xFF):
            with contextlib.suppress(CodecError):
                assert len(zstd.decompress(flip(enc, pos, mask), len(raw))) == len(raw)


@settings(max_examples=200, deadline=None)
@given(blob=st.binary(max_size=300), expected=st.integers(0, 5000))
def test_fuzz_random_input(blob: bytes, expected: int) -> None:
    with contextlib.suppress(CodecError):
        assert len(zstd.decompress(b"\x28\xb5\x2f\xfd" + blob, expected)) == expected


# --- threads --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_frame() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(3)
    raw = (rng.integers(0, 16, 16 * MIB, dtype=np.uint8)).tobytes()  # ~4 bits of entropy
    return raw, zstd.compress(raw, 1)


def test_gil_released_during_decompress(progress_during, big_frame) -> None:
    raw, enc = big_frame
    out = np.empty(len(raw), np.uint8)
    assert progress_during(lambda: zstd.decompress_into(enc, out))


def test_two_threads_decompress_concurrently(big_frame) -> None:
    raw, enc = big_frame
    outs = [np.empty(len(raw), np.uint8) for _ in range(2)]
    errors: list[BaseException] = []

    def work(out: np.ndarray) -> None:
        try:
            for _ in range(2):
                zstd.decompress_into(enc, out)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(o,)) for o in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for out in outs:
        assert out.tobytes() == raw
