"""The same failing calls on zarr-python and on zarrx raise errors of the same builtin classes
(and of zarr-python's named classes), and zarrx's errors say what is wrong."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
from zarr.codecs import BytesCodec, GzipCodec, ZstdCodec  # noqa: E402

from parity_helpers import arr, both, builtins_of, existing  # noqa: E402
from parity_helpers import _quiet  # noqa: E402, F401  (an autouse fixture)


def _read_only(lib):
    store = existing(lib)
    return lib.open_group(store, mode="r")


ERRORS = {
    "store-of-another-type": lambda lib: lib.open(123, mode="r"),
    "open-r-missing": lambda lib: lib.open({}, mode="r"),
    "open-r+-missing": lambda lib: lib.open({}, mode="r+"),
    "open_group-r-missing": lambda lib: lib.open_group({}, mode="r"),
    "open_array-r-missing": lambda lib: lib.open_array({}, mode="r"),
    "open_group-on-array": lambda lib: lib.open_group(existing(lib), mode="r", path="a"),
    "open_array-on-group": lambda lib: lib.open_array(existing(lib), mode="r"),
    "create_array-exists": lambda lib: lib.create_array(existing(lib), name="a", shape=(1,),
                                                        dtype="i4"),
    "create_group-on-array": lambda lib: lib.create_group(existing(lib), path="a"),
    "group.create_group-exists": lambda lib: lib.open_group(existing(lib)).create_group("g"),
    "group.create_array-exists": lambda lib: lib.open_group(existing(lib)).create_array(
        "a", shape=(1,), dtype="i4"),
    "open-w--exists": lambda lib: lib.open(existing(lib), mode="w-"),
    "open_group-w--exists": lambda lib: lib.open_group(existing(lib), mode="w-"),
    "open_array-w--exists": lambda lib: lib.open_array(existing(lib), mode="w-"),
    "open_array-w--exists-at-path": lambda lib: lib.open_array(existing(lib), mode="w-",
                                                               path="a"),
    "group-missing-member": lambda lib: lib.open_group(existing(lib))["nope"],
    "read-only-write": lambda lib: _read_only(lib)["a"].__setitem__(0, 1),
    "read-only-attrs": lambda lib: _read_only(lib).attrs.__setitem__("x", 1),
    "read-only-array-attrs": lambda lib: _read_only(lib)["a"].attrs.__setitem__("x", 1),
    "read-only-create": lambda lib: _read_only(lib).create_array("b", shape=(1,), dtype="i4"),
    "read-only-resize": lambda lib: _read_only(lib)["a"].resize((2,)),
    "index-out-of-bounds": lambda lib: arr(lib)[10, 0],
    "too-many-indices": lambda lib: arr(lib)[0, 0, 0],
    "float-index": lambda lib: arr(lib)[1.5],
    "oindex-out-of-bounds": lambda lib: arr(lib).oindex[[11], :],
    "vindex-bad-mask": lambda lib: arr(lib).vindex[np.ones((3, 3), bool)],
    "blocks-out-of-bounds": lambda lib: arr(lib).blocks[5],
    "zero-step": lambda lib: arr(lib)[::0],
    "zero-step-oindex": lambda lib: arr(lib).oindex[1, ::0],
    "vindex-not-broadcast": lambda lib: arr(lib).vindex[[1, 2, 3], [1, 2]],
    "fields-of-plain-array": lambda lib: arr(lib).get_basic_selection(..., fields="x"),
    "unknown-dtype": lambda lib: lib.create_array({}, shape=(1,), dtype="foo"),
    "unknown-dtype-v2": lambda lib: lib.create_array({}, shape=(1,), dtype="int33",
                                                     zarr_format=2),
    "negative-shape": lambda lib: lib.create_array({}, shape=(-1,), dtype="i4"),
    "fill-str-for-int": lambda lib: lib.create_array({}, shape=(2,), dtype="i4", fill_value="x"),
    "fill-list-for-int": lambda lib: lib.create_array({}, shape=(2,), dtype="i4",
                                                      fill_value=[1, 2]),
    "fill-str-for-float": lambda lib: lib.create_array({}, shape=(2,), dtype="f4",
                                                       fill_value="x"),
    "fill-out-of-range": lambda lib: lib.create_array({}, shape=(2,), dtype="i1",
                                                      fill_value=1000),
    "fill-negative-unsigned": lambda lib: lib.create_array({}, shape=(2,), dtype="u1",
                                                           fill_value=-1),
    "float-shape": lambda lib: lib.create_array({}, shape=(4.5,), dtype="i4"),
    "str-shape": lambda lib: lib.create_array({}, shape="abc", dtype="i4"),
    "resize-float": lambda lib: arr(lib).resize((4.5, 2)),
    "resize-negative": lambda lib: arr(lib).resize((-4, 2)),
    "shards-float": lambda lib: lib.create_array({}, shape=(4,), dtype="i4", chunks=(2,),
                                                 shards=(4.5,)),
    "dimension-names-int": lambda lib: lib.create_array({}, shape=(2,), dtype="i4",
                                                        dimension_names=[1]),
    "shards-not-a-multiple": lambda lib: lib.create_array({}, shape=(4,), dtype="i4",
                                                          chunks=(3,), shards=(4,)),
    "two-compressors-v2": lambda lib: lib.create_array({}, shape=(4,), dtype="i4",
                                                       compressors=[GzipCodec(), ZstdCodec()],
                                                       zarr_format=2),
    "shards-in-v2": lambda lib: lib.create_array({}, shape=(4,), dtype="i4", chunks=(2,),
                                                 shards=(4,), zarr_format=2),
    "unknown-keyword-open": lambda lib: lib.open({}, mode="w", foo=1),
    "unknown-keyword-open-existing": lambda lib: lib.open(existing(lib), mode="r", foo=1),
    "open_consolidated-without": lambda lib: lib.open_consolidated(existing(lib)),
    "open_consolidated-not-true": lambda lib: lib.open_consolidated({}, use_consolidated=False),
    "consolidate-wrong-format": lambda lib: lib.consolidate_metadata(existing(lib),
                                                                     zarr_format=2),
    "append-wrong-shape": lambda lib: arr(lib).append(np.ones((3,))),
    "append-bad-axis": lambda lib: arr(lib).append(np.ones((3, 10)), axis=5),
    "attrs-not-json": lambda lib: arr(lib).attrs.__setitem__("x", object()),
    "attrs-int-key": lambda lib: lib.open_group(existing(lib)).attrs.update({1: 2}),
    "len-of-0d": lambda lib: len(lib.create_array({}, shape=(), dtype="i4")),
    "compressor-of-v3": lambda lib: arr(lib).compressor,
    "require_array-shape": lambda lib: lib.open_group(existing(lib)).require_array(
        "a", shape=(5,), dtype="i4"),
    "require_array-dtype": lambda lib: lib.open_group(existing(lib)).require_array(
        "a", shape=(4,), dtype="i2"),
    "require_array-on-group": lambda lib: lib.open_group(existing(lib)).require_array(
        "g", shape=(4,), dtype="i4"),
    "require_group-on-array": lambda lib: lib.open_group(existing(lib)).require_group("a"),
    "require_dataset-shape": lambda lib: lib.open_group(existing(lib)).require_dataset(
        "a", shape=(3,), dtype="i4"),
    "save-nothing": lambda lib: lib.save({}),
    "save_array-not-an-array": lambda lib: lib.save_array({}, [1, 2]),
    "save_group-not-an-array": lambda lib: lib.save_group({}, [1, 2]),
    "save_array-exists": lambda lib: lib.save_array(existing(lib), np.arange(3), path="a"),
    "full_like-numpy-without-fill": lambda lib: lib.full_like(np.zeros(3)),
    "serializer-is-a-compressor": lambda lib: lib.create_array({}, shape=(4,), dtype="i4",
                                                               serializer=ZstdCodec()),
    "compressor-is-a-serializer": lambda lib: lib.create_array({}, shape=(4,), dtype="i4",
                                                               compressors=BytesCodec()),
    "filter-is-a-compressor": lambda lib: lib.create_array({}, shape=(4,), dtype="i4",
                                                           filters=ZstdCodec()),
}


@pytest.mark.parametrize("case", list(ERRORS.values()), ids=list(ERRORS))
def test_errors_are_zarr_errors_of_zarr_pythons_builtin_classes(case):
    got = both(case)
    theirs, ours = got["zarr"], got["zarrx"]
    assert isinstance(theirs, Exception), f"zarr-python returned {theirs!r}"
    assert isinstance(ours, zarrx.ZarrError), f"zarrx: {ours!r}"
    missing = builtins_of(theirs) - builtins_of(ours)
    assert not missing, f"zarrx raised {type(ours).__mro__}, not also {missing}: {ours}"


def _zarr_python_class_names():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: type(both(case)["zarr"]).__name__ for name, case in ERRORS.items()}


NAMED = [name for name, cls in _zarr_python_class_names().items()
         if cls in ("ArrayNotFoundError", "GroupNotFoundError", "ContainsArrayError",
                    "ContainsGroupError", "BoundsCheckError")]


@pytest.mark.parametrize("case", [ERRORS[name] for name in NAMED], ids=NAMED)
def test_errors_of_zarr_pythons_named_classes_are_of_zarrx_classes_of_that_name(case):
    """``except zarrx.errors.GroupNotFoundError`` (``ArrayNotFoundError``,
    ``ContainsArrayError``, ``ContainsGroupError``, ``BoundsCheckError``) catches what
    zarr-python's class of that name catches."""
    got = both(case)
    assert isinstance(got["zarrx"], getattr(zarrx.errors, type(got["zarr"]).__name__))


