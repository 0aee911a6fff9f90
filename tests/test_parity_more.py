"""More of zarr-python 3.1's API run side by side with zarrx: cases a differential run of random
call sequences (valid and invalid arguments, on memory stores and local folders) turned up."""
from __future__ import annotations

import numpy as np
import pytest
from parity_helpers import both

import zarrx

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("fmt", [2, 3])
def test_from_array_of_plain_data_takes_the_format_of_the_group_it_goes_into(fmt):
    """As ``create_array`` and ``array`` do: in a Zarr v2 hierarchy the copy is Zarr v2 (it
    was refused as a Zarr v3 node inside a v2 group)."""
    store: dict = {}
    zarrx.open_group(store, mode="w", zarr_format=fmt)
    a = zarrx.from_array(store, data=np.arange(5), name="y", chunks=(2,))
    assert a.metadata.zarr_format == fmt
    assert a[...].tolist() == [0, 1, 2, 3, 4]
    assert list(zarrx.open_group(store, mode="r").array_keys()) == ["y"]


def test_from_array_of_plain_data_without_a_group_is_zarr_v3():
    got = both(lambda lib: lib.from_array({}, data=np.arange(3)).metadata.zarr_format)
    assert got["zarrx"] == got["zarr"] == 3


@pytest.mark.parametrize("arg", ["compressors", "filters", "serializer"])
def test_an_unknown_codec_name_in_an_argument_is_a_key_error_as_in_zarr_python(arg):
    value = {"name": "zstdd"} if arg == "serializer" else [{"name": "zstdd"}]
    got = both(lambda lib: lib.create_array({}, shape=(2,), dtype="i4", **{arg: value}))
    assert isinstance(got["zarr"], KeyError)
    exc = got["zarrx"]
    assert isinstance(exc, KeyError) and isinstance(exc, zarrx.errors.UnknownCodecError)
    assert isinstance(exc, ValueError) and isinstance(exc, zarrx.ZarrError)
    assert str(exc).startswith(f"create_array {arg}{'' if arg == 'serializer' else '[0]'}: "
                               f"unknown codec 'zstdd'; did you mean 'zstd'?")


def test_an_unknown_codec_in_stored_metadata_is_not_a_key_error():
    """``except KeyError`` around ``group[name]`` must not take such an array for a missing
    member."""
    import json
    store: dict = {}
    zarrx.create_array(store, name="a", shape=(2,), dtype="i4")
    doc = json.loads(store["a/zarr.json"])
    doc["codecs"].append({"name": "nope"})
    store["a/zarr.json"] = json.dumps(doc).encode()
    with pytest.raises(zarrx.errors.UnknownCodecError) as info:
        zarrx.open_group(store, mode="r")["a"][...]
    assert not isinstance(info.value, KeyError)


@pytest.mark.parametrize("fn", ["open", "open_group", "open_array", "group"])
@pytest.mark.parametrize("fmt", [4, "3", 1])
def test_a_bad_zarr_format_is_a_metadata_validation_error_as_in_zarr_python(fn, fmt):
    got = both(lambda lib: getattr(lib, fn)({}, zarr_format=fmt))
    assert isinstance(got["zarr"], zarr.errors.MetadataValidationError)
    exc = got["zarrx"]
    assert isinstance(exc, zarrx.errors.MetadataValidationError)
    assert isinstance(exc, zarrx.errors.ArgumentError) and isinstance(exc, ValueError)
    assert str(exc) == f"zarr_format: expected 2, 3 or None, found {fmt!r}"


@pytest.mark.parametrize("name", ["", "/"])
def test_a_member_name_naming_the_group_itself_is_refused_and_nothing_is_deleted(name):
    """zarr-python 3.1 deletes the group for ``del g[""]`` and replaces it by an array for
    ``g[""] = data``; zarrx refuses both (docs/guide/migrating.md)."""
    store: dict = {}
    sub = zarrx.open_group(store, mode="w").create_group("sub")
    sub.create_array("x", shape=(2,), dtype="i1")
    with pytest.raises(zarrx.errors.ArgumentError, match=f"invalid member name {name!r}"):
        del sub[name]
    with pytest.raises(zarrx.errors.ArgumentError, match=f"invalid member name {name!r}"):
        sub[name] = np.ones(3)
    with pytest.raises(zarrx.errors.ArgumentError):        # zarr-python: ContainsGroupError
        sub.create_group(name)
    with pytest.raises(zarrx.errors.ArgumentError):
        sub.create_array(name, shape=(1,), dtype="i1")
    assert list(zarrx.open_group(store, path="sub", mode="r").keys()) == ["x"]


@pytest.mark.parametrize("shape", [(4,), (4, 3)])
@pytest.mark.parametrize("wrap", [False, True])
def test_a_boolean_index_of_another_length_is_a_vindex_selection_error(shape, wrap):
    """zarr-python takes a boolean array in ``z[...]`` as a vindex mask and raises
    ``VindexInvalidSelectionError`` for one of another length; ``oindex`` raises
    ``IndexError`` in both."""
    mask = np.ones(5, bool)
    sel = (mask,) if wrap else mask

    def read(lib):
        return lib.create_array({}, shape=shape, dtype="i4")[sel]
    got = both(read)
    if isinstance(got["zarr"], zarr.errors.VindexInvalidSelectionError):
        assert isinstance(got["zarrx"], zarrx.errors.VindexInvalidSelectionError)
    assert isinstance(got["zarrx"], IndexError)
    assert "(4,)" in str(got["zarrx"]) or "length 4" in str(got["zarrx"])    # expected
    assert "(5,)" in str(got["zarrx"]) or "length 5" in str(got["zarrx"])    # found
    with pytest.raises(zarrx.errors.VindexInvalidSelectionError):
        zarrx.create_array({}, shape=shape, dtype="i4")[sel] = 1
    with pytest.raises(IndexError):
        zarrx.create_array({}, shape=shape, dtype="i4").oindex[(mask,)]


def _plain(doc):
    import json
    return json.loads(json.dumps(doc))


def _no_nested_consolidated(doc):
    """zarr-python gives group entries below an empty ``consolidated_metadata`` of their own."""
    for entry in doc["consolidated_metadata"]["metadata"].values():
        entry.pop("consolidated_metadata", None)
    return doc


@pytest.mark.parametrize("fmt", [2, 3])
def test_to_dict_of_a_consolidated_group_lists_its_entries_as_in_zarr_python(fmt):
    def consolidated(lib):
        store: dict = {}
        g = lib.open_group(store, mode="w", zarr_format=fmt)
        g.create_group("b", attributes={"q": 1}).create_array("c", shape=(2,), dtype="i1",
                                                              compressors=None)
        g.create_array("a", shape=(3,), dtype="f4", compressors=None, attributes={"u": [1]})
        return (_no_nested_consolidated(_plain(lib.consolidate_metadata(store).metadata.to_dict())),
                _no_nested_consolidated(_plain(lib.open_group(store, mode="r").metadata.to_dict())))
    got = both(consolidated)
    assert got["zarrx"] == got["zarr"]
    assert sorted(got["zarrx"][0]["consolidated_metadata"]["metadata"]) == ["a", "b", "b/c"]
