"""Corrupt and hostile codec streams: each raises CodecError with its exact message, and
decoding a bomb never allocates anything near the size it claims."""
from __future__ import annotations

import bz2
import functools
import gzip
import lzma
import struct
import tracemalloc
import zlib

import numpy as np
import pytest

from zarrx.codecs.plan import CodecPipeline
from zarrx.errors import CodecError
from zarrx.metadata.model import CodecSpec as S

LE = S("bytes", {"endian": "little"})
N = 64                                         # float64 items per chunk: 512 bytes
X = np.linspace(-1.0, 1.0, N)
BOMB = 64 << 20                                # what the bombs really expand to
PEAK_LIMIT = 16 << 20     # tracemalloc peak allowed while decoding (lzma's own dictionary: 8 MiB)

CHAINS = {
    "raw": [LE],
    "zstd": [LE, S("zstd", {"level": 1, "checksum": False})],
    "zstd-checksum": [LE, S("zstd", {"level": 1, "checksum": True})],
    "gzip": [LE, S("gzip", {"level": 1})],
    "zlib": [LE, S("numcodecs.zlib", {"level": 1})],
    "blosc": [LE, S("blosc", {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                              "typesize": 8, "blocksize": 0})],
    "lz4": [LE, S("numcodecs.lz4", {"acceleration": 1})],
    "bz2": [LE, S("numcodecs.bz2", {"level": 1})],
    "lzma": [LE, S("numcodecs.lzma", {"format": 1, "check": -1, "preset": None,
                                      "filters": None})],
    "crc32c": [LE, S("crc32c")],
    "packbits": [S("numcodecs.packbits", {}), S("bytes")],
    "vlen-utf8": [S("vlen-utf8")],
    "vlen-bytes-zstd": [S("vlen-bytes"), S("zstd", {"level": 0, "checksum": False})],
}


@functools.lru_cache(maxsize=None)
def plan(chain: str) -> CodecPipeline:
    if chain == "packbits":
        return CodecPipeline.resolve(CHAINS[chain], "?", (12,), key="arr")
    if chain.startswith("vlen"):     # 1 MiB: the stream bomb must stop well below BOMB
        return CodecPipeline.resolve(CHAINS[chain], "O", (3,), key="arr", variable_limit=1 << 20)
    return CodecPipeline.resolve(CHAINS[chain], "f8", (N,), key="arr")


@functools.lru_cache(maxsize=None)
def valid(chain: str) -> bytes:
    return plan(chain).encode(X)


def patch(buf: bytes, pos: int, new: bytes) -> bytes:
    pos %= len(buf)
    return buf[:pos] + new + buf[pos + len(new):]


def flip(buf: bytes, pos: int) -> bytes:
    return patch(buf, pos, bytes([buf[pos] ^ 0xFF]))


def _zstd_frame(raw: bytes) -> bytes:
    from zarrx.codecs import _zstd
    return _zstd.compress(raw)


def zstd_header_bomb() -> bytes:
    """A frame whose header declares 2**40 decoded bytes, followed by one empty raw block."""
    return (b"\x28\xb5\x2f\xfd" + bytes([0xC0, 0x58]) + struct.pack("<Q", 1 << 40)
            + b"\x01\x00\x00")


def zstd_stream_bomb() -> bytes:
    """A frame without a content size whose RLE blocks expand to BOMB bytes."""
    block = 128 << 10
    n = BOMB // block
    hdr = lambda last: (block << 3 | 1 << 1 | last).to_bytes(3, "little")   # noqa: E731
    body = b"".join(hdr(int(i == n - 1)) + b"\x00" for i in range(n))
    return b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x70]) + body


@functools.lru_cache(maxsize=None)
def deflate_bomb(wrapper: str) -> bytes:
    raw = bytes(BOMB)
    return gzip.compress(raw, 1, mtime=0) if wrapper == "gzip" else zlib.compress(raw, 1)


