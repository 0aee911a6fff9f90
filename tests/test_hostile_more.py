"""Hostile metadata that passed parsing and then failed deep inside numpy, liblzma or liblz4:
each is refused with a ZarrError naming the field, what was found and what was expected."""
from __future__ import annotations

import base64
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentTypeError, CodecError, FillValueError, MetadataError
from zarrx.storage import MemoryStore

NAT = -2**63


def v2(chunk: bytes | None = None, **over) -> MemoryStore:
    doc = {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<i4", "fill_value": 0,
           "order": "C", "filters": None, "compressor": None, **over}
    data = {".zarray": json.dumps(doc).encode()}
    if chunk is not None:
        data["0"] = chunk
    return MemoryStore(data)


def v3(**over) -> MemoryStore:
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], **over}
    return MemoryStore({"zarr.json": json.dumps(doc).encode()})


# -- a datetime64 without a unit ----------------------------------------------------------------
# numpy keeps integers in it but cannot show them: the array's info raised ValueError
@pytest.mark.parametrize("store", [
    lambda: v2(dtype="<M8"),
    lambda: v3(data_type={"name": "numpy.datetime64",
                         "configuration": {"unit": "generic", "scale_factor": 1}})],
    ids=["v2", "v3"])
def test_a_unitless_datetime_array_with_an_integer_fill_value_opens_and_describes_itself(store):
    a = zarrx.open_array(store(), mode="r")
    assert a.fill_value.view("i8") == 0 and "Fill value    : 0\n" in str(a.info)
    assert a[...].view("i8").tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_date_is_no_fill_value_of_a_unitless_datetime_array(fmt):
    with pytest.raises(FillValueError) as info:
        zarrx.create_array(MemoryStore(), shape=(3,), dtype="datetime64",
                           fill_value=np.datetime64("2020-01-01"), zarr_format=fmt)
    assert str(info.value) == ("array metadata fill_value: expected 'NaT' or "
                               f"{NAT} (a datetime64 without a unit holds no date), "
                               "found np.datetime64('2020-01-01')")


@pytest.mark.parametrize("fill", ["NaT", NAT, np.datetime64("NaT")], ids=["text", "int", "nat"])
def test_a_unitless_datetime_array_with_nat_fill_describes_itself(fill):
    a = zarrx.create_array(MemoryStore(), shape=(3,), dtype="datetime64", fill_value=fill)
    assert np.isnat(a.fill_value)
    assert "Fill value    : NaT" in str(a.info)
    assert np.isnat(a[...]).all()



# a date in one (an integer other than NaT), as zarr-python writes it for fill_value=5: the
# array's metadata text, a copy of it and its chunk statistics raised numpy's ValueError
UNITLESS_DATE = np.array(5, "i8").view("M8")[()]


@pytest.mark.parametrize("store", [
    lambda: v2(dtype="<M8", fill_value=5),
    lambda: v3(data_type={"name": "numpy.datetime64",
                         "configuration": {"unit": "generic", "scale_factor": 1}}, fill_value=5)],
    ids=["v2", "v3"])
def test_a_unitless_datetime_array_holding_a_date_describes_and_copies_itself(store):
    a = zarrx.open_array(store(), mode="r")
    assert "fill_value=np.datetime64(5) (no unit)," in repr(a.metadata)
    for copy in (zarrx.full_like(a, store=MemoryStore()),
                 zarrx.from_array(MemoryStore(), data=a),
                 zarrx.create_array(MemoryStore(), shape=(2,), dtype=a.dtype,
                                    fill_value=a.fill_value,
                                    zarr_format=a.metadata.zarr_format)):
        assert copy.fill_value.view("i8") == 5
        assert copy[...].view("i8").tolist() == [5] * copy.shape[0]
    from zarrx.tools.summary import chunk_report
    stats = chunk_report(a, "0" if a.metadata.zarr_format == 2 else "c/0")["decoded"]
    assert (stats["min"], stats["max"], stats["nat"], stats["fill"]) == ("5", "5", 0, 4)


