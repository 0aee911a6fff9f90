"""numcodecs' delta with a ``dtype`` other than the chunk's (GDAL's ``DELTA_DTYPE``, and the
component type it declares for complex data): numcodecs reads the chunk's bytes as that type;
zarrx stores and reads the same bytes as numcodecs and zarr-python."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.codecs import Delta, VLenArray
from zarrx.errors import CodecError, MetadataError

numcodecs = pytest.importorskip("numcodecs")
zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SHAPE = (7, 11)

# (array dtype, delta dtype, astype, chunks)
V2_CASES = {
    "i2-as-i4": ("<i2", "<i4", None, (4, 6)),
    "i2-as-i4-astype-i8": ("<i2", "<i4", "<i8", (4, 6)),
    "i4-as-i2": ("<i4", "<i2", None, (4, 5)),
    "u1-as-i2": ("|u1", "<i2", None, (4, 6)),
    "u2-as-u1-astype-i2": ("<u2", "|u1", "<i2", (3, 5)),
    "f4-as-i4": ("<f4", "<i4", None, (4, 5)),
    "i8-as-f8": ("<i8", "<f8", None, (3, 5)),
    "c8-as-f4": ("<c8", "<f4", None, (3, 5)),
    "c16-as-f8-astype-f4": ("<c16", "<f8", "<f4", (3, 5)),
    "f8-as-c16": ("<f8", "<c16", None, (4, 6)),
    "big-i2-as-i4": (">i2", ">i4", None, (4, 6)),
    "big-c8-as-f4": (">c8", ">f4", None, (3, 5)),
    "u1-as-big-i2": ("|u1", ">i2", None, (4, 6)),
}


def _values(dtype: str) -> np.ndarray:
    dt = np.dtype(dtype)
    ramp = (np.arange(SHAPE[0] * SHAPE[1]).reshape(SHAPE) * 37) % 200
    if dt.kind == "c":
        return (ramp / 4 + 1j * (ramp[::-1] - 50)).astype(dt)
    if dt.kind == "f":
        return (ramp / 8 - 3).astype(dt)
    return ramp.astype(dt)


def _filter(dtype: str, astype: str | None) -> dict:
    return {"id": "delta", "dtype": dtype, **({"astype": astype} if astype else {})}


def _chunks(path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in path.iterdir() if not p.name.startswith(".")}


@pytest.mark.parametrize("case", list(V2_CASES))
def test_zarrx_reads_what_zarr_python_v2_writes(tmp_path, case) -> None:
    dtype, declared, astype, chunks = V2_CASES[case]
    path = tmp_path / "a.zarr"
    z = zarr.create_array(str(path), shape=SHAPE, chunks=chunks, dtype=dtype, zarr_format=2,
                          filters=[numcodecs.Delta(declared, astype)], compressors=None,
                          fill_value=0)
    z[...] = _values(dtype)
    want = zarr.open_array(str(path), mode="r")[...]
    got = zarrx.open_array(str(path), mode="r")[...]
    np.testing.assert_array_equal(got, want)
    if np.dtype(declared).kind in "iu":          # integer differences are lossless
        np.testing.assert_array_equal(got, _values(dtype))


@pytest.mark.parametrize("case", list(V2_CASES))
def test_zarr_python_v2_reads_what_zarrx_writes(tmp_path, case) -> None:
    dtype, declared, astype, chunks = V2_CASES[case]
    ours, theirs = tmp_path / "ours.zarr", tmp_path / "theirs.zarr"
    zarrx.create_array(str(ours), shape=SHAPE, chunks=chunks, dtype=dtype, zarr_format=2,
                       filters=[_filter(declared, astype)], compressors=None,
                       fill_value=0)[...] = _values(dtype)
    zarr.create_array(str(theirs), shape=SHAPE, chunks=chunks, dtype=dtype, zarr_format=2,
                      filters=[numcodecs.Delta(declared, astype)], compressors=None,
                      fill_value=0)[...] = _values(dtype)
    assert json.loads((ours / ".zarray").read_text())["filters"] == \
        [numcodecs.Delta(declared, astype).get_config()]
    assert _chunks(ours) == _chunks(theirs)
    np.testing.assert_array_equal(zarr.open_array(str(ours), mode="r")[...],
                                  zarrx.open_array(str(ours), mode="r")[...])


# zarr-python 3.1.6 writes a v3 numcodecs.delta whose dtype differs from the array's only when
# the item sizes agree (it keeps the chunk's shape), and reads its output back by value
# (numcodecs' delta returns items of its dtype, which zarr-python casts to the array's type),
# so the values it reads differ from those written: the stored bytes are compared, and zarrx
# reads what numcodecs decodes from them
V3_CASES = {"f4-as-i4": ("<f4", "<i4"), "i4-as-u4": ("<i4", "<u4"), "i8-as-f8": ("<i8", "<f8"),
            "i2-as-i4": ("<i2", "<i4"), "c8-as-f4": ("<c8", "<f4")}


@pytest.mark.parametrize("case", list(V3_CASES))
def test_v3_numcodecs_delta_of_another_type_stores_what_numcodecs_does(tmp_path, case) -> None:
    dtype, declared = V3_CASES[case]
    chunks = (4, 6)
    path = tmp_path / "a.zarr"
    values = _values(dtype)
    zarrx.create_array(str(path), shape=SHAPE, chunks=chunks, dtype=dtype, compressors=None,
                       filters=[{"name": "numcodecs.delta", "configuration": {"dtype": declared}}],
                       fill_value=0)[...] = values
    codec = numcodecs.Delta(declared)
    chunk = np.zeros(chunks, dtype)
    chunk[...] = values[:4, :6]
    stored = (path / "c" / "0" / "0").read_bytes()
    assert stored == codec.encode(chunk).tobytes()
    decoded = codec.decode(stored).view(dtype).reshape(chunks)
    np.testing.assert_array_equal(zarrx.open_array(str(path), mode="r")[:4, :6], decoded)
    if np.dtype(dtype).itemsize == np.dtype(declared).itemsize:
        theirs = tmp_path / "theirs.zarr"
        from zarr.codecs.numcodecs import Delta as ZDelta
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            zarr.create_array(str(theirs), shape=SHAPE, chunks=chunks, dtype=dtype,
                              compressors=None, filters=[ZDelta(dtype=declared)],
                              fill_value=0)[...] = values
        assert (theirs / "c" / "0" / "0").read_bytes() == stored


def test_fortran_order_v2_chunks_are_read_in_their_stored_order(tmp_path) -> None:
    # v2 hands the filters a chunk's bytes in Fortran order
    path = tmp_path / "a.zarr"
    values = _values("<i2")
    zarrx.create_array(str(path), shape=SHAPE, chunks=(4, 6), dtype="<i2", zarr_format=2,
                       order="F", filters=[_filter("<i4", None)], compressors=None,
                       fill_value=0)[...] = values
    stored = (path / "0.0").read_bytes()
    assert stored == numcodecs.Delta("<i4").encode(values[:4, :6].T.copy()).tobytes()
    np.testing.assert_array_equal(zarrx.open_array(str(path), mode="r")[...], values)


REFUSED = ("delta reads the bytes of a chunk as this type; expected a type whose item size "
           "divides a chunk's bytes (6 bytes of shape (3,) and type int16), found <i4")


@pytest.mark.parametrize("fmt,at", [(2, "filters[0].dtype"),
                                    (3, "filters[0].configuration.dtype")])
def test_a_delta_type_whose_item_size_does_not_divide_a_chunk_is_refused(tmp_path, fmt,
                                                                          at) -> None:
    # numcodecs fails to view such a chunk as its dtype
    path = tmp_path / "s"
    flt = _filter("<i4", None) if fmt == 2 else \
        {"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}}
    with pytest.raises(CodecError) as info:
        zarrx.create_array(str(path), name="a", shape=(6,), chunks=(3,), dtype="<i2",
                           zarr_format=fmt, filters=[flt], compressors=None)
    assert str(info.value) == f"create_array {at}: {REFUSED}"
    zarrx.create_array(str(path), name="a", shape=(6,), chunks=(4,), dtype="<i2",
                       zarr_format=fmt, filters=[flt], compressors=None, overwrite=True)
    meta = path / "a" / (".zarray" if fmt == 2 else "zarr.json")
    doc = json.loads(meta.read_text())
    if fmt == 2:
        doc["chunks"] = [3]
    else:
        doc["chunk_grid"]["configuration"]["chunk_shape"] = [3]
    meta.write_text(json.dumps(doc))
    for mode in ("r", "r+"):
        arr = zarrx.open_array(str(path), path="a", mode=mode)
        with pytest.raises(CodecError) as info:
            arr[...] if mode == "r" else arr.__setitem__(slice(None), 1)
        where = "a/.zarray filters[0].dtype" if fmt == 2 else "a codecs[0].configuration.dtype"
        assert str(info.value) == f"{where}: {REFUSED}"


def test_the_codec_refuses_a_chunk_its_dtype_does_not_divide() -> None:
    with pytest.raises(CodecError) as info:
        Delta("<i4").encode(np.arange(3, dtype="<i2"))
    assert str(info.value) == ("numcodecs.delta: expected a chunk whose bytes are a whole "
                               "number of <i4 items, found 6 bytes")
    with pytest.raises(CodecError) as info:
        Delta("<i4").decode(np.arange(2, dtype="<i4"), np.dtype("<i2"), (3,))
    assert str(info.value) == ("numcodecs.delta: expected 6 bytes of int16 for a chunk of "
                               "shape (3,), found 8")


def test_a_one_byte_delta_type_over_big_endian_data_is_refused(tmp_path) -> None:
    # numcodecs would read the big-endian bytes one by one
    path = tmp_path / "a"
    zarrx.create_array(str(path), shape=(6,), chunks=(4,), dtype=">i2", zarr_format=2,
                       filters=[_filter(">i2", None)], compressors=None)
    doc = json.loads((path / ".zarray").read_text())
    doc["filters"] = [_filter("|u1", "<i2")]
    (path / ".zarray").write_text(json.dumps(doc))
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(str(path), mode="r")
    assert str(info.value) == (".zarray filters[0].dtype: expected a type of more than one "
                               "byte: delta would read the big-endian bytes of the data it "
                               "receives one by one, which zarrx does not reproduce, found "
                               "'|u1'")


@pytest.mark.parametrize("fmt,at", [(2, "filters[0].dtype"),
                                    (3, "filters[0].configuration.dtype")])
def test_a_delta_type_over_python_objects_is_refused_naming_them(tmp_path, fmt, at) -> None:
    # a chunk of Python objects has no bytes for delta to read as its type
    flt = _filter("<i8", None) if fmt == 2 else \
        {"name": "numcodecs.delta", "configuration": {"dtype": "<i8"}}
    with pytest.raises(CodecError) as info:
        zarrx.create_array(str(tmp_path / "s"), shape=(4,), dtype=str, zarr_format=fmt,
                           filters=[flt])
    assert str(info.value) == (f"create_array {at}: delta reads the bytes of a chunk as this "
                               "type, <i8; expected a chunk of fixed-size items, found one of "
                               "Python objects (shape (4,), type object)")



@pytest.mark.parametrize("dtype", ["|V0", "|S0", "<U0"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_a_dtype_of_no_bytes_is_refused_by_delta_and_vlen_array(tmp_path, fmt, dtype) -> None:
    # (a ZeroDivisionError was raised while a chunk's bytes were divided into its items)
    want = f"dtype: expected a fixed-size dtype of at least one byte, found {dtype!r}"
    for make in (Delta, VLenArray):
        with pytest.raises(CodecError) as info:
            make(dtype)
        assert str(info.value) == f"zarrx.codecs.{make.__name__} {want}"
    with pytest.raises(CodecError) as info:
        zarrx.create_array({}, shape=(4,), chunks=(2,), dtype=str, zarr_format=3,
                           serializer={"name": "numcodecs.vlen-array",
                                       "configuration": {"dtype": dtype}})
    assert str(info.value) == f"create_array serializer.configuration.{want}"
    path = tmp_path / "a"
    zarrx.create_array(str(path), shape=(4,), chunks=(2,), dtype="<i4", zarr_format=2,
                       filters=[_filter("<i4", None)], compressors=None)
    doc = json.loads((path / ".zarray").read_text())
    doc["filters"] = [_filter(dtype, None)]
    (path / ".zarray").write_text(json.dumps(doc))
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(str(path), mode="r")
    assert str(info.value) == f".zarray filters[0].{want}"
