"""Arrays with a chunk length of 0 along an axis of length 0.

zarr-python 3.1.6 writes them (``create_array(shape=(0, 5), chunks=(0, 5))``, v2 and v3) and
reads them; such an axis holds no chunks. zarrx reads and writes them as zarr-python does and
keeps the 0 (``a.chunks == (0, 5)``). A 0 along an axis holding items is refused, and so is
growing the axis whose chunk length is 0 (no chunk could hold its items). Each read is
compared with zarr-python's, or with numpy's where zarr-python 3.1.6 divides by the chunk
length (vindex, blocks and masks raise ZeroDivisionError there).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import BoundsCheckError
from zarrx.store import MemoryStore

zarr = pytest.importorskip("zarr")

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

E = np.array([], dtype=np.intp)
RECORD = np.dtype([("a", "<i4"), ("b", "<f8")])
#: (name, shape, creation arguments) of the arrays zarr-python writes
ARRAYS = [("x", (0, 5), {"chunks": (0, 5), "dtype": "i4"}),
          ("y", (0,), {"chunks": (0,), "dtype": "f8"}),
          ("e", (0, 0), {"chunks": (0, 0), "dtype": "u1"}),
          ("r", (0, 3), {"chunks": (0, 3), "dtype": RECORD})]
#: v3 only: a shard length of 0 along the empty axis over inner chunks of (1, 5)
SHARDED = ("s", (0, 5), {"chunks": (1, 5), "shards": (0, 5), "dtype": "i4"})


def _written(tmp_path: Path, kind: str, fmt: int, consolidated: bool) -> tuple[Any, Any]:
    """zarr-python writes a group of arrays with a chunk length of 0 into a store of
    ``kind``; returns (where zarrx opens it, where zarr-python opens it)."""
    if kind == "local":
        store = zarr.storage.LocalStore(tmp_path / "g.zarr")
    elif kind == "zip":
        store = zarr.storage.ZipStore(tmp_path / "g.zip", mode="w")
    else:
        store = zarr.storage.MemoryStore()
    g = zarr.open_group(store, mode="w", zarr_format=fmt)
    for name, shape, kw in ARRAYS + ([SHARDED] if fmt == 3 else []):
        g.create_array(name, shape=shape, **kw)
    if consolidated:
        zarr.consolidate_metadata(store)
    if kind == "local":
        return str(tmp_path / "g.zarr"), store
    if kind == "zip":
        store.close()
        return str(tmp_path / "g.zip"), zarr.storage.ZipStore(tmp_path / "g.zip", mode="r")
    return MemoryStore({k: v.to_bytes() for k, v in store._store_dict.items()}), store


def _zarr_python_reads(read: Any) -> Any:
    """What zarr-python reads, or None where it divides by the chunk length."""
    try:
        return read()
    except ZeroDivisionError:
        return None


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), what
    assert got.tobytes() == want.tobytes(), what


@pytest.mark.parametrize("consolidated", [False, True])
@pytest.mark.parametrize("kind", ["local", "memory", "zip"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_zarrx_reads_what_zarr_python_writes(tmp_path, fmt, kind, consolidated):
    where, zstore = _written(tmp_path, kind, fmt, consolidated)
    g = zarrx.open_group(where, mode="r", use_consolidated=consolidated or None)
    zg = zarr.open_group(zstore, mode="r", use_consolidated=consolidated or None)
    for name, shape, kw in ARRAYS + ([SHARDED] if fmt == 3 else []):
        z, a = g[name], zg[name]
        model = np.zeros(shape, dtype=a.dtype)
        assert (z.shape, z.chunks, z.shards, z.dtype) == (a.shape, a.chunks, a.shards, a.dtype)
        assert (z.cdata_shape, z.nchunks, z.nchunks_initialized) == \
            (a.cdata_shape, a.nchunks, a.nchunks_initialized)
        assert z.nbytes_stored() == 0          # zarr-python adds its metadata documents
        for what, got, read, want in [
                ("[...]", lambda: z[...], lambda: a[...], model),
                ("[:]", lambda: z[:], lambda: a[:], model[:]),
                ("[1:3]", lambda: z[1:3], lambda: a[1:3], model[1:3]),
                ("oindex", lambda: z.oindex[(E,) * z.ndim], lambda: a.oindex[(E,) * a.ndim],
                 model[np.ix_(*(E,) * model.ndim)]),
                ("vindex", lambda: z.vindex[(E,) * z.ndim], lambda: a.vindex[(E,) * a.ndim],
                 model[(E,) * model.ndim]),
                ("blocks", lambda: z.blocks[...], lambda: a.blocks[...], model),
                ("mask", lambda: z[np.zeros(shape, bool)], lambda: a[np.zeros(shape, bool)],
                 model[np.zeros(shape, bool)]),
                ("vindex mask", lambda: z.vindex[np.zeros(shape, bool)],
                 lambda: a.vindex[np.zeros(shape, bool)], model[np.zeros(shape, bool)])]:
            result = got()
            _same(result, want, f"{name}.{what}")
            theirs = _zarr_python_reads(read)
            if theirs is not None:
                _same(result, theirs, f"{name}.{what} against zarr-python")
        if z.ndim == 2 and z.shape[1]:
            _same(z.oindex[:, [1, 2]], a.oindex[:, [1, 2]], f"{name}.oindex[:, [1, 2]]")
        with pytest.raises(BoundsCheckError, match="out of bounds for axis 0"):
            z[0]
        with pytest.raises(BoundsCheckError, match="with 0 chunks"):
            z.blocks[0]
        assert repr(z) == f"<zarrx.Array '/{name}' shape={shape} dtype={z.dtype}>"
        for info in (str(z.info), str(z.info_complete())):
            assert f"Chunk shape   : {a.chunks}" in info
            assert "stored : 0 of 0" in info
    r = g["r"]
    for field in ("a", "b"):
        _same(r[field], np.zeros((0, 3), RECORD[field]), f"r[{field!r}]")
        _same(r.get_basic_selection(..., fields=field), zg["r"][field], f"fields={field!r}")


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_writes_of_empty_selections_store_nothing(tmp_path, fmt, kind):
    where, _ = _written(tmp_path, kind, fmt, False)
    store = zarrx.open_group(where, mode="r+").store
    before = sorted(store.list_prefix(""))
    z = zarrx.open_array(store, path="x", mode="r+")
    z[...] = 1
    z[:] = np.ones((0, 5), "i4")
    z.oindex[E, :] = 1
    z.vindex[E, E] = 1
    z.blocks[...] = 1
    z[np.zeros((0, 5), bool)] = 1
    z.set_basic_selection(slice(None), 7)
    assert sorted(store.list_prefix("")) == before
    assert z.nchunks_initialized == 0 and z[...].shape == (0, 5)


def _grow_message(axis: int, n: int, unit: str = "chunk") -> str:
    return (f"/x: cannot grow axis {axis} to length {n}: its {unit} length is 0, which holds "
            f"an axis of length 0 only (create the array with a positive chunk length there "
            f"to grow it)")


@pytest.mark.parametrize("fmt", [2, 3])
def test_growing_the_axis_whose_chunk_length_is_0_is_refused(tmp_path, fmt):
    # zarr-python writes the larger shape; its reads then divide by 0 (ZeroDivisionError),
    # as does its append, after it has written the shape
    z = zarrx.create_array(tmp_path / "a", shape=(0, 5), chunks=(0, 5), dtype="i4",
                           zarr_format=fmt)
    with pytest.raises(zarrx.ArgumentError) as info:
        z.resize((3, 5))
    assert str(info.value) == _grow_message(0, 3).replace("/x", "/")
    with pytest.raises(zarrx.ArgumentError) as info:
        z.append(np.ones((2, 5), "i4"))
    assert str(info.value) == _grow_message(0, 2).replace("/x", "/")
    again = zarr.open_array(tmp_path / "a", mode="r")
    assert (z.shape, again.shape, again.chunks) == ((0, 5), (0, 5), (0, 5))
    z.append(np.ones((0, 5), "i4"))                 # adds nothing: allowed
    assert z.shape == (0, 5)


def test_growing_a_shard_length_of_0_names_the_shard(tmp_path):
    g = zarrx.open_group(tmp_path / "g", mode="w")
    z = g.create_array("x", shape=(0, 5), chunks=(1, 5), shards=(0, 5), dtype="i4")
    with pytest.raises(zarrx.ArgumentError) as info:
        z.resize((4, 5))
    assert str(info.value) == _grow_message(0, 4, "shard")


@pytest.mark.parametrize("fmt", [2, 3])
def test_growing_another_axis_is_as_in_zarr_python(tmp_path, fmt):
    for lib, name in ((zarrx, "x"), (zarr, "z")):
        a = lib.create_array(tmp_path / name, shape=(0, 5), chunks=(0, 5), dtype="i4",
                             zarr_format=fmt)
        a.resize((0, 8))
        a.append(np.ones((0, 2), "i4"), axis=1)
        assert (a.shape, a.chunks) == ((0, 10), (0, 5))
    doc = "zarr.json" if fmt == 3 else ".zarray"
    assert json.loads((tmp_path / "x" / doc).read_text()) == \
        json.loads((tmp_path / "z" / doc).read_text())
    back = zarr.open_array(tmp_path / "x", mode="r")
    assert (back.shape, back.chunks, back[...].shape) == ((0, 10), (0, 5), (0, 10))


CALLS = {
    "create_array": lambda lib, s, f: lib.create_array(s, shape=(0, 5), chunks=(0, 5),
                                                       dtype="i4", zarr_format=f),
    "create": lambda lib, s, f: lib.create(store=s, shape=(0, 5), chunks=(0, 5), dtype="i4",
                                           zarr_format=f),
    "zeros": lambda lib, s, f: lib.zeros(store=s, shape=(0, 5), chunks=(0, 5), dtype="i4",
                                         zarr_format=f),
    "empty": lambda lib, s, f: lib.empty(store=s, shape=(0, 5), chunks=(0, 5), dtype="i4",
                                         zarr_format=f),
    "from_array": lambda lib, s, f: lib.from_array(s, data=np.zeros((0, 5), "i4"),
                                                   chunks=(0, 5), zarr_format=f,
                                                   fill_value=0),
    "(0, 0)": lambda lib, s, f: lib.create_array(s, shape=(0, 0), chunks=(0, 0), dtype="f8",
                                                 zarr_format=f),
    "Group.create_array": lambda lib, s, f: lib.open_group(s, mode="w", zarr_format=f)
    .create_array("a", shape=(0, 5), chunks=(0, 5), dtype="i4", compressors=None),
}


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("fmt", [2, 3])
def test_zarrx_creates_the_documents_zarr_python_creates(tmp_path, fmt, call):
    CALLS[call](zarrx, str(tmp_path / "x"), fmt)
    CALLS[call](zarr, str(tmp_path / "z"), fmt)
    doc = "zarr.json" if fmt == 3 else ".zarray"
    for path in (tmp_path / "z").rglob(doc):
        ours = tmp_path / "x" / path.relative_to(tmp_path / "z")
        assert json.loads(ours.read_text()) == json.loads(path.read_text()), path
        if json.loads(path.read_text()).get("node_type", "array") != "array":
            continue
        back = zarr.open_array(ours.parent, mode="r")
        assert back.chunks == zarr.open_array(path.parent, mode="r").chunks
        assert back[...].shape == back.shape


@pytest.mark.parametrize("fmt", [2, 3])
def test_from_array_of_such_an_array_keeps_its_chunks_as_zarr_python(tmp_path, fmt):
    ours = zarrx.create_array(tmp_path / "a", shape=(0, 5), chunks=(0, 5), dtype="i4",
                              zarr_format=fmt)
    theirs = zarr.open_array(tmp_path / "a", mode="r")
    for data in (ours, theirs):
        copy = zarrx.from_array({}, data=data)
        want = zarr.from_array(zarr.storage.MemoryStore(), data=theirs)
        assert (copy.shape, copy.chunks, copy.metadata.zarr_format) == \
            (want.shape, want.chunks, fmt)


def test_a_shard_length_of_0_is_created_as_zarr_python_creates_it(tmp_path):
    for lib, name in ((zarrx, "x"), (zarr, "z")):
        lib.create_array(tmp_path / name, shape=(0, 5), chunks=(1, 5), shards=(0, 5),
                         dtype="i4")
    assert json.loads((tmp_path / "x" / "zarr.json").read_text()) == \
        json.loads((tmp_path / "z" / "zarr.json").read_text())
    a = zarrx.open_array(tmp_path / "z", mode="r")
    assert (a.chunks, a.shards, a[...].shape, a.cdata_shape) == ((1, 5), (0, 5), (0, 5), (0, 1))


@pytest.mark.parametrize("chunks, shards", [((0, 5), (0, 5)), ((0, 5), (2, 5))])
def test_an_inner_chunk_length_of_0_is_refused(tmp_path, chunks, shards):
    # zarr-python raises ZeroDivisionError for both
    with pytest.raises(zarrx.ArgumentError) as info:
        zarrx.create_array(tmp_path / "a", shape=(0, 5), chunks=chunks, shards=shards,
                           dtype="i4")
    assert str(info.value) == (f"create_array: shards[0]={shards[0]} must be a positive "
                               f"multiple of chunks[0]=0 (or 0 on an axis of length 0, with "
                               f"positive chunks)")


def test_a_stored_inner_chunk_length_of_0_is_refused_at_open():
    a = zarr.create_array(zarr.storage.MemoryStore(), shape=(0, 5), chunks=(1, 5),
                          shards=(0, 5), dtype="i4")
    doc = json.loads(a.store._store_dict["zarr.json"].to_bytes())
    doc["codecs"][0]["configuration"]["chunk_shape"] = [0, 5]
    with pytest.raises(zarrx.MetadataError) as info:
        zarrx.open_array(MemoryStore({"zarr.json": json.dumps(doc).encode()}), mode="r")
    assert str(info.value) == ("zarr.json codecs[0].configuration.chunk_shape[0]: expected a "
                               "positive integer below 2**63, found 0")


@pytest.mark.parametrize("fmt, doc, field", [
    (2, ".zarray", "chunks"), (3, "zarr.json", "chunk_grid.configuration.chunk_shape")])
def test_a_chunk_length_of_0_on_an_axis_holding_items_is_refused(fmt, doc, field):
    a = zarr.create_array(zarr.storage.MemoryStore(), shape=(0, 5), chunks=(0, 5),
                          dtype="i4", zarr_format=fmt)
    meta = json.loads(a.store._store_dict[doc].to_bytes())
    meta["shape"] = [3, 5]                  # zarr-python opens this, and divides by 0 on reads
    with pytest.raises(zarrx.MetadataError) as info:
        zarrx.open_array(MemoryStore({doc: json.dumps(meta).encode()}), mode="r")
    assert str(info.value) == (f"{doc} {field}[0]: expected a positive integer below 2**63, "
                               f"or 0 on an axis of length 0 (this one has length 3), found 0")
    with pytest.raises(zarrx.ArgumentError) as info:
        zarrx.create_array({}, shape=(3, 5), chunks=(0, 5), dtype="i4", zarr_format=fmt)
    assert str(info.value) == ("chunks: expected positive ints (-1 or None for a whole axis, "
                               "0 on an axis of length 0), found (0, 5) for shape (3, 5)")


@pytest.mark.parametrize("fmt", [2, 3])
def test_cli_info_and_check(tmp_path, fmt, capsys):
    from zarrx import cli
    where, _ = _written(tmp_path, "local", fmt, False)
    stray = "x/0.0" if fmt == 2 else "x/c/0/0"     # no chunk of the array has this key
    (Path(where) / stray).parent.mkdir(parents=True, exist_ok=True)
    (Path(where) / stray).write_bytes(b"junk")
    assert cli.main(["info", where + "/x"]) == 0
    out = capsys.readouterr().out
    assert "Chunk shape   : (0, 5)" in out and "Chunks stored : 0 of 0" in out
    assert cli.main(["check", where]) == 1
    out = capsys.readouterr().out
    assert (f"orphaned: {stray}: chunk (0, 0) lies outside the array's grid of (0, 1) stored "
            f"objects (shape (0, 5))") in out


@pytest.mark.parametrize("fmt", [2, 3])
def test_copy_keeps_the_chunk_length_of_0(tmp_path, fmt):
    where, _ = _written(tmp_path, "local", fmt, False)
    zarrx.copy(where, str(tmp_path / "copy.zarr"))
    for name, shape, kw in ARRAYS:
        back = zarr.open_array(tmp_path / "copy.zarr", path=name, mode="r")
        assert (back.shape, back.chunks) == (shape, kw["chunks"])


@pytest.mark.parametrize("fmt", [2, 3])
def test_dask_and_xarray_read_as_with_zarr_python(tmp_path, fmt):
    da = pytest.importorskip("dask.array")
    xr = pytest.importorskip("xarray")
    import zarrx.dask
    import zarrx.xarray
    where, _ = _written(tmp_path, "local", fmt, False)
    ours = zarrx.dask.from_zarrx(zarrx.open_array(where, path="x", mode="r"))
    theirs = da.from_zarr(zarr.open_array(where, path="x", mode="r"))
    assert ours.chunks == theirs.chunks == ((0,), (5,))
    _same(ours.compute(), theirs.compute(), "dask")
    ds = xr.Dataset({"v": (("t", "c"), np.zeros((0, 5), "i4"))})
    zarrx.xarray.to_zarrx(ds, tmp_path / "ours.zarr", encoding={"v": {"chunks": (0, 5)}},
                          zarr_format=fmt)
    ds.to_zarr(tmp_path / "theirs.zarr", encoding={"v": {"chunks": (0, 5)}}, zarr_format=fmt)
    for engine in ("zarrx", "zarr"):
        a = xr.open_dataset(tmp_path / "ours.zarr", engine=engine, chunks={})
        b = xr.open_dataset(tmp_path / "theirs.zarr", engine="zarr", chunks={})
        assert a.v.chunks == b.v.chunks == ((0,), (5,))
        xr.testing.assert_identical(a.load(), b.load())
    assert zarr.open_array(tmp_path / "ours.zarr" / "v", mode="r").chunks == (0, 5)


def test_the_refusal_message_names_the_axis_length():
    # a non-integer chunk length still says what is expected
    doc = {"zarr_format": 2, "shape": [0, 5], "chunks": ["a", 5], "dtype": "<i4",
           "compressor": None, "fill_value": 0, "order": "C", "filters": None}
    with pytest.raises(zarrx.MetadataError, match=re.escape(
            ".zarray chunks[0]: expected a positive integer below 2**63, or 0 on an axis of "
            "length 0, found 'a'")):
        zarrx.open_array(MemoryStore({".zarray": json.dumps(doc).encode()}), mode="r")
