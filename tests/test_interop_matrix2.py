"""Less travelled corners of interop with zarr-python 3: what zarrx writes for a call reads in
zarr-python as what zarr-python writes for the same call, and the other way round."""
from __future__ import annotations

import base64
import json
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")


def _zarray(path) -> dict:
    with open(f"{path}/.zarray") as f:
        return json.load(f)


@pytest.mark.parametrize("dtype,stored", [
    ([("a", ">i4"), ("b", ">f8")], [["a", ">i4"], ["b", ">f8"]]),
    ([("a", ">i2", (2,)), ("b", [("x", ">f4"), ("s", "S2")])],
     [["a", ">i2", [2]], ["b", [["x", ">f4"], ["s", "|S2"]]]]),
    ([("a", "<i4"), ("b", "|u1")], [["a", "<i4"], ["b", "|u1"]]),
], ids=["big-endian", "big-endian-nested", "little-endian"])
def test_v2_structured_type_keeps_its_byte_order(tmp_path, dtype, stored) -> None:
    """A v2 structured type whose fields share one byte order is stored in it, as zarr-python
    stores it (big-endian fields were written little-endian)."""
    dt = np.dtype(dtype)
    x = (np.arange(5 * dt.itemsize) % 251).astype(np.uint8).view(dt)
    path = str(tmp_path / "zx.zarr")
    z = zarrx.create_array(path, shape=(5,), chunks=(2,), dtype=dt, zarr_format=2)
    z[...] = x
    assert _zarray(path)["dtype"] == stored
    got = zarrx.open_array(path, mode="r")[...]
    assert got.tobytes() == x.astype(got.dtype).tobytes()
    if len(stored[0]) == 3:               # zarr-python makes no subarray or nested fields
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(str(tmp_path / "zp.zarr"), shape=(5,), chunks=(2,), dtype=dt,
                          zarr_format=2)
        back = zarr.open_array(path, mode="r")[...]
    assert _zarray(tmp_path / "zp.zarr")["dtype"] == stored
    assert back.dtype == dt and back.tobytes() == x.tobytes()


@pytest.mark.parametrize("dtype", [[("a", ">i4"), ("b", ">f8")], [("a", "<i4"), ("b", "<f8")]],
                         ids=["big-endian", "little-endian"])
def test_v2_structured_fill_value_in_the_stored_byte_order(tmp_path, dtype) -> None:
    """A v2 structured fill value is the base64 of the item as stored, in the fields' byte
    order: zarr-python's big-endian fill (7, 1.5) read as (117440512, 3.1e-319)."""
    dt = np.dtype(dtype)
    fill = np.array((7, 1.5), dt)[()]
    stored = np.array(fill, dt).tobytes()
    for writer in ("zarr-python", "zarrx"):
        path = str(tmp_path / f"{writer}.zarr")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make = zarr.create_array if writer == "zarr-python" else zarrx.create_array
            a = make(path, shape=(3,), chunks=(2,), dtype=dt, zarr_format=2, fill_value=fill)
            a[0] = np.array((1, 2.5), dt)
            theirs = zarr.open_array(path, mode="r")
            assert theirs.fill_value.tolist() == (7, 1.5), writer
            assert theirs[...].tolist() == [(1, 2.5), (7, 1.5), (7, 1.5)], writer
        assert base64.b64decode(_zarray(path)["fill_value"]) == stored, writer
        ours = zarrx.open_array(path, mode="r")
        assert ours.fill_value.tolist() == (7, 1.5), writer
        assert ours[...].tolist() == [(1, 2.5), (7, 1.5), (7, 1.5)], writer


def _cke(name: str, separator: str):
    from zarr.core.chunk_key_encodings import DefaultChunkKeyEncoding, V2ChunkKeyEncoding
    return (DefaultChunkKeyEncoding if name == "default" else V2ChunkKeyEncoding)(
        separator=separator)