@pytest.mark.parametrize("dtype, want", [
    ("m8", "a timedelta64 or an integer for timedelta64"), ("U3", "a fill value for <U3"),
    ("i4", "an integer for int32")])
def test_a_unitless_date_given_for_another_type_is_named_in_the_error(dtype, want):
    with pytest.raises(FillValueError) as info:
        zarrx.create_array(MemoryStore(), shape=(3,), dtype=dtype, fill_value=UNITLESS_DATE)
    assert str(info.value) == (f"array metadata fill_value: expected {want}, found "
                               "np.datetime64(5) (no unit)")



@pytest.mark.parametrize("field, fill, text", [
    (["b", "<M8"], [1, 5], "(1, np.datetime64(5) (no unit))"),            # was (1, None)
    (["b", "<M8", [2]], [1, 5, NAT], "(1, array([5, NaT], dtype=datetime64) (no unit))")],
    ids=["field", "subarray-field"])                                      # was a ValueError
def test_a_structured_fill_value_holding_a_unitless_date_describes_itself(field, fill, text):
    fields = [("a", "<i4"), ("b", "<i8", (len(fill) - 1,))]
    raw = np.array([(fill[0], fill[1:])], fields).tobytes()
    store = v2(dtype=[["a", "<i4"], field], fill_value=base64.b64encode(raw).decode())
    a = zarrx.open_array(store, mode="r")
    assert f"Fill value    : {text}\n" in str(a.info)
    assert f"fill_value=np.void((np.int32(1), {text[4:-1]}), dtype=" in repr(a.metadata)

@pytest.mark.parametrize("fmt", [2, 3])
def test_a_unitless_date_written_into_a_bytes_array_is_named_in_the_error(fmt):
    a = zarrx.create_array(MemoryStore(), shape=(2,), dtype=bytes, zarr_format=fmt)
    with pytest.raises(ArgumentTypeError) as info:
        a[...] = UNITLESS_DATE            # an object item the vlen-bytes codec cannot store
    assert str(info.value) == ("/: cannot write datetime64 np.datetime64(5) (no unit) (item 0 "
                               "of the value) to an array of variable-length bytes: expected "
                               "bytes")


# -- structured types whose item passes 2**31-1 bytes --------------------------------------------
# numpy adds the field sizes in a C int, which wraps: fields of 2**31-1, 2**31-1 and 6 bytes made
# an item of 4 bytes with a field at offset -2, and reading the array crashed the interpreter
HUGE = "|S2147483647"
NTB = {"name": "null_terminated_bytes", "configuration": {"length_bytes": 2147483647}}


@pytest.mark.parametrize("store, where, total", [
    (lambda: v2(dtype=[["a", HUGE], ["b", HUGE], ["c", "|S6"]], fill_value=None),
     ".zarray dtype", 4294967300),
    (lambda: v2(dtype=[["n", [["a", HUGE], ["b", HUGE]]]], fill_value=None),
     ".zarray dtype[0][1]", 4294967294),
    (lambda: v2(dtype=[["a", HUGE], ["b", "<i4", [2, 2]]], fill_value=None),
     ".zarray dtype", 2147483663),
    (lambda: v3(data_type={"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": NTB}, {"name": "b", "data_type": NTB}]}},
                fill_value={"a": "", "b": ""}), "zarr.json data_type", 4294967294),
    (lambda: v3(data_type={"name": "structured", "configuration": {"fields": [
        ["a", NTB], ["b", "int8"]]}}, fill_value=""), "zarr.json data_type", 2147483648)],
    ids=["v2", "v2-nested", "v2-subarray", "v3-struct", "v3-structured"])
def test_a_structured_item_past_2_gib_is_refused_at_open(store, where, total):
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(store(), mode="r")
    assert str(info.value) == (f"{where}: expected a structured type of at most 2147483647 "
                               f"bytes an item, found fields of {total} bytes")


