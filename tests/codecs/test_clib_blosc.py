"""The _blosc kernel, through zarrx.codecs.blosc (which words its statuses): c-blosc context API
round trips, numcodecs interop, corrupt headers."""
from __future__ import annotations

import contextlib
import struct
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.codecs import blosc
from zarrx.errors import CodecError

MIB = 1 << 20
SIZES = {"0B": 0, "1B": 1, "7B": 7, "4KiB": 4096, "1MiB+3": MIB + 3, "5MiB": 5 * MIB}
PATTERNS = ("zeros", "random", "ramp")

numcodecs = pytest.importorskip("numcodecs")

CNAMES = ("lz4", "lz4hc", "blosclz", "zstd", "zlib")
SHUFFLES = {"noshuffle": 0, "byteshuffle": 1, "bitshuffle": 2}
SHUFFLE_NAMES = {0: "none", 1: "byte", 2: "bit"}
FORMAT = {"lz4": "lz4", "lz4hc": "lz4", "blosclz": "blosclz", "zstd": "zstd", "zlib": "zlib"}


@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
@pytest.mark.parametrize("pattern", PATTERNS)
def test_round_trip(data, pattern: str, size: int) -> None:
    raw = data(pattern, size)
    enc = blosc.compress(raw, 8)
    head = blosc.header(enc)
    assert (head["nbytes"], head["cbytes"]) == (size, len(enc))
    assert blosc.decompress(enc, size) == raw
    out = np.empty(size, np.uint8)
    blosc.decompress_into(enc, out)
    assert out.tobytes() == raw


@pytest.mark.parametrize("typesize", [1, 4, 8], ids=lambda t: f"typesize{t}")
@pytest.mark.parametrize("shuffle", SHUFFLES.values(), ids=list(SHUFFLES))
@pytest.mark.parametrize("cname", CNAMES)
def test_round_trip_params(data, cname: str, shuffle: int, typesize: int) -> None:
    for size in (7, 4096, 300_003):
        raw = data("ramp", size)
        enc = blosc.compress(raw, typesize, 5, shuffle, cname)
        head = blosc.header(enc)
        assert head["typesize"] == typesize
        if not head["memcpyed"]:
            assert head["cname"] == FORMAT[cname]
            assert head["shuffle"] == SHUFFLE_NAMES[shuffle]
        assert blosc.decompress(enc, size) == raw
        assert bytes(numcodecs.Blosc(cname, 5, shuffle).decode(enc)) == raw


@pytest.mark.parametrize("clevel", [0, 1, 9], ids=lambda c: f"clevel{c}")
@pytest.mark.parametrize("blocksize", [0, 4096, 65536], ids=lambda b: f"block{b}")
def test_clevel_and_blocksize(data, clevel: int, blocksize: int) -> None:
    raw = data("ramp", MIB + 3)
    for cname in ("lz4", "zstd"):
        enc = blosc.compress(raw, 8, clevel, 1, cname, blocksize)
        # blosc honours a forced blocksize as is only for codecs it does not split per byte
        if blocksize and clevel and cname == "zstd":
            assert blosc.header(enc)["blocksize"] == blocksize
        assert blosc.decompress(enc, len(raw)) == raw


def test_autoshuffle_picks_bit_for_bytes_and_byte_for_wider_items(data) -> None:
    raw = data("ramp", 10_000)
    assert blosc.header(blosc.compress(raw, 1, 5, -1))["shuffle"] == "bit"
    assert blosc.header(blosc.compress(raw, 8, 5, -1))["shuffle"] == "byte"


