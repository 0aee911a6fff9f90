"""The codec kernels report failures as ``KernelStatus(code, *numbers)`` and write no message;
the codec modules word them (``zarrx.codecs.zstd._message``...), and decoders whose size is not
known in advance grow a bounded output in the kernel."""
from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from zarrx.codecs import _blosc, _filters, _lz4, _zlib, _zstd, deflate, zstd
from zarrx.codecs.status import KernelStatus
from zarrx.errors import CodecError, ZarrError

TIB = 1 << 40


def no_size_frame(*rle: tuple[int, int]) -> bytes:
    """A zstd frame without a content size: one RLE block of (size, byte) each."""
    out = b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x70])
    for i, (size, byte) in enumerate(rle):
        out += (size << 3 | 1 << 1 | int(i == len(rle) - 1)).to_bytes(3, "little") + bytes([byte])
    return out


def status(call, *args) -> tuple:
    with pytest.raises(KernelStatus) as info:
        call(*args)
    assert not isinstance(info.value, ZarrError)          # internal: always translated
    return info.value.code, info.value.values


CASES = {
    "zstd-ratio": (lambda: status(_zstd.decompress, no_size_frame((100, 7)), TIB),
                   (_zstd.RATIO, (10, TIB, 32768))),
    "zstd-empty": (lambda: status(_zstd.decompress, b"", 5), (_zstd.EMPTY, (5,))),
    "zstd-size": (lambda: status(_zstd.decompress, _zstd.compress(b"ab"), 3),
                  (_zstd.SIZE, (2, 3, 1))),
    "zstd-negative": (lambda: status(_zstd.decompress, b"x", -1), (_zstd.NEGATIVE_SIZE, (-1,))),
    "zstd-level": (lambda: status(_zstd.compress, b"", 1000)[:1], (_zstd.LEVEL,)),
    "zstd-limit": (lambda: status(_zstd.decompress_bounded, no_size_frame((100, 7)), 99),
                   (_zstd.LIMIT_EXCEEDED, (99,))),
    "zstd-limit-declared": (lambda: status(_zstd.decompress_bounded, _zstd.compress(bytes(50)),
                                           49), (_zstd.LIMIT_DECLARED, (50, 49))),
    "gzip-size": (lambda: status(_zlib.decompress, gzip.compress(bytes(100)), 512, "gzip"),
                  (_zlib.SIZE, (100, 512))),
    "zlib-wrapper": (lambda: status(_zlib.compress, b"x", 1, "deflate"),
                     (_zlib.WRAPPER, ("deflate",))),
    "blosc-short": (lambda: status(_blosc.decompress, bytes(10), 5), (_blosc.SHORT, (10, 16))),
    "lz4-short": (lambda: status(_lz4.decompress, b"\x00\x02", 5), (_lz4.SHORT, (2,))),
    "lz4-declared": (lambda: status(_lz4.decompress, struct.pack("<I", 7) + b"\x00", 5),
                     (_lz4.DECLARED, (7, 5))),
}


@pytest.mark.parametrize("case", list(CASES))
def test_kernels_report_codes_and_numbers(case) -> None:
    got, want = CASES[case][0](), CASES[case][1]
    assert got == want


def test_vlen_decode_reports_a_tag_and_numbers() -> None:
    blob = struct.pack("<IIsI2sIs", 3, 1, b"a", 2, b"\xff\xfe", 1, b"c")
    out = np.empty(3, dtype=object)
    assert _filters.vlen_decode(blob, out, True) == ("utf8", 1, 13, 2)


def test_shared_codes_are_the_same_in_every_kernel() -> None:
    names = ("NOMEM_ENCODED", "NOMEM_DECODED", "SHRINK", "RATIO", "NEGATIVE_SIZE")
    for k in (_zstd, _zlib, _blosc, _lz4):
        assert [getattr(k, n) for n in names] == [1, 2, 3, 4, 5], k.__name__