def blosc_header(nbytes: int, cbytes: int, tail: bytes = b"") -> bytes:
    return bytes([2, 1, 1 | 0x10, 8]) + struct.pack("<iii", nbytes, 512, cbytes) + tail


def vlen(*items: bytes, count: int | None = None) -> bytes:
    out = struct.pack("<I", len(items) if count is None else count)
    for it in items:
        out += struct.pack("<I", len(it)) + it
    return out


K = "arr/c/0"
AT = f"chunk {K!r}: "                          # how the key passed to decode reads
CASES = {
    # id: (chain, bytes factory, exact message)
    "raw-short": ("raw", lambda: valid("raw")[:-1],
                  f"{AT}expected 512 bytes for a chunk of shape (64,) and data type float64, "
                  "found 511"),
    "raw-trailing": ("raw", lambda: valid("raw") + b"x",
                     f"{AT}expected 512 bytes for a chunk of shape (64,) and data type float64, "
                     "found 513"),
    "zstd-truncated": ("zstd", lambda: valid("zstd")[:-7],
                       f"{AT}zstd: input of {len(valid('zstd')) - 7} bytes is not a complete "
                       "zstd frame: Src size is incorrect"),
    "zstd-trailing-garbage": ("zstd", lambda: valid("zstd") + b"garbage",
                              f"{AT}zstd: 7 bytes after the frame ending at offset "
                              f"{len(valid('zstd'))} are not a complete zstd frame (trailing "
                              "garbage or a truncated frame): Unknown frame descriptor"),
    "zstd-header-bomb-2^40": ("zstd", zstd_header_bomb,
                              f"{AT}zstd: frame decodes to 1099511627776 bytes, expected 512"),
    "zstd-stream-bomb-no-size": ("zstd", zstd_stream_bomb,
                                 f"{AT}zstd: frame decodes to more than 512 bytes, expected 512"),
    "zstd-wrong-size": ("zstd", lambda: _zstd_frame(bytes(256)),
        f"{AT}zstd: frame decodes to 256 bytes, expected 512"),
    "zstd-not-a-frame": ("zstd", lambda: b"\x00" * 40,
                         f"{AT}zstd: input of 40 bytes is not a complete zstd frame: Unknown "
                         "frame descriptor"),
    "zstd-empty": ("zstd", lambda: b"",
                   f"{AT}zstd: empty input, expected a zstd frame decoding to 512 bytes"),
    "zstd-bad-checksum": ("zstd-checksum", lambda: flip(valid("zstd-checksum"), -1),
                          f"{AT}zstd: corrupt frame ({len(valid('zstd-checksum'))} bytes, "
                          "expected to decode to 512): Restored data doesn't match checksum"),
    "gzip-truncated": ("gzip", lambda: valid("gzip")[:-9],
                       f"{AT}gzip: input of {len(valid('gzip')) - 9} bytes ends inside the "
                       "stream (truncated) after 512 decoded bytes, expected 512"),
    "gzip-trailing-garbage": ("gzip", lambda: valid("gzip") + b"junk",
                              f"{AT}gzip: trailing garbage: 4 more bytes after the stream "
                              f"ending at offset {len(valid('gzip'))}"),
    "gzip-bomb": ("gzip", lambda: deflate_bomb("gzip"),
                  f"{AT}gzip: stream decodes to more than 512 bytes, expected 512"),
    "gzip-short": ("gzip", lambda: gzip.compress(bytes(100)),
                   f"{AT}gzip: stream decodes to 100 bytes, expected 512"),
    "gzip-bad-crc": ("gzip", lambda: flip(valid("gzip"), -6),
                     f"{AT}gzip: corrupt stream at input offset {len(valid('gzip')) - 4} of "
                     f"{len(valid('gzip'))} (incorrect data check), expected 512 decoded bytes"),
    "zlib-given-gzip": ("zlib", lambda: gzip.compress(X.tobytes()),
                        f"{AT}zlib: corrupt stream at input offset 2 of "
                        f"{len(gzip.compress(X.tobytes()))} (incorrect header check), expected "
                        "512 decoded bytes"),
    "zlib-bomb": ("zlib", lambda: deflate_bomb("zlib"),
                  f"{AT}zlib: stream decodes to more than 512 bytes, expected 512"),
    "blosc-header-lies-nbytes": ("blosc", lambda: patch(valid("blosc"), 4,
                                                        struct.pack("<i", 2**31 - 1)),
                                 f"{AT}blosc header claims 2147483647 decoded bytes, "
                                 "expected 512"),
    "blosc-header-lies-cbytes": ("blosc", lambda: patch(valid("blosc"), 12,
                                                        struct.pack("<i", 1 << 30)),
                                 f"{AT}blosc header claims 1073741824 compressed bytes, "
                                 f"found {len(valid('blosc'))}"),
    "blosc-trailing": ("blosc", lambda: valid("blosc") + b"\x00" * 3,
                       f"{AT}blosc header claims {len(valid('blosc'))} compressed bytes, "
                       f"found {len(valid('blosc')) + 3}"),
    "blosc-short-header": ("blosc", lambda: valid("blosc")[:10],
                           f"{AT}blosc: input of 10 bytes is shorter than the 16-byte header"),
    # sizes of 2**31 and up were sign-extended to 64 bits in the message (c-blosc's reading)
    "blosc-header-nbytes-2^32-1": ("blosc", lambda: patch(valid("blosc"), 4,
                                                          struct.pack("<I", 2**32 - 1)),
                                   f"{AT}blosc header claims 4294967295 decoded bytes, "
                                   "expected 512"),
    "blosc-header-cbytes-2^31": ("blosc", lambda: patch(valid("blosc"), 12,
                                                        struct.pack("<I", 2**31)),
                                 f"{AT}blosc header claims 2147483648 compressed bytes, "
                                 f"found {len(valid('blosc'))}"),
    "blosc-bomb-header": ("blosc", lambda: blosc_header(2**31 - 17, 16),
                          f"{AT}blosc header claims 2147483631 decoded bytes, expected 512"),
    # regression (fuzz/corpus/fuzz_codecs/regression-blosc-unknown-format): a compressor format
    # code c-blosc does not know crashed the header check
    "blosc-unknown-format": ("blosc", lambda: patch(valid("blosc"), 2,
                                                    bytes([valid("blosc")[2] | 0xE0])),
                             f"{AT}blosc: corrupt buffer of {len(valid('blosc'))} bytes (blosc "
                             "status -5, expected 512 decoded bytes)"),
    "lz4-header-bomb": ("lz4", lambda: patch(valid("lz4"), 0, struct.pack("<i", 2**31 - 1)),
                        f"{AT}lz4 header claims 2147483647 decoded bytes, expected 512"),
    "lz4-negative-size": ("lz4", lambda: patch(valid("lz4"), 0, struct.pack("<i", -5)),
                          f"{AT}lz4: header claims a negative decoded size -5"),
    "lz4-short-header": ("lz4", lambda: b"\x00\x02",
                         f"{AT}lz4: expected a 4-byte size header, found 2 bytes"),
    "lz4-truncated": ("lz4", lambda: valid("lz4")[:-5],
                      f"{AT}lz4: corrupt block ({len(valid('lz4')) - 9} bytes, expected to "
                      "decode to 512 bytes; liblz4 status -396)"),
    "bz2-trailing-garbage": ("bz2", lambda: valid("bz2") + b"garbage",
                             f"{AT}bz2: 7 bytes after the stream ending at offset "
                             f"{len(valid('bz2'))} do not decode as a bz2 stream (Invalid data "
                             "stream)"),
    "bz2-bomb": ("bz2", lambda: bz2.compress(bytes(8 << 20), 1),
                 f"{AT}bz2: decoded data exceeds the expected 512 bytes"),
    "lzma-truncated": ("lzma", lambda: valid("lzma")[:-10],
                       f"{AT}lzma: truncated stream (no end of stream after "
                       f"{len(valid('lzma')) - 10} bytes)"),
    "lzma-bomb": ("lzma", lambda: lzma.compress(bytes(BOMB), preset=0),
                  f"{AT}lzma: decoded data exceeds the expected 512 bytes"),
    "crc32c-mismatch": ("crc32c", lambda: flip(valid("crc32c"), 3),
                        f"{AT}crc32c checksum mismatch: stored 0x"
                        f"{int.from_bytes(valid('crc32c')[-4:], 'little'):08x}, computed 0x"
                        f"{__import__('crc32c').crc32c(flip(valid('crc32c'), 3)[:-4]):08x}"),
    "crc32c-too-short": ("crc32c", lambda: b"\x01\x02",
                         f"{AT}crc32c: expected at least 4 bytes (the checksum), found 2"),
    "crc32c-wrong-size": ("crc32c", lambda: valid("crc32c")[4:],
                          f"{AT}crc32c: expected 516 bytes (512 + 4 checksum), found 512"),
    "packbits-bad-padding": ("packbits", lambda: b"\x07\xff\xf0",
                             f"{AT}packbits: header says 7 padding bits, expected 4 for 12 "
                             "values"),
    "vlen-count-lies": ("vlen-utf8", lambda: vlen(b"a", b"b", b"c", count=2**32 - 1),
                        f"{AT}vlen-utf8: header claims 4294967295 items, expected 3"),
    "vlen-item-length-bomb": ("vlen-utf8",
                              lambda: struct.pack("<II", 3, 0xFFFFFFFF) + b"ab",
                              f"{AT}vlen-utf8: item 0 claims 4294967295 bytes at byte 8, but "
                              "only 2 remain"),
    "vlen-truncated-length": ("vlen-utf8", lambda: vlen(b"a", b"b", b"c")[:-3],
                              f"{AT}vlen-utf8: truncated: item 2's length at byte 14 overruns "
                              "the 16-byte chunk"),
    "vlen-trailing": ("vlen-utf8", lambda: vlen(b"a", b"b", b"c") + b"zz",
                      f"{AT}vlen-utf8: 2 bytes of trailing data after 3 items"),
    "vlen-bad-utf8": ("vlen-utf8", lambda: vlen(b"a", b"\xff\xfe", b"c"),
                      f"{AT}vlen-utf8: item 1 is not valid UTF-8: invalid start byte (byte 0xff "
                      "at offset 13 of the chunk)"),
    "vlen-short-header": ("vlen-utf8", lambda: b"\x03",
                          f"{AT}vlen-utf8: expected a 4-byte item count, found 1 bytes"),
    "vlen-zstd-header-bomb": ("vlen-bytes-zstd", zstd_header_bomb,
                              f"{AT}zstd header claims 1099511627776 decoded bytes, more than "
                              "the limit of 1048576"),
    "vlen-zstd-stream-bomb": ("vlen-bytes-zstd", zstd_stream_bomb,
                              f"{AT}zstd: decoded data exceeds the limit of 1048576 bytes"),
}