@pytest.mark.parametrize("call, cls", [
    (lambda: zarrx.open_array(existing(zarrx), mode="r"), zarrx.errors.ContainsGroupError),
    (lambda: zarrx.open_array(existing(zarrx), path="a", mode="w-", shape=(2,)),
     zarrx.errors.ContainsArrayError),
    (lambda: zarrx.open_group(existing(zarrx), path="g", mode="w-"),
     zarrx.errors.ContainsGroupError),
    (lambda: zarrx.open_group(existing(zarrx)).move("g", "a"), zarrx.errors.ContainsArrayError),
    (lambda: zarrx.open_group(existing(zarrx)).create_group("a/b"),
     zarrx.errors.ContainsArrayError),
    (lambda: list(zarrx.open_group(existing(zarrx)).create_hierarchy(
        {"g": zarrx.create_group({}).metadata})), zarrx.errors.ContainsGroupError),
    (lambda: zarrx.consolidate_metadata({}), zarrx.errors.GroupNotFoundError),
    (lambda: zarrx.open_array({}), zarrx.errors.ArrayNotFoundError),
], ids=["open_array-on-group", "open_array-w--on-array", "open_group-w--on-group",
        "move-onto-array", "create_group-under-array", "create_hierarchy-on-group",
        "consolidate_metadata-missing", "open_array-a-missing"])
