"""More of the read-only metadata handles show (see test_frozen_metadata.py): the read-only
views of a stored document are the dicts and lists the standard library takes (json.dumps,
copies, pickles), codec objects are immutable as zarr-python's, a struct fill value given at
creation is refused naming the field, and a struct dtype a group's consolidated entries hold
is each handle's own."""
from __future__ import annotations

import collections.abc
import copy
import dataclasses
import functools
import json
import operator
import pickle

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.errors import FillValueError, FrozenMetadataError

STRUCT = np.dtype([("a", "<i4"), ("b", "<f8")])


def _array(tmp_path, fmt=3, **kw):
    path = str(tmp_path / "a.zarr")
    kw.setdefault("compressors", [zarrx.codecs.Zstd(level=3)] if fmt == 3 else
                  [{"id": "zstd", "level": 3}])
    zarrx.create_array(path, shape=(6, 4), chunks=(2, 2), dtype="<i4", zarr_format=fmt,
                       attributes={"units": "K", "levels": [1, {"deep": [2]}]}, **kw)
    return path


def _consolidated(tmp_path, fmt=3):
    path = str(tmp_path / "g.zarr")
    g = zarrx.create_group(path, zarr_format=fmt, attributes={"title": "t"})
    g.create_array("s", shape=(4,), chunks=(2,), dtype=STRUCT, fill_value=(1, 2.0))
    g.create_array("i", shape=(4,), chunks=(2,), dtype="<i4", attributes={"k": [1]})
    g.create_group("sub").create_array("t", shape=(2,), chunks=(2,), dtype=STRUCT)
    zarrx.consolidate_metadata(path)
    return path


# -- 1. the views of a stored document are dicts and lists --------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_the_document_as_read_and_every_view_in_it_are_written_by_json_dumps(tmp_path, fmt):
    path = _array(tmp_path, fmt)
    m = zarrx.open_array(path).metadata
    stored = json.loads((tmp_path / "a.zarr" / ("zarr.json" if fmt == 3 else ".zarray"))
                        .read_text())
    for kw in ({}, {"indent": 2}, {"sort_keys": True}):      # C encoder and Python encoder
        assert json.loads(json.dumps(m.json, **kw)) == stored
    for shown in (m.codecs[-1].configuration, m.extra, m.data_type.json, m.chunk_grid):
        json.dumps(shown, default=lambda o: None)
    key = "codecs" if fmt == 3 else "compressor"
    assert json.loads(json.dumps(m.json[key])) == stored[key]
    if fmt == 3:
        assert json.dumps(m.json["codecs"][1]["configuration"]) == \
            json.dumps(stored["codecs"][1]["configuration"])
        assert json.loads(json.dumps(m.json["attributes"]["levels"])) == [1, {"deep": [2]}]


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_consolidated_groups_document_and_entries_are_written_by_json_dumps(tmp_path, fmt):
    path = _consolidated(tmp_path, fmt)
    g = zarrx.open_group(path)
    doc = json.loads(json.dumps(g.metadata.json))
    assert doc == g.metadata.json and doc["zarr_format"] == fmt
    entries = g.metadata.consolidated_metadata.flattened_metadata
    for name, entry in entries.items():
        assert json.loads(json.dumps(entry.json)) == entry.json
        json.dumps(entry.attributes)
    assert json.loads(json.dumps(entries["i"].attributes)) == {"k": [1]}


def test_a_view_is_a_dict_equal_to_plain_json_that_copies_into_plain_json(tmp_path):
    m = zarrx.open_array(_array(tmp_path)).metadata
    doc, codecs = m.json, m.json["codecs"]
    plain = m.to_dict()
    assert isinstance(doc, dict) and isinstance(doc, collections.abc.Mapping)
    assert isinstance(codecs, list) and isinstance(codecs, collections.abc.Sequence)
    assert doc == json.loads(json.dumps(plain)) and plain == doc and not doc != plain
    assert codecs == plain["codecs"] and plain["codecs"] == codecs
    assert m.json is m.json                     # made once per metadata shown
    for copied in (copy.copy(doc), copy.deepcopy(doc), doc.copy()):
        assert type(copied) is dict and type(copied["codecs"]) is list and copied == doc
        copied["codecs"][1]["configuration"]["level"] = 9         # plain: the caller's own
        copied["attributes"]["levels"].append(3)
    for copied in (copy.copy(codecs), copy.deepcopy(codecs), codecs.copy()):
        assert type(copied) is list and type(copied[0]) is dict
        copied[0]["configuration"]["endian"] = "big"
    again = pickle.loads(pickle.dumps(doc))
    assert again == doc and type(again) is type(doc)
    with pytest.raises(FrozenMetadataError):    # read-only again once unpickled
        again["codecs"][0]["configuration"]["endian"] = "big"
    assert zarrx.open_array(str(tmp_path / "a.zarr")).metadata.to_dict() == plain


