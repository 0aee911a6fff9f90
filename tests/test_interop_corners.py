"""Rarely used corners where zarrx, zarr-python 3 and tensorstore must agree on what is stored."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")


def _v2_array(path, dtype: str, fill, filters=None) -> None:
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [4], "chunks": [2], "dtype": dtype, "compressor": None,
        "filters": filters, "order": "C", "fill_value": fill}))


def _chunks(path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if not p.name.startswith("."))


def _zarr_python_reads(path) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open_array(str(path), mode="r")[...].tolist()


@pytest.mark.parametrize("write_empty", [None, False])
def test_strings_equal_to_a_zero_fill_value_are_stored(tmp_path, write_empty) -> None:
    """zarr-python 2 wrote ``"fill_value": 0`` for every string array. zarrx reads the cells of
    a missing chunk there as ``""``, zarr-python 3 as ``"0"`` and zarr-python 2 as the integer
    0: zarrx deleted the chunks it wrote holding only ``""``, which zarr-python then read as
    ``"0"``."""
    path = tmp_path / "s.zarr"
    _v2_array(path, "|O", 0, [{"id": "vlen-utf8"}])
    z = zarrx.open_array(str(path), mode="r+", write_empty_chunks=write_empty)
    z[...] = ""
    z[:2] = ["", ""]
    assert _chunks(path) == ["0", "1"]
    assert _zarr_python_reads(path) == ["", "", "", ""]
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == ["", "", "", ""]


def test_bytes_equal_to_a_zero_fill_value_are_stored(tmp_path) -> None:
    path = tmp_path / "b.zarr"
    _v2_array(path, "|O", 0, [{"id": "vlen-bytes"}])
    z = zarrx.open_array(str(path), mode="r+")
    z[...] = b""
    assert _chunks(path) == ["0", "1"]
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == [b""] * 4


@pytest.mark.parametrize("dtype, value", [("<i4", 0), ("<f8", 0.0), ("<M8[s]", "NaT")])
def test_chunks_of_an_array_without_a_fill_value_are_stored(tmp_path, dtype, value) -> None:
    """A Zarr v2 ``null`` fill value leaves the cells of a missing chunk undefined (zarr-python 2
    hands out uninitialised memory there): zarrx deleted the chunks it wrote holding what it
    reads there (zeros, NaT). It now stores them, as zarr-python 2 and tensorstore do."""
    path = tmp_path / "n.zarr"
    _v2_array(path, dtype, None)
    z = zarrx.open_array(str(path), mode="r+")
    z[...] = np.array(value, dtype=dtype)
    assert _chunks(path) == ["0", "1"]
    if dtype == "<M8[s]":
        return                                  # a data type tensorstore does not read
    ts_path = tmp_path / "t.zarr"
    _v2_array(ts_path, dtype, None)
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(ts_path)}}).result()
    t[...] = np.array(value, dtype=dtype)
    assert _chunks(ts_path) == _chunks(path)
    assert (ts_path / "0").read_bytes() == (path / "0").read_bytes()


@pytest.mark.parametrize("dtype, fill, filters, value", [
    ("|O", "", [{"id": "vlen-utf8"}], ""), ("<i4", 0, None, 0)])
def test_chunks_equal_to_a_fill_value_all_read_alike_are_still_deleted(tmp_path, dtype, fill,
                                                                       filters, value) -> None:
    path = tmp_path / "d.zarr"
    _v2_array(path, dtype, fill, filters)
    z = zarrx.open_array(str(path), mode="r+")
    z[...] = value
    assert _chunks(path) == []
