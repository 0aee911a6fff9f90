"""How reads spread over the pool's threads: tiny reads stay on the caller, reads of a few
windows of chunks share them, and every way of splitting reads the same values."""
from __future__ import annotations

import numpy as np
import pytest
from call_counts import calls_made

import zarrx
from zarrx import _pool
from zarrx.codecs import Zstd
from zarrx.store import MemoryStore


@pytest.fixture
def submitted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of tasks each call handed to the pool's threads."""
    seen: list[int] = []
    start = _pool._Call.start

    def counting(self: _pool._Call, fn, args) -> None:  # type: ignore[no-untyped-def]
        seen.append(len(args))
        start(self, fn, args)

    monkeypatch.setattr(_pool._Call, "start", counting)
    return seen


def _array(compressors, shape=(2048, 2048), chunks=(256, 256), dtype="float32",
           write=None) -> tuple[zarrx.Array, np.ndarray]:
    data = np.arange(np.prod(shape), dtype=dtype).reshape(shape)
    z = zarrx.create_array(MemoryStore(), shape=shape, dtype=dtype, chunks=chunks,
                           compressors=compressors, fill_value=-1, zarr_format=3)
    if write is None:
        z[...] = data
    else:
        expected = np.full(shape, -1, dtype=dtype)
        expected[write] = data[write]
        z[write] = data[write]
        data = expected
    return zarrx.open_array(z.store, mode="r"), data


def test_a_tiny_read_across_raw_chunks_stays_on_the_calling_thread(submitted):
    z, data = _array(None)
    submitted.clear()
    with zarrx.config.set(threads=2):
        got = z[250:260, 250:260]                     # 400 bytes out of 4 chunks
        row = z[5, 100:700]                           # 2.4 KiB out of 3 chunks
    np.testing.assert_array_equal(got, data[250:260, 250:260])
    np.testing.assert_array_equal(row, data[5, 100:700])
    assert submitted == []


def test_opening_an_array_hands_nothing_to_the_pool(submitted):
    z, _ = _array(None, shape=(512, 512))
    submitted.clear()
    with zarrx.config.set(threads=2):
        zarrx.open_array(z.store, mode="r")
        zarrx.open(z.store, mode="r")
    assert submitted == []


def test_a_small_read_of_compressed_chunks_still_shares_their_decoding(submitted):
    z, data = _array(Zstd(level=0))
    submitted.clear()
    with zarrx.config.set(threads=2):
        got = z[250:260, 250:260]                     # 4 chunks of 256 KiB to decode
    np.testing.assert_array_equal(got, data[250:260, 250:260])
    assert submitted and sum(submitted) >= 1


def test_a_read_of_two_windows_of_chunks_is_shared_by_the_threads(submitted):
    """8 chunks of 256 KiB (two windows of 4): the second window was left to the calling
    thread once it had decoded the first; now each window is a task of the pool."""
    z, data = _array(Zstd(level=0))
    submitted.clear()
    with zarrx.config.set(threads=2):
        got = z[5, :]
    np.testing.assert_array_equal(got, data[5, :])
    assert submitted and sum(submitted) >= 1


@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize("write", [None, np.s_[1024:, 640:], np.s_[:100, :], np.s_[7:9, 3:5]],
                         ids=["full", "stored-late", "stored-early", "one-chunk"])
def test_every_split_of_a_read_reads_what_one_thread_reads(threads, write):
    """Windows of chunks of 128 KiB, some stored (the first window holding one is decoded
    beside the later ones), the others read as the fill value."""
    z, data = _array(Zstd(level=1), chunks=(128, 128), dtype="float64", write=write)
    with zarrx.config.set(threads=1):
        one = z[...]
        part = z[100:1900:3, 50:]
    with zarrx.config.set(threads=threads):
        many = z[...]
        many_part = z[100:1900:3, 50:]
    np.testing.assert_array_equal(one, data)
    np.testing.assert_array_equal(many, data)
    np.testing.assert_array_equal(many_part, part)


def test_opening_an_array_makes_the_same_calls_with_threads_as_with_one(tmp_path):
    for store in (MemoryStore(), str(tmp_path / "a.zarr")):
        z = zarrx.create_array(store, shape=(512, 512), dtype="float32", chunks=(64, 64))
        z[...] = 1
        zarrx.open_array(store, mode="r")
        with zarrx.config.set(threads=1):
            one = calls_made(lambda: zarrx.open_array(store, mode="r"))
        with zarrx.config.set(threads=4):
            four = calls_made(lambda: zarrx.open_array(store, mode="r"))
        assert four == one


@pytest.mark.parametrize("compressors", [None, Zstd(level=0)], ids=["raw", "zstd"])
@pytest.mark.parametrize("sel", [np.s_[30:40, 30:40], np.s_[5, :200], np.s_[:64, :64]],
                         ids=["corner", "row", "four-whole"])
def test_a_write_of_a_few_small_chunks_stays_on_the_calling_thread(submitted, compressors, sel):
    z = zarrx.create_array(MemoryStore(), shape=(256, 256), dtype="float32", chunks=(32, 32),
                           compressors=compressors, fill_value=0, zarr_format=3)
    z[...] = 1
    expected = np.ones((256, 256), dtype="float32")
    expected[sel] = 2
    submitted.clear()
    with zarrx.config.set(threads=2):
        z[sel] = 2
    assert submitted == []
    with zarrx.config.set(threads=1):
        np.testing.assert_array_equal(zarrx.open_array(z.store, mode="r")[...], expected)


def test_a_large_write_still_spreads_over_threads(submitted):
    z = zarrx.create_array(MemoryStore(), shape=(1024, 1024), dtype="float32",
                           chunks=(128, 128), compressors=Zstd(level=0), fill_value=0)
    data = np.arange(1024 * 1024, dtype="float32").reshape(1024, 1024)
    submitted.clear()
    with zarrx.config.set(threads=2):
        z[...] = data
    assert sum(submitted) >= 1
    np.testing.assert_array_equal(z[...], data)


def test_one_threshold_keeps_both_small_reads_and_small_writes_on_the_calling_thread(
        submitted, monkeypatch):
    """``chunk_io.PARALLEL_MIN_BYTES`` is the one knob: lowered to nothing, the tiny read and
    the small write above are handed to the pool's threads, and read the same values."""
    from zarrx import chunk_io
    z, data = _array(None)
    monkeypatch.setattr(chunk_io, "PARALLEL_MIN_BYTES", 0)
    submitted.clear()
    with zarrx.config.set(threads=2):
        got = z[250:260, 250:260]
    np.testing.assert_array_equal(got, data[250:260, 250:260])
    assert sum(submitted) >= 1
    w = zarrx.create_array(MemoryStore(), shape=(256, 256), dtype="float32", chunks=(32, 32),
                           fill_value=0, zarr_format=3)
    w[...] = 1
    submitted.clear()
    from zarrx import batch_merge
    monkeypatch.setattr(batch_merge, "ENABLED", False)
    with zarrx.config.set(threads=2):
        # points in 4 chunks of 4 KiB, chunk by chunk (with the merges a slab at a time off:
        # they take points too)
        w.vindex[[30, 33, 30, 39], [30, 30, 39, 35]] = 2
    assert sum(submitted) >= 1
    expected = np.ones((256, 256), dtype="float32")
    expected[[30, 33, 30, 39], [30, 30, 39, 35]] = 2
    np.testing.assert_array_equal(w[...], expected)
