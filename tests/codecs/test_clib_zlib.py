"""The _zlib kernel, through zarrx.codecs.deflate (which words its statuses): zlib / gzip / raw
DEFLATE on both backends, interop, corrupt input."""
from __future__ import annotations

import contextlib
import gzip
import io
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.codecs import _zlib, deflate
from zarrx.errors import CodecError

MIB = 1 << 20
SIZES = {"0B": 0, "1B": 1, "7B": 7, "4KiB": 4096, "1MiB+3": MIB + 3, "5MiB": 5 * MIB}
PATTERNS = ("zeros", "random", "ramp")

numcodecs = pytest.importorskip("numcodecs")

WRAPPERS = ("zlib", "gzip", "raw")
BACKENDS = ["zlib"] + (["libdeflate"] if _zlib.backend() == "libdeflate" else [])
WBITS = {"zlib": 15, "gzip": 31, "raw": -15}


def py_decompress(enc: bytes, wrapper: str) -> bytes:
    """The Python standard library as the oracle."""
    if wrapper == "gzip":
        return gzip.decompress(enc)
    return zlib.decompress(enc, WBITS[wrapper])


def py_compress(raw: bytes, wrapper: str, level: int = -1) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, WBITS[wrapper])
    return c.compress(raw) + c.flush()


def test_backend_name() -> None:
    assert _zlib.backend() in ("libdeflate", "zlib")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("size", SIZES.values(), ids=list(SIZES))
@pytest.mark.parametrize("pattern", PATTERNS)
def test_round_trip(data, pattern: str, size: int, backend: str) -> None:
    raw = data(pattern, size)
    enc = deflate.compress(raw, 1, "zlib", backend)
    assert zlib.decompress(enc) == raw
    assert deflate.decompress(enc, size, "zlib", backend) == raw
    out = np.empty(size, np.uint8)
    deflate.decompress_into(enc, out, "zlib", backend)
    assert out.tobytes() == raw


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("level", [-1, 0, 1, 6, 9], ids=lambda v: f"level{v}")
@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("size", [0, 7, 4096, 100_003], ids=["0B", "7B", "4KiB", "100KB"])
def test_round_trip_params(data, size: int, wrapper: str, level: int, backend: str) -> None:
    raw = data("ramp", size)
    enc = deflate.compress(raw, level, wrapper, backend)
    assert py_decompress(enc, wrapper) == raw
    assert deflate.decompress(enc, size, wrapper, backend) == raw


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_python_oracle_streams(data, pattern: str, wrapper: str, backend: str) -> None:
    raw = data(pattern, 300_001)
    for level in (1, 9):
        enc = py_compress(raw, wrapper, level)
        assert deflate.decompress(enc, len(raw), wrapper, backend) == raw


@pytest.mark.parametrize("backend", BACKENDS)
def test_gzip_module_headers(data, backend: str) -> None:
    """gzip.compress (mtime) and GzipFile with a file name (FNAME flag) decode."""
    raw = data("ramp", 100_000)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="chunk.bin", mode="wb", fileobj=buf, mtime=1234567) as f:
        f.write(raw)
    for enc in (gzip.compress(raw), gzip.compress(raw, 9, mtime=0), buf.getvalue()):
        assert deflate.decompress(enc, len(raw), "gzip", backend) == raw


