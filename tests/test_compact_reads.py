"""Reads and writes of many small chunks hold no Python object per chunk: a slice's chunks on a
regular axis are made as they are listed (zarrx.slice_runs) and a memory store's box writer
cuts its batches by count."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zarrx
from zarrx import _indexing, indexing
from zarrx.slice_runs import SliceRuns

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