def test_codec_modules_word_the_statuses() -> None:
    with pytest.raises(CodecError, match=r"^zstd header claims 50 decoded bytes, more than the "
                                         r"limit of 49$"):
        zstd.decompress_bounded(_zstd.compress(bytes(50)), 49)
    with pytest.raises(CodecError, match=r"^gzip: stream decodes to 100 bytes, expected 512$"):
        deflate.decompress(gzip.compress(bytes(100)), 512, "gzip")


# -- decoding a size not known in advance: a bounded, growing output --------------------------

def test_zstd_bounded_mixes_frames_with_and_without_a_size() -> None:
    blob = no_size_frame((100, 7), (70000, 1)) + _zstd.compress(b"ab")
    assert zstd.decompress_bounded(blob, 1 << 20) == b"\x07" * 100 + b"\x01" * 70000 + b"ab"
    assert zstd.decompress_bounded(blob, 70102) == b"\x07" * 100 + b"\x01" * 70000 + b"ab"
    with pytest.raises(CodecError, match=r"^zstd: decoded data exceeds the limit of 70101 "
                                         r"bytes$"):
        zstd.decompress_bounded(blob, 70101)


def test_zstd_bounded_refuses_a_truncated_frame() -> None:
    with pytest.raises(CodecError, match=r"^zstd: input of 9 bytes is not a complete zstd "
                                         r"frame: "):
        zstd.decompress_bounded(no_size_frame((100, 7))[:9], 1000)


@pytest.mark.parametrize("wrapper", ["gzip", "zlib", "raw"])
def test_deflate_bounded_grows_to_the_size(wrapper) -> None:
    raw = bytes(300_000) + b"end"                 # beyond the first 64 KiB of output
    blob = deflate.compress(raw, 6, wrapper)
    assert deflate.decompress_bounded(blob, 1 << 20, wrapper) == raw
    assert deflate.decompress_bounded(blob, len(raw), wrapper) == raw
    with pytest.raises(CodecError, match=rf"^{wrapper}: decoded data exceeds the limit of "
                                         rf"{len(raw) - 1} bytes$"):
        deflate.decompress_bounded(blob, len(raw) - 1, wrapper)


def test_deflate_bounded_refusals() -> None:
    two = gzip.compress(b"ab") + gzip.compress(b"cd")           # gzip members concatenate
    assert deflate.decompress_bounded(two, 100, "gzip") == b"abcd"
    blob = gzip.compress(b"abc")
    with pytest.raises(CodecError, match=r"^gzip: trailing garbage: 2 more bytes after the "
                                         rf"stream ending at offset {len(blob)}$"):
        deflate.decompress_bounded(blob + b"xx", 100, "gzip")
    with pytest.raises(CodecError, match=rf"^gzip: input of {len(blob) - 4} bytes ends inside "
                                         r"the stream \(truncated\) after 3 decoded bytes$"):
        deflate.decompress_bounded(blob[:-4], 100, "gzip")
    with pytest.raises(CodecError, match=r"^zlib: empty input, expected a zlib stream$"):
        deflate.decompress_bounded(b"", 100, "zlib")


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

_ZSTD_SEED = no_size_frame((3000, 1), (70000, 2)) + _zstd.compress(bytes(range(256)) * 8)
_GZIP_SEED = gzip.compress(bytes(range(256)) * 300, 1) + gzip.compress(b"tail")


@hypothesis.settings(max_examples=200, deadline=None)
@hypothesis.given(data=st.data(), limit=st.integers(0, 200_000))
def test_bounded_decoders_fuzz(data, limit) -> None:
    """Flipped, cut and arbitrary bytes only raise CodecError, and never produce more than the
    limit."""
    for seed, decode in ((_ZSTD_SEED, lambda b: zstd.decompress_bounded(b, limit)),
                         (_GZIP_SEED, lambda b: deflate.decompress_bounded(b, limit, "gzip"))):
        blob = bytearray(seed)
        for pos in data.draw(st.lists(st.integers(0, len(blob) - 1), max_size=4)):
            blob[pos] ^= data.draw(st.integers(1, 255))
        blob = blob[:data.draw(st.integers(0, len(blob)))]
        for candidate in (bytes(blob), data.draw(st.binary(max_size=64))):
            try:
                out = decode(candidate)
            except CodecError:
                continue
            assert len(out) <= limit