@pytest.mark.parametrize("dtype", ["u1", "<i4", "<f8"])
@pytest.mark.parametrize("shuffle", [-1, 0, 1, 2], ids=["auto", "none", "byte", "bit"])
@pytest.mark.parametrize("cname", CNAMES)
def test_numcodecs_encoded(cname: str, shuffle: int, dtype: str) -> None:
    arr = (np.arange(50_001) % 977).astype(dtype)
    enc = numcodecs.Blosc(cname, 5, shuffle).encode(arr)
    head = blosc.header(enc)
    assert head["typesize"] == arr.itemsize
    assert head["nbytes"] == arr.nbytes
    out = np.empty_like(arr)
    blosc.decompress_into(enc, out.view(np.uint8).reshape(-1))
    np.testing.assert_array_equal(out, arr)


def test_bad_arguments() -> None:
    with pytest.raises(CodecError, match=r"blosc: unknown compressor 'lzo', expected one of "
                                         r"'lz4', 'lz4hc', 'blosclz', 'snappy', 'zstd', 'zlib'"):
        blosc.compress(b"x", 1, cname="lzo")
    with pytest.raises(CodecError, match="blosc: typesize must be >= 1, found 0"):
        blosc.compress(b"x", 0)
    with pytest.raises(CodecError, match="blosc: clevel 10 is out of range"):
        blosc.compress(b"x", 1, 10)
    with pytest.raises(CodecError, match="blosc: shuffle 3 is not one of"):
        blosc.compress(b"x", 1, 5, 3)
    with pytest.raises(CodecError, match="blosc: blocksize must be >= 0"):
        blosc.compress(b"x", 1, blocksize=-1)
    with pytest.raises(CodecError, match="blosc: expected decoded size must be >= 0"):
        blosc.decompress(blosc.compress(b"x", 1), -1)


def test_refuses_input_over_blosc_limit() -> None:
    # A read-only view of 2 GiB of a single shared page: nothing is touched before the check.
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), (2**31,), (0,))
    with pytest.raises((CodecError, ValueError)):
        blosc.compress(huge, 1)
    big = np.empty(2**31 - 15, np.uint8)    # one byte over BLOSC_MAX_BUFFERSIZE, never touched
    with pytest.raises(CodecError, match="larger than blosc's limit of 2147483631 bytes"):
        blosc.compress(big, 1)


# --- corrupt input --------------------------------------------------------------------------

def _with_field(enc: bytes, offset: int, value: int) -> bytes:
    return enc[:offset] + struct.pack("<I", value) + enc[offset + 4:]


@pytest.fixture
def sample(data) -> tuple[bytes, bytes]:
    raw = data("ramp", 50_000)
    return raw, blosc.compress(raw, 8, 5, 1, "lz4")


def test_nbytes_larger_than_dst(sample) -> None:
    raw, enc = sample
    with pytest.raises(CodecError, match=r"^blosc: header declares nbytes=50000, expected 40000$"):
        blosc.decompress_into(enc, bytearray(40_000))
    lie = _with_field(enc, 4, 10**9)
    with pytest.raises(CodecError, match=r"header declares nbytes=1000000000, expected 50000"):
        blosc.decompress(lie, len(raw))


def test_cbytes_larger_than_src(sample) -> None:
    raw, enc = sample
    lie = _with_field(enc, 12, len(enc) + 100)
    with pytest.raises(CodecError, match=rf"header declares cbytes={len(enc) + 100}, but the "
                                         rf"input holds {len(enc)} bytes"):
        blosc.decompress(lie, len(raw))


@pytest.mark.parametrize("offset, name", [(4, "nbytes"), (12, "cbytes")])
def test_fields_of_2_to_the_31_and_more_are_reported_as_stored(sample, offset, name) -> None:
    raw, enc = sample
    lie = _with_field(enc, offset, 0xFFFFFFFF)
    with pytest.raises(CodecError, match=rf"header declares {name}=4294967295"):
        blosc.decompress(lie, len(raw))


@pytest.mark.parametrize("version", [0, 3, 255])
def test_unknown_format_version_is_named(sample, version) -> None:
    raw, enc = sample
    with pytest.raises(CodecError, match=rf"^blosc: invalid header \(version {version}, "):
        blosc.decompress(bytes([version]) + enc[1:], len(raw))