WRAPPED_CHILD = """
import numpy as np
import zarrx
from zarrx.errors import DataTypeError

dtype = np.dtype([("a", "S2147483647"), ("b", "S2147483647"), ("c", "S6")])
print(dtype.itemsize)                   # numpy's own arithmetic wrapped
for fmt in (2, 3):
    try:
        zarrx.create_array(zarrx.storage.MemoryStore(), shape=(1,), dtype=dtype,
                           zarr_format=fmt)
    except DataTypeError as exc:
        print(exc)
"""


def test_a_numpy_structured_type_whose_size_wrapped_is_refused_at_creation():
    # in a child: before, making the array's fill value crashed the interpreter
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", WRAPPED_CHILD], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    message = ("dtype: expected a structured type of at most 2147483647 bytes an item, found "
               "fields of 4294967300 bytes")
    assert proc.stdout.splitlines() == ["4", message, message]


# -- numcodecs options beyond what the libraries take -------------------------------------------
@pytest.mark.parametrize("compressor, message", [
    ({"id": "lz4", "acceleration": 2**40},
     "compressor.acceleration: expected an integer in [-2147483648, 2147483647], found "
     "1099511627776"),
    ({"id": "lzma", "format": 3, "filters": [{"id": 2**70}]},
     "compressor.filters[0].id: expected an lzma filter id: LZMA1 (4611686018427387905), LZMA2 "
     f"(33), DELTA (3), X86 (4), POWERPC (5), IA64 (6), ARM (7), ARMTHUMB (8), SPARC (9), found "
     f"{2**70}"),
    ({"id": "lzma", "format": 3, "filters": [{"id": 33, "dict_size": 2**40}]},
     "compressor.filters[0].dict_size: expected an integer in [0, 4294967295], found "
     "1099511627776"),
    ({"id": "lzma", "format": 3, "filters": [{"dict_size": 4096}]},
     "compressor.filters[0]: missing required field 'id'"),
], ids=["lz4-acceleration", "lzma-filter-id", "lzma-filter-option", "lzma-filter-without-id"])
def test_codec_options_out_of_the_libraries_range_are_refused(compressor, message):
    # these raised OverflowError from the compressor when a chunk was written
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(v2(compressor=compressor), mode="r+")
    assert str(info.value) == f".zarray {message}"


def test_a_raw_lzma_stream_asking_for_a_huge_dictionary_is_refused():
    filters = [{"id": lzma.FILTER_LZMA2, "dict_size": 2**32 - 1}]
    chunk = lzma.compress(bytes(16), format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2}])
    a = zarrx.open_array(v2(chunk, compressor={"id": "lzma", "format": 3, "filters": filters}),
                         mode="r")
    with pytest.raises(CodecError) as info:
        a[...]
    assert str(info.value) == ("array '/' chunk '0': lzma: filters[0].dict_size: a dictionary "
                               f"of {2**32 - 1} bytes is over the limit of {1 << 28}")


# -- filters storing what numpy cannot convert back ------------------------------------------------
@pytest.mark.parametrize("dtype, filters, message", [
    ("<i4", [{"id": "delta", "dtype": "<i4", "astype": "|V4"}],
     "delta needs a numeric astype for the differences of int32, found |V4"),
    ("<m8[s]", [{"id": "delta", "dtype": "<m8[s]", "astype": "<i8"}],
     "delta needs a timedelta astype for the differences of timedelta64[s], found int64"),
    ("<f8", [{"id": "astype", "encode_dtype": "|V2", "decode_dtype": "<f8"}],
     "astype converts between bool, numeric, datetime and timedelta types, found |V2"),
    ("<f8", [{"id": "astype", "encode_dtype": "<U1", "decode_dtype": "<f8"}],
     "astype converts between bool, numeric, datetime and timedelta types, found <U1"),
    ("<f8", [{"id": "fixedscaleoffset", "scale": 1, "offset": 0, "dtype": "<f8",
              "astype": "<M8[s]"}],
     "fixedscaleoffset needs a numeric astype, found datetime64[s]"),
], ids=["delta-void", "delta-timedelta-as-int", "astype-void", "astype-str", "scaleoffset-date"])
def test_filters_storing_types_numpy_cannot_convert_back_are_refused(dtype, filters, message):
    # decoding a stored chunk raised numpy's TypeError or ValueError
    a = zarrx.open_array(v2(bytes(32), dtype=dtype, filters=filters, fill_value=None), mode="r")
    with pytest.raises(CodecError) as info:
        a[...]
    assert str(info.value) == f".zarray filters[0]: {message}"


