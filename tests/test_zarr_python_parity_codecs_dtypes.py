"""Codecs, data types and fill values on zarr-python and on zarrx: codec properties and
settings, string, object and ML data types, and the fill values users give."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec,  # noqa: E402
                         ShardingCodec, TransposeCodec, ZstdCodec)

from parity_helpers import LIBS, arr, both, codec_ids, doc  # noqa: E402
from parity_helpers import _quiet  # noqa: E402, F401  (an autouse fixture)


CODEC_ARRAYS = {
    "default": {},
    "gzip-crc32c": {"compressors": [GzipCodec(level=2), Crc32cCodec()]},
    "transpose-big-endian": {"filters": [TransposeCodec(order=(1, 0))],
                             "serializer": BytesCodec(endian="big"), "compressors": None},
    "blosc": {"compressors": BloscCodec(cname="lz4", clevel=3, shuffle="shuffle", typesize=4)},
    "sharded": {"shards": (10, 10), "compressors": ZstdCodec(level=2)},
}


@pytest.mark.parametrize("kw", list(CODEC_ARRAYS.values()), ids=list(CODEC_ARRAYS))
def test_codec_properties_and_zarr_codec_objects(kw):
    got = both(lambda lib: arr(lib, **kw))
    theirs, ours = got["zarr"], got["zarrx"]
    for prop in ("filters", "compressors"):
        assert type(getattr(ours, prop)) is tuple
        assert codec_ids(getattr(ours, prop)) == codec_ids(getattr(theirs, prop)), prop
    assert codec_ids([ours.serializer]) == codec_ids([theirs.serializer])
    assert (ours.chunks, ours.shards) == (theirs.chunks, theirs.shards)
    assert doc(ours.store._data)["codecs"] == doc(theirs.store._store_dict)["codecs"]
    np.testing.assert_array_equal(ours[...], theirs[...])


def test_v2_codec_properties():
    import numcodecs
    kw = dict(zarr_format=2, filters=[numcodecs.Delta(dtype="<i4")],
              compressors=numcodecs.Zstd(level=1))
    got = both(lambda lib: arr(lib, **kw))
    theirs, ours = got["zarr"], got["zarrx"]
    assert codec_ids(ours.filters) == codec_ids(theirs.filters)
    assert codec_ids([ours.compressor]) == codec_ids([theirs.compressor])
    assert codec_ids(ours.compressors) == codec_ids(theirs.compressors)
    assert ours.serializer is theirs.serializer is None
    got = both(lambda lib: arr(lib, zarr_format=2, compressors=None).compressor)
    assert got["zarr"] is got["zarrx"] is None


def test_sharding_codec_through_create_codecs():
    def case(lib):
        store: dict = {}
        a = lib.create(shape=(8, 8), store=store, dtype="i4", chunks=(4, 4),
                       codecs=[ShardingCodec(chunk_shape=(2, 2),
                                             codecs=[BytesCodec(), ZstdCodec(level=1)])])
        a[...] = 5
        return doc(store)["codecs"], a.chunks, a.shards, a.nchunks_initialized, a[...]
    got = both(case)
    for theirs, ours in zip(got["zarr"], got["zarrx"]):
        np.testing.assert_array_equal(ours, theirs)


def test_codec_aliases():
    c = zarrx.codecs
    for alias, cls in [("ZstdCodec", "Zstd"), ("BloscCodec", "Blosc"), ("GzipCodec", "Gzip"),
                       ("BytesCodec", "Bytes"), ("Crc32cCodec", "Crc32c"),
                       ("TransposeCodec", "Transpose"), ("VLenUTF8Codec", "VLenUTF8"),
                       ("VLenBytesCodec", "VLenBytes"), ("ShardingCodec", "ShardingIndexed")]:
        assert getattr(c, alias) is getattr(c, cls)
    z = zarrx.create_array({}, shape=(8, 8), dtype="i4", chunks=(4, 4),
                           serializer=c.ShardingCodec(chunk_shape=(2, 2),
                                                      codecs=[c.BytesCodec(), c.ZstdCodec()]))
    assert (z.chunks, z.shards) == ((2, 2), (4, 4))
    assert c.ZstdCodec(level=3).to_dict() == ZstdCodec(level=3).to_dict()


@pytest.mark.parametrize("lib", ["zarr", "zarrx"])
def test_codec_settings_take_zarr_pythons_enumerations(lib):
    """As zarr-python's documentation writes them (``BloscShuffle.bitshuffle``), with
    zarr-python's enumerations or zarrx's of the same names."""
    e = LIBS[lib].codecs
    blosc = zarrx.codecs.BloscCodec(cname=e.BloscCname.lz4, shuffle=e.BloscShuffle.bitshuffle)
    assert (blosc.cname, blosc.shuffle) == ("lz4", "bitshuffle")
    assert zarrx.codecs.BytesCodec(endian=e.Endian.big).to_dict() == \
        BytesCodec(endian="big").to_dict()
    shard = zarrx.codecs.ShardingCodec(chunk_shape=(2,),
                                       index_location=e.ShardingCodecIndexLocation.start)
    assert shard.to_dict()["configuration"]["index_location"] == "start"
    z = zarrx.create_array({}, shape=(4,), dtype="i4", chunks=(4,), compressors=blosc)
    z[...] = [1, 2, 3, 4]
    assert z[...].tolist() == [1, 2, 3, 4]
    assert z.metadata.json["codecs"][1]["configuration"]["shuffle"] == "bitshuffle"
    for name in ("BloscShuffle", "BloscCname", "Endian", "ShardingCodecIndexLocation"):
        assert [(m.name, m.value) for m in getattr(zarrx.codecs, name)] == \
            [(m.name, m.value) for m in getattr(zarr.codecs, name)]


def test_codec_errors_point_to_the_right_argument():
    with pytest.raises(TypeError, match="^create_array serializer: 'zstd' is a bytes->bytes "
                                        "codec; pass it in compressors=, not serializer=$"):
        zarrx.create_array({}, shape=(4,), dtype="i4", serializer=ZstdCodec())
    with pytest.raises(TypeError, match="^create_array compressors\\[0\\]: expected a codec "
                                        "object, found the class zarr.codecs.zstd.ZstdCodec; "
                                        "pass an instance, such as ZstdCodec\\(\\)$"):
        zarrx.create_array({}, shape=(4,), dtype="i4", compressors=ZstdCodec)
    with pytest.raises(ValueError, match="a shard cannot be compressed as a whole"):
        zarrx.create_array({}, shape=(8,), dtype="i4", chunks=(4,),
                           serializer=ShardingCodec(chunk_shape=(2,)), compressors=ZstdCodec())


def test_string_dtype_in_and_out():
    string_dtype = getattr(np.dtypes, "StringDType", None)
    if string_dtype is None:
        pytest.skip("numpy < 2 has no StringDType")
    values = np.array(["a", "bb", "ccc"], dtype=string_dtype())

    def case(lib):
        out = []
        for dtype, fmt in [(str, 3), (string_dtype(), 3), (str, 2)]:
            a = lib.create_array({}, shape=(3,), dtype=dtype, chunks=(2,), zarr_format=fmt)
            a[...] = values
            out.append((a.dtype, a[...].dtype, a[...].tolist(), a.fill_value))
        b = lib.array(values, chunks=(2,))
        out.append((b.dtype, b[1:].tolist()))
        return out
    got = both(case)
    assert got["zarrx"] == got["zarr"]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("make", [
    lambda zd: zd.Int8(), lambda zd: zd.FixedLengthUTF32(length=3),
    lambda zd: zd.VariableLengthUTF8(), lambda zd: zd.VariableLengthBytes(),
    lambda zd: zd.NullTerminatedBytes(length=4),
    lambda zd: zd.DateTime64(unit="s", scale_factor=1),
    lambda zd: zd.Structured.from_native_dtype(np.dtype([("a", "i4")])), lambda zd: zd.Bool()],
    ids=["Int8", "FixedLengthUTF32", "VariableLengthUTF8", "VariableLengthBytes",
         "NullTerminatedBytes", "DateTime64", "Structured", "Bool"])
def test_zarr_pythons_data_type_objects_are_dtypes(make, fmt):
    """``dtype=zarr.dtype.Int8()`` and the like make the array zarr-python makes of them."""
    import zarr.dtype
    dt = make(zarr.dtype)
    ours = zarrx.create_array({}, shape=(2,), dtype=dt, zarr_format=fmt)
    theirs = zarr.create_array({}, shape=(2,), dtype=dt, zarr_format=fmt)
    assert ours.dtype == theirs.dtype
    if fmt == 2 or type(dt).__name__ != "VariableLengthBytes":   # written as "bytes" in v3
        assert ours.metadata.json["dtype" if fmt == 2 else "data_type"] == \
            theirs.metadata.to_dict()["dtype" if fmt == 2 else "data_type"]


def test_string_element_is_a_str():
    """numpy semantics: one element of a 1-d array is a scalar (zarr-python 3.1 returns a 0-d
    array here)."""
    a = zarrx.array(np.array(["x", "yy"]), dtype=str)
    assert a[1] == "yy" and type(a[1]) is str


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "int4"])
def test_ml_dtype_names(name):
    """zarr-python 3.1 refuses these names (TypeError); zarrx takes them when ml_dtypes is
    installed."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for fmt in (2, 3):
        a = zarrx.create_array({}, shape=(4,), dtype=name, zarr_format=fmt)
        a[...] = np.arange(4).astype(getattr(ml_dtypes, name))
        assert a.dtype == np.dtype(getattr(ml_dtypes, name))
        assert a[...].astype("f4").tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("case", [
    lambda lib: lib.zeros((3,), dtype=bool),
    lambda lib: lib.ones((3,), dtype=bool),
    lambda lib: lib.zeros_like(np.zeros(3, bool)),
    lambda lib: lib.full((2,), fill_value=2, dtype=bool),
    lambda lib: lib.zeros((3,), dtype="U3"),
    lambda lib: lib.ones((2,), dtype=str),
    lambda lib: lib.create_array({}, shape=(2,), dtype="S5", fill_value="abcd"),
    lambda lib: lib.create_array({}, shape=(2,), dtype="S5", fill_value="hello", zarr_format=2),
    lambda lib: lib.create_array({}, shape=(1,), dtype=[("a", "i4"), ("b", "f8")],
                                 fill_value=[1, 2.5]),
    lambda lib: lib.create_array({}, shape=(1,), dtype="f4", fill_value=True),
    lambda lib: lib.create_array({}, shape=(1,), dtype="f4", fill_value=np.array(1.5)),
    lambda lib: lib.create_array({}, shape=(1,), dtype="c8", fill_value=np.array(1 - 2j)),
], ids=["zeros-bool", "ones-bool", "zeros_like-bool", "full-bool-2", "zeros-U3", "ones-str",
        "S5-text", "S5-text-v2", "struct-list", "f4-True", "f4-0d-array", "c8-0d-array"])
