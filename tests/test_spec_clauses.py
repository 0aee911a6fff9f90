"""Clauses of the Zarr specifications, one test (or table) per clause, organised by section:
what a conforming document or store must read as, and what zarrx must refuse or write."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError, MetadataError
from zarrx.store import MemoryStore

LE = {"name": "bytes", "configuration": {"endian": "little"}}


def v3_doc(**fields) -> dict:
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "float64",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
           "fill_value": 0, "codecs": [LE]}
    doc.update(fields)
    return doc


def stored(text: str | bytes, key: str = "zarr.json") -> MemoryStore:
    store = MemoryStore()
    store.set(key, text.encode() if isinstance(text, str) else text)
    return store


def keys(store: MemoryStore) -> list[str]:
    return sorted(store.list_prefix(""))


# -- v3 core, "Permitted fill values": a JSON number is rounded to the nearest value ------------
@pytest.mark.parametrize("dtype, literal, expected", [
    ("float64", "1e400", math.inf),
    ("float64", "-1e400", -math.inf),
    ("float32", "1e400", math.inf),
    ("float16", "-2e308", -math.inf),
    ("complex128", "[1e400, -1E+999]", complex(math.inf, -math.inf)),
])
def test_a_number_past_a_doubles_range_is_an_infinity(dtype, literal, expected):
    """JSON numbers too large for a double (Python reads them as infinities) round to an
    infinity like any number past the type's range; rewritten, the fill value is the spec's
    string, never a bare ``Infinity``."""
    text = json.dumps(v3_doc(data_type=dtype)).replace('"fill_value": 0',
                                                       f'"fill_value": {literal}')
    store = stored(text)
    a = zarrx.open_array(store, mode="r+")
    assert a.fill_value == expected
    assert np.all(a[...] == expected)
    a.attrs["x"] = 1                                  # rewrites zarr.json
    doc = json.loads(store.get("zarr.json"))
    want = (["Infinity" if x > 0 else "-Infinity" for x in (expected.real, expected.imag)]
            if dtype.startswith("complex") else "Infinity" if expected > 0 else "-Infinity")
    assert doc["fill_value"] == want
    assert zarrx.open_array(store, mode="r").fill_value == expected


def test_a_bare_infinity_fill_value_is_still_not_a_json_number():
    text = json.dumps(v3_doc()).replace('"fill_value": 0', '"fill_value": Infinity')
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(stored(text), mode="r")
    assert str(info.value) == ('zarr.json fill_value: expected a number, "NaN", "Infinity", '
                               '"-Infinity" or a hex bit pattern of 16 digits, found inf')


def test_a_huge_number_in_attributes_reads_as_an_infinity():
    text = json.dumps(v3_doc(attributes={"big": 0})).replace('"big": 0', '"big": 1e400')
    assert zarrx.open_array(stored(text), mode="r").attrs["big"] == math.inf


# -- v3 core, "Node names" -------------------------------------------------------------------
def v3_name_message(what: str, path: str, name: str) -> str:
    return (f"{what}: cannot create {path!r}: expected Zarr v3 node names not made only of "
            f"periods and not starting with '__zarr' (reserved by the Zarr v3 specification), "
            f"found {name!r}")


@pytest.mark.parametrize("name", ["...", "....", "__zarr", "__zarr_x"])
def test_v3_node_names_the_spec_forbids_are_refused_before_anything_is_written(name):
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w")
    before = keys(store)
    with pytest.raises(ArgumentError) as info:
        g.create_group(name)
    assert str(info.value) == v3_name_message("create_group", name, name)
    with pytest.raises(ArgumentError) as info:
        g.create_array(name, shape=(2,), dtype="i1")
    assert str(info.value) == v3_name_message("create_array", name, name)
    with pytest.raises(ArgumentError) as info:        # an implicit parent is named too
        zarrx.create_array(store, name=f"{name}/a", shape=(2,), dtype="i1")
    assert str(info.value) == v3_name_message("create_array", f"{name}/a", name)
    with pytest.raises(ArgumentError) as info:
        zarrx.create_group(store, path=f"g/{name}")
    assert str(info.value) == v3_name_message("create_group", f"g/{name}", name)
    g.create_group("sub")
    with pytest.raises(ArgumentError) as info:
        g.move("sub", name)
    assert str(info.value) == v3_name_message("move", name, name)
    assert keys(store) == sorted([*before, "sub/zarr.json"])


@pytest.mark.parametrize("name", [".x", "a..b", "_x", "x__", "é", "a b",
                                  "__xarray_dataarray_variable__", "__x"])
def test_other_v3_node_names_are_created(name):
    """Names starting with '__' other than '__zarr' too (the spec reserves them; see
    docs/SPEC.md): xarray stores an unnamed DataArray under such a name."""
    g = zarrx.open_group(MemoryStore(), mode="w")
    g.create_group(name)
    assert name in g


def test_v2_node_names_follow_the_v2_rules_only():
    """The v2 specification refuses only '.' and '..' segments."""
    g = zarrx.open_group(MemoryStore(), mode="w", zarr_format=2)
    g.create_group("__zarr")
    g.create_array("...", shape=(2,), dtype="i1")
    assert sorted(g) == ["...", "__zarr"]


def test_nodes_named_so_by_other_writers_are_still_read():
    store = MemoryStore()
    store.set("zarr.json", json.dumps({"zarr_format": 3, "node_type": "group"}).encode())
    store.set("__zarr_x/zarr.json", json.dumps(v3_doc()).encode())
    g = zarrx.open_group(store, mode="r")
    assert list(g) == ["__zarr_x"] and g["__zarr_x"].shape == (4,)


# -- v2, "Logical paths": backslashes are slashes -------------------------------------------
@pytest.mark.parametrize("fmt", [2, 3])
def test_backslashes_in_node_paths_are_slashes(fmt):
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    g.create_group("a\\b")
    g.create_array("c\\d", shape=(2,), dtype="i1")
    zarrx.create_array(store, name="\\e\\f\\", shape=(2,), dtype="i1", zarr_format=fmt)
    assert [p for p, _ in g.members(max_depth=None)] == ["a", "a/b", "c", "c/d", "e", "e/f"]
    assert g["a\\b"].path == "a/b" and g["c\\d"].path == "c/d"
    with pytest.raises(ArgumentError):
        g.create_group("x\\..\\y")


# -- blosc codec: typesize is ignored with "noshuffle" ---------------------------------------
def test_blosc_noshuffle_takes_any_typesize():
    blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                "shuffle": "noshuffle", "typesize": 0,
                                                "blocksize": 0}}
    store = stored(json.dumps(v3_doc(data_type="int16", codecs=[LE, blosc])))
    a = zarrx.open_array(store, mode="r+")
    a[...] = [1, 2, 3, 4]
    assert a[...].tolist() == [1, 2, 3, 4]
    assert json.loads(store.get("zarr.json"))["codecs"][1] == blosc


def test_blosc_shuffle_still_needs_a_positive_typesize():
    blosc = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                "shuffle": "shuffle", "typesize": 0}}
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(stored(json.dumps(v3_doc(codecs=[LE, blosc]))), mode="r")
    assert str(info.value) == ("zarr.json codecs[1].configuration.typesize: expected an integer "
                               "in [1, 2147483647], found 0")


# -- chunk key encodings ---------------------------------------------------------------------
@pytest.mark.parametrize("encoding, shape, chunks, expected", [
    ({"name": "default"}, [4, 4], [2, 4], ["c/0/0", "c/1/0"]),
    ({"name": "default", "configuration": {"separator": "."}}, [4], [2], ["c.0", "c.1"]),
    ({"name": "default"}, [], [], ["c"]),
    ({"name": "v2"}, [4, 4], [2, 4], ["0.0", "1.0"]),
    ({"name": "v2", "configuration": {"separator": "/"}}, [4, 4], [2, 4], ["0/0", "1/0"]),
    ({"name": "v2"}, [], [], ["0"]),
])
def test_chunk_keys(encoding, shape, chunks, expected):
    store = stored(json.dumps(v3_doc(
        shape=shape, chunk_key_encoding=encoding,
        chunk_grid={"name": "regular", "configuration": {"chunk_shape": chunks}})))
    zarrx.open_array(store, mode="r+")[...] = 1
    assert [k for k in keys(store) if k != "zarr.json"] == expected


def test_v2_dimension_separator_absent_is_a_period():
    zarray = {"zarr_format": 2, "shape": [4, 4], "chunks": [2, 4], "dtype": "<i2",
              "compressor": None, "fill_value": 0, "order": "C", "filters": None}
    store = stored(json.dumps(zarray), ".zarray")
    zarrx.open_array(store, mode="r+")[...] = 1
    assert keys(store) == [".zarray", "0.0", "1.0"]