@functools.lru_cache(maxsize=None)
def stream(case: str) -> bytes:
    return CASES[case][1]()


def test_enough_cases() -> None:
    assert len(CASES) >= 25


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_stream(case) -> None:
    chain, _, msg = CASES[case]
    if case == "crc32c-mismatch":
        pytest.importorskip("crc32c")
    p = plan(chain)
    data = stream(case)
    out = np.empty(p.chunk_shape, dtype=p.dtype)
    tracemalloc.start()
    try:
        with pytest.raises(CodecError) as exc:
            p.decode(data, out, key=K)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(exc.value) == msg
    assert (exc.value.key, exc.value.array, exc.value.inner) == (K, None, None)
    assert exc.value.detail == msg[len(AT):]                  # the codec's own message
    assert peak < PEAK_LIMIT, f"peak {peak} bytes while decoding {case}"
    with pytest.raises(CodecError):            # decode_new refuses just the same
        p.decode_new(data, key=K)


@pytest.mark.parametrize("chain", [c for c in CHAINS if not c.startswith(("vlen", "packbits"))])
def test_fuzzed_streams_only_raise_codec_errors(chain) -> None:
    """Random byte flips and truncations never crash and never raise anything else."""
    p = plan(chain)
    good = valid(chain)
    rng = np.random.default_rng(len(good))
    for i in range(60):
        data = bytearray(good)
        for pos in rng.integers(0, len(data), 1 + i % 4):
            data[pos] ^= int(rng.integers(1, 256))
        if i % 3 == 0:
            data = data[: int(rng.integers(0, len(data)))]
        try:
            p.decode_new(bytes(data))
        except CodecError:
            pass