@pytest.mark.parametrize("reach", [
    lambda d: dict(d)["codecs"], lambda d: {**d}["codecs"], lambda d: (d | {})["codecs"],
    lambda d: list(d.values())[5], lambda d: dict(d.items())["codecs"],
    lambda d: d.get("codecs"), lambda d: list(d["codecs"])[1], lambda d: [*d["codecs"]][1],
    lambda d: (d["codecs"] + [])[1], lambda d: tuple(d["codecs"])[1],
    lambda d: next(reversed(d["codecs"])), lambda d: d["codecs"][1:][0],
    lambda d: (d["codecs"] * 2)[1], lambda d: operator.concat([], d["codecs"])[1],
    lambda d: functools.reduce(operator.concat, [[0], d["codecs"]])[2],
], ids=["dict", "unpack", "or", "values", "items", "get", "list", "star", "add", "tuple",
        "reversed", "slice", "mul", "concat", "reduce"])
def test_what_a_plain_copy_of_a_view_holds_is_read_only_too(tmp_path, reach):
    path = _array(tmp_path)
    doc = zarrx.open_array(path).metadata.json
    held = reach(doc)
    with pytest.raises(FrozenMetadataError):
        held.clear() if isinstance(held, dict) else held.append({"name": "crc32c"})
    assert zarrx.open_array(path).metadata.json == json.loads(
        (tmp_path / "a.zarr" / "zarr.json").read_text())


# -- 2. codec objects are immutable ---------------------------------------------------------

@pytest.mark.parametrize("codec", [
    lambda z: z.compressors[0], lambda z: z.serializer, lambda z: zarrx.codecs.Zstd(level=3),
    lambda z: zarrx.codecs.Blosc(), lambda z: zarrx.codecs.ShardingIndexed(chunk_shape=(2,)),
    lambda z: zarrx.codecs.Transpose(order=(1, 0)),
], ids=["compressors", "serializer", "zstd", "blosc", "sharding", "transpose"])
def test_assigning_an_attribute_of_a_codec_object_is_refused_as_in_zarr_python(tmp_path, codec):
    z = zarrx.open_array(_array(tmp_path))
    c = codec(z)
    name = next(iter(c.configuration()))
    before = c.configuration()
    with pytest.raises(FrozenMetadataError, match=f"cannot assign to field '{name}' of "
                                                  f"{type(c).__name__}") as err:
        setattr(c, name, 9)
    assert isinstance(err.value, dataclasses.FrozenInstanceError)    # zarr-python's error
    with pytest.raises(FrozenMetadataError, match=f"cannot delete field '{name}'"):
        delattr(c, name)
    with pytest.raises(FrozenMetadataError):
        c.new_attribute = 1
    assert c.configuration() == before
    assert pickle.loads(pickle.dumps(c)) == c and hash(copy.copy(c)) == hash(c)
    with pytest.raises(dataclasses.FrozenInstanceError):
        zarr.codecs.ZstdCodec(level=3).level = 9


def test_codec_objects_still_make_arrays_zarr_python_reads(tmp_path):
    path = str(tmp_path / "b.zarr")
    codecs = [zarrx.codecs.Blosc(cname="lz4"), zarrx.codecs.Zstd(level=1)]   # bound to the dtype
    z = zarrx.create_array(path, shape=(8,), chunks=(4,), dtype="<i4", compressors=codecs)
    z[:] = np.arange(8)
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[:], np.arange(8))
    assert zarrx.open_array(path).compressors[0].typesize == 4