@pytest.mark.parametrize("dtype, filters, value", [
    ("<i4", [{"id": "delta", "dtype": "<i4", "astype": "<i2"}], [1, 5, 2, 9]),
    ("<m8[s]", [{"id": "delta", "dtype": "<m8[s]", "astype": "<m8[s]"}], [1, 5, 2, 9]),
    ("<f8", [{"id": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}], [1.5, 2, 3, 4]),
    ("<f8", [{"id": "fixedscaleoffset", "scale": 10, "offset": 1, "dtype": "<f8",
              "astype": "<u1"}], [1.5, 2, 3, 4]),
], ids=["delta", "delta-timedelta", "astype", "scaleoffset"])
def test_filters_storing_numeric_types_still_round_trip(dtype, filters, value):
    a = zarrx.open_array(v2(dtype=dtype, filters=filters, fill_value=None), mode="r+")
    a[...] = np.array(value).astype(dtype)
    assert a[...].tolist() == np.array(value).astype(dtype).tolist()


# -- unknown codec names ----------------------------------------------------------------------
@pytest.mark.parametrize("fmt", [2, 3])
def test_a_huge_unknown_codec_name_is_reported_short_and_without_a_quadratic_search(
        fmt, monkeypatch):
    # difflib's ratio() of a 600 kB name against each known name took minutes
    import difflib
    ratio = difflib.SequenceMatcher.ratio

    def bounded(self):
        assert len(self.a) + len(self.b) < 1000, "compared a huge name"
        return ratio(self)
    monkeypatch.setattr(difflib.SequenceMatcher, "ratio", bounded)
    name = "z" * 100_000
    if fmt == 2:
        store = v2(compressor={"id": name})
        prefix, what = ".zarray compressor.id: ", "numcodecs codec id"
    else:
        store = v3(codecs=[{"name": "bytes"}, {"name": name}])
        prefix, what = "", "codec"
    a = zarrx.open_array(store, mode="r")
    with pytest.raises(CodecError) as info:
        a[...]
    head = f"{prefix}unknown {what} '{'z' * 76}...{'' if fmt == 2 else ' in array ' + repr('/')}; "
    assert str(info.value).startswith(head) and len(str(info.value)) < 1000


def test_close_codec_names_are_still_suggested():
    a = zarrx.open_array(v3(codecs=[{"name": "bytes"}, {"name": "zstdd"}]), mode="r")
    with pytest.raises(CodecError, match=r"^unknown codec 'zstdd' in array '/'; did you mean "
                                         r"'zstd'\? known codecs: "):
        a[...]


# -- arguments numpy or repr() choke on --------------------------------------------------------
def deep_list(depth: int = 3000) -> list:
    x: list = []
    for _ in range(depth):
        x = [x]
    return x


