"""The kernels of shard reads against numpy: where a shard's inner chunks lie
(``_shard_index.slot_spans``), raw chunks copied into rows (``codecs._rows.copy_spans``) and a
slab of decoded chunks copied into the box they lie in (``_scatter.scatter_chunks``), and what
each refuses."""
from __future__ import annotations

import numpy as np
import pytest

from zarrx._scatter import scatter_chunks
from zarrx.codecs._rows import copy_spans
from zarrx.errors import IndexingError, ShardError
from zarrx.store._shard_index import slot_spans

MISSING = np.uint64(2**64 - 1)


@pytest.mark.parametrize("seed", range(40))
def test_scatter_chunks_copies_what_numpy_copies(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    chunk = tuple(int(x) for x in rng.integers(1, 5, nd))
    counts = tuple(int(x) for x in rng.integers(1, 4, nd))
    dec = rng.integers(0, 1000, (int(np.prod(counts)), *chunk)).astype("i4")
    # the slab's cells: (n0, c0, n1, c1, ...) merged per axis
    cells = dec.reshape(*counts, *chunk).transpose(
        [x for d in range(nd) for x in (d, nd + d)]).reshape([n * c for n, c in zip(counts, chunk)])
    skip = tuple(int(rng.integers(0, c)) for c in chunk)
    ext = tuple(int(rng.integers(max(1, (n - 1) * c - s + 1), n * c - s + 1))
                for n, c, s in zip(counts, chunk, skip))
    out = np.zeros([2 * e + 3 for e in ext], dtype="i4")
    sel = tuple(slice(1, 1 + 2 * e, 2) if rng.random() < 0.4 else
                slice(e, 0, -1) if rng.random() < 0.4 else slice(1, 1 + e) for e in ext)
    want = out.copy()
    want[sel] = cells[tuple(slice(s, s + e) for s, e in zip(skip, ext))]
    scatter_chunks(dec, counts, out[sel], skip)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("counts, skip, ext, found", [
    ((2,), (4,), (4,), "axis 0: 2 chunks of 4 from cell 4"),     # skip past the first chunk
    ((2,), (0,), (9,), "axis 0: 2 chunks of 4 from cell 0"),     # the box past the last one
    ((2,), (1,), (3,), "axis 0: 2 chunks of 4 from cell 1"),     # the last chunk not reached
    ((3,), (0,), (8,), "axis 0: 3 chunks of 4 from cell 0"),
])
def test_scatter_chunks_refuses_a_box_its_chunks_do_not_end_in(counts, skip, ext, found):
    dec = np.zeros((2, 4), dtype="u1")
    with pytest.raises(IndexingError, match=found):
        scatter_chunks(dec, counts, np.zeros(ext, dtype="u1"), skip)


@pytest.mark.parametrize("counts, skip, found", [
    ((4, 2**62 + 1), (0, 0), "axis 1: 4611686018427387905 chunks of 4 from cell 0"),
    ((4, 2**61 + 1), (0, 2), "axis 1: 2305843009213693953 chunks of 4 from cell 2"),
    ((4, 2**63 - 1), (0, 0), "axis 1: 9223372036854775807 chunks of 4 from cell 0"),
    ((4, 1), (0, -1), "axis 1: 1 chunks of 4 from cell -1"),
    ((4, 1), (0, 4), "axis 1: 1 chunks of 4 from cell 4"),
    ((4, 0), (0, 0), "axis 1: 0 chunks of 4 from cell 0"),
])
def test_scatter_chunks_refuses_counts_whose_products_wrap(counts, skip, found):
    """Chunk counts so large that ``count * chunk`` wraps onto the box's extent (and their
    product onto the number of chunks given) are refused, not copied in part."""
    dec = np.arange(1, 17, dtype="u1").reshape(4, 1, 4)
    dst = np.zeros((4, 4), dtype="u1")
    with pytest.raises(IndexingError, match=found):
        scatter_chunks(dec, counts, dst, skip)
    assert not dst.any()


def test_scatter_chunks_on_empty_boxes_and_chunks():
    dec = np.zeros((1, 3, 2), dtype="u1")
    dst = np.zeros((0, 1), dtype="u1")      # an empty box inside one chunk, from cell 1
    scatter_chunks(dec, (1, 1), dst, (1, 1))
    with pytest.raises(IndexingError, match="axis 0: 1 chunks of 3 from cell 0"):
        scatter_chunks(dec, (1, 1), dst, (0, 1))      # no cell of the chunk in the box
    with pytest.raises(IndexingError, match="axis 0: 1 chunks of 0 from cell 0"):
        scatter_chunks(np.zeros((1, 0, 2), dtype="u1"), (1, 1), dst, (0, 1))
    with pytest.raises(IndexingError, match="3 chunks, expected 2"):
        scatter_chunks(np.zeros((3, 2), dtype="u1"), (2,), np.zeros(4, dtype="u1"), (0,))


def test_scatter_chunks_refuses_other_item_types_and_read_only_boxes():
    dec = np.zeros((1, 4), dtype="u1")
    with pytest.raises(IndexingError, match="found uint8 \\(1, 4\\) and \\(4,\\)"):
        scatter_chunks(dec, (1,), np.zeros(4, dtype="i2"), (0,))
    read_only = np.zeros(4, dtype="u1")
    read_only.flags.writeable = False
    with pytest.raises(IndexingError, match="writeable"):
        scatter_chunks(dec, (1,), read_only, (0,))


def test_slot_spans_gives_what_the_entries_say():
    rng = np.random.default_rng(7)
    entries = np.empty((12, 2), dtype=np.uint64)
    entries[:, 1] = rng.integers(0, 9, 12)
    entries[:, 0] = 100 + np.cumsum(entries[:, 1]) - entries[:, 1]
    entries[[2, 5]] = MISSING
    slots = np.array([5, 1, 7, 2, 11, 0], dtype=np.int64)
    starts, lengths, present, lo, hi, total, over = slot_spans(entries, slots, 6)
    sel = entries[slots]
    here = sel[:, 0] != MISSING
    assert present == int(here.sum())
    assert lo == int(sel[here, 0].min()) and hi == int((sel[here, 0] + sel[here, 1]).max())
    assert total == int(sel[here, 1].sum())
    np.testing.assert_array_equal(starts, np.where(here, sel[:, 0].astype(np.int64) - lo, -1))
    np.testing.assert_array_equal(lengths, np.where(here, sel[:, 1].astype(np.int64), 0))
    longer = np.flatnonzero(here & (sel[:, 1] > 6))
    assert over == (int(longer[0]) if len(longer) else -1)


def test_slot_spans_of_missing_chunks_only_and_a_slot_out_of_range():
    entries = np.full((4, 2), MISSING, dtype=np.uint64)
    starts, lengths, present, lo, hi, total, over = slot_spans(
        entries, np.arange(4, dtype=np.int64), -1)
    assert (present, lo, hi, total, over) == (0, 0, 0, 0, -1)
    assert starts.tolist() == [-1] * 4 and lengths.tolist() == [0] * 4
    with pytest.raises(ShardError, match="slot 4 out of range for 4 entries"):
        slot_spans(entries, np.array([0, 4], dtype=np.int64), -1)


def test_copy_spans_copies_rows_or_names_the_first_chunk_that_is_not_one():
    src = np.arange(40, dtype=np.uint8)
    rows = np.zeros((3, 4), dtype=np.uint8)
    starts = np.array([8, -1, 0], dtype=np.int64)
    assert copy_spans(src, starts, np.array([4, 0, 4], dtype=np.int64), rows) == -1
    np.testing.assert_array_equal(rows, [[8, 9, 10, 11], [0, 0, 0, 0], [0, 1, 2, 3]])
    rows[...] = 0
    assert copy_spans(src, starts, np.array([4, 0, 5], dtype=np.int64), rows) == 2
    assert copy_spans(src, np.array([37, -1, 0], dtype=np.int64),
                      np.array([4, 0, 4], dtype=np.int64), rows) == 0      # past the end
    assert not rows.any()                   # nothing copied when a chunk is refused


def test_copy_spans_on_adversarial_spans_copies_inside_or_refuses():
    """Random starts and lengths (negative, past the end, off by one): every span is copied
    when all lie inside the buffer and are a row long, else the first that does not is named
    and nothing is copied (for the sanitized build too)."""
    rng = np.random.default_rng(11)
    for _ in range(400):
        n, nb, k = int(rng.integers(0, 40)), int(rng.integers(0, 6)), int(rng.integers(0, 6))
        src = rng.integers(0, 256, n).astype(np.uint8)
        starts = rng.integers(-3, n + 3, k).astype(np.int64)
        lengths = np.where(rng.random(k) < .8, nb, rng.integers(-2, 9, k)).astype(np.int64)
        rows = np.zeros((k, nb), dtype=np.uint8)
        bad = [i for i in range(k) if starts[i] >= 0 and (
            lengths[i] != nb or starts[i] + nb > n)]
        got = copy_spans(src, starts, lengths, rows)
        if bad:
            assert got == bad[0] and not rows.any()
            continue
        assert got == -1
        for i in range(k):
            want = src[starts[i]:starts[i] + nb] if starts[i] >= 0 else np.zeros(nb, np.uint8)
            np.testing.assert_array_equal(rows[i], want)


def test_slot_spans_on_adversarial_slots():
    rng = np.random.default_rng(12)
    for _ in range(300):
        n, m = int(rng.integers(0, 8)), int(rng.integers(0, 8))
        entries = rng.integers(0, 2**62, (n, 2)).astype(np.uint64)
        entries[rng.random(n) < .3] = MISSING
        slots = rng.integers(-2, n + 2, m).astype(np.int64)
        outside = [int(s) for s in slots if not 0 <= s < n]
        if outside:
            with pytest.raises(ShardError, match=f"slot {outside[0]} out of range"):
                slot_spans(entries, slots, -1)
            continue
        starts, lengths, present, lo, hi, total, over = slot_spans(entries, slots, -1)
        here = entries[slots, 0] != MISSING
        assert present == int(here.sum()) and over == -1
        assert total == min(int(entries[slots[here], 1].astype(object).sum() or 0), 2**63 - 1)


@pytest.mark.parametrize("entry", [
    (2**63 - 1, 2**63 - 1),             # the end past 2^63-1: its sum overflows
    (2**63, 5),                          # an offset past 2^63-1
    (0, 2**64 - 1),                      # half missing
    (2**64 - 1, 4),
])
def test_slot_spans_refuses_entries_validation_refuses(entry):
    """Entries no decoded index holds (ends past 2^63-1, half-missing entries) are refused by
    name rather than summed into wrapped spans."""
    entries = np.array([[0, 4], entry], dtype=np.uint64)
    with pytest.raises(ShardError, match=f"entry 1: offset {entry[0]} and {entry[1]} bytes"):
        slot_spans(entries, np.array([0, 1], dtype=np.int64), -1)


def test_slot_spans_at_the_largest_object():
    """Entries ending at 2^63-1 bytes: spans and their saturated total without an overflow."""
    big = 2**63 - 1
    entries = np.array([[0, big], [big, 0], [5, 4]], dtype=np.uint64)
    starts, lengths, present, lo, hi, total, over = slot_spans(
        entries, np.array([0, 1, 2, 0], dtype=np.int64), 0)
    assert starts.tolist() == [0, big, 5, 0] and lengths.tolist() == [big, 0, 4, big]
    assert (present, lo, hi, total, over) == (4, 0, big, big, 0)
    assert slot_spans(entries, np.zeros(0, dtype=np.int64), big)[2:] == (0, 0, 0, 0, -1)


def test_copy_spans_at_the_limits():
    src = np.arange(16, dtype=np.uint8)
    big, small = 2**63 - 1, -2**63

    def spans(starts, lengths, nb, buf=src):
        rows = np.zeros((len(starts), nb), dtype=np.uint8)
        got = copy_spans(buf, np.array(starts, dtype=np.int64),
                         np.array(lengths, dtype=np.int64), rows)
        return got, rows

    assert spans([big], [4], 4)[0] == 0                   # a start past any buffer
    assert spans([0], [big], 4)[0] == 0 and spans([0], [-4], 4)[0] == 0
    got, rows = spans([small, 12], [4, 4], 4)              # the lowest start: missing
    assert got == -1 and rows.tolist() == [[0] * 4, [12, 13, 14, 15]]
    got, rows = spans([0, 4, 8, 12, 16], [4] * 5, 4)       # a run ending past the buffer
    assert got == 4 and not rows.any()
    got, rows = spans([12, 8, 4, 0], [4] * 4, 4)           # ending exactly at its end
    assert got == -1 and rows.ravel().tolist() == [12, 13, 14, 15, 8, 9, 10, 11,
                                                    4, 5, 6, 7, 0, 1, 2, 3]
    assert spans([0], [4], 4, np.zeros(0, np.uint8))[0] == 0          # an empty buffer
    assert spans([0], [0], 0, np.zeros(0, np.uint8))[0] == -1
    assert spans([0, 16, 17], [0, 0, 0], 0)[0] == 2        # 0-byte rows past the end
    assert spans([], [], 4)[0] == -1
    got, rows = spans([0, 0, 0], [16] * 3, 16, bytes(range(16)))      # read-only bytes
    assert got == -1 and (rows == np.arange(16)).all()
    with pytest.raises(ValueError, match="2 starts, 1 lengths and 2 rows"):
        spans([0, 4], [4], 4)


def test_scatter_chunks_into_odd_layouts():
    dec = np.arange(1, 17, dtype="u1").reshape(4, 1, 4)
    out = np.zeros((4, 4), dtype="u1")
    scatter_chunks(dec, (4, 1), out[::-1, ::-1], (0, 0))   # reversed on both axes
    np.testing.assert_array_equal(out[::-1, ::-1], dec.reshape(4, 4))
    flat = np.zeros(8, dtype="u1")     # every row onto the same 4 cells: the last one stays
    scatter_chunks(dec, (4, 1), np.lib.stride_tricks.as_strided(
        flat, shape=(4, 4), strides=(0, 1), writeable=True), (0, 0))
    assert flat.tolist() == [13, 14, 15, 16, 0, 0, 0, 0]
    scalar = np.zeros((), dtype="u1")
    scatter_chunks(np.array([7], dtype="u1"), (), scalar, ())          # 0 dimensions
    assert scalar == 7
    deep = np.zeros((1,) * 63, dtype="u1")
    scatter_chunks(np.full((1,) * 64, 9, dtype="u1"), (1,) * 63, deep, (0,) * 63)
    assert deep.item() == 9
    wide = np.zeros(5, dtype="V1000")
    src = np.frombuffer((np.arange(6000) % 251).astype(np.uint8), dtype="V1000").reshape(2, 3)
    scatter_chunks(src, (2,), wide, (1,))
    assert wide.tobytes() == src.reshape(6)[1:].tobytes()