def test_the_node_in_the_way_or_missing_names_its_kind(call, cls):
    with pytest.raises(cls):
        call()


@pytest.mark.parametrize("call", [
    lambda a: a[-11], lambda a: a[[1, 20]], lambda a: a.vindex[[1, 20], [0, 0]],
    lambda a: a.__setitem__((20, 1), 1), lambda a: a.get_block_selection((0, 5)),
    lambda a: a.oindex[np.array([2**63 + 1], "u8"), :]],
    ids=["negative", "list", "vindex", "set-point", "block", "uint64"])
def test_an_index_outside_the_array_is_a_bounds_check_error(call):
    got = both(lambda lib: call(lib.create_array({}, shape=(10, 6), dtype="i4", chunks=(3, 4))))
    assert type(got["zarr"]).__name__ == "BoundsCheckError"
    assert isinstance(got["zarrx"], zarrx.errors.BoundsCheckError)
    assert "is out of bounds for axis" in str(got["zarrx"])


@pytest.mark.parametrize("call", [
    lambda lib: lib.open_group({}, foo=1),
    lambda lib: lib.create_array({}, shape=(1,), dtype="i4", foo=1),
    lambda lib: lib.open_group({}).create_array("x", shape=(1,), dtype="i4", foo=1),
    lambda lib: lib.save_array({}, np.arange(2), foo=1)], ids=["open_group", "create_array",
                                                               "group.create_array", "save"])
def test_unknown_keywords_are_type_errors(call):
    """Python's own TypeError for a function with a fixed signature; open and open_array,
    which take create_array's keywords, check them themselves."""
    got = both(call)
    assert isinstance(got["zarr"], TypeError) and isinstance(got["zarrx"], TypeError)