VLEN_CASES = [c for c in CASES if CASES[c][0] == "vlen-utf8"]


@pytest.mark.parametrize("case", VLEN_CASES)
def test_vlen_python_fallback_same_messages(case, monkeypatch) -> None:
    """The pure-Python decoder (used when the kernel is unavailable) checks the same things."""
    from zarrx.codecs import vlen
    monkeypatch.setattr(vlen, "_kernel", lambda: None)
    with pytest.raises(CodecError) as exc:
        plan("vlen-utf8").decode_new(stream(case), key=K)
    assert str(exc.value) == CASES[case][2]
    x = np.array(["a", "", "δ"], dtype=object)
    assert plan("vlen-utf8").decode_new(plan("vlen-utf8").encode(x)).tolist() == x.tolist()


hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(blob=st.binary(max_size=64), count=st.integers(0, 6),
                  utf8=st.booleans())
def test_vlen_kernel_fuzz(blob, count, utf8) -> None:
    """Arbitrary bytes (with a plausible count header) only ever raise CodecError."""
    p = CodecPipeline.resolve([S("vlen-utf8" if utf8 else "vlen-bytes")], "O", (count,))
    for data in (blob, struct.pack("<I", count) + blob):
        try:
            p.decode_new(data)
        except CodecError:
            pass


