"""The metadata a handle shows is shared by every handle opened on the same stored document (one
parse, kept by the parse cache and with consolidated documents): a change in place through one
handle is refused with FrozenMetadataError, or changes nothing another handle sees, stores or
reads. Data written through a second handle after the attempt reads back the same in
zarr-python."""
from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest
import zarr

import zarrx
from zarrx.errors import FrozenMetadataError


def _array(tmp_path, fmt=3, **kw):
    path = str(tmp_path / "a.zarr")
    kw.setdefault("compressors", [zarrx.codecs.Zstd(level=3)] if fmt == 3 else
                  [{"id": "zstd", "level": 3}])
    zarrx.create_array(path, shape=(6, 4), chunks=(2, 2), dtype="<i4", zarr_format=fmt, **kw)
    return path


def _same_data_in_zarr_python(path, handle):
    """Write through ``handle`` and read back with zarr-python: the data are as written."""
    data = np.arange(24, dtype="<i4").reshape(6, 4)
    handle[...] = data
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], data)
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], data)


@pytest.mark.parametrize("change", [
    lambda m: m.codecs[0].configuration.__setitem__("endian", "big"),
    lambda m: m.codecs[1].configuration.__setitem__("level", 9),
    lambda m: m.codecs[1].configuration.update(level=9),
    lambda m: m.codecs[1].configuration.pop("level"),
    lambda m: m.chunk_codecs[0].configuration.clear(),
    lambda m: m.layout.read_codecs[0].configuration.__delitem__("endian"),
    lambda m: m.json["codecs"][0]["configuration"].__setitem__("endian", "big"),
    lambda m: m.json["codecs"].append({"name": "crc32c"}),
    lambda m: m.json.__setitem__("fill_value", 7),
    lambda m: m.extra.__setitem__("x", 1),
])
def test_a_change_of_codec_json_in_place_is_refused_and_other_handles_write_as_stored(
        tmp_path, change):
    path = _array(tmp_path)
    a, b = zarrx.open_array(path), zarrx.open_array(path)
    before = b.metadata.to_dict()
    with pytest.raises(FrozenMetadataError, match="read-only") as err:
        change(a.metadata)
    assert isinstance(err.value, TypeError)
    assert b.metadata.to_dict() == before == zarrx.open_array(path).metadata.to_dict()
    _same_data_in_zarr_python(path, b)


def test_nested_configuration_of_a_sharded_array_is_read_only(tmp_path):
    path = _array(tmp_path, shards=(2, 4), filters=[zarrx.codecs.Transpose(order=[1, 0])])
    a = zarrx.open_array(path)
    sharding = next(c for c in a.metadata.codecs if c.name == "sharding_indexed").configuration
    with pytest.raises(FrozenMetadataError):
        sharding["codecs"][1]["configuration"]["endian"] = "big"
    with pytest.raises(FrozenMetadataError):
        sharding["chunk_shape"][0] = 1
    with pytest.raises(FrozenMetadataError):
        a.metadata.chunk_codecs[0].configuration["order"].reverse()
    _same_data_in_zarr_python(path, zarrx.open_array(path))


@pytest.mark.parametrize("field, value", [("shape", (1, 1)), ("fill_value", 3),
                                          ("codecs", ()), ("attributes", {})])
def test_assigning_a_field_raises_a_zarr_error_that_is_a_frozen_instance_error(
        tmp_path, field, value):
    a = zarrx.open_array(_array(tmp_path))
    with pytest.raises(FrozenMetadataError, match=f"cannot assign to field '{field}' of "
                                                  "ArrayMeta") as err:
        setattr(a.metadata, field, value)
    assert isinstance(err.value, dataclasses.FrozenInstanceError)   # as zarr-python's
    for obj, name in [(a.metadata.codecs[1], "configuration"), (a.metadata.chunk_grid,
                                                                "chunk_shape"),
                      (a.metadata.data_type, "numpy"), (a.metadata.key_encoding, "separator")]:
        with pytest.raises(FrozenMetadataError, match=f"field '{name}'"):
            setattr(obj, name, None)
    with pytest.raises(FrozenMetadataError, match="cannot delete field 'shape'"):
        del a.metadata.shape


