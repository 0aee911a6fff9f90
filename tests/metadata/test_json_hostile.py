"""The JSON layer against hostile documents (linear time), and non-finite numbers as zarr-python
writes and reads them."""
from __future__ import annotations

import json
import math
import re
import time
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import MetadataError
from zarrx.metadata import json as mjson

# documents of about n bytes that the depth pre-check must reject (or let JSON reject) quickly
ADVERSARIAL = {
    "open-brackets": lambda n: b"[" * n,
    "open-objects": lambda n: b'{"a":' * (n // 5),
    "unclosed-strings": lambda n: b"[" * 70 + b'"\\' * (n // 2),
    "escaped-quotes": lambda n: b"[" * 70 + b'"' + b'\\"' * (n // 2),
    "string-starts": lambda n: b'["[' * (n // 3),
    "quotes": lambda n: b"[" * 70 + b'"' * n,
    "deep-then-string": lambda n: b"[" * 65 + b'"' + b"[" * (n - 66),
}


def reject_time(doc: bytes) -> float:
    """The best of 7 CPU times (the machine may be shared) to reject ``doc``."""
    best = math.inf
    for _ in range(7):
        t = time.process_time()
        with pytest.raises(MetadataError):
            mjson.load(doc, "a/zarr.json")
        best = min(best, time.process_time() - t)
    return best


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_adversarial_documents_are_rejected_in_linear_time(name):
    small, large = (reject_time(ADVERSARIAL[name](n)) for n in (20_000, 80_000))
    assert large < 0.050                        # 80 KB: well under 50 ms
    assert large < 8 * small + 0.005            # 4x the input: under 8x the time


def test_depth_is_measured_outside_strings():
    with pytest.raises(MetadataError, match=re.escape(
            "a/zarr.json: expected JSON nested at most 128 levels deep, found 140 levels")):
        mjson.load(b"[" * 140 + b'"\\' * 1000, "a/zarr.json")
    doc = {"attributes": {"s": "[" * 5000 + '\\"{' * 100}, "zarr_format": 3}
    assert mjson.load(json.dumps(doc), "k") == doc


@pytest.mark.parametrize("doc,key", [
    (b'{"a": 1, "a": 2}', "a"),
    (b'{"a" : 1, "b": "x\\":", "a"\t\r\n: 2}', "a"),   # a key-like string, spaced colons
    (b'{"b": {"c": [{"d": 1, "d": 2}]}}', "d"),
    (b'{"\\"q": 1, "e": ["\\"q\\":"], "\\"q": 2}', '"q'),
    (b'{"x": {}, "y": [], "x": null}', "x"),
])
def test_repeated_keys_are_found_however_spelt(doc, key):
    with pytest.raises(MetadataError, match=re.escape(
            f"k: expected unique keys in every JSON object, found key {key!r} twice")):
        mjson.load(doc, "k")


@pytest.mark.parametrize("doc", [
    b'{"a": "b\\":", "c": ["d\\" : 1"], "e" : {"f":"g"}}',
    b'{"\\\\": {"\\u0022": 1}, "x\\"": [{"y": [[]]}]}',
    '{"\u00e9t\u00e9": {"\u00e9": "\u00e9:"}}'.encode(),
])
def test_documents_without_repeated_keys_read_as_json_reads_them(doc):
    assert mjson.load(doc, "k") == json.loads(doc)


def test_bare_non_finite_numbers_read_as_floats_anywhere():
    got = mjson.load(b'{"a": NaN, "b": [Infinity, -Infinity], "c": {"d": [[NaN]]}}', "k")
    assert math.isnan(got["a"]) and got["b"] == [math.inf, -math.inf]
    assert math.isnan(got["c"]["d"][0][0])
    with pytest.raises(MetadataError, match=re.escape("k: expected JSON numbers (non-finite "
                                                      'values are the strings "NaN", '
                                                      '"Infinity", "-Infinity"), found bare NaN')):
        mjson.load(b'{"a": NaN}', "k", allow_nonfinite=False)


# -- interop with zarr-python ------------------------------------------------------------------
ATTRS = {"nan": math.nan, "inf": math.inf, "list": [1.5, -math.inf], "text": "NaN"}


def same_attrs(got) -> bool:
    return (math.isnan(got["nan"]) and got["inf"] == math.inf and got["list"] == [1.5, -math.inf]
            and got["text"] == "NaN")


@pytest.mark.parametrize("fmt", [2, 3])
def test_zarr_python_reads_our_non_finite_attributes_as_floats(tmp_path, fmt):
    zarr = pytest.importorskip("zarr")
    g = zarrx.open_group(str(tmp_path / "g"), mode="w", zarr_format=fmt)
    g.attrs.update(ATTRS)
    a = g.create_array("x", shape=(2,), dtype="f4", chunks=(2,), fill_value=np.nan)
    a.attrs.update(ATTRS)
    zarrx.consolidate_metadata(str(tmp_path / "g"))
    doc = (tmp_path / "g" / "x" / ("zarr.json" if fmt == 3 else ".zarray")).read_bytes()
    assert b'"fill_value": "NaN"' in doc            # fill values keep the spec's spelling
    attrs = (tmp_path / "g" / "x" / ("zarr.json" if fmt == 3 else ".zattrs")).read_bytes()
    assert b'"nan": NaN' in attrs and b'"inf": Infinity' in attrs   # bare, as zarr-python writes
    theirs = zarr.open_group(str(tmp_path / "g"), mode="r", use_consolidated=False)
    assert same_attrs(dict(theirs.attrs)) and same_attrs(dict(theirs["x"].attrs))
    assert math.isnan(theirs["x"].fill_value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        consolidated = zarr.open_consolidated(str(tmp_path / "g"), zarr_format=fmt)
    assert same_attrs(dict(consolidated["x"].attrs))


@pytest.mark.parametrize("fmt", [2, 3])
def test_we_read_zarr_python_non_finite_attributes(tmp_path, fmt):
    zarr = pytest.importorskip("zarr")
    g = zarr.open_group(str(tmp_path / "g"), mode="w", zarr_format=fmt)
    g.attrs.update(ATTRS)
    g.create_array("x", shape=(2,), dtype="f8", fill_value=np.nan).attrs.update(ATTRS)
    with warnings.catch_warnings():             # v3 consolidated metadata is not yet a spec
        warnings.simplefilter("ignore")
        zarr.consolidate_metadata(str(tmp_path / "g"))
    assert b"NaN" in (tmp_path / "g" / ("zarr.json" if fmt == 3 else ".zattrs")).read_bytes()
    ours = zarrx.open_group(str(tmp_path / "g"), mode="r")
    assert same_attrs(dict(ours.attrs)) and same_attrs(dict(ours["x"].attrs))
    assert np.isnan(ours["x"].fill_value)


def test_large_documents_are_indented_down_to_a_few_levels_and_read_back_the_same():
    """Documents of more than INDENT_MAX_VALUES values (large consolidated metadata) are
    indented down to INDENT_LEVELS levels, each value below on one line; smaller ones exactly
    as ``json.dumps(indent=2)`` writes them."""
    small = {"a": [1, {"b": float("nan")}], "c": "\u00e9"}
    assert mjson.dumps(small) == json.dumps(small, indent=2).encode()
    entry = {"shape": [4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
             "fill_value": "NaN", "attributes": {"x": [np.float32(0.5), np.int64(3)]}}
    doc = {"zarr_format": 3, "node_type": "group", "consolidated_metadata": {
        "kind": "inline", "metadata": {f"a{i}": entry for i in range(mjson.INDENT_MAX_VALUES)}}}
    text = mjson.dumps(doc).decode()
    assert json.loads(text) == json.loads(json.dumps(mjson._clean(doc)))
    lines = text.splitlines()
    assert len(lines) == 6 + mjson.INDENT_MAX_VALUES + 3
    assert lines[6] == '      "a0": {"shape": [4], "codecs": [{"name": "bytes", "configuration": ' \
                       '{"endian": "little"}}], "fill_value": "NaN", "attributes": {"x": ' \
                       '[0.5, 3]}},'


@pytest.mark.parametrize("name", ["tree_keys", "footprint"])
def test_the_tree_walks_stop_at_the_recursion_limit(name):
    """Both walk a parsed value recursively in C, where nothing stopped a deep value before the
    stack overflowed (the process died); callers only hand them values checked for depth."""
    from zarrx.metadata import _jsonscan
    walk = getattr(_jsonscan, name)
    deep: list = []
    for _ in range(200_000):
        deep = [deep]
    with pytest.raises(RecursionError):
        walk(deep)
    with pytest.raises(RecursionError):
        walk({"a": [{"b": deep}]})
    nested: dict = {"x": [1.5, "ab", None]}      # 100 levels: well inside the limit
    for _ in range(100):
        nested = {"k": [nested, True]}
    assert _jsonscan.tree_keys(nested) == 101
    assert _jsonscan.footprint(nested) == 184 + 50 + 80 + 24 + 51 + 100 * (184 + 50 + 72)
