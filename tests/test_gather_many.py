"""The batch gather: many chunks gathered in one GIL-free section, each exactly as the
one-at-a-time kernel gathers it."""
from __future__ import annotations

import os
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrx._gather import gather_bytes, gather_many
from zarrx.errors import IndexingError

SETTINGS = settings(max_examples=int(os.environ.get("ZARRX_EXAMPLES", "150")), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
DTYPES = ["u1", "<i2", "<f4", ">f8", "c16", "S3"]


@st.composite
def views(draw: Any) -> np.ndarray:
    """A view of a random array: any rank up to 3, any dtype above, any steps."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = draw(st.lists(st.integers(0, 6), min_size=0, max_size=3))
    full = [2 * n for n in shape] + [2]
    size = int(np.prod(full, dtype=int))
    base = np.frombuffer(np.random.default_rng(size).bytes(size * dtype.itemsize),
                         dtype=dtype).reshape(full)[..., 0:1]
    base = base.reshape(base.shape[:-1])          # a view, of rank 0 too
    steps = tuple(slice(None, None, draw(st.sampled_from([1, 2, -1, -2]))) for _ in shape)
    return base[steps][tuple(slice(0, n) for n in shape)] if shape else base


@SETTINGS
@given(st.lists(views(), max_size=5), st.booleans(), st.data())
def test_gather_many_matches_gather_bytes(srcs: list, crc: bool, data: Any) -> None:
    fill = None
    if srcs and data.draw(st.booleans()):
        itemsize = srcs[0].dtype.itemsize
        srcs = [s for s in srcs if s.dtype.itemsize == itemsize]
        srcs.append(np.zeros((3, 2), dtype=srcs[0].dtype))    # one that is all fill
        fill = bytes(itemsize)
    dsts = [bytearray(s.nbytes + (4 if crc else 0)) for s in srcs]
    uniform = gather_many(srcs, dsts, crc, fill)
    for s, d, u in zip(srcs, dsts, uniform):
        want = gather_bytes(s, crc, fill)
        assert u == (want is None)
        if want is not None:
            assert bytes(d) == want


def test_gather_many_of_nothing_and_of_empty_chunks() -> None:
    assert gather_many([], []) == []
    empty = np.zeros((0, 3), dtype="<f4")
    out = bytearray(b"\xff" * 4)
    assert gather_many([empty], [out], True, bytes(4)) == [True]
    assert gather_many([empty], [out], True) == [False] and out == bytearray(4)


ERRORS = {
    "lengths": (lambda: gather_many([np.zeros(2)], []),
                "gather_many: 1 sources for 0 destinations"),
    "size": (lambda: gather_many([np.zeros(2, "<f4"), np.zeros(3, "<f4")],
                                 [bytearray(8), bytearray(8)]),
             "gather_many: destination 1 of 8 bytes, expected 12"),
    "fill": (lambda: gather_many([np.zeros(2, "<f4")], [bytearray(8)], False, b"ab"),
             "gather_many: fill value of 2 bytes for items of 4 bytes"),
    "objects": (lambda: gather_many([np.zeros(2, object)], [bytearray(16)]),
                "gather_many: dtype object holds Python objects"),
}


@pytest.mark.parametrize("call, message", ERRORS.values(), ids=list(ERRORS))
def test_errors(call: Any, message: str) -> None:
    with pytest.raises(IndexingError, match=re.escape(message)):
        call()


def test_gather_many_wants_writable_destinations() -> None:
    with pytest.raises(BufferError):
        gather_many([np.zeros(2, "<f4")], [bytes(8)])
