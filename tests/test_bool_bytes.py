"""A bool chunk holding bytes other than 0 and 1 (the spec stores false as 0, true as 1) reads
as zarr-python reads it: the bytes pass through, and numpy takes any nonzero byte for true in
comparisons, arithmetic, casts and ``tolist``. zarrx does not spend a pass over every bool
chunk to normalise them (tensorstore refuses such a chunk): see docs/SPEC.md."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx


@pytest.mark.parametrize("zarr_format, key", [(3, "c/0"), (2, "0")])
def test_nonzero_bytes_read_as_true(tmp_path, zarr_format, key):
    z = zarrx.create_array(str(tmp_path / "b.zarr"), shape=(4,), chunks=(4,), dtype=bool,
                           compressors=None, zarr_format=zarr_format)
    (tmp_path / "b.zarr" / key).parent.mkdir(exist_ok=True)
    (tmp_path / "b.zarr" / key).write_bytes(bytes([0, 1, 2, 255]))
    a = zarrx.open_array(str(tmp_path / "b.zarr"))[:]
    assert a.tolist() == [False, True, True, True]
    assert (a == np.array([False, True, True, True])).all()
    assert int(a.sum()) == 3 and a.astype("u1").tolist() == [0, 1, 1, 1]
    assert (~a).tolist() == [True, False, False, False]
    assert a.view("u1").tolist() == [0, 1, 2, 255]          # the stored bytes, as they are
    assert zarrx.open_array(str(tmp_path / "b.zarr"))[2] == True  # noqa: E712