@pytest.mark.parametrize("chunks, found", [
    (["a"], "chunks: expected a tuple of positive ints, found ['a']"),     # was ValueError
    ([[2, "a"]], "chunks: expected a tuple of positive ints or of edge lengths per axis, found "
                 "[[2, 'a']]"),
    ([[1.5]], "chunks: expected a tuple of positive ints or of edge lengths per axis, found "
              "[[1.5]]"),                                              # was truncated to 1
    ([deep_list()], "chunks: expected a tuple of positive ints or of edge lengths per axis, "
                    "found <deeply nested list>"),                     # was TypeError
], ids=["str", "str-edge", "float-edge", "deep"])
def test_chunks_that_are_not_ints_are_argument_type_errors(chunks, found):
    from zarrx.errors import ArgumentTypeError
    with pytest.raises(ArgumentTypeError) as info:
        zarrx.create_array(MemoryStore(), shape=(10,), dtype="u1", chunks=chunks)
    assert str(info.value) == found


def test_dask_style_chunks_with_a_string_edge_are_an_argument_type_error():
    from zarrx.errors import ArgumentTypeError
    with pytest.raises(ArgumentTypeError) as info:                     # was TypeError
        zarrx.zeros((10,), chunks=((2, 2, "a"),), store=MemoryStore())
    assert str(info.value) == ("chunks: expected a tuple of positive ints or of edge lengths "
                               "per axis, found ((2, 2, 'a'),)")


@pytest.mark.parametrize("kwargs, found", [
    ({"dimension_names": [deep_list()]},
     "create_array: dimension_names: expected a sequence of str or None, found "
     "<deeply nested list>"),
    ({"chunks": (2,), "shards": deep_list()},
     "create_array: shards: expected a tuple of ints, {'shape': ..., 'index_location': ...}, "
     "'auto' or None, found <deeply nested list>"),
], ids=["dimension_names", "shards"])
def test_deeply_nested_arguments_are_reported_without_recursion(kwargs, found):
    from zarrx.errors import ArgumentTypeError
    with pytest.raises(ArgumentTypeError) as info:                     # was RecursionError
        zarrx.create_array(MemoryStore(), shape=(10,), dtype="u1", **kwargs)
    assert str(info.value) == found


RAGGED = [[1, 2], [3]]
ONE_SHAPE = "expected a list or array of integers or booleans of one shape"


@pytest.mark.parametrize("index, error, found", [
    (lambda a: a[RAGGED], "IndexingError", f"selection: {ONE_SHAPE}, found list [[1, 2], [3]]"),
    (lambda a: a.oindex[RAGGED], "IndexingError",
     f"index array on axis 0: {ONE_SHAPE}, found list [[1, 2], [3]]"),
    (lambda a: a.vindex[RAGGED], "VindexInvalidSelectionError",
     f"coordinate selection: {ONE_SHAPE}, found list [[1, 2], [3]]"),
    (lambda a: a.vindex[[1, 2], RAGGED], "VindexInvalidSelectionError",
     f"coordinate selection on axis 1: {ONE_SHAPE}, found list [[1, 2], [3]]"),
    (lambda a: a.__setitem__(([1, 2], RAGGED), 1), "IndexingError",
     f"index array on axis 1: {ONE_SHAPE}, found list [[1, 2], [3]]"),
    (lambda a: a[deep_list()], "IndexingError",
     f"selection: {ONE_SHAPE}, found list <deeply nested list>"),
    (lambda a: a[{"k": deep_list()}, 0], "IndexingError",
     "index <deeply nested dict> on axis 0: expected an integer, a slice, an integer or boolean "
     "array, None or Ellipsis; found dict"),
    (lambda a: a[slice(deep_list(), 2)], "IndexingTypeError",
     "slice start on axis 0: expected an integer or None, found <deeply nested list>"),
], ids=["getitem", "oindex", "vindex", "vindex-axis", "setitem", "deep", "deep-dict", "slice"])
def test_ragged_and_deeply_nested_indexes_are_indexing_errors(index, error, found):
    # ragged lists raised numpy's ValueError, deeply nested ones RecursionError
    a = zarrx.create_array(MemoryStore(), shape=(4, 5), dtype="u1", chunks=(2, 2))
    with pytest.raises(zarrx.errors.IndexingError) as info:
        index(a)
    assert type(info.value).__name__ == error and str(info.value) == found