def test_fill_values_convert_as_in_zarr_python(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = both(lambda lib: case(lib)[...])
    assert not isinstance(got["zarrx"], Exception), got["zarrx"]
    assert got["zarrx"].dtype == got["zarr"].dtype
    assert got["zarrx"].tolist() == got["zarr"].tolist()


@pytest.mark.parametrize("dtype, fill", [
    ("c16", [1.5, 2]), ("c8", ("NaN", 1)), ("M8[s]", [1, 2]), ("m8[s]", np.array([1, 2])),
    ("f4", np.zeros((2, 2)))])
def test_a_fill_value_that_is_not_a_scalar_is_refused(dtype, fill):
    """zarr-python refuses these too (TypeError); zarrx names the field and the type."""
    with pytest.raises(zarrx.errors.FillValueError) as info:
        zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)
    assert str(info.value).startswith(
        f"array metadata fill_value: expected a scalar fill value for {np.dtype(dtype)}, found ")


@pytest.mark.parametrize("dtype", ["M8[s]", "m8[ms]"])
def test_v2_null_fill_of_dates_reads_as_nat(tmp_path, dtype):
    """A Zarr v2 fill_value of null leaves unwritten cells undefined; zarr-python reads them
    as NaT for dates and durations, and so does zarrx (zero, the epoch, before)."""
    path = str(tmp_path / "d.zarr")
    z = zarrx.create_array(path, shape=(4,), chunks=(2,), dtype=dtype, zarr_format=2,
                           fill_value=None)
    z[2:] = np.array([0, 5], dtype)
    ours = zarrx.open_array(path, mode="r")[...]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_array(path, mode="r")[...]
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert np.isnat(ours[:2]).all() and not np.isnat(ours[2:]).any()


