"""Reads of many small chunks: what they return (against numpy), the errors of chunks that do
not decode among them, and how much Python work each chunk costs (counted in calls, never
timed)."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError
from zarrx.store.local import LocalStore
from zarrx.store.memory import MemoryStore

from call_counts import calls_made

C = zarrx.codecs
CODECS = {
    "raw": {"compressors": None},
    "zstd": {"compressors": C.Zstd(level=1)},
    "zstd-crc32c": {"compressors": [C.Zstd(level=1), C.Crc32c()]},
    "crc32c": {"compressors": C.Crc32c()},
    "blosc": {"compressors": C.Blosc()},
    "gzip": {"compressors": C.Gzip(level=1)},
    "big-endian-zstd": {"serializer": C.Bytes(endian="big"), "compressors": C.Zstd(level=1)},
    "transpose-zstd": {"filters": [C.Transpose((1, 0))], "compressors": C.Zstd(level=1)},
}


def _store(where: str, tmp_path) -> object:
    return MemoryStore() if where == "memory" else LocalStore(str(tmp_path / "a.zarr"))


def _data(shape: tuple[int, ...], dtype: str = "f4", seed: int = 3) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 100).astype(dtype)


# -- Python work per chunk ------------------------------------------------------------------

def _calls_per_chunk(store: object, shape: tuple[int, ...], chunks: tuple[int, ...],
                     shards: tuple[int, ...] | None, codecs: dict) -> float:
    """Calls per chunk of a whole read of an array of ``shape`` in ``chunks``, one thread."""
    a = _data(shape)
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(store, shape=shape, chunks=chunks, shards=shards, dtype="f4",
                               **codecs)
        z[...] = a
        np.testing.assert_array_equal(z[...], a)      # plans made, index cached
        got: list = []
        n = calls_made(lambda: got.append(z[...]))
    np.testing.assert_array_equal(got[0], a)
    return n / np.prod([s // c for s, c in zip(shape, chunks)])


READ_CODECS = ["raw", "zstd", "zstd-crc32c", "crc32c", "blosc", "gzip"]


@pytest.mark.parametrize("codecs", READ_CODECS)
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("shape, chunks", [((1024, 1024), (32, 32)), ((1 << 20,), (1024,))],
                         ids=["2d", "1d"])
def test_reading_1024_small_chunks_makes_under_one_call_per_chunk(tmp_path, where, codecs,
                                                                  shape, chunks):
    """1,024 chunks of 4 KiB read whole: the general path made 16 to 41 calls per chunk (a
    projection, a store request, a decode and a copy each); a slab of chunks is fetched with
    one store call and decoded with one call per codec stage."""
    per_chunk = _calls_per_chunk(_store(where, tmp_path), shape, chunks, None, CODECS[codecs])
    assert per_chunk < 1, per_chunk


@pytest.mark.parametrize("codecs", READ_CODECS)
@pytest.mark.parametrize("where", ["memory", "local"])
def test_reading_small_inner_chunks_of_shards_makes_few_calls_per_chunk(tmp_path, where,
                                                                        codecs):
    """1,024 inner chunks of 4 KiB in 16 shards: calls are made per shard, not per inner chunk
    (a checksum, blosc or gzip took 17-24 calls per inner chunk, chunk by chunk)."""
    per_chunk = _calls_per_chunk(_store(where, tmp_path), (1024, 1024), (32, 32), (256, 256),
                                 CODECS[codecs])
    assert per_chunk < 5, per_chunk


def test_calls_of_a_read_do_not_grow_with_its_chunks():
    """Four times the chunks cost at most four times the calls of the smaller read (the
    calls are per slab of chunks, never per chunk)."""
    small = _calls_per_chunk(MemoryStore(), (256, 1024), (32, 32), None, CODECS["zstd"])
    large = _calls_per_chunk(MemoryStore(), (1024, 1024), (32, 32), None, CODECS["zstd"])
    assert large <= small, (small, large)


# -- what reads return ----------------------------------------------------------------------

SELECTIONS = [
    (slice(None), slice(None)),
    (slice(3, 97), slice(5, 66)),            # border chunks on every side
    (slice(40, 41), slice(None)),            # one row of cells
    (7, slice(2, 90)),                       # an int: the axis dropped
    (slice(None), 33),
    (slice(60, None), slice(80, None)),      # the array's border chunks (partial)
]


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "shards"])
@pytest.mark.parametrize("codecs", list(CODECS))
@pytest.mark.parametrize("where", ["memory", "local"])
def test_box_reads_of_small_chunks_match_numpy(tmp_path, where, codecs, sharded, threads):
    """An array of 100x90 cells in 4x4 chunks (the last ones partial), some never written
    (read as the fill value), some written then emptied (deleted), read in boxes."""
    shape = (100, 90)
    a = np.full(shape, 7.5, dtype="f4")
    kw = {"shards": (16, 16)} if sharded else {}
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(_store(where, tmp_path), shape=shape, chunks=(4, 4), dtype="f4",
                               fill_value=7.5, **CODECS[codecs], **kw)
        part = _data((60, 50))
        z[10:70, 20:70] = part
        a[10:70, 20:70] = part
        z[30:34, 32:48] = 7.5                     # chunks of fill: deleted
        a[30:34, 32:48] = 7.5
        z[96:, 88:] = 1.25                        # the corner chunk, partial
        a[96:, 88:] = 1.25
        for sel in SELECTIONS:
            np.testing.assert_array_equal(z[sel], a[sel], err_msg=repr(sel))
        out = np.empty((94, 61), dtype="f4")
        z.get_basic_selection((slice(3, 97), slice(5, 66)), out=out)
        np.testing.assert_array_equal(out, a[3:97, 5:66])


@pytest.mark.parametrize("where", ["memory", "local"])
def test_fortran_order_v2_and_nan_fill_read_as_numpy(tmp_path, where):
    a = _data((64, 48), "f8")
    a[:16] = np.nan
    z = zarrx.create_array(_store(where, tmp_path), shape=a.shape, chunks=(4, 6), dtype="f8",
                           zarr_format=2, order="F", fill_value=np.nan)
    z[16:] = a[16:]
    np.testing.assert_array_equal(z[...], a)
    np.testing.assert_array_equal(z[1:63, 5:47], a[1:63, 5:47])


@pytest.mark.parametrize("dtype", ["i2", "u1", "bool", "c8", "M8[s]"])
def test_small_chunks_of_other_types_read_as_numpy(dtype):
    a = (np.arange(60 * 40) % 7).astype(dtype).reshape(60, 40)
    z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(3, 5), dtype=dtype)
    z[:, 5:] = a[:, 5:]
    want = a.copy()
    want[:, :5] = z.fill_value
    np.testing.assert_array_equal(z[...], want)
    np.testing.assert_array_equal(z[2:59, 1:39], want[2:59, 1:39])


def test_a_read_of_only_missing_small_chunks_is_the_fill_value():
    z = zarrx.create_array(MemoryStore(), shape=(64, 64), chunks=(4, 4), dtype="i4",
                           fill_value=-3)
    np.testing.assert_array_equal(z[5:60, 1:63], np.full((55, 62), -3, dtype="i4"))


def test_a_1d_read_of_small_chunks_matches_numpy_at_any_bounds():
    a = _data((10_000,))
    z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(64,), dtype="f4",
                           compressors=C.Zstd())
    z[100:9000] = a[100:9000]
    want = np.zeros_like(a)
    want[100:9000] = a[100:9000]
    for lo, hi in [(0, 10_000), (64, 9984), (5, 9999), (1000, 1300), (128, 384)]:
        np.testing.assert_array_equal(z[lo:hi], want[lo:hi])


# -- chunks that do not decode ----------------------------------------------------------------

CORRUPT = {
    "zstd": (CODECS["zstd"], b"not a zstd frame at all"),
    "zstd-crc32c": (CODECS["zstd-crc32c"], b"\x00" * 40),
    "crc32c": (CODECS["crc32c"], b"\x01" * (64 + 4)),
    "crc32c-start": ({"compressors": C.Crc32c(location="start")}, b"\x01" * (64 + 4)),
    "raw-short": (CODECS["raw"], b"\x00" * 12),
    "blosc": (CODECS["blosc"], b"\x02" * 40),
    "gzip": (CODECS["gzip"], b"\x1f\x8b garbage"),
}


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
@pytest.mark.parametrize("case", list(CORRUPT))
@pytest.mark.parametrize("where", ["memory", "local"])
def test_a_corrupt_chunk_among_many_raises_what_reading_it_alone_raises(tmp_path, where, case,
                                                                       threads):
    """The error of a batch names the chunk's key and says what reading that chunk alone
    says; with two corrupt chunks, the first in C order is the one raised."""
    codecs, bad = CORRUPT[case]
    store = _store(where, tmp_path)
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(store, shape=(64, 64), chunks=(4, 4), dtype="f4", **codecs)
        z[...] = _data((64, 64))
        store.set("c/9/3", bad)
        store.set("c/12/1", bad)
        with pytest.raises(CodecError) as alone:
            z[36:40, 12:16]                        # the chunk (9, 3) alone
        with pytest.raises(CodecError) as batch:
            z[...]
    assert "'c/9/3'" in str(batch.value)
    assert str(batch.value) == str(alone.value)
    assert type(batch.value) is type(alone.value)


@pytest.mark.parametrize("codecs", ["raw", "zstd", "big-endian-zstd"])
def test_chunks_spanning_whole_rows_read_as_numpy(codecs):
    """Chunks that span the array's trailing axes lie one after another in the output (they
    are decoded straight into it): whole, in part, and with missing ones."""
    a = _data((64, 8, 3))
    z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(4, 8, 3), dtype="f4",
                           **CODECS[codecs])
    z[:40] = a[:40]
    want = a.copy()
    want[40:] = 0
    for sel in [(Ellipsis,), (slice(8, 40),), (slice(4, 64),), (slice(2, 62),),
                (slice(8, 40), slice(None), 1), (slice(8, 40), slice(0, 4))]:
        np.testing.assert_array_equal(z[sel], want[sel], err_msg=repr(sel))