@pytest.mark.parametrize("backend", BACKENDS)
def test_gzip_concatenated_members(data, backend: str) -> None:
    a, b = data("ramp", 70_000), data("random", 5000)
    enc = gzip.compress(a) + deflate.compress(b, 5, "gzip") + gzip.compress(b"")
    assert deflate.decompress(enc, len(a) + len(b), "gzip", backend) == a + b
    with pytest.raises(CodecError, match="gzip: stream decodes to more than"):
        deflate.decompress(enc, len(a) + len(b) - 1, "gzip", backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("level", [1, 5, 9], ids=lambda v: f"level{v}")
@pytest.mark.parametrize("pattern", PATTERNS)
def test_numcodecs_interop(data, pattern: str, level: int, backend: str) -> None:
    raw = data(pattern, 200_003)
    for codec, wrapper in ((numcodecs.Zlib(level), "zlib"), (numcodecs.GZip(level), "gzip")):
        assert deflate.decompress(codec.encode(raw), len(raw), wrapper, backend) == raw
        assert bytes(codec.decode(deflate.compress(raw, level, wrapper, backend))) == raw


def test_bad_arguments() -> None:
    with pytest.raises(CodecError, match="zlib: unknown wrapper 'deflate', expected one of"):
        deflate.compress(b"x", 1, "deflate")
    with pytest.raises(CodecError, match="zlib: compression level 10 is out of range"):
        deflate.compress(b"x", 10)
    with pytest.raises(CodecError, match="zlib: unknown backend"):
        deflate.compress(b"x", 1, "zlib", "fast")
    with pytest.raises(CodecError, match="zlib: expected decoded size must be >= 0"):
        deflate.decompress(b"x", -1)


# --- corrupt input --------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_wrong_expected_size(data, wrapper: str, backend: str) -> None:
    raw = data("ramp", 10_000)
    enc = deflate.compress(raw, 6, wrapper)
    with pytest.raises(CodecError, match=rf"^{wrapper}: stream decodes to more than 9999 bytes, "
                                         rf"expected 9999$"):
        deflate.decompress(enc, 9999, wrapper, backend)
    with pytest.raises(CodecError, match=rf"^{wrapper}: stream decodes to 10000 bytes, "
                                         rf"expected 10001$"):
        deflate.decompress(enc, 10_001, wrapper, backend)
    with pytest.raises(CodecError, match=rf"^{wrapper}: stream decodes to more than 0 bytes"):
        deflate.decompress_into(enc, bytearray(), wrapper, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_excess_never_written_past_dst(wrapper: str, backend: str) -> None:
    raw = bytes(range(256)) * 40
    enc = deflate.compress(raw, 6, wrapper)
    big = np.full(len(raw) + 64, 0xAB, np.uint8)
    with pytest.raises(CodecError, match="decodes to more than"):
        deflate.decompress_into(enc, big[:1000], wrapper, backend)
    assert (big[1000:] == 0xAB).all()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_empty_input(wrapper: str, backend: str) -> None:
    with pytest.raises(CodecError, match=f"^{wrapper}: empty input"):
        deflate.decompress(b"", 0, wrapper, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("tail", [b"\x00", b"junk", b"\x1f", b"\x1f\x8b", bytes(8)],
                         ids=["nul", "text", "half-magic", "magic-only", "zeros8"])
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_trailing_garbage(wrapper: str, tail: bytes, backend: str) -> None:
    raw = b"abc" * 1000
    with pytest.raises(CodecError, match=f"^{wrapper}: "):
        deflate.decompress(deflate.compress(raw, 6, wrapper) + tail, len(raw), wrapper, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_truncated_everywhere(data, wrapper: str, backend: str) -> None:
    raw = data("random", 3000) + data("ramp", 3000)
    enc = deflate.compress(raw, 6, wrapper)
    for cut in range(len(enc)):
        with pytest.raises(CodecError, match=f"^{wrapper}: "):
            deflate.decompress(enc[:cut], len(raw), wrapper, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrapper", ["zlib", "gzip"])
def test_flipped_bytes_detected_by_checksums(flip, data, wrapper: str, backend: str) -> None:
    raw = data("ramp", 8000)
    enc = deflate.compress(raw, 6, wrapper)
    unchecked = range(4, 10) if wrapper == "gzip" else ()   # gzip MTIME, XFL, OS
    for pos in range(len(enc)):
        if pos in unchecked:
            continue
        with pytest.raises(CodecError, match=f"^{wrapper}: "):
            deflate.decompress(flip(enc, pos), len(raw), wrapper, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_flipped_bytes_raw_never_crash(flip, data, backend: str) -> None:
    raw = data("ramp", 8000)
    enc = deflate.compress(raw, 6, "raw")
    for pos in range(len(enc)):
        for mask in (0x01, 0x40, 0xFF):
            with contextlib.suppress(CodecError):
                deflate.decompress(flip(enc, pos, mask), len(raw), "raw", backend)


@settings(max_examples=150, deadline=None)
@given(blob=st.binary(max_size=300), expected=st.integers(0, 5000),
       wrapper=st.sampled_from(WRAPPERS), backend=st.sampled_from(BACKENDS))
def test_fuzz_random_input(blob: bytes, expected: int, wrapper: str, backend: str) -> None:
    with contextlib.suppress(CodecError):
        assert len(deflate.decompress(blob, expected, wrapper, backend)) == expected


# --- threads --------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_gil_released_during_decompress(progress_during, backend: str) -> None:
    raw = np.random.default_rng(5).integers(0, 16, 8 * MIB, dtype=np.uint8).tobytes()
    enc = deflate.compress(raw, 1, "gzip")
    out = np.empty(len(raw), np.uint8)
    assert progress_during(lambda: deflate.decompress_into(enc, out, "gzip", backend))
    assert out.tobytes() == raw
