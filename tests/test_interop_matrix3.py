"""Interop with zarr-python 3 and tensorstore, continued: Zarr v2 structured types whose fields
have different byte orders, and what each library leaves in the other's metadata."""
from __future__ import annotations

import base64
import json
import warnings

import numcodecs
import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")

MIXED = [
    ([("a", "<i4"), ("b", ">f8")], [["a", "<i4"], ["b", ">f8"]]),
    ([("a", ">u2"), ("b", "<c8"), ("c", "|u1")], [["a", ">u2"], ["b", "<c8"], ["c", "|u1"]]),
    ([("a", ">i8"), ("b", "S3"), ("c", "<f4")], [["a", ">i8"], ["b", "|S3"], ["c", "<f4"]]),
]
COMPRESSORS = {"none": (None, None),
               "blosc": (lambda: numcodecs.Blosc(cname="lz4", shuffle=1),
                         lambda: zarrx.codecs.Blosc(cname="lz4", shuffle="shuffle")),
               "zstd": (lambda: numcodecs.Zstd(level=1), lambda: zarrx.codecs.Zstd(level=1))}


def _zarray(path) -> dict:
    with open(f"{path}/.zarray") as f:
        return json.load(f)


def _values(dt: np.dtype, n: int) -> np.ndarray:
    return (np.arange(n * dt.itemsize) % 251 + 1).astype(np.uint8).view(dt)


def _fill(dt: np.dtype) -> np.void:
    return np.frombuffer(bytes(range(100, 100 + dt.itemsize)), dt)[0]


def _create(lib: str, path: str, dt: np.dtype, compressor: str, **kw):
    make = COMPRESSORS[compressor][0 if lib == "zarr-python" else 1]
    c = None if make is None else make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if lib == "zarr-python":
            return zarr.create_array(path, shape=(7,), chunks=(3,), dtype=dt, zarr_format=2,
                                     compressors=c, fill_value=_fill(dt), **kw)
        return zarrx.create_array(path, shape=(7,), chunks=(3,), dtype=dt, zarr_format=2,
                                  compressors=c, fill_value=_fill(dt), **kw)


@pytest.mark.parametrize("compressor", list(COMPRESSORS))
@pytest.mark.parametrize("dtype,stored", MIXED, ids=["i4-f8", "u2-c8-u1", "i8-S3-f4"])
def test_v2_structured_type_of_mixed_byte_orders_both_ways(tmp_path, dtype, stored,
                                                           compressor) -> None:
    """Each field is stored in the byte order the v2 ``dtype`` gives it: zarrx writes the
    descriptor, fill value and chunks zarr-python writes for the same calls, and each reads
    the other's values, data type and fill value (zarrx refused the type before)."""
    dt = np.dtype(dtype)
    x = _values(dt, 4)
    for writer, reader in (("zarr-python", zarrx), ("zarrx", zarr)):
        path = str(tmp_path / writer)
        a = _create(writer, path, dt, compressor)
        a[1:5] = x
        meta = _zarray(path)
        assert meta["dtype"] == stored, writer
        assert base64.b64decode(meta["fill_value"]) == _fill(dt).tobytes(), writer
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = reader.open_array(path, mode="r")
            got = b[...]
        assert got.dtype == dt, writer
        assert got[1:5].tobytes() == x.tobytes(), writer
        assert got[0].tobytes() == got[6].tobytes() == _fill(dt).tobytes(), writer
        assert np.array(b.fill_value, dt).tobytes() == _fill(dt).tobytes(), writer
    codec = numcodecs.get_codec(_zarray(tmp_path / "zarrx")["compressor"]) \
        if compressor != "none" else None
    for key in ("0", "1"):
        raw = [(tmp_path / w / key).read_bytes() for w in ("zarr-python", "zarrx")]
        if codec is not None:
            raw = [bytes(codec.decode(r)) for r in raw]
        assert raw[0] == raw[1], key