def test_v2_filters_and_compressor_as_read_are_read_only(tmp_path):
    path = _array(tmp_path, fmt=2, filters=[{"id": "delta", "dtype": "<i4"}])
    a = zarrx.open_array(path)
    with pytest.raises(FrozenMetadataError):
        a.metadata.v2_codecs.compressor["level"] = 22
    with pytest.raises(FrozenMetadataError):
        a.metadata.v2_codecs.filters[0]["dtype"] = "<i8"
    with pytest.raises(FrozenMetadataError):
        a.metadata.json["compressor"]["level"] = 22
    copy = a.metadata.compressor            # zarr-python's name: a copy, to change at will
    copy["level"] = 22
    b = zarrx.open_array(path)
    assert b.metadata.compressor["level"] == 3 and b.compressors[0].level == 3
    _same_data_in_zarr_python(path, b)


def test_attributes_a_handle_changes_in_place_are_its_own(tmp_path):
    for attrs in (None, {"units": "K", "levels": [1, 2]}):
        path = _array(tmp_path / str(bool(attrs)), attributes=attrs)
        a = zarrx.open_array(path)
        a.metadata.attributes["units"] = "m"            # (before: an empty dict shared with
        a.metadata.attributes.setdefault("levels", []).append(3)   # the cached parse)
        b = zarrx.open_array(path)
        assert dict(b.attrs) == (attrs or {})
        assert json.loads((tmp_path / str(bool(attrs)) / "a.zarr" / "zarr.json")
                          .read_text()).get("attributes", {}) == (attrs or {})


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_entries_are_read_only_and_their_handles_own_their_attributes(
        tmp_path, fmt):
    path = str(tmp_path / "g.zarr")
    g = zarrx.create_group(path, zarr_format=fmt)
    g.create_array("a", shape=(6, 4), chunks=(2, 2), dtype="<i4", attributes={"u": [1]})
    g.create_group("s", attributes={"v": {"w": 1}})
    zarrx.consolidate_metadata(path)
    g = zarrx.open_group(path)
    entries = g.metadata.consolidated
    with pytest.raises(FrozenMetadataError, match="consolidated entry 'a'"):
        entries["a"] = entries["s"]
    with pytest.raises(FrozenMetadataError, match="consolidated entry 'a'"):
        del entries["a"]
    with pytest.raises(FrozenMetadataError):
        entries["a"].attributes["u"].append(2)
    with pytest.raises(FrozenMetadataError):
        g.metadata.consolidated_metadata.metadata["s"].attributes["v"]["w"] = 2
    first = g["a"]
    first.metadata.attributes["u"].append(5)
    g["s"].metadata.attributes["v"]["w"] = 5
    again = zarrx.open_group(path)
    for group in (g, again):
        assert group["a"].attrs["u"] == [1] and group["s"].attrs["v"] == {"w": 1}
        assert [m.attributes for _, m in sorted(group.metadata.consolidated.items())] == \
            [{"u": [1]}, {"v": {"w": 1}}]
    _same_data_in_zarr_python(path + "/a", again["a"])


def test_a_struct_fill_value_and_dtype_are_not_shared(tmp_path):
    dt = np.dtype([("a", "<i4"), ("b", "<f8")])
    path = str(tmp_path / "s.zarr")
    zarrx.create_array(path, shape=(4,), chunks=(2,), dtype=dt,
                       fill_value=np.array((1, 2.0), dtype=dt)[()])
    a = zarrx.open_array(path)
    fill = a.fill_value                         # an np.void, as zarr-python's: a copy to change
    assert type(fill) is np.void and fill.dtype == dt
    fill["a"] = 7
    assert fill.tolist() == (7, 2.0) and a.fill_value.tolist() == (1, 2.0)
    assert a[3].tolist() == (1, 2.0)            # what the handle reads is unchanged
    with pytest.raises(ValueError, match="read-only"):     # the metadata's: numpy's refusal
        a.metadata.fill_value["a"] = 7
    a.dtype.names = ("x", "y")                  # a numpy dtype can be renamed: this handle's
    b = zarrx.open_array(path)
    assert b.dtype.names == ("a", "b") and b.metadata.data_type.numpy.names == ("a", "b")
    assert b.fill_value.tolist() == (1, 2.0)
    b[0] = (5, 5.0)                             # the chunk's other cell holds the fill value
    assert zarr.open_array(path, mode="r")[:2].tolist() == [(5, 5.0), (1, 2.0)]
    assert zarrx.open_array(path)[:].tolist() == [(5, 5.0), (1, 2.0), (1, 2.0), (1, 2.0)]


