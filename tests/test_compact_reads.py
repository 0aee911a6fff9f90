"""Reads and writes of many small chunks hold no Python object per chunk: a slice's chunks on a
regular axis are made as they are listed (zarrx.slice_runs), a memory store's box writer cuts
its batches by count, and box reads of small inner chunks go shard by shard with the inner
chunks described by arrays (zarrx.shard_read)."""
from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import _indexing, indexing, shard_read
from zarrx.errors import CodecError, ShardError
from zarrx.slice_runs import SliceRuns
from zarrx.store import LocalStore, MemoryStore

from test_memory_peaks import _peaks


@st.composite
def _slices(draw):
    size = draw(st.integers(1, 300))
    chunk = draw(st.integers(1, 50))
    step = draw(st.sampled_from([1, 1, 2, 3, 7, 49, 50, 51, -1, -2, -5, -60]))
    start = draw(st.integers(0, size - 1))
    room = len(range(start, size, step)) if step > 0 else len(range(start, -1, step))
    return start, draw(st.integers(1, room)), step, size, chunk


@settings(max_examples=400, deadline=None)
@given(_slices())
def test_slice_runs_are_the_projection_of_the_slice(args):
    want = _indexing.project_slice(*args, None)
    runs = SliceRuns(*args)
    assert list(runs) == want
    assert len(runs) == len(want)
    assert [runs[i] for i in range(-len(want), len(want))] == want + want
    assert runs.chunk_ids().tolist() == [e[0] for e in want]


@pytest.mark.parametrize("sel", [slice(None), slice(None, None, -1), slice(3, None, 5)])
def test_a_plan_of_many_chunks_holds_no_object_per_chunk(sel):
    """Listing the 262,144 chunks of a slice of (2**20,) in chunks of (4,) made every entry
    first: 75 MiB, held for as long as the read or write ran."""
    tracemalloc.start()
    try:
        plan = indexing.plan_selection(sel, (1 << 20,), (4,))
        chunks = iter(plan.chunks)
        first = [next(chunks) for _ in range(3)]
        coords = plan.chunk_coords()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * coords.nbytes + (1 << 20), peak
    want = list(indexing.plan_selection(sel, (1 << 12,), (4,)).chunks)
    assert [p.coords for p in first] == [p.coords for p in want[:3]] or sel != slice(None)
    assert len(plan.chunks) == len(coords)


def test_reading_and_writing_many_small_chunks_in_memory_holds_little_per_chunk(tmp_path):
    """(2**18,) in chunks of (4,): the plan held 300 bytes per chunk for the whole read, and
    the memory store's box writer gathered all 65,536 chunks (8 MiB of them) in one batch,
    holding a view and coordinates for each: 20 MiB above the stored chunks either way."""
    _, traced, kept = _peaks(tmp_path, """
        z = zarrx.create_array(MemoryStore(), shape=(1 << 18,), dtype="u1", chunks=(4,),
                               compressors=None, fill_value=0)
        a = (np.arange(1 << 18) % 251 + 1).astype("u1")
    """, """
        z[...] = a
    """)
    assert traced - kept < 6, (traced, kept)
    _, traced, _ = _peaks(tmp_path, """
        z = zarrx.create_array(MemoryStore(), shape=(1 << 18,), dtype="u1", chunks=(4,),
                               compressors=None, fill_value=0)
        z[...] = (np.arange(1 << 18) % 251 + 1).astype("u1")
    """, """
        b = z[...]
        assert b[5] == 6 and b[-1] == ((1 << 18) - 1) % 251 + 1
    """)
    assert traced < 4, traced