def _decoders() -> dict:
    import zarrx.codecs as C
    return {"zstd": C.Zstd(), "blosc": C.Blosc(), "lz4": C.LZ4(), "zlib": C.Zlib(),
            "gzip": C.Gzip(), "crc32c": C.Crc32c(), "shuffle": C.Shuffle(elementsize=4),
            "bz2": C.BZ2()}


DESTINATIONS = {
    "strided": (lambda: np.zeros(80, np.uint8)[::2], "writable C-contiguous", "a strided ndarray"),
    "read-only": (lambda: np.frombuffer(bytes(40), np.uint8), "writable C-contiguous",
                  "a read-only ndarray"),
    "bytes": (lambda: bytes(40), "writable C-contiguous", "a read-only bytes"),
    "no-buffer": (lambda: 40, "writable", "int"),
}


@pytest.mark.parametrize("dst", list(DESTINATIONS))
@pytest.mark.parametrize("name", list(_decoders()))
def test_decode_into_refuses_a_destination_it_cannot_write(name, dst) -> None:
    """The kernels refused these with a bare ValueError (or BufferError, TypeError)."""
    codec = _decoders()[name]
    make, want, found = DESTINATIONS[dst]
    frame = codec.encode(np.arange(10, dtype="<f4").tobytes())
    with pytest.raises(CodecError) as err:
        codec.decode_into(frame, make())
    assert str(err.value) == (f"{name}: expected a {want} buffer for the decoded data, "
                              f"found {found}")


@pytest.mark.parametrize("name", list(_decoders()))
def test_decode_into_fills_the_bytes_of_any_writable_contiguous_destination(name) -> None:
    codec = _decoders()[name]
    x = np.arange(10, dtype="<f4")
    frame = codec.encode(x.tobytes())
    for dst in (np.zeros(10, "<f4"), np.zeros((2, 5), "<f4"), bytearray(40),
                memoryview(bytearray(40)).cast("B", (4, 10))):
        codec.decode_into(frame, dst)
        np.testing.assert_array_equal(np.frombuffer(dst, "<f4"), x)
