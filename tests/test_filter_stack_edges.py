"""Edge cases of filters decoding a stack of chunks (``decode_stack``) in batch reads: reads
whose chunks of a shard are none of them stored give the fill value."""
from __future__ import annotations

import numcodecs
import numpy as np
import pytest

import zarrx
from zarrx.codecs.packbits import PackBits

CASES = [
    (bool, [numcodecs.PackBits()], True, False),
    ("i4", [numcodecs.Delta(dtype="i4")], 7, 3),
    ("f8", [numcodecs.FixedScaleOffset(offset=1, scale=10, dtype="f8", astype="i2")], 2.5, 1.0),
    ("<U3", [numcodecs.Categorize(["ab", "c"], dtype="<U3")], "ab", "c"),
]


@pytest.mark.parametrize("dtype,filters,value,fill", CASES)
def test_a_window_of_a_shard_with_no_stored_chunk_reads_the_fill_value(dtype, filters, value,
                                                                       fill):
    a = zarrx.create_array(store={}, shape=(64,), chunks=(4,), shards=(32,), dtype=dtype,
                           filters=filters, compressors=None, fill_value=fill)
    a[:4] = value
    got = a[8:16]
    assert (got == np.full(8, fill, dtype=dtype)).all()
    assert (a[:4] == value).all()


def test_packbits_decodes_an_empty_stack():
    got = PackBits().decode_stack(np.empty((0, 3), np.uint8), np.dtype(bool), (20,))
    assert got.shape == (0, 20) and got.dtype == bool