def test_v2_structured_type_of_mixed_byte_orders_in_fortran_order_nested(tmp_path) -> None:
    """Subarray and nested fields keep their byte orders too (zarr-python makes neither), in
    order 'F', and a rewrite of the metadata (new attributes) keeps the descriptor."""
    dt = np.dtype([("a", ">i2", (2,)), ("b", [("x", "<f4"), ("s", "S2")]), ("c", ">u8")])
    stored = [["a", ">i2", [2]], ["b", [["x", "<f4"], ["s", "|S2"]]], ["c", ">u8"]]
    path = str(tmp_path / "n.zarr")
    z = zarrx.create_array(path, shape=(3, 4), chunks=(2, 3), dtype=dt, zarr_format=2,
                           order="F", fill_value=_fill(dt), compressors=None)
    x = _values(dt, 6).reshape(2, 3)
    z[1:, 1:] = x
    z.attrs["k"] = 1
    assert _zarray(path)["dtype"] == stored
    got = zarrx.open_array(path, mode="r")[...]
    assert got.dtype == dt
    assert got[1:, 1:].tobytes() == x.tobytes()
    assert got[0, 0].tobytes() == _fill(dt).tobytes()
    item = (tmp_path / "n.zarr" / "1.1").read_bytes()[:dt.itemsize]   # [2, 3]: stored as is
    assert item == np.asarray(got[2, 3]).tobytes()


def test_v2_structured_type_of_mixed_byte_orders_converts_to_v3(tmp_path) -> None:
    """Zarr v3 structured types have one byte order: converted, the values stay, read by
    zarr-python as zarrx reads them."""
    dt = np.dtype([("a", "<i4"), ("b", ">f8")])
    src = str(tmp_path / "v2.zarr")
    _create("zarr-python", src, dt, "none")[2:4] = _values(dt, 2)
    dst = str(tmp_path / "v3.zarr")
    zarrx.convert(src, dst, zarr_format=3)
    got = zarr.open_array(dst, mode="r")
    assert got[...].tolist() == zarr.open_array(src, mode="r")[...].tolist()
    assert got.fill_value.tolist() == _fill(dt).tolist()


def test_v2_structured_type_of_mixed_byte_orders_with_tensorstore(tmp_path) -> None:
    """tensorstore reads each field of what zarrx writes, and zarrx reads what it writes."""
    ts = pytest.importorskip("tensorstore")
    dt = np.dtype([("a", "<i4"), ("b", ">f8")])
    ours = str(tmp_path / "zarrx.zarr")
    z = zarrx.create_array(ours, shape=(5,), chunks=(2,), dtype=dt, zarr_format=2,
                           fill_value=np.array((7, 2.5), dt)[()], compressors=None)
    z[1:3] = np.array([(1, 1.5), (2, 2.5)], dt)
    for field, want in (("a", [7, 1, 2, 7, 7]), ("b", [2.5, 1.5, 2.5, 2.5, 2.5])):
        t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": ours},
                     "field": field}).result()
        assert t.read().result().tolist() == want
    theirs = str(tmp_path / "tensorstore.zarr")
    t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": theirs}, "field": "b",
                 "metadata": {"shape": [5], "chunks": [2], "dtype": [["a", "<i4"], ["b", ">f8"]],
                              "fill_value": base64.b64encode(np.array((7, 2.5), dt).tobytes())
                              .decode(), "compressor": None},
                 "create": True}).result()
    t[1:3] = np.array([1.5, -3.0])
    got = zarrx.open_array(theirs, mode="r")
    assert got[...].tolist() == [(7, 2.5), (7, 1.5), (7, -3.0), (7, 2.5), (7, 2.5)]
    assert got.fill_value.tolist() == (7, 2.5)


@pytest.mark.parametrize("given", [[("a", "<i4"), ("b", "<f8")], [("a", ">i4"), ("b", ">f8")]],
                         ids=["little-endian", "big-endian"])
