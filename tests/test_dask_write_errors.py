"""What ``zarrx.dask.to_zarrx`` says to a caller whose write it refuses before writing: a
misspelt keyword is named as the caller spelt it, in the function the caller called, with
the closest keyword it takes; a node in the way carries a note saying how to replace it or
write into it."""
from __future__ import annotations

import gc
import re

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import zarrx  # noqa: E402
import zarrx.dask as zd  # noqa: E402
from zarrx.errors import ArgumentTypeError, ContainsArrayError, ContainsGroupError  # noqa: E402


@pytest.mark.parametrize("key, closest", [("overwirte", "overwrite"), ("chunk", "chunks"),
                                          ("compresors", "compressors"),
                                          ("retrun_stored", "return_stored")])
def test_a_misspelt_keyword_names_to_zarrx_and_the_closest_keyword(tmp_path, key, closest):
    message = (f"to_zarrx() got an unexpected keyword argument {key!r}; did you mean "
               f"{closest!r}?")
    with pytest.raises(ArgumentTypeError, match=f"^{re.escape(message)}$"):
        zd.to_zarrx(da.ones(4, chunks=2), str(tmp_path / "a.zarr"), **{key: True})
    assert not (tmp_path / "a.zarr").exists()


def test_an_array_in_the_way_says_how_to_replace_it_or_write_into_it(tmp_path):
    path = str(tmp_path / "a.zarr")
    zarrx.create_array(path, shape=(4,), dtype="f8")[:] = 7
    with pytest.raises(ContainsArrayError) as info:
        zd.to_zarrx(da.ones(4, chunks=2), path)
    assert str(info.value) == f"open_array: a node already exists at '/' in LocalStore({path!r})"
    assert info.value.__notes__ == ["to_zarrx: pass overwrite=True (or mode='w') to replace it, "
                                    "or mode='r+' to write into it"]
    assert zarrx.open_array(path, mode="r")[:].tolist() == [7] * 4
    zd.to_zarrx(da.ones(4, chunks=2), path, mode="r+")
    assert zarrx.open_array(path, mode="r")[:].tolist() == [1] * 4


def test_a_group_in_the_way_says_how_to_replace_it(tmp_path):
    path = str(tmp_path / "g.zarr")
    zarrx.open_group(path, mode="w")
    with pytest.raises(ContainsGroupError) as info:
        zd.to_zarrx(da.ones(4, chunks=2), path)
    assert info.value.__notes__ == ["to_zarrx: pass overwrite=True (or mode='w') to replace it"]
    zd.to_zarrx(da.ones(4, chunks=2), path, overwrite=True)
    assert np.array_equal(zarrx.open_array(path, mode="r")[:], np.ones(4))


def _failing(n: int = 8):
    """A dask array whose last block cannot be computed."""
    def block(x):
        if x[0] >= n - 2:
            raise RuntimeError("this block cannot be computed")
        return x
    return da.arange(n, chunks=2).map_blocks(block, dtype=int)


@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
def test_a_write_into_a_zip_path_that_fails_leaves_the_path_as_it_was(tmp_path, existing):
    path = tmp_path / "a.zip"
    if existing:
        zd.to_zarrx(da.ones(4, chunks=2), str(path))
        before = path.read_bytes()
    with pytest.raises(RuntimeError, match="cannot be computed"):
        zd.to_zarrx(_failing(), str(path), mode="w")
    gc.collect()                # a store nobody closed would be finished now
    assert sorted(p.name for p in tmp_path.iterdir()) == (["a.zip"] if existing else [])
    if existing:
        assert path.read_bytes() == before