def test_zarrx_errors_name_what_is_wrong():
    with pytest.raises(zarrx.DataTypeError, match="found 'foo'"):
        zarrx.create_array({}, shape=(1,), dtype="foo")
    with pytest.raises(TypeError, match="open\\(\\) got an unexpected keyword argument 'foo'"):
        zarrx.open({}, mode="w", foo=1)
    with pytest.raises(TypeError, match="array 'a' has shape \\(4,\\), not the required \\(5,\\)"):
        zarrx.open_group(existing(zarrx)).require_array("a", shape=(5,), dtype="i4")
    with pytest.raises(TypeError, match="^open: dtype= is an array argument, but no shape="):
        zarrx.open({}, mode="w", dtype="i4")


@pytest.mark.parametrize("value, builtin", [(2**40, OverflowError), (None, TypeError)])
def test_values_numpy_cannot_convert_keep_the_builtin_class(value, builtin):
    def write(lib):
        a = lib.create_array({}, shape=(2,), dtype="i4")
        a[0] = value
    got = both(write)
    assert isinstance(got["zarr"], builtin) and isinstance(got["zarrx"], builtin)
    assert isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]).startswith(
        f"/: cannot convert value of type {type(value).__name__} to dtype int32: ")


@pytest.mark.parametrize("call", [
    lambda lib, s: lib.open_group(s, mode="r", zarr_format=4),
    lambda lib, s: lib.open_group(s, mode="a", zarr_format=1),
    lambda lib, s: lib.open(s, mode="r", zarr_format=4),
    lambda lib, s: lib.open_array(s, mode="r", zarr_format=4),
    lambda lib, s: lib.create(shape=(2,), store=s, zarr_format=0),
    lambda lib, s: lib.create_array(s, shape=(2,), dtype="i4", zarr_format=4),
    lambda lib, s: lib.save_array(s, np.zeros(2), zarr_format=4),
    lambda lib, s: lib.from_array(s, data=np.zeros(2), zarr_format=4),
], ids=["open_group-r", "open_group-a", "open", "open_array", "create", "create_array",
        "save_array", "from_array"])
def test_a_zarr_format_other_than_2_or_3_is_a_value_error(call):
    got = both(lambda lib: call(lib, existing(lib)))
    # zarr-python 3.1's create_array and from_array fail later, on an unbound local
    assert isinstance(got["zarr"], (ValueError, UnboundLocalError))
    assert isinstance(got["zarrx"], zarrx.ArgumentError)
    assert re.fullmatch(r"zarr_format: expected 2(, 3 or None| or 3), found [0-9]",
                        str(got["zarrx"]))


def _stored(lib, docs: dict):
    """A store holding ``docs`` (key -> bytes), as each library's memory store takes them."""
    if lib is zarrx:
        return dict(docs)
    from zarr.core.buffer.cpu import Buffer
    return zarr.storage.MemoryStore({k: Buffer.from_bytes(v) for k, v in docs.items()})


@pytest.mark.parametrize("call, name", [
    (lambda lib: lib.open_array(_stored(lib, {"zarr.json": json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [2], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                    {"name": "bogus"}]}).encode()}), mode="r")[...],
     "UnknownCodecError"),
    (lambda lib: lib.create_array({}, shape=(4, 4), dtype="i4").vindex[1:2, [1]],
     "VindexInvalidSelectionError"),
    (lambda lib: lib.create_array({}, shape=(4, 4), dtype="i4").vindex[[1.5], [1]],
     "VindexInvalidSelectionError"),
    (lambda lib: lib.create_array({}, shape=(4, 4), dtype="i4").vindex[np.ones((2, 2), bool)],
     "VindexInvalidSelectionError"),
    (lambda lib: lib.create_array({}, shape=(4, 4), dtype="i4").vindex[[1, 2],],
     "VindexInvalidSelectionError"),
], ids=["stored-unknown-codec", "vindex-slice", "vindex-float", "vindex-mask-shape",
        "vindex-too-few-arrays"])
def test_codec_and_vindex_errors_have_zarr_pythons_class_names(call, name):
    got = both(call)
    assert type(got["zarr"]).__name__ == name
    assert isinstance(got["zarrx"], getattr(zarrx.errors, name))


def test_an_unknown_codec_argument_is_an_unknown_codec_error():
    with pytest.raises(zarrx.errors.UnknownCodecError, match="unknown codec 'bogus'"):
        zarrx.create_array({}, shape=(2,), dtype="i4", compressors=[{"name": "bogus"}])
