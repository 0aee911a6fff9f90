"""A ``struct`` data type of very many fields opens and takes attribute updates in time
proportional to its size, with a small constant: the fields of core types and their integer
fill values are read without building an error location per field, and a type's fields are
parsed once per document. A field that is wrong is still named exactly."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import zarrx
from zarrx.metadata._util import Loc

N = 2000


def _doc(n: int, fill: dict | None = None) -> dict:
    fields = [{"name": f"f{i}", "data_type": "int8" if i % 2 else "uint16"} for i in range(n)]
    return {"zarr_format": 3, "node_type": "array", "shape": [2],
            "data_type": {"name": "struct", "configuration": {"fields": fields}},
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "codecs": [{"name": "bytes"}],
            "fill_value": fill or {f"f{i}": i % 100 for i in range(n)}, "attributes": {}}


def _write(tmp_path, doc: dict) -> str:
    (tmp_path / "a.zarr").mkdir()
    (tmp_path / "a.zarr" / "zarr.json").write_text(json.dumps(doc))
    return str(tmp_path / "a.zarr")


def test_no_error_location_is_built_per_field(tmp_path, monkeypatch):
    path = _write(tmp_path, _doc(N))
    made = [0]
    child = Loc.__truediv__

    def counting(self, part):
        made[0] += 1
        return child(self, part)

    monkeypatch.setattr(Loc, "__truediv__", counting)
    z = zarrx.open_array(path)
    z.attrs["units"] = "K"
    assert made[0] < N // 10, made[0]          # was about 39 per field
    monkeypatch.undo()
    z = zarrx.open_array(path)
    assert z.attrs["units"] == "K"
    assert z.fill_value["f3"] == 3 and z.fill_value["f1998"] == 98
    assert json.loads((tmp_path / "a.zarr" / "zarr.json").read_text())["fill_value"] \
        == _doc(N)["fill_value"]
    z[...] = np.zeros(2, z.dtype)
    assert z[0]["f7"] == 0


@pytest.mark.parametrize("field, value, message", [
    ("f1", 200, "zarr.json fill_value.f1: expected an integer in [-128, 127], found 200"),
    ("f2", -1, "zarr.json fill_value.f2: expected an integer in [0, 65535], found -1"),
    ("f3", 1.5, "zarr.json fill_value.f3: expected an integer in [-128, 127], found 1.5"),
])
def test_a_wrong_field_fill_value_is_still_named(tmp_path, field, value, message):
    fill = _doc(N)["fill_value"]
    fill[field] = value
    with pytest.raises(zarrx.MetadataError, match=re.escape(message)):
        zarrx.open_array(_write(tmp_path, _doc(N, fill)))


def test_a_repeated_field_name_is_still_named(tmp_path):
    doc = _doc(N)
    doc["data_type"]["configuration"]["fields"][5]["name"] = "f4"
    with pytest.raises(zarrx.MetadataError,
                       match=re.escape("data_type.configuration.fields[5].name: expected a "
                                       "unique non-empty field name, found 'f4'")):
        zarrx.open_array(_write(tmp_path, doc))
