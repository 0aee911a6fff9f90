"""Converting an array with a rectilinear chunk grid, which is written in one block."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx


def test_a_rectilinear_grid_larger_than_the_budget_asks_for_chunks(tmp_path):
    src = str(tmp_path / "r.zarr")
    a = zarrx.create_array(src, shape=(100, 100), dtype="f8", chunks=[[50, 50], [30, 70]])
    a[:] = 1.0
    message = ("convert /: a rectilinear chunk grid is converted in one block, the whole array "
               "(100, 100) (78.1 KiB in memory, 234.4 KiB with the buffers of 2 threads), more "
               "than the memory budget of 64.0 KiB; pass --chunks (chunks=) to convert it to a "
               "regular grid block by block, or raise --max-memory (max_memory=)")
    with zarrx.config.set(threads=2), pytest.raises(zarrx.ZarrError, match=re.escape(message)):
        zarrx.convert(src, str(tmp_path / "out.zarr"), max_memory="64K", workers=1)
    with zarrx.config.set(threads=2):
        assert zarrx.convert(src, str(tmp_path / "out.zarr"), max_memory="64K", workers=1,
                             chunks=(10, 10), verify=True).ok
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "out.zarr"), mode="r")[:],
                                  np.ones((100, 100)))
