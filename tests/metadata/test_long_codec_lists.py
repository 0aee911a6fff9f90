"""Codec lists longer than any array uses (a hostile document may hold 100,000 codecs) are
refused by their length, before any codec in them is checked."""
from __future__ import annotations

import json

import numcodecs
import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.metadata import codecs as mcodecs
from zarrx.store import MemoryStore

from . import counted_calls

TRANSPOSE = {"name": "transpose", "configuration": {"order": [0]}}
BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


def v3_doc(codecs: list) -> dict:
    return {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 3, "codecs": codecs}


def v2_doc(filters: list | None) -> dict:
    return {"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<u2", "fill_value": 3,
            "order": "C", "filters": filters, "compressor": None}


def opened(doc: dict, key: str = "zarr.json") -> zarrx.Array:
    return zarrx.open_array(MemoryStore({key: json.dumps(doc).encode()}), mode="r")


@pytest.fixture
def checked(monkeypatch):
    """The number of codecs checked one by one."""
    return counted_calls(monkeypatch, mcodecs, "parse_codec")


def test_a_list_of_100000_codecs_is_refused_by_its_length_before_any_is_checked(checked):
    codecs = [TRANSPOSE] * 100_000 + [BYTES]
    codecs[70] = {"name": "transpose", "configuration": {"order": "sideways"}}
    with pytest.raises(MetadataError, match=r"^zarr\.json codecs: expected at most 64 codecs, "
                       r"found 100001 codecs$"):
        opened(v3_doc(codecs))
    assert checked[0] == 0                      # was 100,001, and the error named codecs[70]


def test_a_sharding_codec_with_100000_inner_or_index_codecs_is_refused_by_length(checked):
    def shard(codecs: list, index: list) -> list:
        return [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1], "codecs": codecs, "index_codecs": index}}]
    with pytest.raises(MetadataError, match=r"^zarr\.json codecs\[0\]\.configuration\.codecs: "
                       r"expected at most 64 codecs, found 100001 codecs$"):
        opened(v3_doc(shard([TRANSPOSE] * 100_000 + [BYTES], [BYTES])))
    with pytest.raises(MetadataError, match=r"^zarr\.json codecs\[0\]\.configuration\."
                       r"index_codecs: expected at most 64 codecs, found 100001 codecs$"):
        opened(v3_doc(shard([BYTES], [BYTES]
                            + [{"name": "crc32c"}] * 100_000)))
    assert checked[0] <= 4          # the sharding codecs and a bytes codec (was 200,005)


def test_64_codecs_still_open():
    a = opened(v3_doc([TRANSPOSE] * 63 + [BYTES]))
    assert a[...].tolist() == [3, 3, 3, 3]


def test_a_v2_array_of_more_than_64_filters_is_refused_by_its_length():
    delta = {"id": "delta", "dtype": "<u2"}
    with pytest.raises(MetadataError, match=r"^\.zarray filters: expected at most 64 filters, "
                       r"found 100000 filters$"):
        opened(v2_doc([delta] * 100_000), ".zarray")    # was read: every chunk through each
    assert opened(v2_doc([delta] * 64), ".zarray")[...].tolist() == [3, 3, 3, 3]
    with pytest.raises(MetadataError, match=r"^array metadata filters: expected at most 64 "
                       r"filters, found 65 filters$"):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="u2", compressors=None,
                           filters=[numcodecs.Delta(dtype="<u2")] * 65, zarr_format=2)
    z = zarrx.create_array(MemoryStore(), shape=(4,), dtype="u2", compressors=None,
                           filters=[numcodecs.Delta(dtype="<u2")] * 64, zarr_format=2)
    z[...] = np.arange(4)
    assert z[...].tolist() == [0, 1, 2, 3]