@pytest.mark.parametrize("store", ["LocalStore(root)", "MemoryStore()"])
@pytest.mark.parametrize("compressors", ["None", "'auto'"])
def test_reading_a_shard_of_many_inner_chunks_holds_tens_of_bytes_per_chunk(tmp_path, store,
                                                                              compressors):
    """A whole shard of 131,072 one-byte inner chunks: the general read path held about 1.3 KB
    per inner chunk (160 MiB); shard by shard, the stored shard, its index and a few arrays
    over its inner chunks (under 10 MiB)."""
    resident, traced, _ = _peaks(tmp_path, f"""
        a = (np.arange(512 * 256) % 251).astype("u1").reshape(512, 256)
        z = zarrx.create_array({store}, shape=(512, 256), dtype="u1", chunks=(1, 1),
                               shards=(512, 256), compressors={compressors}, fill_value=0)
        z[...] = a
        z = zarrx.open_array(z.store, mode="r")
    """, """
        b = z[...]
        assert (b == a).all()
    """)
    assert traced < 16, traced
    assert resident < 48, resident


def _zstd_shard(tmp_path):
    root = LocalStore(tmp_path / "a.zarr")
    z = zarrx.create_array(root, shape=(8, 8), dtype="i4", chunks=(2, 2), shards=(8, 8),
                           fill_value=-1)
    a = np.arange(64, dtype="i4").reshape(8, 8)
    z[...] = a
    return root, z, a


def test_a_compact_read_matches_the_general_path_and_zarr_python(tmp_path):
    root, z, a = _zstd_shard(tmp_path)
    z[0:2, 2:4] = -1                                       # a missing inner chunk
    a[0:2, 2:4] = -1
    ref = zarr.open_array(root.root, mode="r")
    for sel in [..., (slice(1, 7), slice(3, 8)), (5, slice(None)), (slice(None), None, 2)]:
        np.testing.assert_array_equal(z[sel], a[sel])
        np.testing.assert_array_equal(z.oindex[sel] if None not in (sel if isinstance(
            sel, tuple) else ()) else z[sel], a[sel])
        if not (isinstance(sel, tuple) and None in sel):
            np.testing.assert_array_equal(np.asarray(ref[sel]), a[sel])


def _garble(root, slot, at):
    """Flip a byte ``at`` the start of inner chunk ``slot`` of shard ``c/0/0``."""
    path = root.root / "c" / "0" / "0"
    blob = bytearray(path.read_bytes())
    entries = np.frombuffer(bytes(blob[-16 * 16 - 4:-4]), dtype="<u8").reshape(-1, 2)
    blob[int(entries[slot, 0]) + at] ^= 0xFF
    path.write_bytes(bytes(blob))


def test_a_corrupt_inner_chunk_is_located_as_on_the_general_path(tmp_path, monkeypatch):
    root, z, _ = _zstd_shard(tmp_path)
    _garble(root, 5, 0)                                    # inner chunk (1, 1): its magic
    with pytest.raises(CodecError) as compact:
        z[...]
    monkeypatch.setattr(shard_read, "_eligible", lambda io: False)
    with pytest.raises(CodecError) as general:
        z[...]
    assert str(compact.value) == str(general.value)
    assert str(compact.value).startswith("array '/' shard 'c/0/0' inner chunk 'c/1/1': zstd")


def test_a_raw_inner_chunk_of_the_wrong_size_is_located(tmp_path):
    root = LocalStore(tmp_path / "a.zarr")
    z = zarrx.create_array(root, shape=(8,), dtype="i4", chunks=(2,), shards=(8,),
                           compressors=None, fill_value=0)
    z[...] = np.arange(8, dtype="i4")
    path = root.root / "c" / "0"
    blob = bytearray(path.read_bytes())
    index = np.frombuffer(bytes(blob[-68:-4]), dtype="<u8").reshape(-1, 2).copy()
    index[2, 1] = 4                                        # inner chunk 2 now 4 bytes long
    from zarrx.codecs.crc32c import Crc32c
    raw = index.astype("<u8").tobytes()
    path.write_bytes(bytes(blob[:-68]) + raw + Crc32c().encode(raw)[-4:])
    with pytest.raises(CodecError, match=re.escape(
            "array '/' shard 'c/0' inner chunk 'c/2': expected 8 bytes for a chunk of shape "
            "(2,) and data type int32, found 4")):
        z[...]
    with pytest.raises(ShardError):
        index[3, 0] = 1 << 40
        raw = index.astype("<u8").tobytes()
        path.write_bytes(bytes(blob[:-68]) + raw + Crc32c().encode(raw)[-4:])
        z[...]