def test_a_registered_codec_sets_its_attributes_in_its_init_and_is_immutable_after():
    from zarrx.codecs.base import BytesToBytesCodec

    class Xor(BytesToBytesCodec):
        name = "test.xor-frozen"

        def __init__(self, key: int = 1) -> None:
            self.key = key
            self.key = key & 255            # set twice in __init__: its own to set

    class Xor2(Xor):
        def __init__(self, key: int = 2) -> None:
            super().__init__(key)
            self.extra = True               # after the base's __init__: still building

    @dataclasses.dataclass
    class Rot(BytesToBytesCodec):           # a dataclass's generated __init__ sets fields too
        name = "test.rot-frozen"
        by: int = 1

    for x, field in ((Xor2(), "key"), (Rot(by=3), "by")):
        assert vars(x) == ({"key": 2, "extra": True} if field == "key" else {"by": 3})
        with pytest.raises(FrozenMetadataError, match=f"field '{field}' of {type(x).__name__}"):
            setattr(x, field, 3)
        assert copy.deepcopy(x) == x and copy.copy(x) == x     # (a pickle's state, set as is)



def test_a_codec_class_may_also_derive_from_an_abstract_class_as_before():
    # numcodecs' Codec is an abc.ABC: a codec class serving both libraries derives from both
    import abc

    import numcodecs.abc
    from zarrx.codecs.base import BytesToBytesCodec

    class Both(BytesToBytesCodec, numcodecs.abc.Codec):
        name = codec_id = "test.both-frozen"

        def __init__(self, key: int = 1) -> None:
            self.key = key

        def encode(self, buf):
            return bytes(buf)

        def decode(self, buf, *args, out=None):
            return bytes(buf)

    class Marked(BytesToBytesCodec, abc.ABC):
        name = "test.marked-frozen"

    both = Both(3)
    assert isinstance(both, numcodecs.abc.Codec) and isinstance(both, BytesToBytesCodec)
    assert not isinstance(Marked(), numcodecs.abc.Codec) and isinstance(Marked(), abc.ABC)
    assert both.decode(both.encode(b"xy")) == b"xy" and vars(both) == {"key": 3}
    with pytest.raises(FrozenMetadataError, match="field 'key' of Both"):
        both.key = 4

# -- 3. a struct fill value is refused naming what is wrong -------------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("value, message", [
    ((1,), r"fill_value: expected a record of 2 values, one per field \('a', 'b'\), found 1 "
           r"value: \(1,\)"),
    ((1, 2, 3), r"fill_value: expected a record of 2 values, .* found 3 values: \(1, 2, 3\)"),
    ([], r"fill_value: expected a record of 2 values, .* found 0 values: \(\)"),
    ([[1, 2]], r"fill_value: expected a record of 2 values, .* found 1 value: \(\[1, 2\],\)"),
    ((1, "x"), r"fill_value.b: expected a value of the field's type float64, found 'x'"),
    (("x", 1), r"fill_value.a: expected a value of the field's type int32, found 'x'"),
    ([1, [2]], r"fill_value.b: expected a value of the field's type float64, found \[2\]"),
    ((1, {"c": 1}), r"fill_value.b: expected a value of the field's type float64, found "),
])
def test_a_bad_struct_record_fill_value_names_the_field_or_the_count(fmt, value, message):
    with pytest.raises(FillValueError, match=message) as err:
        zarrx.create_array({}, shape=(2,), chunks=(2,), dtype=STRUCT, fill_value=value,
                           zarr_format=fmt)
    with pytest.raises((ValueError, TypeError)) as theirs:
        zarr.create_array({}, shape=(2,), chunks=(2,), dtype=STRUCT, fill_value=value,
                          zarr_format=fmt)
    assert isinstance(err.value, theirs.type)         # also the error zarr-python raises


def test_a_bad_nested_record_fill_value_names_the_nested_field():
    dt = np.dtype([("a", "<i4"), ("n", [("x", "u1"), ("y", "<f4")])])
    for value, message in [((1, (1, "z")), r"fill_value\.n\.y: expected a value of the field's "
                                           r"type float32, found 'z'"),
                           ((1, [1, 2, 3]), r"fill_value\.n: expected a record of 2 values, one "
                                            r"per field \('x', 'y'\), found 3 values")]:
        with pytest.raises(FillValueError, match=message):
            zarrx.create_array({}, shape=(2,), chunks=(2,), dtype=dt, fill_value=value)


# -- 4. a struct dtype of a consolidated entry is each handle's own ------------------------------

