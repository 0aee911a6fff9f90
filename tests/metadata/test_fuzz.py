"""Fuzz: random bytes and random JSON-ish values fed to the parsers raise only MetadataError."""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarrx.errors import MetadataError
from zarrx.metadata import (make_array_meta, parse_array_v2, parse_group_v2, parse_v3,
                            parse_zmetadata, serialize_v2, serialize_v3)

from ._malformed import GOOD_V2, GOOD_V3, shard

FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
           | st.sampled_from(["NaN", "Infinity", "0x7fc00001", "bytes", "regular", "inline",
                              "sharding_indexed", "<f4", "|O", "default", "/", "."]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=12)
SHARDED = {**GOOD_V3, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 6]}},
           "codecs": [shard([2, 3])]}


def _only_metadata_errors(fn, *args):
    try:
        meta = fn(*args)
    except MetadataError:
        return None
    return meta


def _paths(doc, prefix=()):
    """Every (path) into a nested JSON document."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


def _replace(doc, path, value):
    doc = copy.deepcopy(doc)
    if not path:
        return value
    node = doc
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return doc


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(blob):
    for fn, args in ((parse_v3, (blob, "k")), (parse_array_v2, (blob, None, "k")),
                     (parse_array_v2, (GOOD_V2, blob, "k")), (parse_group_v2, (blob, None, "k")),
                     (parse_zmetadata, (blob, "k"))):
        _only_metadata_errors(fn, *args)


@FUZZ
@given(st.dictionaries(st.text(max_size=12), json_values, max_size=6))
def test_random_documents(doc):
    for fn, args in ((parse_v3, (doc, "k")), (parse_array_v2, (doc, doc, "k")),
                     (parse_zmetadata, (doc, "k"))):
        _only_metadata_errors(fn, *args)


@FUZZ
@given(st.sampled_from(["v3", "sharded", "v2"]), st.data(), json_values)
def test_mutated_documents(which, data, value):
    good = {"v3": GOOD_V3, "sharded": SHARDED, "v2": GOOD_V2}[which]
    path = data.draw(st.sampled_from(list(_paths(good))[1:]))
    doc = _replace(good, path, value)
    text = json.dumps(doc, allow_nan=True).encode()
    if which == "v2":
        meta = _only_metadata_errors(parse_array_v2, text, None, "k")
        if meta is not None:          # what parses also serialises and parses back
            assert parse_array_v2(serialize_v2(meta)[".zarray"], None, "k") == meta
    else:
        meta = _only_metadata_errors(parse_v3, text, "k")
        if meta is not None:
            assert parse_v3(serialize_v3(meta), "k") == meta


@FUZZ
@given(json_values, json_values, st.sampled_from([2, 3]))
def test_make_array_meta_rejects_cleanly(fill, chunks, fmt):
    for args in (((4, 4), "float32", chunks, fill), ((4, 4), fill, (2, 2), None),
                 (chunks, "int8", (2, 2), None)):
        try:
            make_array_meta(args[0], args[1], args[2], fill_value=args[3], zarr_format=fmt)
        except MetadataError:
            pass


def test_a_shard_index_past_the_limit_is_a_metadata_error():
    """Found by test_mutated_documents: a chunk grid that makes the shard index larger than
    zarrx reads is a fault of the document, reported as such."""
    import json
    doc = {**SHARDED, "shape": [10, 6],
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [67108864, 6]}}}
    with pytest.raises(MetadataError) as info:
        parse_v3(json.dumps(doc).encode(), "zarr.json")
    assert str(info.value) == ("zarr.json codecs[0]: a shard of 67108864 inner chunks "
                               "((33554432, 2)) needs a 1073741828-byte index; at most "
                               "1073741824 bytes are supported")