@pytest.mark.parametrize("read", [lambda z: z[:], lambda z: z[1], lambda z: z.oindex[[0, 2]],
                                  lambda z: z.vindex[[3, 0]], lambda z: z.blocks[0]],
                         ids=["slice", "point", "oindex", "vindex", "block"])
def test_renaming_the_fields_of_what_a_read_returns_changes_no_other_handle(tmp_path, read):
    dt = np.dtype([("a", "<i4"), ("b", "<f4")])
    path = str(tmp_path / "s.zarr")
    z = zarrx.create_array(path, shape=(4,), chunks=(2,), dtype=dt)
    z[:] = np.array([(1, 2.0), (3, 4.0), (5, 6.0), (7, 8.0)], dtype=dt)
    got = read(zarrx.open_array(path, mode="r"))
    got.dtype.names = ("x", "y")        # numpy renames a dtype in place
    b = zarrx.open_array(path, mode="r")
    assert b.dtype.names == ("a", "b")
    assert b[:].dtype.names == ("a", "b") and b[:]["a"].tolist() == [1, 3, 5, 7]
    assert b.metadata.to_dict()["data_type"]["configuration"]["fields"][0][0] == "a"


def test_codec_objects_and_documents_handed_out_are_copies(tmp_path):
    path = _array(tmp_path)
    a = zarrx.open_array(path)
    d = a.compressors[0].to_dict()              # new dicts, as zarr-python's to_dict()
    d["configuration"]["level"] = 9
    doc = a.metadata.to_dict()
    doc["codecs"][1]["configuration"]["level"] = 9
    doc["attributes"]["x"] = 1
    copied = a.metadata.json.copy()
    copied["codecs"][1]["configuration"]["level"] = 9
    with pytest.raises(FrozenMetadataError):    # immutable, as zarr-python's codec objects
        a.compressors[0].level = 9
    assert a.compressors[0].level == 3 and a.compressors[0].to_dict()["configuration"] == \
        {"level": 3, "checksum": False}
    assert zarrx.open_array(path).metadata.to_dict()["codecs"][1]["configuration"]["level"] == 3


def test_metadata_stays_read_only_through_a_pickle(tmp_path):
    path = _array(tmp_path, attributes={"k": [1]})
    a = zarrx.open_array(path)
    b = pickle.loads(pickle.dumps(a))
    assert b.metadata == a.metadata and b.metadata.json == a.metadata.json
    with pytest.raises(FrozenMetadataError):
        b.metadata.codecs[1].configuration["level"] = 9
    with pytest.raises(FrozenMetadataError):
        b.metadata.json["codecs"][1]["configuration"]["level"] = 9
    b.metadata.attributes["k"].append(2)        # the unpickled handle's own
    assert a.attrs["k"] == [1]
    _same_data_in_zarr_python(path, b)


@pytest.mark.parametrize("show", [lambda z: z.attrs.asdict(), lambda z: z.metadata,
                                  lambda z: z.attrs["k"]], ids=["attrs", "metadata", "attr"])
def test_a_resize_by_another_thread_while_a_handle_copies_its_metadata_is_kept(
        tmp_path, monkeypatch, show):
    import threading

    import zarrx.metadata.parse_cache as parse_cache
    path = str(tmp_path / "a.zarr")
    z = zarrx.create_array(path, shape=(10,), chunks=(5,), dtype="<i4", attributes={"k": 1})
    z = zarrx.open_array(path)
    real = parse_cache.for_handle
    resized = []

    def copy_while_resized(meta):
        if not resized:         # another thread resizes the handle while this one copies
            resized.append(1)
            t = threading.Thread(target=z.resize, args=((20,),))
            t.start()
            t.join()
        return real(meta)

    monkeypatch.setattr(parse_cache, "for_handle", copy_while_resized)
    show(z)
    assert resized and z.shape == (20,) and z.metadata.shape == (20,)
    z[:] = np.arange(20)
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[:], np.arange(20))
    assert z.attrs["k"] == 1


def test_attributes_changed_in_place_go_with_a_pickled_handle(tmp_path):
    z = zarrx.open_array(_array(tmp_path, attributes={"k": 1}))
    z.metadata.attributes["k"] = 2              # the handle's own copy, not stored
    assert pickle.loads(pickle.dumps(z)).attrs["k"] == 2
    assert zarrx.open_array(str(tmp_path / "a.zarr")).attrs["k"] == 1