def test_zstd_decodes_many_chunks_of_one_buffer_as_it_decodes_each():
    from zarrx.codecs import zstd
    rng = np.random.default_rng(3)
    chunks = [rng.integers(0, 4, 16, dtype="u1").tobytes() for _ in range(5)]
    frames = [zstd.compress(c, 1) for c in chunks]
    frames[2] = zstd.compress(chunks[2][:8], 1) + zstd.compress(chunks[2][8:], 1)  # two frames
    buf = b"".join(frames)
    starts = np.cumsum([0] + [len(f) for f in frames[:-1]]).astype(np.int64)
    lengths = np.array([len(f) for f in frames], dtype=np.int64)
    starts[3] = -1                                         # missing: left alone
    out = np.full((5, 16), 7, dtype="u1")
    assert zstd.decompress_many(buf, starts, lengths, out) is None
    assert [out[i].tobytes() for i in (0, 1, 2, 4)] == [chunks[i] for i in (0, 1, 2, 4)]
    assert (out[3] == 7).all()
    # the first chunk that does not decode, worded as decompress_into words it
    lengths[4] -= 1
    i, err = zstd.decompress_many(buf, starts, lengths, out)
    with pytest.raises(CodecError) as one:
        zstd.decompress_into(buf[starts[4]:starts[4] + lengths[4]], out[4])
    assert i == 4 and str(err) == str(one.value)
    lengths[4] = 10 ** 6
    i, err = zstd.decompress_many(buf, starts, lengths, out)
    assert i == 4 and str(err) == (f"zstd: a chunk's bytes [{starts[4]}, {starts[4] + 10 ** 6})"
                                   f" lie outside the {len(buf)} bytes given")


def test_inner_chunks_far_apart_are_read_as_ranges_not_the_gap(tmp_path, monkeypatch):
    """Two inner chunks 64 MiB apart in a (sparse) shard: the gap between them is not read."""
    from zarrx.store import shard_slots
    ranges = []
    read = shard_slots.ByteRange.trusted
    monkeypatch.setattr(shard_slots.ByteRange, "trusted",
                        staticmethod(lambda a, n: ranges.append((a, n)) or read(a, n)))
    from zarrx.codecs.crc32c import Crc32c
    from zarrx.store import CountingStore
    root = LocalStore(tmp_path / "a.zarr")
    z = zarrx.create_array(root, shape=(16,), dtype="i4", chunks=(8,), shards=(16,),
                           compressors=None, fill_value=0)
    z[...] = np.arange(16, dtype="i4")
    data = np.arange(16, dtype="<i4").tobytes()
    far = 64 << 20
    index = np.array([[0, 32], [far, 32]], dtype="<u8").tobytes()
    with open(root.root / "c" / "0", "r+b") as f:
        f.truncate(0)
        f.write(data[:32])
        f.seek(far)
        f.write(data[32:] + index + Crc32c().encode(index)[-4:])
    store = CountingStore(root)
    z = zarrx.open_array(store, mode="r")
    np.testing.assert_array_equal(z[...], np.arange(16))
    assert store.bytes_read < 4096, store.bytes_read
    at = ranges.index((0, 32))
    assert ranges[at:at + 2] == [(0, 32), (64 << 20, 32)]     # one range each, no gap between


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.lists(st.tuples(st.integers(-2, 80), st.integers(-2, 80)),
                                        min_size=1, max_size=6), st.integers(0, 16))
def test_zstd_many_refuses_any_span_and_bytes_without_crashing(blob, spans, m):
    from zarrx.codecs import zstd
    frame = zstd.compress(bytes(m), 1)
    buf = frame + blob
    spans = [(0, len(frame)), *spans]                     # the first chunk decodes
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    lengths = np.array([n for _, n in spans], dtype=np.int64)
    out = np.full((len(spans), m), 9, dtype="u1")
    failed = zstd.decompress_many(buf, starts, lengths, out)
    assert not out[0].any()
    if failed is not None:
        i, err = failed
        assert i >= 1 and starts[i] >= 0 and isinstance(err, CodecError)
        assert (out[i + 1:] == 9).all()                   # nothing decoded past the failure
