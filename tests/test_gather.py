"""zarrx._gather (the n-d strided box kernels) against numpy assignment."""
from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pytest
import strategies as zst
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrx._gather import (
    MAX_NDIM,
    copy_box,
    copy_selection,
    copy_view,
    is_all,
    is_all_rows,
)
from zarrx.errors import IndexingError

SETTINGS = settings(max_examples=int(os.environ.get("ZARRX_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
DTYPES = {
    "u1": np.dtype("u1"), "i2": np.dtype("<i2"), "f4": np.dtype("<f4"), "f8": np.dtype(">f8"),
    "c16": np.dtype("c16"), "S7": np.dtype("S7"), "V3": np.dtype("V3"),
    "struct": np.dtype([("a", "<i4"), ("b", "u1"), ("c", "<f8", (2,))]),
}


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dtype.itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@st.composite
def layouts(draw: Any, shape: tuple[int, ...], dtype: np.dtype, seed: int) -> np.ndarray:
    """An array of ``shape`` that is C-contiguous, transposed, or a strided/reversed view."""
    rng = np.random.default_rng(seed)
    how = draw(st.sampled_from(["c", "f", "transposed", "strided"]))
    if how == "c" or not shape:
        return random_array(rng, shape, dtype)
    if how == "f":
        return np.asfortranarray(random_array(rng, shape, dtype))
    if how == "transposed":
        perm = draw(st.permutations(range(len(shape))))
        base = random_array(rng, tuple(shape[p] for p in perm), dtype)
        return base.transpose(np.argsort(perm))
    steps = [draw(st.sampled_from([1, 2, -1, -3])) for _ in shape]
    big = random_array(rng, tuple(max(1, n) * abs(s) for n, s in zip(shape, steps)), dtype)
    view = big[tuple(slice(None, None, s) for s in steps)]
    return view[tuple(slice(0, n) for n in shape)]


def box_slices(draw: Any, shape: tuple[int, ...], count: tuple[int, ...]) -> tuple[slice, ...]:
    """Slices selecting exactly ``count[i]`` elements of an axis of ``shape[i]`` (step +/-)."""
    sel = []
    for n, c in zip(shape, count):
        step = draw(st.sampled_from([1, 1, 2, -1, -2]))
        span = (c - 1) * abs(step) + 1 if c else 0
        while span > n:
            step = 1
            span = c
        first = draw(st.integers(0, n - span)) if c else draw(st.integers(0, n))
        if c == 0:
            sel.append(slice(first, first))
        elif step > 0:
            sel.append(slice(first, first + span, step))
        else:
            top = first + span - 1
            sel.append(slice(top, top - span if top - span >= 0 else None, step))
    return tuple(sel)


def slices_to_box(sel: tuple, shape: tuple[int, ...]) -> tuple[tuple, tuple, tuple]:
    """``(start, count, step)`` of a tuple of slices over ``shape``, as copy_box takes them
    (a negative step starts at the first selected element)."""
    boxes = [range(*s.indices(n)) for s, n in zip(sel, shape)]
    return (tuple(r.start if len(r) else 0 for r in boxes), tuple(len(r) for r in boxes),
            tuple(r.step for r in boxes))


@SETTINGS
@given(st.data())
def test_copy_box_matches_numpy(data: Any) -> None:
    dtype = DTYPES[data.draw(st.sampled_from(sorted(DTYPES)), label="dtype")]
    count = data.draw(zst.shapes(max_dims=5, max_side=5), label="count")
    src_shape = tuple(c + data.draw(st.integers(0, 4)) for c in count)
    dst_shape = tuple(c + data.draw(st.integers(0, 4)) for c in count)
    seed = data.draw(st.integers(0, 2**32 - 1))
    src = data.draw(layouts(src_shape, dtype, seed), label="src")
    dst = data.draw(layouts(dst_shape, dtype, seed + 1), label="dst")
    ssel = box_slices(data.draw, src_shape, count)
    dsel = box_slices(data.draw, dst_shape, count)
    expected = dst.copy()
    expected[dsel] = src[ssel]
    s0, sc, ss = slices_to_box(ssel, src_shape)
    d0, dc, ds = slices_to_box(dsel, dst_shape)
    assert sc == dc == count
    copy_box(src, s0, dst, d0, count, ss, ds)
    assert dst.tobytes() == expected.tobytes()     # bytes: NaN payloads compare too


@SETTINGS
@given(st.data())
def test_copy_selection_and_fill_match_numpy(data: Any) -> None:
    dtype = DTYPES[data.draw(st.sampled_from(sorted(DTYPES)))]
    shape = data.draw(zst.shapes(max_dims=4, max_side=6))
    seed = data.draw(st.integers(0, 2**32 - 1))
    dst = data.draw(layouts(shape, dtype, seed))
    count = tuple(data.draw(st.integers(0, n)) for n in shape)
    start = tuple(data.draw(st.integers(0, n - c)) for n, c in zip(shape, count))
    value = random_array(np.random.default_rng(seed), (), dtype)
    expected = dst.copy()
    box = tuple(slice(a, a + c) for a, c in zip(start, count))
    expected[box] = value
    copy_view(np.broadcast_to(value, count), dst[box + (Ellipsis,)])  # a fill: strides all 0
    assert dst.tobytes() == expected.tobytes()
    if shape:                                                 # broadcast along one axis only
        row = random_array(np.random.default_rng(seed + 1), shape[1:], dtype)
        expected[...] = row
        copy_view(np.broadcast_to(row, shape), dst)
        assert dst.tobytes() == expected.tobytes()
    src = random_array(np.random.default_rng(seed + 2), shape, dtype)
    sel = tuple(data.draw(zst.slices(n)) for n in shape)
    expected[sel] = src[sel]
    copy_selection(src, sel, dst, sel)
    assert dst.tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", DTYPES.values(), ids=list(DTYPES))
def test_is_all(dtype: np.dtype) -> None:
    rng = np.random.default_rng(1)
    item = random_array(rng, (), dtype)
    a = np.empty((5, 7), dtype)
    a[...] = item
    assert is_all(a, item.tobytes())
    assert is_all(a.tobytes(), item.tobytes())
    raw = bytearray(a.tobytes())
    raw[-1] ^= 1
    assert not is_all(bytes(raw), item.tobytes())
    raw = bytearray(a.tobytes())
    raw[0] ^= 1
    assert not is_all(bytes(raw), item.tobytes())
    assert is_all(np.empty((0, 3), dtype), item.tobytes())


def test_is_all_any_layout() -> None:
    assert is_all(np.broadcast_to(np.float32(1), (4, 16)), np.float32(1).tobytes())
    a = np.zeros((4, 6), "i2")
    a[:, 1] = 3
    assert is_all(a[:, ::2], bytes(2)) and not is_all(a.T, bytes(2))


def test_is_all_compares_bytes() -> None:
    nan = np.full(10, np.nan, dtype="f8")
    assert is_all(nan, np.float64(np.nan).tobytes())
    assert not is_all(np.full(4, -0.0), np.float64(0.0).tobytes())


def test_overlapping_copy_is_staged() -> None:
    a = np.arange(20, dtype="i4")
    expected = a.copy()
    expected[2:12] = a[0:10].copy()
    copy_box(a, (0,), a, (2,), (10,))
    assert a.tolist() == expected.tolist()


def test_overlapping_transpose_is_staged() -> None:
    m = np.arange(36, dtype="f8").reshape(6, 6)
    before = m.copy()
    copy_box(m, (0, 0), m.T, (0, 0), (6, 6))          # m.T[...] = m  ->  m becomes m.T
    assert (m == before.T).all()


def test_rank_zero_and_max_rank() -> None:
    a, b = np.array(3.5), np.array(0.0)
    copy_box(a, (), b, (), ())
    assert b[()] == 3.5
    shape = (1,) * MAX_NDIM
    src, dst = np.ones(shape, "u1"), np.zeros(shape, "u1")
    copy_box(src, (0,) * MAX_NDIM, dst, (0,) * MAX_NDIM, shape)
    assert dst.all()


@SETTINGS
@given(st.data())
def test_is_all_strided_matches_numpy(data: Any) -> None:
    dtype = DTYPES[data.draw(st.sampled_from(sorted(DTYPES)))]
    shape = data.draw(zst.shapes(max_dims=4, max_side=5))
    seed = data.draw(st.integers(0, 2**32 - 1))
    a = data.draw(layouts(shape, dtype, seed))
    item = random_array(np.random.default_rng(seed), (), dtype)
    a[...] = item
    if a.size and data.draw(st.booleans()):                  # one item differs in one bit
        pos = tuple(data.draw(st.integers(0, n - 1)) for n in shape)
        raw = bytearray(item.tobytes())
        raw[data.draw(st.integers(0, len(raw) - 1))] ^= 1
        a[pos + (Ellipsis,)] = np.frombuffer(bytes(raw), dtype=dtype).reshape(())
    packed = a.tobytes()
    expected = packed == item.tobytes() * a.size
    assert is_all(a, item.tobytes()) == expected
    assert is_all(packed, item.tobytes()) == expected


@SETTINGS
@given(st.data())
def test_is_all_rows_finds_each_row_as_is_all_does(data: Any) -> None:
    """Rows of items all equal to one item, or with one bit of one item flipped; the rows of
    a slab of chunks as batch writes lay them out."""
    dtype = DTYPES[data.draw(st.sampled_from(sorted(DTYPES)))]
    nrows, items = data.draw(st.integers(0, 6)), data.draw(st.integers(0, 9))
    item = random_array(np.random.default_rng(data.draw(st.integers(0, 2**32 - 1))), (), dtype)
    rows = np.empty((nrows, items), dtype)
    rows[...] = item
    raw = rows.view(np.uint8).reshape(nrows, items * dtype.itemsize)
    for r in range(nrows):
        if items and data.draw(st.booleans()):
            raw[r, data.draw(st.integers(0, raw.shape[1] - 1))] ^= 1 << data.draw(
                st.integers(0, 7))
    got = is_all_rows(raw, item.tobytes())
    assert got.dtype == np.bool_ and got.shape == (nrows,)
    assert got.tolist() == [is_all(row, item.tobytes()) for row in raw]
    assert got.tolist() == [row.tobytes() == item.tobytes() * items for row in raw]


def test_is_all_rows_compares_bytes() -> None:
    rows = np.array([[np.nan] * 3, [-0.0] * 3, [0.0] * 3], "<f8").view(np.uint8)
    assert is_all_rows(rows, np.float64(np.nan).tobytes()).tolist() == [True, False, False]
    assert is_all_rows(rows, np.float64(-0.0).tobytes()).tolist() == [False, True, False]


A = np.zeros((4, 5), "f4")
RO = np.zeros((4, 5), "f4")
ROWS = np.zeros((3, 12), "u1")
RO.setflags(write=False)
ERRORS = {
    "rank": (lambda: copy_box(A, (0, 0), np.zeros(3, "f4"), (0,), (1,)),
             "copy_box: src has rank 2 but dst has rank 1; expected equal ranks"),
    "dtype": (lambda: copy_box(A, (0, 0), np.zeros((4, 5), "f8"), (0, 0), (1, 1)),
              "copy_box: src dtype float32 differs from dst dtype float64"),
    "object": (lambda: copy_box(np.zeros(2, object), (0,), np.zeros(2, object), (0,), (1,)),
               "src: dtype object holds Python objects; expected a fixed-size dtype"),
    "readonly": (lambda: copy_box(A, (0, 0), RO, (0, 0), (1, 1)),
                 "copy_box: dst is read-only; expected a writeable array"),
    "overrun": (lambda: copy_box(A, (2, 0), A.copy(), (0, 0), (3, 5)),
                "src box on axis 0: start 2, count 3, step 1 touches elements 2..4, outside the "
                "axis of size 4"),
    "negative-step-overrun": (lambda: copy_box(A, (0, 1), A.copy(), (0, 0), (1, 3), (1, -1)),
                              "src box on axis 1: start 1, count 3, step -1 touches elements "
                              "-1..1, outside the axis of size 5"),
    "zero-step": (lambda: copy_box(A, (0, 0), A.copy(), (0, 0), (1, 1), (1, 0)),
                  "src_step[1] is 0; expected a non-zero step"),
    "count-length": (lambda: copy_box(A, (0, 0), A.copy(), (0, 0), (1,)),
                     "count: expected 2 entries (one per axis), found 1: (1,)"),
    "count-negative": (lambda: copy_box(A, (0, 0), A.copy(), (0, 0), (-1, 1)),
                       "count[0] is -1; expected a count >= 0"),
    "is_all-value-size": (lambda: is_all(A[:, ::2], b"abc"),
                          "is_all: value has 3 bytes; expected one item of 4 bytes (the "
                          "array's item size)"),
    "is_all-size": (lambda: is_all(b"abcde", b"ab"),
                    "is_all: buffer of 5 bytes is not a whole number of 2-byte items"),
    "is_all-type": (lambda: is_all(3.5, b"\0"), "is_all: expected a buffer, found float"),
    "is_all-empty-value": (lambda: is_all(b"ab", b""),
                           "is_all: value has 0 bytes; expected one item of at least 1 byte"),
    "is_all_rows-strided": (lambda: is_all_rows(ROWS[:, ::2], b"\0"),
                            "is_all_rows: rows: expected a C-contiguous 2-d uint8 array, found "
                            "a 2-d uint8 array (not C-contiguous)"),
    "is_all_rows-dtype": (lambda: is_all_rows(ROWS.view("i1"), b"\0"),
                          "is_all_rows: rows: expected a C-contiguous 2-d uint8 array, found a "
                          "2-d int8 array"),
    "is_all_rows-rank": (lambda: is_all_rows(ROWS.reshape(-1), b"\0"),
                         "is_all_rows: rows: expected a C-contiguous 2-d uint8 array, found a "
                         "1-d uint8 array"),
    "is_all_rows-type": (lambda: is_all_rows(b"abc", b"a"),
                         "is_all_rows: rows: expected a C-contiguous 2-d uint8 array, found "
                         "bytes"),
    "is_all_rows-size": (lambda: is_all_rows(ROWS, b"abcde"),
                         "is_all_rows: row of 12 bytes is not a whole number of 5-byte items"),
    "is_all_rows-empty-value": (lambda: is_all_rows(ROWS, b""),
                                "is_all_rows: value has 0 bytes; expected one item of at least "
                                "1 byte"),
    "is_all_rows-value-type": (lambda: is_all_rows(ROWS, 3),
                               "is_all_rows: value: expected the bytes of one item, found int"),
}


@pytest.mark.parametrize("call, message", ERRORS.values(), ids=list(ERRORS))
def test_errors(call: Any, message: str) -> None:
    with pytest.raises(IndexingError, match=re.escape(message)) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("dtype", ["u1", "<f4", ">i8", "c16", "S5"])
@pytest.mark.parametrize("layout", ["c", "f", "strided", "reversed"])
def test_gather_bytes_matches_tobytes(dtype, layout):
    from zarrx._gather import gather_bytes
    a = np.frombuffer(np.random.default_rng(3).bytes(7 * 9 * 2 * np.dtype(dtype).itemsize),
                      dtype=dtype).reshape(14, 9)
    view = {"c": a, "f": np.asfortranarray(a), "strided": a[::2, ::3],
            "reversed": a[::-1, ::-2]}[layout]
    assert gather_bytes(view) == view.tobytes(order="C")


@pytest.mark.parametrize("n", [0, 1, 7, 4096])
def test_gather_bytes_with_crc32c(n):
    import crc32c as crc_oracle
    from zarrx._gather import gather_bytes
    a = np.frombuffer(np.random.default_rng(n).bytes(2 * n), dtype="u1").reshape(2, n)[:, ::-1]
    got = gather_bytes(a, True)
    body = a.tobytes()
    assert got == body + crc_oracle.crc32c(body).to_bytes(4, "little")


@pytest.mark.parametrize("crc", [False, True], ids=["plain", "crc32c"])
def test_gather_bytes_fill_test(crc):
    from zarrx._gather import gather_bytes
    a = np.full((6, 8), 3.5, dtype="<f4")
    fill = np.float32(3.5).tobytes()
    assert gather_bytes(a[:, ::2], crc, fill) is None
    a[5, 6] = 1.0
    got = gather_bytes(a[:, ::2], crc, fill)
    assert got is not None and got[:96] == a[:, ::2].tobytes()
    with pytest.raises(IndexingError, match="fill value of 2 bytes for items of 4 bytes"):
        gather_bytes(a, crc, b"ab")


def test_a_step_on_an_axis_of_one_element_is_never_taken():
    """Whatever its size: a step past 2**63 - 1 there made an OverflowError (and, with the two
    arrays overlapping, numpy's refusal of the staging slice)."""
    a = np.arange(20, dtype="u1").reshape(4, 5)
    b = np.zeros((2, 5), "u1")
    copy_box(a, (3, 0), b, (1, 0), (1, 5), (2**70, 1), (-2**70, 1))
    np.testing.assert_array_equal(b, [[0] * 5, a[3]])
    copy_box(a, (3, 0), a, (0, 0), (1, 5), (2**64, 1), (2**70, 1))      # overlapping: staged
    np.testing.assert_array_equal(a[0], a[3])


def test_items_of_no_bytes_with_a_fill_value_of_no_bytes():
    """An IndexError came out of the kernels' taking the fill value's first byte."""
    from zarrx._gather import gather_bytes, gather_many
    e = np.zeros((3, 2), dtype=[])
    assert gather_bytes(e, fill=b"") is None and gather_bytes(e) == b""
    assert gather_many([e], [bytearray(0)], False, b"") == [True]
    with pytest.raises(IndexingError, match="fill value of 0 bytes for items of 4 bytes"):
        gather_bytes(np.zeros(2, "f4"), fill=b"")