@pytest.mark.parametrize("fmt", [2, 3])
def test_renaming_a_consolidated_entrys_struct_fields_renames_no_other_handles(tmp_path, fmt):
    path = _consolidated(tmp_path, fmt)
    g1, g2 = zarrx.open_group(path), zarrx.open_group(path)
    shown = g1.metadata.consolidated_metadata
    for entry in (shown.metadata["s"], shown.flattened_metadata["sub/t"],
                  g1.metadata.consolidated["s"]):
        entry.dtype.names = ("x", "y")
    assert g1.metadata.consolidated_metadata.metadata["s"].dtype.names == ("x", "y")
    assert g1.metadata.consolidated["sub/t"].data_type.numpy.names == ("x", "y")
    for g in (g2, zarrx.open_group(path), g1):
        assert g["s"].dtype.names == ("a", "b") and g["sub/t"].dtype.names == ("a", "b")
        assert g["s"].fill_value.tolist() == (1, 2.0)
        assert g["s"][:].tolist() == [(1, 2.0)] * 4
    for g in (g2, zarrx.open_group(path)):
        for entries in (g.metadata.consolidated, g.metadata.consolidated_metadata
                        .flattened_metadata):
            assert entries["s"].dtype.names == ("a", "b")
            assert entries["sub/t"].data_type.numpy.names == ("a", "b")
    g2["s"][0] = (5, 5.0)
    assert zarr.open_array(path + "/s", mode="r")[:2].tolist() == [(5, 5.0), (1, 2.0)]
    kept = pickle.loads(pickle.dumps(g1))
    assert kept["s"].dtype.names == ("a", "b")
    assert kept.metadata.consolidated["i"] == g2.metadata.consolidated["i"]
    with pytest.raises(FrozenMetadataError):
        g1.metadata.consolidated["s"] = g1.metadata.consolidated["i"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_dataclasses_asdict_of_the_metadata_holds_the_document_as_plain_json(tmp_path, fmt):
    # dataclasses.asdict and astuple rebuild a dict or list as type(obj)(generator)
    path = _array(tmp_path, fmt)
    m = zarrx.open_array(path).metadata
    stored = json.loads(json.dumps(m.json))
    at = [f.name for f in dataclasses.fields(m)].index("json")
    for made in (dataclasses.asdict(m)["json"], dataclasses.astuple(m)[at]):
        assert made == stored and stored == made and repr(made) == repr(stored)
        assert type(made) is dict and type(made["shape"]) is list
        made["shape"].append(3)                          # plain: the caller's own
    assert zarrx.open_array(path).metadata.json == stored


@pytest.mark.parametrize("fmt", [2, 3])
def test_renaming_struct_fields_in_a_copy_of_the_consolidated_entries_renames_no_handles(
        tmp_path, fmt):
    path = _consolidated(tmp_path, fmt)
    g1 = zarrx.open_group(path)
    assert g1.metadata.consolidated["s"].data_type.numpy.names == ("a", "b")    # parsed
    copied = g1.metadata.consolidated.copy()
    copied["s"].data_type.numpy.names = ("x", "y")
    copied["sub/t"].data_type.numpy.names = ("x", "y")
    for g in (zarrx.open_group(path), g1):
        assert g["s"].dtype.names == ("a", "b") and g["sub/t"].dtype.names == ("a", "b")
        assert g.metadata.consolidated["s"].data_type.numpy.names == ("a", "b")
        assert g["s"][:].tolist() == [(1, 2.0)] * 4
    copied["s"] = copied["i"]                   # a copy is the caller's to change
    assert g1.metadata.consolidated["s"].data_type.numpy.names == ("a", "b")


def test_a_codec_class_shows_its_init_signature():
    import inspect

    from zarrx.codecs.base import BytesToBytesCodec

    @dataclasses.dataclass
    class Rot(BytesToBytesCodec):
        name = "test.rot-signature"
        by: int = 1

    assert list(inspect.signature(zarrx.codecs.Zstd).parameters) == ["level", "checksum"]
    assert "cname" in inspect.signature(zarrx.codecs.Blosc).parameters
    assert [(p.name, p.default) for p in inspect.signature(Rot).parameters.values()] == [("by", 1)]
    assert "checksum" in inspect.signature(zarrx.codecs.Zstd(level=3).__init__).parameters
