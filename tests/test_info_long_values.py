"""``info`` and ``zarrx info`` show long values cut, not in full: a fill value may be a
string of 60 MB, a dimension name one of 2 MB."""
from __future__ import annotations

import json

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
