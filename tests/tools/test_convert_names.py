"""``zarrx convert`` keeps dimension names between Zarr v3's ``dimension_names`` and Zarr v2's
``_ARRAY_DIMENSIONS`` attribute, or refuses what the target format cannot hold."""
from __future__ import annotations

import json

import numpy as np
import pytest

import zarrx
from zarrx import cli

zarr = pytest.importorskip("zarr")


def test_names_given_to_some_dimensions_only_are_refused_in_v2(tmp_path, capsys):
    # the names were dropped without a word: ('y', None) became no _ARRAY_DIMENSIONS at all
    src = str(tmp_path / "v3.zarr")
    g = zarr.open_group(src, mode="w", zarr_format=3)
    g.create_array("part", shape=(2, 3), chunks=(2, 3), dtype="i2", fill_value=0,
                   dimension_names=["y", None])[...] = np.arange(6).reshape(2, 3)
    g.create_array("all", shape=(2,), chunks=(2,), dtype="i2", fill_value=0,
                   dimension_names=["t"])[...] = [1, 2]
    dst = tmp_path / "v2.zarr"
    assert cli.main(["convert", src, str(dst), "--zarr-format", "2"]) == 2   # the option's
    err = capsys.readouterr().err
    assert err == ("zarrx convert: argument --zarr-format: convert /part: Zarr v2 cannot hold "
                   "the dimension names ('y', None): its _ARRAY_DIMENSIONS attribute names every "
                   "dimension, and dimension 1 has no name; write Zarr v3 (--zarr-format 3), "
                   "which keeps them (see zarrx convert --help)\n")
    assert not dst.exists()                         # refused before anything is written
    assert cli.main(["convert", f"{src}/all", str(dst), "--zarr-format", "2", "-q"]) == 0
    assert json.loads((dst / ".zattrs").read_text()) == {"_ARRAY_DIMENSIONS": ["t"]}


def test_no_names_and_an_attribute_of_the_source_are_kept(tmp_path):
    src = str(tmp_path / "v3.zarr")
    g = zarr.open_group(src, mode="w", zarr_format=3)
    g.create_array("none", shape=(2,), chunks=(2,), dtype="u1", fill_value=0,
                   dimension_names=[None])
    g.create_array("attr", shape=(2,), chunks=(2,), dtype="u1", fill_value=0,
                   dimension_names=["x"], attributes={"_ARRAY_DIMENSIONS": ["given"]})
    zarrx.convert(src, str(tmp_path / "v2.zarr"), zarr_format=2)
    out = zarrx.open_group(str(tmp_path / "v2.zarr"), mode="r")
    assert "_ARRAY_DIMENSIONS" not in out["none"].attrs
    assert out["attr"].attrs["_ARRAY_DIMENSIONS"] == ["given"]
