"""Packing a shard (``IndexFormat.pack``, one pass of ``_shard_index.pack_entries`` over the
slots): the entries and the parts must be those of a model written with numpy (the way shards
were packed before: a cumulative sum of the sizes, one part per new value and one view per run
of stored chunks lying back to back), for stored shards with gaps, chunks out of slot order,
missing and deleted chunks, and nested shards' :class:`Pieces`."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from zarrx.errors import ShardError
from zarrx.store import _shard_index as _k
from zarrx.store.pieces import Pieces
from zarrx.store.shard_index import MISSING

M = np.uint64(MISSING)


def _model(n, values, kept, base):
    """The entries and the parts' bytes (each part apart) of the packed shard, with numpy."""
    sizes = np.zeros(n, dtype=np.uint64)
    present = np.zeros(n, dtype=bool)
    if kept is not None:
        present[:] = kept[0][:, 0] != M
        sizes[present] = kept[0][present, 1]
    for slot, v in values.items():
        present[slot] = v is not None
        sizes[slot] = 0 if v is None else len(v)
    entries = np.empty((n, 2), dtype=np.uint64)
    entries[:, 1] = sizes
    entries[:, 0] = np.cumsum(sizes) - sizes + np.uint64(base)
    entries[~present] = M
    parts, run = [], None
    for slot in np.flatnonzero(present).tolist():
        if slot in values:
            if run is not None:
                parts.append(bytes(kept[1][run[0]:run[1]]))
                run = None
            v = values[slot]
            parts.append(v.tobytes() if isinstance(v, Pieces) else bytes(v))
            continue
        off, nb = kept[0][slot].tolist()
        if run is not None and run[1] == off:
            run = (run[0], off + nb)
            continue
        if run is not None:
            parts.append(bytes(kept[1][run[0]:run[1]]))
        run = (off, off + nb)
    if run is not None:
        parts.append(bytes(kept[1][run[0]:run[1]]))
    return entries, parts


@st.composite
def shards(draw):
    n = draw(st.integers(1, 40))
    kept = None
    if draw(st.booleans()):
        # a stored shard: chunks of random sizes laid out in a random order, gaps between some
        stored = [s for s in range(n) if draw(st.booleans())]
        order = draw(st.permutations(stored))
        entries = np.full((n, 2), M, dtype=np.uint64)
        pos = draw(st.integers(0, 20))
        for s in order:
            nb = draw(st.integers(0, 9))
            entries[s] = pos, nb
            pos += nb + draw(st.sampled_from([0, 0, 0, 3]))
        blob = np.random.default_rng(n).integers(0, 256, pos + 5, dtype=np.uint8).tobytes()
        kept = (entries, memoryview(blob))
    values = {}
    for s in draw(st.lists(st.integers(0, n - 1), unique=True)):
        kind = draw(st.sampled_from(["bytes", "bytes", "none", "view", "pieces"]))
        nb = draw(st.integers(0, 7))
        data = bytes([s % 256]) * nb + b"|"
        values[s] = {"bytes": data, "none": None, "view": memoryview(bytearray(data)),
                     "pieces": Pieces([data, b"<index>"])}[kind]
    return n, values, kept, draw(st.sampled_from([0, 16 * n, 16 * n + 4]))


@settings(max_examples=500, deadline=None)
@given(shards())
def test_packed_entries_and_parts_are_those_of_the_numpy_model(case):
    n, values, kept, base = case
    want_entries, want_parts = _model(n, values, kept, base)
    entries, parts, present = _k.pack_entries(
        n, values, None if kept is None else kept[0], None if kept is None else kept[1], base)
    np.testing.assert_array_equal(entries, want_entries)
    assert present == int((want_entries[:, 0] != M).sum())
    got = [p.tobytes() if isinstance(p, Pieces) else bytes(p) for p in parts]
    assert got == want_parts
    for slot, v in values.items():          # new values are passed on as they are
        if v is not None:
            assert any(p is v for p in parts)


def test_slots_and_stored_entries_out_of_range_are_refused():
    with pytest.raises(ShardError, match="slot 4 out of range for 4 entries"):
        _k.pack_entries(4, {4: b"x"}, None, None, 0)
    with pytest.raises(ShardError, match=r"expected \(4, 2\) entries, found \(3, 2\)"):
        _k.pack_entries(4, {}, np.zeros((3, 2), dtype=np.uint64), b"", 0)
