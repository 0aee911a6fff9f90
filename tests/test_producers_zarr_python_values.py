"""``scale_offset`` and ``cast_value`` arrays written by zarr-python's main branch (3.3+, with
cast-value-rs) read by zarrx, and zarrx writing the same arrays: the same stored bytes and the
same codec metadata; the value codecs in a shard's inner chain and before the sharding codec.

tests/data/zarr-python-main/values.zarr and cases.json were written by make_fixtures.py there
(its docstring says how); cases.json holds what was written to each array and what
zarr-python read back.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore

DATA = Path(__file__).resolve().parent / "data" / "zarr-python-main"
CORPUS = DATA / "values.zarr"
CASES = json.loads((DATA / "cases.json").read_text())


def _same(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got.tolist(), expected):
        if isinstance(e, float) and math.isnan(e):
            assert math.isnan(g)
        else:
            assert g == e and math.copysign(1, g) == math.copysign(1, e), (g, e)


@pytest.mark.parametrize("name", sorted(CASES))
def test_zarrx_reads_what_zarr_python_wrote(name):
    a = zarrx.open_array(str(CORPUS / name), mode="r")
    _same(a[:], CASES[name]["read"])
    for i in (0, len(CASES[name]["read"]) - 1):
        _same(np.atleast_1d(a[i]), CASES[name]["read"][i:i + 1])


def _chunks(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*")
            if p.is_file() and p.name != "zarr.json"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_zarrx_writes_the_bytes_and_metadata_zarr_python_writes(tmp_path, name):
    theirs = json.loads((CORPUS / name / "zarr.json").read_text())
    codecs = theirs["codecs"]
    grid = theirs["chunk_grid"]["configuration"]["chunk_shape"]
    names = [c["name"] for c in codecs]
    kw: dict = {"chunks": grid}
    if names[0] == "sharding_indexed":         # the value codecs in the inner chain
        inner = codecs[0]["configuration"]
        kw = {"shards": grid, "chunks": inner["chunk_shape"]}
        codecs = inner["codecs"]
    elif "sharding_indexed" in names:          # the value codecs before the sharding codec
        inner = codecs[-1]["configuration"]
        kw["serializer"] = zarrx.codecs.ShardingCodec(chunk_shape=inner["chunk_shape"],
                                                      codecs=inner["codecs"])
    filters = [c for c in codecs if c["name"] in ("scale_offset", "cast_value")]
    a = zarrx.create_array(str(tmp_path / name), shape=theirs["shape"],
                           dtype=theirs["data_type"], fill_value=theirs["fill_value"],
                           filters=filters, compressors=None, **kw)
    for start, stop, values in CASES[name]["writes"]:
        a[start:stop] = np.array([float(v) if isinstance(v, str) else v for v in values],
                                 dtype=a.dtype)
    ours = json.loads((tmp_path / name / "zarr.json").read_text())
    assert ours["codecs"] == theirs["codecs"]
    assert ours["fill_value"] == theirs["fill_value"]
    assert _chunks(tmp_path / name) == _chunks(CORPUS / name)


def test_value_codecs_before_the_sharding_codec_are_reported_as_filters():
    a = zarrx.open_array(str(CORPUS / "sharded_outer"), mode="r")
    assert [c.to_dict() for c in a.filters] == [
        {"name": "scale_offset", "configuration": {"offset": -1, "scale": 2}},
        {"name": "cast_value", "configuration": {"data_type": "int16"}}]
    from zarrx.info import array_info
    assert "Codecs        : scale_offset(offset=-1, scale=2), cast_value(data_type='int16'), " \
        "bytes(endian='little')" in array_info(a)