def test_values_of_other_byte_orders_written_to_a_mixed_type_are_converted(tmp_path,
                                                                            given) -> None:
    """Values given in other byte orders are stored in the array's, whole chunks and parts."""
    dt = np.dtype([("a", "<i4"), ("b", ">f8")])
    path = str(tmp_path / "m.zarr")
    z = zarrx.create_array(path, shape=(6,), chunks=(2,), dtype=dt, zarr_format=2,
                           compressors=None)
    z[:] = np.array([(i, i + 0.5) for i in range(6)], given)
    z[3] = np.array((30, 30.5), given)
    z[4:5] = (40, 40.5)
    want = [(0, 0.5), (1, 1.5), (2, 2.5), (30, 30.5), (40, 40.5), (5, 5.5)]
    assert zarr.open_array(path, mode="r")[...].tolist() == want
    got = zarrx.open_array(path, mode="r")
    assert got[::2].tolist() == want[::2]
    assert got.vindex[[5, 0]].tolist() == [want[5], want[0]]


def _flag_grid(d: dict) -> None:
    d["chunk_grid"]["must_understand"] = False


def _flag_keys(d: dict) -> None:
    d["chunk_key_encoding"]["must_understand"] = False


def _flag_dtype(d: dict) -> None:
    d["data_type"] = {"name": d["data_type"], "must_understand": False}


def _flag_codecs(d: dict) -> None:
    d["codecs"][0]["must_understand"] = False
    inner = d["codecs"][0]["configuration"]
    inner["codecs"][0]["must_understand"] = False
    inner["index_codecs"][-1]["must_understand"] = False


def _flag_field(d: dict) -> None:
    d["an_extension"] = {"must_understand": False, "version": [1, 2]}


def _flag_transformer(d: dict) -> None:
    d["storage_transformers"] = [{"name": "an_extension", "must_understand": False}]


@pytest.mark.parametrize("flag", [_flag_grid, _flag_keys, _flag_dtype, _flag_codecs, _flag_field,
                                  _flag_transformer],
                         ids=["chunk_grid", "chunk_key_encoding", "data_type", "codecs",
                              "top-level-field", "storage_transformers"])
def test_must_understand_false_is_kept_when_the_document_is_rewritten(tmp_path, flag) -> None:
    """Every object read with ``"must_understand": false`` is written back with it, after new
    attributes and a resize (a chunk grid's flag was dropped)."""
    path = tmp_path / "a.zarr"
    zarrx.create_array(str(path), shape=(4, 4), chunks=(2, 2), shards=(4, 4), dtype="i4",
                       fill_value=-1)
    doc = json.loads((path / "zarr.json").read_text())
    flag(doc)
    (path / "zarr.json").write_text(json.dumps(doc))
    z = zarrx.open_array(str(path), mode="r+")
    z[:] = 3
    z.attrs["a"] = 1
    z.resize((6, 6))
    z.resize((4, 4))
    del z.attrs["a"]
    assert json.loads((path / "zarr.json").read_text()) == doc
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == [[3] * 4] * 4


def test_inline_consolidated_metadata_that_must_be_understood_is_read(tmp_path) -> None:
    """zarrx understands inline consolidated metadata, so ``"must_understand": true`` there is
    read as zarr-python reads it (it was refused: "expected false, found True") and kept as
    zarrx keeps the document in step."""
    path = tmp_path / "g.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(str(path), mode="w")
        g.create_array("a", shape=(2,), dtype="i4")
        zarr.consolidate_metadata(str(path))
    doc = json.loads((path / "zarr.json").read_text())
    doc["consolidated_metadata"]["must_understand"] = True
    (path / "zarr.json").write_text(json.dumps(doc))
    ours = zarrx.open_consolidated(str(path))
    assert list(ours.keys()) == ["a"]
    ours.attrs["k"] = 1
    ours.create_array("b", shape=(3,), dtype="u1")
    doc = json.loads((path / "zarr.json").read_text())
    assert doc["consolidated_metadata"]["must_understand"] is True
    assert sorted(doc["consolidated_metadata"]["metadata"]) == ["a", "b"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_consolidated(str(path))
        assert sorted(theirs.keys()) == ["a", "b"] and dict(theirs.attrs) == {"k": 1}
