"""Metadata documents as other tools leave them, which zarr-python 3 and tensorstore read."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
ts = pytest.importorskip("tensorstore")

BOM = b"\xef\xbb\xbf"


def _documents(root) -> list:
    return [p for p in root.rglob("*") if p.name in (".zarray", ".zgroup", ".zattrs",
                                                      ".zmetadata", "zarr.json")]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_documents_starting_with_a_byte_order_mark(tmp_path, zarr_format) -> None:
    """A UTF-8 byte order mark before the JSON (a Windows editor saves one), which RFC 8259
    lets a parser ignore: zarr-python and tensorstore read such documents, zarrx refused them
    all ("expected valid JSON, found Unexpected UTF-8 BOM")."""
    path = tmp_path / "bom.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(str(path), mode="w", zarr_format=zarr_format,
                            attributes={"title": "é"})
        a = g.create_array("a", shape=(3,), chunks=(2,), dtype="i2", fill_value=4,
                           attributes={"units": "m"})
        a[:1] = 7
        zarr.consolidate_metadata(str(path))
    for doc in _documents(path):
        doc.write_bytes(BOM + doc.read_bytes())

    g = zarrx.open_group(str(path), mode="r")
    assert dict(g.attrs) == {"title": "é"}
    assert g["a"][...].tolist() == [7, 4, 4]
    assert dict(g["a"].attrs) == {"units": "m"}
    z = zarrx.open_array(str(path / "a"), mode="r")
    assert (z.dtype, z.fill_value, z[...].tolist()) == (np.dtype("i2"), 4, [7, 4, 4])
    if zarr_format == 3:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file",
                                                     "path": str(path / "a")}}).result()
        assert t.read().result().tolist() == [7, 4, 4]

    # rewritten documents carry no mark, and read everywhere
    zarrx.open_array(str(path / "a"), mode="r+").attrs["units"] = "km"
    key = "zarr.json" if zarr_format == 3 else ".zattrs"
    assert not (path / "a" / key).read_bytes().startswith(BOM)
    assert json.loads((path / "a" / key).read_bytes())  # plain JSON
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert dict(zarr.open_array(str(path / "a"), mode="r").attrs) == {"units": "km"}


def test_a_byte_order_mark_alone_is_still_not_a_document(tmp_path) -> None:
    path = tmp_path / "x.zarr"
    path.mkdir()
    (path / "zarr.json").write_bytes(BOM)
    with pytest.raises(zarrx.MetadataError, match="zarr.json"):
        zarrx.open_array(str(path), mode="r")


@pytest.mark.parametrize("dtype", ["<i2", ">i2"])
@pytest.mark.parametrize("endian", ["little", "big"])
def test_v3_numcodecs_filters_are_stored_in_the_bytes_codecs_order(tmp_path, dtype, endian):
    """A Zarr v3 array has no byte order before its ``bytes`` codec, so a ``numcodecs.delta``
    filter's output is stored in the codec's ``endian``. zarr-python 3.1.6 stores it so when
    the filter's ``dtype`` is the array's, but reads its own chunks back byte-swapped when that
    order is not the codec's (``[256, 512, ...]`` for ``[1, 2, ...]``); zarrx reads and writes
    what the stored bytes say."""
    from zarr.codecs import BytesCodec
    from zarr.codecs.numcodecs import Delta

    values = np.array([1, 2, 3, 4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(tmp_path / "py"), shape=(4,), chunks=(4,), dtype=dtype,
                              filters=[Delta(dtype=dtype)], compressors=None, fill_value=0,
                              serializer=BytesCodec(endian=endian))
        z[...] = values
    stored = (tmp_path / "py" / "c" / "0").read_bytes()
    assert stored == np.ones(4, "<i2" if endian == "little" else ">i2").tobytes()
    assert zarrx.open_array(str(tmp_path / "py"), mode="r")[...].tolist() == values.tolist()

    x = zarrx.create_array(str(tmp_path / "zx"), shape=(4,), chunks=(4,), dtype=dtype,
                           filters=[{"name": "numcodecs.delta", "configuration": {"dtype": dtype}}],
                           compressors=None, fill_value=0,
                           serializer={"name": "bytes", "configuration": {"endian": endian}})
    x[...] = values
    assert (tmp_path / "zx" / "c" / "0").read_bytes() == stored


@pytest.mark.parametrize("name,field,value", [
    ("Blosc", "clevel", 5.0), ("Zstd", "level", 5.0), ("Blosc", "shuffle", 2.0),
    ("LZ4", "acceleration", 5.0)])
def test_v2_codec_settings_numcodecs_wrote_as_floats(tmp_path, name, field, value) -> None:
    """numcodecs keeps a level given as a float, so zarr-python writes ``"clevel": 5.0`` into
    the ``.zarray``, and reads it back, as tensorstore does; zarrx refused such arrays
    (``.zarray compressor.clevel: expected an integer in [0, 9], found 5.0``)."""
    import numcodecs

    path = str(tmp_path / "a.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(path, shape=(5,), chunks=(2,), dtype="i4", zarr_format=2,
                              compressors=getattr(numcodecs, name)(**{field: value}),
                              fill_value=0)
        z[...] = np.arange(5)
    stored = json.loads((tmp_path / "a.zarr" / ".zarray").read_bytes())["compressor"][field]
    assert (stored, type(stored)) == (value, float)

    a = zarrx.open_array(path, mode="r+")
    assert a[...].tolist() == [0, 1, 2, 3, 4]
    level = getattr(a.compressors[0], field)
    assert (level, type(level)) == (int(value), int)
    a[:2] = [7, 8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert zarr.open_array(path, mode="r")[...].tolist() == [7, 8, 2, 3, 4]


WHOLE_NUMBERS = {   # zarr.json path -> the float written there
    "shape": lambda d: d.update(shape=[4.0, 6.0]),
    "chunk_shape": lambda d: d["chunk_grid"]["configuration"].update(chunk_shape=[4.0, 6e0]),
    "inner chunk_shape": lambda d: d["codecs"][0]["configuration"].update(chunk_shape=[2.0, 3.0]),
    "transpose order": lambda d: d["codecs"][0]["configuration"]["codecs"][0][
        "configuration"].update(order=[1.0, 0.0]),
    "blosc": lambda d: d["codecs"][0]["configuration"]["codecs"][2]["configuration"].update(
        clevel=5.0, typesize=4.0, blocksize=0.0),
}


@pytest.mark.parametrize("where", list(WHOLE_NUMBERS))
def test_v3_integers_written_with_a_fraction_part(tmp_path, where) -> None:
    """JSON has one number type: an integral number written as ``4.0`` or ``6e0`` in a
    ``zarr.json`` is read as that integer, as tensorstore reads it (zarr-python 3.1.6 refuses
    it); zarrx refused it naming the field."""
    from zarr.codecs import BloscCodec, TransposeCodec

    path = tmp_path / "a.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(str(path), shape=(4, 6), chunks=(2, 3), shards=(4, 6),
                              dtype="i4", filters=[TransposeCodec(order=(1, 0))],
                              compressors=BloscCodec(cname="lz4", clevel=5, shuffle="shuffle"),
                              fill_value=-1)
        z[:3, :5] = np.arange(15).reshape(3, 5)
    doc = json.loads((path / "zarr.json").read_bytes())
    WHOLE_NUMBERS[where](doc)
    (path / "zarr.json").write_text(json.dumps(doc))

    expected = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}
                       ).result().read().result()
    a = zarrx.open_array(str(path), mode="r")
    assert (a.shape, a.chunks, a.shards) == ((4, 6), (2, 3), (4, 6))
    np.testing.assert_array_equal(a[...], expected)
    assert a[2, 4] == 14 and a[3, 5] == -1


@pytest.mark.parametrize("value", [4.5, 2.0**53], ids=["fraction", "2**53"])
def test_numbers_no_integer_reads_exactly_are_still_refused(tmp_path, value) -> None:
    path = tmp_path / "a.zarr"
    zarrx.create_array(str(path), shape=(4,), chunks=(2,), dtype="i1")
    doc = json.loads((path / "zarr.json").read_bytes())
    doc["shape"] = [value]
    (path / "zarr.json").write_text(json.dumps(doc))
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            f"zarr.json shape[0]: expected a non-negative integer below 2**63, found {value}")):
        zarrx.open_array(str(path), mode="r")
    with pytest.raises(zarrx.ArgumentError, match="shape"):   # arguments stay integers
        zarrx.create_array(str(tmp_path / "b"), shape=(4.0,), chunks=(2,), dtype="i1")
