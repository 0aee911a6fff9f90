"""Writes into a store that keeps the values it is given (memory) of chunks stored on their own
and gathered rather than encoded (raw, with or without a CRC-32C): each thread gathers the
full chunks of a range of about 8 MiB in one GIL-free section, then commits them one by one.
What it stores must be what the chunk-by-chunk path stores: same keys, same bytes, for full,
border, partial and all-fill chunks, on every thread count."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
import zarrx.chunk_write as chunk_write
from zarrx.store import MemoryStore


@pytest.fixture
def batches(monkeypatch):
    """The ranges the batched path gathered (empty when it was not taken)."""
    seen: list[tuple[int, int]] = []
    orig = chunk_write._gather_batch

    def recording(io, units, src, raw_fill):
        made = orig(io, units, src, raw_fill)
        seen.append((len(units), len(made)))
        return made

    monkeypatch.setattr(chunk_write, "_gather_batch", recording)
    return seen


def _write(store, codecs, sel, value, fill, write_empty, base) -> None:
    z = zarrx.create_array(store, name="a", shape=(600, 520), chunks=(128, 128), dtype="<f4",
                           fill_value=fill, compressors=codecs, zarr_format=3,
                           config={"write_empty_chunks": write_empty})
    z[...] = base
    z[sel] = value


def _stored(store: MemoryStore) -> dict[str, bytes]:
    return {k: bytes(store.get(k)) for k in store.list_prefix("a/c/")}


CASES = {
    "crc32c whole": (zarrx.codecs.Crc32c(), (slice(None), slice(None)), False),
    "crc32c rows": (zarrx.codecs.Crc32c(), (slice(128, 600), slice(None)), False),
    "crc32c partial": (zarrx.codecs.Crc32c(), (slice(10, 500), slice(5, 510)), False),
    "crc32c empty kept": (zarrx.codecs.Crc32c(), (slice(None), slice(None)), True),
}


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("case", list(CASES))
def test_batched_gathers_store_what_chunk_by_chunk_writes_store(monkeypatch, batches, case,
                                                                 threads):
    codecs, sel, write_empty = CASES[case]
    rng = np.random.default_rng(7)
    base = rng.random((600, 520)).astype("<f4")
    value = np.ascontiguousarray(rng.random((1200, 1040)).astype("<f4")[::2, ::2][sel])
    value[:300, :300] = 2.5                      # whole chunks of fill among the others
    with zarrx.config.set(threads=threads):
        batched = MemoryStore()
        _write(batched, codecs, sel, value, 2.5, write_empty, base)
        assert batches and any(n for _, n in batches)
        monkeypatch.setattr(chunk_write, "_kept_batches", lambda *a: None)
        single = MemoryStore()
        _write(single, codecs, sel, value, 2.5, write_empty, base)
    assert _stored(batched) == _stored(single)
    want = base.copy()
    want[sel] = value
    np.testing.assert_array_equal(zarrx.open_array(batched, path="a")[...], want)


def test_ranges_hold_about_8_mib_of_chunks(batches):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(2048, 2048), chunks=(256, 256), dtype="<f8",
                           fill_value=0, compressors=zarrx.codecs.Crc32c())
    z[...] = np.ones((2048, 2048))
    # 64 chunks of 512 KiB (+ the checksum): ranges of 15 chunks, the last of 4
    assert sorted(n for n, _ in batches) == [4, 15, 15, 15, 15]
    assert all(n == m for n, m in batches)