@pytest.mark.parametrize("arg,stored", [
    (lambda: _cke("default", "."), {"name": "default", "configuration": {"separator": "."}}),
    (lambda: _cke("v2", "/"), {"name": "v2", "configuration": {"separator": "/"}}),
    (lambda: ("v2", "/"), {"name": "v2", "configuration": {"separator": "/"}}),
], ids=["zarr-python-default", "zarr-python-v2", "name-separator-pair"])
def test_chunk_key_encoding_arguments_zarr_python_takes(tmp_path, arg, stored) -> None:
    """zarr-python's chunk key encoding objects (create_array) and (name, separator) pairs
    (zarr.create) are chunk key encodings here too, not a MetadataError."""
    path = str(tmp_path / "k.zarr")
    zarrx.create_array(path, shape=(4,), chunks=(2,), dtype="i4",
                       chunk_key_encoding=arg())[:] = np.arange(4)
    with open(f"{path}/zarr.json") as f:
        assert json.load(f)["chunk_key_encoding"] == stored
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.open_array(path, mode="r")[:].tolist() == [0, 1, 2, 3]


def test_chunk_key_encoding_of_another_kind_is_a_type_error(tmp_path) -> None:
    with pytest.raises(zarrx.ArgumentTypeError) as info:
        zarrx.create_array(str(tmp_path / "k.zarr"), shape=(4,), dtype="i4",
                           chunk_key_encoding=5)
    assert isinstance(info.value, TypeError)
    assert str(info.value) == (
        'array metadata chunk_key_encoding: expected {"name": "default" or "v2", '
        '"configuration": {"separator": "/" or "."}}, a name, a (name, separator) pair or a '
        'chunk key encoding object, found 5')
    assert not (tmp_path / "k.zarr").exists()


def _zdtypes():
    zd = zarr.dtype
    return {
        "int32": (lambda: zd.Int32(), np.arange(4, dtype="i4")),
        "int32-big": (lambda: zd.Int32(endianness="big"), np.arange(4, dtype=">i4")),
        "bool": (lambda: zd.Bool(), np.array([True, False, True, True])),
        "complex128": (lambda: zd.Complex128(), np.arange(4) * (1 + 2j)),
        "string": (lambda: zd.VariableLengthUTF8(), np.array(["a", "", "bé", "c"], dtype=object)),
        "bytes": (lambda: zd.VariableLengthBytes(),
                  np.array([b"a", b"", b"\xff", b"c"], dtype=object)),
        "utf32": (lambda: zd.FixedLengthUTF32(length=3), np.array(["ab", "c", "", "xyz"])),
        "null-terminated": (lambda: zd.NullTerminatedBytes(length=2),
                            np.array([b"a", b"bc", b"", b"d"])),
        "raw": (lambda: zd.RawBytes(length=2), np.arange(8, dtype="u1").view("V2")),
        "datetime64": (lambda: zd.DateTime64(unit="ms", scale_factor=5),
                       np.arange(4).astype("M8[5ms]")),
        "structured": (lambda: zd.Structured(fields=(("a", zd.Int16()), ("b", zd.Float32()))),
                       np.array([(1, 2.5)] * 4, [("a", "<i2"), ("b", "<f4")])),
    }


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("name", list(_zdtypes()))
def test_zarr_python_data_type_objects(tmp_path, name, fmt) -> None:
    """zarr-python 3's data type objects (zarr.dtype.*) name the type they do there; they were
    a DataTypeError ('expected a numpy dtype, ...')."""
    make, x = _zdtypes()[name]
    ours, theirs = str(tmp_path / "zx.zarr"), str(tmp_path / "zp.zarr")
    z = zarrx.create_array(ours, shape=(4,), chunks=(2,), dtype=make(), zarr_format=fmt)
    z[...] = x
    key, field = ("zarr.json", "data_type") if fmt == 3 else (".zarray", "dtype")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        zarr.create_array(theirs, shape=(4,), chunks=(2,), dtype=make(), zarr_format=fmt)
        back = zarr.open_array(ours, mode="r")[...]
    with open(f"{ours}/{key}") as f, open(f"{theirs}/{key}") as g:
        mine, want = json.load(f)[field], json.load(g)[field]
    # zarrx writes variable-length bytes under the name registered for the type
    assert mine == ("bytes" if want == "variable_length_bytes" else want)
    assert list(np.asarray(back).astype(object).ravel()) == list(x.astype(object).ravel())
    assert list(z[...].astype(object).ravel()) == list(x.astype(object).ravel())
