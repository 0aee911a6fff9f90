"""Stored fill values other writers left, read as zarr-python 3 reads them."""
from __future__ import annotations

import json
import warnings

import pytest

import zarrx

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("fill,text", [(5, "5"), (-1, "-1"), (1.5, "1.5"), (True, "True"),
                                       (2**70, str(2**70)), (1e300, "1e+300"), ("x", "x"),
                                       (0, "")])
def test_a_number_as_the_fill_value_of_v2_strings_reads_as_its_text(tmp_path, fill, text):
    """zarr-python 2 stored any number given as the fill value of an object array; zarrx
    refused the array (expected a string), where zarr-python 3 reads the number's text. (Its
    default, 0, reads as the empty string, as documented in docs/guide/migrating.md.)"""
    path = tmp_path / "a.zarr"
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "|O", "compressor": None,
        "fill_value": fill, "order": "C", "filters": [{"id": "vlen-utf8"}]}))
    z = zarrx.open_array(str(path), mode="r+")
    assert z.fill_value == text
    assert z[...].tolist() == [text] * 3
    z[:1] = ["q"]
    z.resize((4,))
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == ["q"] + [text] * 3
    if fill != 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert zarr.open_array(str(path), mode="r")[...].tolist() == ["q"] + [text] * 3


def test_a_number_as_the_fill_value_of_v3_strings_is_refused(tmp_path):
    (tmp_path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 5,
        "codecs": [{"name": "vlen-utf8"}]}))
    with pytest.raises(zarrx.MetadataError, match="fill_value: expected a string, found 5"):
        zarrx.open_array(str(tmp_path), mode="r")
