"""A 0-d array's mask is a 0-d boolean array: ``z[mask]``, ``z[mask,]`` and ``z.vindex[mask]``
read and write what ``get_mask_selection`` / ``set_mask_selection`` do and numpy's
``a[mask]`` does (one cell or none, as a 1-d result)."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore

READS = {
    "getitem": lambda z, m: z[m],
    "getitem-1-tuple": lambda z, m: z[m,],
    "vindex": lambda z, m: z.vindex[m],
    "get_mask_selection": lambda z, m: z.get_mask_selection(m),
}
WRITES = {
    "setitem": lambda z, m, v: z.__setitem__(m, v),
    "vindex": lambda z, m, v: z.vindex.__setitem__(m, v),
    "set_mask_selection": lambda z, m, v: z.set_mask_selection(m, v),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("read", READS.values(), ids=list(READS))
@pytest.mark.parametrize("flag", [True, False])
def test_a_0d_mask_reads_as_numpy(fmt, read, flag):
    z = zarrx.create_array(MemoryStore(), shape=(), dtype="i4", fill_value=3, zarr_format=fmt)
    z[()] = 4
    want = np.array(4, dtype="i4")[np.array(flag)]
    got = read(z, np.array(flag))
    assert got.shape == want.shape and got.tolist() == want.tolist()


@pytest.mark.parametrize("write", WRITES.values(), ids=list(WRITES))
def test_a_0d_mask_writes_as_numpy(write):
    z = zarrx.create_array(MemoryStore(), shape=(), dtype="i4", fill_value=3)
    ref = np.array(3, dtype="i4")
    for flag, value in ((True, 5), (False, 6), (True, [7])):
        write(z, np.array(flag), value)
        ref[np.array(flag)] = value
        assert z[()] == ref[()]


@pytest.mark.parametrize("read", READS.values(), ids=list(READS))
def test_a_mask_of_another_shape_is_refused(read):
    z = zarrx.create_array(MemoryStore(), shape=(), dtype="i4")
    with pytest.raises(zarrx.IndexingError, match=r"too many indices|expected shape \(\)"):
        read(z, np.array([True]))