def test_empty_short_and_trailing(sample) -> None:
    raw, enc = sample
    for blob in (b"", enc[:15]):
        with pytest.raises(CodecError, match="shorter than the 16-byte header"):
            blosc.decompress(blob, len(raw))
    with pytest.raises(CodecError, match="shorter than the 16-byte header"):
        blosc.header(b"")
    with pytest.raises(CodecError, match="but the input holds"):
        blosc.decompress(enc + b"\x00", len(raw))


@pytest.mark.parametrize("code", [5, 6, 7])
def test_header_with_an_unknown_format_code(sample, code: int) -> None:
    """Regression (fuzz/corpus/fuzz_codecs/regression-blosc-unknown-format): c-blosc names no
    library for format codes 5-7, and reading that NULL name crashed header()."""
    raw, enc = sample
    blob = enc[:2] + bytes([enc[2] & 0x1F | code << 5]) + enc[3:]
    head = blosc.header(blob)
    assert (head["cname"], head["complib"]) == (f"unknown({code})", f"unknown({code})")
    with pytest.raises(CodecError, match=rf"^blosc: corrupt buffer of {len(enc)} bytes"):
        blosc.decompress(blob, len(raw))


def test_truncated_everywhere(sample) -> None:
    raw, enc = sample
    for cut in range(len(enc)):
        with pytest.raises(CodecError, match="^blosc: "):
            blosc.decompress(enc[:cut], len(raw))


@pytest.mark.parametrize("cname", CNAMES)
def test_flipped_bytes_never_crash(flip, data, cname: str) -> None:
    raw = data("ramp", 20_000)
    enc = blosc.compress(raw, 4, 5, 1, cname, 4096)
    step = max(1, len(enc) // 600)
    for pos in [*range(32), *range(32, len(enc), step)]:
        for mask in (0x01, 0x80, 0xFF):
            with contextlib.suppress(CodecError):
                assert len(blosc.decompress(flip(enc, pos, mask), len(raw))) == len(raw)


@settings(max_examples=300, deadline=None)
@given(head=st.binary(min_size=16, max_size=16), body=st.binary(max_size=200),
       expected=st.integers(0, 4000))
def test_fuzz_consistent_header(head: bytes, body: bytes, expected: int) -> None:
    """Random headers whose sizes agree with the buffer reach blosc's own validation."""
    blob = head[:4] + struct.pack("<I", expected) + head[8:12] + struct.pack("<I", 16 + len(body))
    with contextlib.suppress(CodecError):
        blosc.decompress(blob + body, expected)


# --- threads --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_buffer() -> tuple[bytes, bytes]:
    rng = np.random.default_rng(11)
    raw = (rng.normal(size=4 * MIB) * 100).astype("<i4").tobytes()
    return raw, blosc.compress(raw, 4, 9, 2, "zstd")


def test_gil_released_during_decompress(progress_during, big_buffer) -> None:
    raw, enc = big_buffer
    out = np.empty(len(raw), np.uint8)
    assert progress_during(lambda: blosc.decompress_into(enc, out))
    assert out.tobytes() == raw


def test_two_threads_decompress_concurrently(big_buffer) -> None:
    raw, enc = big_buffer
    results: list[bytes] = []

    def work() -> None:
        results.append(blosc.decompress(enc, len(raw)))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [raw, raw]


def test_snappy_is_used_when_this_c_blosc_has_it() -> None:
    from zarrx.codecs import _blosc
    raw = b"snappy " * 100
    if not _blosc.built("snappy"):
        with pytest.raises(CodecError, match=r"^blosc: compressor 'snappy' is not built into"):
            blosc.compress(raw, 1, cname="snappy")
        return
    enc = blosc.compress(raw, 1, cname="snappy")
    assert blosc.header(enc)["cname"] == "snappy"
    assert blosc.decompress(enc, len(raw)) == raw
    assert numcodecs.Blosc(cname="snappy").decode(enc) == raw
