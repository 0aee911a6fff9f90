"""``info`` and ``zarrx info`` show long values cut, not in full: a fill value may be a
string of 60 MB, a dimension name one of 2 MB."""
from __future__ import annotations

import json

import pytest

import zarrx
from zarrx import cli
from zarrx.info import CELL_WIDTH


def _array(tmp_path) -> str:
    p = str(tmp_path / "long.zarr")
    doc = {"zarr_format": 3, "node_type": "array", "shape": [1, 1], "data_type": "string",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1, 1]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "f" * 3_000_000,
           "codecs": [{"name": "vlen-utf8"}], "dimension_names": ["d" * 2_000_000, "y"],
           "attributes": {}}
    zarrx.storage.LocalStore(p).set("zarr.json", json.dumps(doc).encode())
    return p


def _rows(text: str) -> dict[str, str]:
    return {k.strip(): v for k, v in (line.split(" : ", 1) for line in text.splitlines())}


def test_info_cuts_a_long_fill_value_and_long_dimension_names(tmp_path, capsys):
    p = _array(tmp_path)
    z = zarrx.open_array(p, mode="r")
    assert len(z.fill_value) == 3_000_000                # the value itself is whole
    for text in (str(z.info), (cli.main(["info", p]), capsys.readouterr().out)[1]):
        rows = _rows(text)
        assert rows["Fill value"] == "'" + "f" * (CELL_WIDTH - 4) + "..."
        assert rows["Dimensions"] == "('" + "d" * (CELL_WIDTH - 5) + "..."
        assert len(text) < 3000
    assert len(repr(z)) < 200


def test_info_shows_short_values_whole(tmp_path):
    z = zarrx.create_array(str(tmp_path / "s.zarr"), shape=(2, 3), dtype="U4",
                           fill_value="abc", dimension_names=["x", None])
    rows = _rows(str(z.info))
    assert rows["Fill value"] == "'abc'" and rows["Dimensions"] == "('x', None)"
    z = zarrx.create_array(str(tmp_path / "t.zarr"), shape=(2,), dtype="i4",
                           dimension_names=["time"])
    assert _rows(str(z.info))["Dimensions"] == "('time',)"


ML_FLOATS = ["float8_e5m2", "float8_e4m3fn", "bfloat16", "float4_e2m1fn", "float8_e8m0fnu"]


def test_info_and_cat_of_every_ml_float_type(tmp_path, capsys):
    """ml_dtypes files float8_e5m2 under numpy's kind "f", but numpy cannot cast it to text:
    ``info`` (``Array.info`` too) and ``cat`` of such an array (tensorstore writes them)
    raised TypeError. Each type prints its values as its Python numbers."""
    pytest.importorskip("ml_dtypes")
    for name in ML_FLOATS:
        p = str(tmp_path / f"{name}.zarr")
        z = zarrx.create_array(p, shape=(3,), chunks=(2,), dtype=name, fill_value=2.0)
        z[0] = 0.5
        assert _rows(str(z.info))["Fill value"] == "2.0", name
        assert cli.main(["info", p]) == 0
        assert _rows(capsys.readouterr().out)["Fill value"] == "2.0", name
        assert cli.main(["cat", p]) == 0
        assert capsys.readouterr().out.split() == ["0.5", "2.0", "2.0"], name