@pytest.mark.parametrize("fmt", [2, 3])
def test_values_written_to_string_arrays_convert_as_numpy_converts_them(fmt):
    """zarr-python converts with numpy (5 -> "5", b"x" -> "x"); zarrx used to fail encoding
    the chunk (vlen-utf8: item is int, expected str)."""
    def write(lib):
        a = lib.create_array({}, shape=(5,), dtype=str, chunks=(2,), zarr_format=fmt)
        a[0] = 5
        a[1] = b"x"
        a[2:4] = np.array([1.5, "y"], dtype=object)
        a[4:] = [True]
        return [str(v) for v in a[...]]
    got = both(write)
    assert got["zarrx"] == got["zarr"] == ["5", "x", "1.5", "y", "True"]


@pytest.mark.parametrize("values", [[b"a", 1], ["a", b"b"], [1, 2], [None, "a"]],
                         ids=["bytes-int", "str-bytes", "ints", "none-str"])
def test_object_arrays_of_mixed_or_non_text_values_are_refused(values):
    """zarr-python refuses every object array as ambiguous (a ValueError); zarrx refuses
    those whose values are not all str or all bytes (docs/guide/migrating.md)."""
    data = np.empty(len(values), dtype=object)
    data[:] = values
    got = both(lambda lib: lib.array(data))
    assert isinstance(got["zarr"], ValueError) and isinstance(got["zarrx"], zarrx.ArgumentError)
    for call in (lambda: zarrx.create_array({}, data=data),
                 lambda: zarrx.from_array({}, data=data), lambda: zarrx.save_array({}, data)):
        with pytest.raises(zarrx.ArgumentError, match="data of numpy's object dtype holds"):
            call()


@pytest.mark.parametrize("fmt", [2, 3])
def test_object_arrays_of_bytes_are_bytes_arrays_and_of_str_string_arrays(tmp_path, fmt):
    by = zarrx.array(np.array([b"a", b"bc"], dtype=object), zarr_format=fmt)
    st = zarrx.array(np.array(["a", "bc"], dtype=object), zarr_format=fmt)
    assert (by.metadata.data_type.name, st.metadata.data_type.name) == ("bytes", "string")
    assert by[...].tolist() == [b"a", b"bc"] and st[...].tolist() == ["a", "bc"]
    g = zarrx.group(str(tmp_path), zarr_format=fmt)
    g["b"] = np.array([b"x"], dtype=object)
    assert zarr.open_array(str(tmp_path), path="b")[...].tolist() == [b"x"]   # zarr-python too
