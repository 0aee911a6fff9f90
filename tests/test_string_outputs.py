"""Variable-length strings read into ``out=``: an array of the array's own ``StringDType``
takes any selection, a zero-dimensional one included."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("shape", [(), (3,)], ids=["0-d", "1-d"])
def test_strings_read_into_an_out_of_the_arrays_dtype(fmt, shape):
    z = zarrx.create_array(MemoryStore(), shape=shape, chunks=shape, dtype=str, zarr_format=fmt)
    z[...] = "hello"
    out = np.empty(shape, dtype=z.dtype)
    assert z.get_basic_selection(Ellipsis, out=out) is out
    assert out.tolist() == np.full(shape, "hello", dtype=object).tolist()
    with pytest.raises(zarrx.ArgumentError, match=r"out= expected shape .* and dtype "
                                                  r"StringDType\(\) \(or one it casts to "
                                                  r"safely\), found .* dtype <U5"):
        z.get_basic_selection(Ellipsis, out=np.empty(shape, dtype="U5"))