BIG = 2**70


@pytest.mark.parametrize("name", ["zstd", "zlib", "blosc", "lz4"])
def test_sizes_past_a_c_size_are_statuses(name) -> None:
    """An expected size or a limit past 2**63 - 1 (or below -2**63) made the kernels' argument
    conversion raise an OverflowError."""
    from zarrx.codecs import blosc, lz4
    mod = {"zstd": zstd, "zlib": deflate, "blosc": blosc, "lz4": lz4}[name]
    kernel = {"zstd": _zstd, "zlib": _zlib, "blosc": _blosc, "lz4": _lz4}[name]
    blob = mod.compress(b"abc" * 10) if name != "blosc" else mod.compress(b"abc" * 10, 1)
    assert status(kernel.decompress, blob, BIG) == (kernel.NOMEM_DECODED, (BIG,))
    assert status(kernel.decompress, blob, -BIG) == (kernel.NEGATIVE_SIZE, (-BIG,))
    with pytest.raises(CodecError, match=rf"^{name}: cannot allocate {BIG} bytes for the "
                                         r"decoded data$"):
        mod.decompress(blob, BIG)
    if hasattr(kernel, "decompress_bounded"):       # a limit past any size: no limit
        assert mod.decompress_bounded(blob, BIG) == b"abc" * 10
        with pytest.raises(CodecError, match=rf"^{name}: expected decoded size must be >= 0, "
                                             rf"found {-BIG}$"):
            mod.decompress_bounded(blob, -BIG)


COMPRESS_SETTINGS = {
    "zstd-level": (lambda: zstd.compress(b"ab", -BIG),
                   "zstd: compression level -1180591620717411303424 is out of range"),
    "zlib-level": (lambda: deflate.compress(b"ab", BIG),
                   "zlib: compression level 1180591620717411303424 is out of range, expected "
                   "-1..9"),
    "lz4-acceleration": (lambda: _lz4_compress(BIG),
                         "lz4: acceleration 1180591620717411303424 is out of range, expected "
                         "1..65537"),
    "blosc-typesize": (lambda: _blosc_compress(2**31), "blosc: typesize must be at most "
                       "2147483647, found 2147483648"),
    "blosc-clevel": (lambda: _blosc_compress(1, BIG),
                     "blosc: clevel 1180591620717411303424 is out of range, expected 0..9"),
    "blosc-shuffle": (lambda: _blosc_compress(1, 5, -BIG), "blosc: shuffle "
                      "-1180591620717411303424 is not one of -1 (auto), 0 (none), 1 (byte), 2 "
                      "(bit)"),
    "blosc-blocksize": (lambda: _blosc_compress(1, 5, 1, "lz4", 2**63),
                        "blosc: blocksize must be below 2**63, found 9223372036854775808"),
}


def _lz4_compress(*args):
    from zarrx.codecs import lz4
    return lz4.compress(b"ab", *args)


def _blosc_compress(*args):
    from zarrx.codecs import blosc
    return blosc.compress(b"ab", *args)


@pytest.mark.parametrize("case", list(COMPRESS_SETTINGS))
def test_compress_settings_past_a_c_int_are_codec_errors(case) -> None:
    """The kernels took levels, type and block sizes as C ints and sizes: a Python int past
    them raised an OverflowError before the kernel's own range check."""
    call, message = COMPRESS_SETTINGS[case]
    with pytest.raises(CodecError) as err:
        call()
    assert str(err.value).startswith(message)
