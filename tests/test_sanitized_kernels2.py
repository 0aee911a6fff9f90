"""Hostile and edge inputs for the blosc shuffle kernels (``compress_rows``, the shuffle of
``compress``), ``crc32c_many`` and the codecs' ``check``, meant for the sanitized build too
(``make sanitize``). Input buffers end exactly where a ``PROT_NONE`` page begins, so a read
past their end stops the process in the normal build as well. Each outcome equals the
reference (blosc's own shuffle, numpy, zlib) or is a zarrx error."""
from __future__ import annotations

import ctypes
import mmap

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import zarrx
from zarrx.codecs import _blosc, _crc32c, _lz4, _zlib, _zstd
from zarrx.codecs import blosc as blosc_codec
from zarrx.codecs import deflate as deflate_codec
from zarrx.codecs import lz4 as lz4_codec
from zarrx.codecs import zstd as zstd_codec
from zarrx.codecs.status import KernelStatus
from zarrx.errors import ZarrError

PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
CNAMES = [c for c in ("lz4", "blosclz", "zstd", "zlib", "lz4hc") if _blosc.built(c)]
INT_EDGES = [2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1]


def guarded(n: int) -> np.ndarray:
    """``n`` writable bytes whose last one is followed by a page no one may read."""
    pages = max(1, -(-n // PAGE))
    mm = mmap.mmap(-1, (pages + 1) * PAGE)
    anchor = ctypes.c_char.from_buffer(mm)
    if _libc.mprotect(ctypes.addressof(anchor) + pages * PAGE, PAGE, 0) != 0:
        pytest.skip(f"mprotect: errno {ctypes.get_errno()}")
    del anchor
    return np.frombuffer(mm, np.uint8)[pages * PAGE - n:pages * PAGE]


def items(n_items: int, seed: int) -> np.ndarray:
    """Compressible float32 items as bytes."""
    rng = np.random.default_rng(seed)
    return (np.round(rng.standard_normal(n_items).astype(np.float32) * 8) / 8).view(np.uint8)


def rows_at_guard(k: int, per: int, stride: int, seed: int) -> np.ndarray:
    """A (k, 4 * per) uint8 view whose rows lie ``stride`` bytes apart (any alignment), the
    last row ending at the guard page."""
    w = 4 * per
    buf = guarded((k - 1) * stride + w)
    buf[:] = np.resize(items(-(-buf.size // 4), seed), buf.size)
    return as_strided(buf, shape=(k, w), strides=(stride, 1))


def reference(view: np.ndarray, clevel: int, cname: str, bs: int) -> bytes:
    return _blosc.compress(np.ascontiguousarray(view).reshape(-1), 4, clevel, 1, cname, bs,
                           own_shuffle=False)


def whole_block(frame: bytes, n: int) -> bool:
    """Whether blosc made ``frame`` of ``n`` bytes one compressed block (what compress_rows
    makes; anything else it leaves to ``compress``)."""
    h = _blosc.header(frame)
    return n >= 128 and h["blocksize"] == n and not h["memcpyed"]


needs_avx2 = pytest.mark.skipif(_blosc.shuffle_backend() != "avx2",
                                reason="zarrx shuffles only where the CPU has AVX2")


@needs_avx2
def test_compress_rows_reads_rows_at_any_stride_up_to_the_last_byte():
    done = 0
    for per in (1, 2, 3, 8, 31, 32, 33, 63, 64, 65, 100):
        for k in (1, 2, 5, 32, 33, 130):
            for extra in (0, 1, 3, 4, 17):
                view = rows_at_guard(k, per, 4 * per + extra, per * 1000 + k)
                cname = CNAMES[(per + k + extra) % len(CNAMES)]
                for rows in (view, view[::-1]):
                    got = _blosc.compress_rows(rows, None, 5, cname, 0)
                    want = reference(rows, 5, cname, 0)
                    if got is NotImplemented:
                        assert not whole_block(want, rows.size), (per, k, extra, cname)
                        continue
                    done += 1
                    assert got == want, (per, k, extra, cname)
    assert done > 200


@needs_avx2
@pytest.mark.parametrize("cname", CNAMES)
def test_compress_rows_around_the_smallest_buffer_and_the_block_size(cname):
    """Under 128 bytes blosc stores a buffer as it is; past its block size it makes several
    blocks: either way the rows go to ``compress`` (NotImplemented), else the bytes are blosc's.
    """
    # blosc's block at clevel 5: 512 KiB (lz4, blosclz: split into byte streams), 256 KiB
    # (zstd, zlib, lz4hc)
    edge = [(131_071, 1), (131_072, 256), (131_073, 1)] if cname in ("lz4", "blosclz") \
        else [(65_535, 5), (65_536, 64), (65_537, 1)]
    for n_items, per in [(31, 1), (32, 1), (33, 1), (32, 32), (33, 3)] + edge:
        k = n_items // per
        view = rows_at_guard(k, per, 4 * per + 1, n_items)
        n = view.size
        for clevel in (1, 5, 9) if n < 1000 or cname in ("lz4", "blosclz") else (5,):
            for bs in (0, 1, 127, 129, n - 4, n - 1, n, n + 1, n + 4):
                got = _blosc.compress_rows(view, None, clevel, cname, bs)
                want = reference(view, clevel, cname, bs)
                if got is NotImplemented:
                    assert not whole_block(want, n), (n, clevel, bs)
                else:
                    assert got == want, (n, clevel, bs)


@needs_avx2
@pytest.mark.parametrize("per", [1, 7, 32, 33, 64])
def test_compress_rows_sees_one_item_unlike_the_fill_anywhere(per):
    fill = np.array([1, 2, 3, 4], np.uint8)
    k = max(1, 260 // per)
    count = k * per
    for at in list(range(41)) + [count - 2, count - 1]:
        for byte in range(4):
            buf = guarded((k - 1) * (4 * per + 3) + 4 * per)
            flat = as_strided(buf, shape=(k, per, 4), strides=(4 * per + 3, 4, 1))
            flat[...] = fill
            if at >= 0:
                flat[at // per, at % per, byte] ^= 0x80
            view = as_strided(buf, shape=(k, 4 * per), strides=(4 * per + 3, 1))
            got = _blosc.compress_rows(view, fill, 3, "lz4", 0)
            assert got is not None, (at, byte)
            assert got is NotImplemented or got == reference(view, 3, "lz4", 0), (at, byte)
    buf = guarded(4 * count)
    buf.reshape(-1, 4)[:] = fill
    assert _blosc.compress_rows(buf.reshape(k, 4 * per), fill, 3, "lz4", 0) is None


@needs_avx2
def test_compress_shuffles_blocks_of_any_forced_size_up_to_the_last_byte():
    for n in (128, 129, 130, 131, 255, 4097, 65_537, 131_074, 262_147, 524_291):
        src = guarded(n)
        src[:] = np.resize(items(n // 4 + 1, n), n)
        for bs in (0, 129, 130, 131, 4095, 65_537, n - 1, n + 1):
            for cname in ("lz4", "zstd"):
                own = _blosc.compress(src, 4, 5, 1, cname, bs)
                assert own == _blosc.compress(src, 4, 5, 1, cname, bs, own_shuffle=False), \
                    (n, bs, cname)
                back = np.empty(n, np.uint8)
                _blosc.decompress_into(own, back)
                assert np.array_equal(back, src)


def test_crc32c_many_sums_spans_up_to_the_end_and_empty_ones_anywhere():
    import zlib
    n = 300
    src = guarded(n)
    src[:] = np.arange(n) % 251
    starts = np.array([0, n - 1, n, 0, 17, n - 64, 5, -1, n], np.int64)
    lengths = np.array([n, 1, 0, 0, 0, 64, 33, -7, 0], np.int64)
    out = np.full(len(starts), 0xDEADBEEF, np.uint32)
    _crc32c.crc32c_many(src, starts, lengths, out)
    for i, (s, ln) in enumerate(zip(starts, lengths)):
        if s < 0:
            assert out[i] == 0xDEADBEEF
        else:
            assert out[i] == _crc32c.crc32c(np.ascontiguousarray(src[s:s + ln])), i
    empty = np.zeros(0, np.uint8)
    out = np.ones(2, np.uint32)
    _crc32c.crc32c_many(empty, np.array([0, -1], np.int64), np.array([0, 5], np.int64), out)
    assert out.tolist() == [0, 1]
    assert zlib.crc32(b"") == 0


@pytest.mark.parametrize("start,length", [(301, 0), (300, 1), (0, 301), (299, 2), (5, -1),
                                          (2**62, 2**62), (2**63 - 1, 2**63 - 1), (1, 2**63 - 1),
                                          (2**63 - 1, 0)])
def test_crc32c_many_refuses_spans_outside_the_buffer_before_summing(start, length):
    """The message's end of the span was summed in 64-bit C integers: two large values
    overflowed (undefined behaviour; the sanitizers stop the process) and a negative end was
    printed."""
    src = guarded(300)
    out = np.full(3, 9, np.uint32)
    starts = np.array([0, start, 0], np.int64)
    lengths = np.array([10, length, 10], np.int64)
    with pytest.raises(ValueError, match=rf"span \[{start}, {start + length}\) of chunk 1 lies "
                                         r"outside the 300 bytes given"):
        _crc32c.crc32c_many(src, starts, lengths, out)
    assert out.tolist() == [9, 9, 9]


def _frames() -> dict[str, tuple[bytes, int]]:
    data = items(1000, 3).tobytes()
    return {"blosc": (_blosc.compress(np.frombuffer(data, np.uint8), 4, 5, 1, "lz4"), 16),
            "lz4": (_lz4.compress(np.frombuffer(data, np.uint8)), 4),
            "zstd": (_zstd.compress(np.frombuffer(data, np.uint8), 3, False), 18),
            "zlib": (_zlib.compress(np.frombuffer(data, np.uint8), 6, "zlib"), 2)}


KERNEL_CHECK = {"blosc": _blosc.check, "lz4": _lz4.check, "zstd": _zstd.check,
                "zlib": lambda s, m: _zlib.check(s, m, "zlib")}
CODEC_CHECK = {"blosc": blosc_codec.check, "lz4": lz4_codec.check, "zstd": zstd_codec.check,
               "zlib": lambda s, m: deflate_codec.check(s, m, "zlib")}


@pytest.mark.parametrize("name", list(KERNEL_CHECK))
def test_check_of_truncated_headers_and_sizes_at_int_edges_is_an_error_or_nothing(name):
    frame, head = _frames()[name]
    for cut in list(range(head + 1)) + [len(frame) - 1, len(frame)]:
        src = guarded(cut)
        src[:] = np.frombuffer(frame[:cut], np.uint8)
        for expected in [0, 1, 4000, 3999] + INT_EDGES:
            ok = cut == len(frame) and expected == 4000
            for fn in (KERNEL_CHECK[name], CODEC_CHECK[name]):
                try:
                    fn(src, expected)
                except (KernelStatus, ZarrError) as exc:
                    assert not ok, exc
                    assert fn is KERNEL_CHECK[name] or isinstance(exc, ZarrError)
                else:
                    # a check reads headers: a cut past them is found by decoding
                    assert ok or name == "zlib" or (cut > head and expected == 4000) \
                        or (name == "zstd" and cut > head), (cut, expected)


def _blosc_header(nbytes: int, blocksize: int, cbytes: int, flags: int = 0x01) -> bytes:
    return bytes([2, 1, flags, 4]) + b"".join(v.to_bytes(4, "little")
                                             for v in (nbytes, blocksize, cbytes))


@pytest.mark.parametrize("field", INT_EDGES[:3] + [2**31 - 17, 2**31 - 16])
def test_check_of_declared_sizes_at_int_edges_refuses_them_as_zarrx_errors(field):
    n = 64
    for head in (_blosc_header(field, field, n), _blosc_header(field, 64, n),
                 _blosc_header(field, field, n, 0x02 | 0x01)):
        src = guarded(n)
        src[:] = np.frombuffer(head.ljust(n, b"\0"), np.uint8)
        with pytest.raises(ZarrError):
            blosc_codec.check(src, field)
    lz = guarded(8)
    lz[:] = np.frombuffer(field.to_bytes(4, "little") + b"\x10abc", np.uint8)
    with pytest.raises(ZarrError):
        lz4_codec.check(lz, field)
    for fcs in (field, 2**63, 2**64 - 1):
        frame = b"\x28\xb5\x2f\xfd\xe0" + fcs.to_bytes(8, "little") + b"\x01\x00\x00"
        zs = guarded(len(frame))
        zs[:] = np.frombuffer(frame, np.uint8)
        for expected in (fcs, fcs - 1, field, 2**63 - 1):
            with pytest.raises(ZarrError):
                zstd_codec.check(zs, expected)


def test_codec_decode_of_edge_headers_in_an_array_is_a_zarr_error():
    """The same headers as stored chunks of an array: its read raises a ZarrError naming the
    chunk, whatever the declared size."""
    store = zarrx.store.MemoryStore()
    z = zarrx.create_array(store, shape=(1000,), chunks=(1000,), dtype="float32",
                           compressors=zarrx.codecs.Blosc(cname="lz4", shuffle="shuffle"))
    z[:] = 1.0
    key = next(k for k in store.list_prefix("") if "zarr.json" not in k)
    for field in INT_EDGES[:3] + [4000]:
        store.set(key, _blosc_header(field, field, 64).ljust(64, b"\0"))
        with pytest.raises(ZarrError):
            z[:]


def _raw_frame(payload: bytes, window: int = 0x00) -> bytes:
    """A zstd frame with no content size (a window byte instead) of raw blocks of 1,000
    bytes."""
    out = b"\x28\xb5\x2f\xfd\x00" + bytes([window])
    parts = [payload[i:i + 1000] for i in range(0, len(payload), 1000)] or [b""]
    for k, part in enumerate(parts):
        out += ((len(part) << 3) | (k == len(parts) - 1)).to_bytes(3, "little") + part
    return out


def test_zstd_frames_without_a_content_size_decode_in_one_pass_into_exactly_their_size():
    data = bytes(range(256)) * 20
    f = _raw_frame(data)
    skip = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
    huge = b"\x28\xb5\x2f\xfd\x00\xf8" + (1).to_bytes(3, "little")   # a 2 TiB window
    cases = [(f, 5120, True), (f, 5119, False), (f, 5121, False), (f + f, 10240, True),
             (f + f, 10239, False), (skip + f, 5120, True), (f + skip, 5120, True),
             (skip, 0, True), (f[:-1], 5120, False), (f + f[:5], 5120, False),
             (huge, 0, False), (huge + f, 5120, False), (_raw_frame(b""), 0, True)]
    for frames, m, ok in cases:
        src = guarded(len(frames))
        src[:] = np.frombuffer(frames, np.uint8)
        dst = guarded(m)
        try:
            zstd_codec.decompress_into(src, dst)
        except ZarrError:
            assert not ok, (len(frames), m)
        else:
            assert ok and dst.tobytes() == (data * 2)[:m], (len(frames), m)
