"""``to_zarrx`` refuses and accepts what ``Dataset.to_zarr`` (engine "zarr") does, and a refused
write leaves the store as it was.

Every case runs the same write through xarray's own writer (the oracle) and through zarrx, on
stores of both Zarr formats where it matters, and compares what is stored afterwards.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")

import dask  # noqa: E402

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

WRITERS = {"zarr": lambda ds, path, **kw: ds.to_zarr(path, **kw),
           "zarrx": lambda ds, path, **kw: zx.to_zarrx(ds, path, **kw)}


def stored(path):
    """Shape and values of every array of the group at ``path``, read by zarr-python."""
    return {name: (a.shape, a[...].tolist()) for name, a in zarr.open_group(path).arrays()}


def first_and_bad():
    first = xr.Dataset({"a": ("time", [1.0, 2.0]), "b": (("time", "x"), np.zeros((2, 3)))},
                       coords={"time": [0, 1]})
    bad = xr.Dataset({"a": ("time", [3.0]), "b": (("time", "x"), np.zeros((1, 4)))},
                     coords={"time": [2]})           # x: 4 elements, 3 stored
    return first, bad


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_a_refused_append_leaves_the_store_unchanged(tmp_path, fmt, writer):
    first, bad = first_and_bad()
    path = tmp_path / "z.zarr"
    WRITERS[writer](first, path, zarr_format=fmt)
    before = stored(path)
    with pytest.raises(ValueError):
        WRITERS[writer](bad, path, append_dim="time")
    assert stored(path) == before
    xr.testing.assert_identical(xr.open_zarr(path, consolidated=False).load(), first)


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_append_of_values_the_stored_type_cannot_hold_changes_nothing(tmp_path, fmt):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"v": ("t", np.array(["a", "b"], dtype=object)),
                            "w": ("t", [1.0, 2.0])}), path, zarr_format=fmt)
    before = stored(path)
    for values, message in (
            (np.array([1, 2]), "the stored array holds strings; cannot store values of dtype "
                               "int64"),
            (np.array([b"c", b"d"], dtype=object), "the stored array holds str values; cannot "
                                                   "store bytes b'c'")):
        with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
                f"to_zarrx: variable 'v': {message}")):
            zx.to_zarrx(xr.Dataset({"w": ("t", [3.0, 4.0]), "v": ("t", values)}), path,
                        append_dim="t")
        assert stored(path) == before
    # text into numbers: refused as of another kind, before xarray's coders try to cast it
    for values in (np.array(["3", "x"]), np.array([b"3", b"x"]),
                   np.array(["3", "x"], dtype=np.dtypes.StringDType())):
        for kw in ({"append_dim": "t"}, {"region": {"t": slice(0, 2)}}):
            with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
                    f"to_zarrx: variable 'w': the stored array holds float64 values; cannot "
                    f"store values of dtype {values.dtype}")):
                zx.to_zarrx(xr.Dataset({"v": ("t", np.array(["c", "d"], dtype=object)),
                                        "w": ("t", values)}), path, **kw)
            assert stored(path) == before


def test_a_refused_new_variable_leaves_the_appended_ones_unchanged(tmp_path):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"a": ("t", [1.0, 2.0])}), path)
    before = stored(path)
    more = xr.Dataset({"a": ("t", [3.0]), "new": ("t", [5.0])})
    with pytest.raises(zarrx.ZarrError):
        zx.to_zarrx(more, path, append_dim="t", encoding={"new": {"compressors": ["nope"]}})
    assert stored(path) == before


@pytest.mark.parametrize("region", [{"time": slice(2, 4)}, "auto"])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_region_writes_leave_the_stored_index_coordinates(tmp_path, writer, region):
    path = tmp_path / "z.zarr"
    ds = xr.Dataset({"v": ("time", np.arange(6.0))}, coords={"time": np.arange(100, 106)})
    WRITERS[writer](ds, path)
    labels = [0, 1] if region != "auto" else [102, 103]   # other labels: not written
    update = xr.Dataset({"v": ("time", [-1.0, -2.0])}, coords={"time": labels})
    WRITERS[writer](update, path, region=region)
    back = xr.open_zarr(path).load()
    assert back.time.values.tolist() == list(range(100, 106))
    assert back.v.values.tolist() == [0.0, 1.0, -1.0, -2.0, 4.0, 5.0]


@pytest.mark.parametrize("mode", ["a", "a-", "r+"])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_encoding_of_an_existing_variable_is_refused(tmp_path, writer, mode):
    path = tmp_path / "z.zarr"
    ds = xr.Dataset({"v": ("time", np.arange(4.0))}, coords={"time": np.arange(4)})
    WRITERS[writer](ds.isel(time=slice(0, 2)), path)
    before = stored(path)
    kw = {"append_dim": "time"} if mode != "r+" else {"region": {"time": slice(0, 2)}}
    with pytest.raises(zarrx.ArgumentError if writer == "zarrx" else ValueError, match=re.escape(
            "variable 'v' already exists, but encoding was provided")):
        WRITERS[writer](ds.isel(time=slice(2, 4)), path, mode=mode,
                        encoding={"v": {"dtype": "int8", "chunks": (1,)}}, **kw)
    assert stored(path) == before


@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_encoding_read_from_a_dataset_can_be_passed_back(tmp_path, writer):
    """An opened variable's encoding has preferred_chunks and source: accepted and ignored."""
    xr.Dataset({"v": ("x", np.arange(10.0))}).to_zarr(tmp_path / "src.zarr",
                                                      encoding={"v": {"chunks": (5,)}})
    ds = xr.open_dataset(tmp_path / "src.zarr", engine=zx.ZarrxBackendEntrypoint)
    enc = {"v": {"chunks": ds.v.encoding["chunks"], "source": "src.zarr",
                 "preferred_chunks": ds.v.encoding["preferred_chunks"], "original_shape": (10,)}}
    WRITERS[writer](ds, tmp_path / "out.zarr", mode="w", encoding=enc)
    assert zarr.open_array(tmp_path / "out.zarr", path="v").chunks == (5,)


@pytest.mark.parametrize("chunks, error, message", [
    ((2, None), zarrx.ArgumentTypeError, "chunks: expected an int or a tuple of ints, found "
                                         "(2, None)"),
    ((2, 2.5), zarrx.ArgumentTypeError, "chunks: expected an int or a tuple of ints, found "
                                        "(2, 2.5)"),
    ((2, "a"), zarrx.ArgumentTypeError, "chunks: expected an int or a tuple of ints, found "
                                        "(2, 'a')"),
    ((2, 0), zarrx.ArgumentError, "chunks: expected positive sizes (0 along a dimension of "
                                  "length 0), found (2, 0)"),
    ((2, -1), zarrx.ArgumentError, "chunks: expected positive sizes (0 along a dimension of "
                                   "length 0), found (2, -1)")])
def test_encoding_chunks_must_be_positive_ints(tmp_path, chunks, error, message):
    ds = xr.Dataset({"f": (("y", "x"), np.arange(20.0).reshape(4, 5))})
    with pytest.raises(Exception):                 # xarray refuses each of them too
        ds.to_zarr(tmp_path / "o.zarr", encoding={"f": {"chunks": chunks}})
    with pytest.raises(error, match=re.escape(f"to_zarrx: encoding of 'f': {message}")):
        zx.to_zarrx(ds, tmp_path / "z.zarr", encoding={"f": {"chunks": chunks}})
    shards = message.replace("chunks", "shards", 1)
    with pytest.raises(error, match=re.escape(f"encoding of 'f': {shards}")):
        zx.to_zarrx(ds, tmp_path / "s.zarr", encoding={"f": {"chunks": 1, "shards": chunks}})


def test_to_zarrx_takes_every_argument_of_to_zarr_it_has_a_meaning_for(tmp_path):
    import inspect

    theirs = set(inspect.signature(xr.Dataset.to_zarr).parameters) - {"self", "store"}
    ours = set(inspect.signature(zx.to_zarrx).parameters) - {"ds", "store"}
    # zarr-python 2 leftovers and zarr-python objects, listed in docs/guide/xarray.md
    assert theirs - ours <= {"synchronizer", "zarr_version", "unlimited_dims"}
    ds = xr.Dataset({"v": ("x", np.arange(10.0))}).chunk({"x": 3})
    seen = []

    def scheduler(dsk, keys, **kw):
        seen.append(keys)
        return dask.get(dsk, keys, **kw)

    zx.to_zarrx(ds, tmp_path / "z.zarr", safe_chunks=False, align_chunks=True,
                chunkmanager_store_kwargs={"scheduler": scheduler},
                encoding={"v": {"chunks": (4,)}})
    assert seen
    xr.testing.assert_identical(xr.open_zarr(tmp_path / "z.zarr").load(), ds.load())


def test_open_dataset_takes_the_arguments_of_engine_zarr(tmp_path):
    xr.Dataset({"v": ("x", np.arange(3.0))}).to_zarr(tmp_path / "z.zarr")
    got = xr.open_dataset(tmp_path / "z.zarr", engine=zx.ZarrxBackendEntrypoint,
                          cache_members=False)
    assert got.v.values.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            "engine 'zarrx': store= (an opened xarray ZarrStore) is not supported")):
        xr.open_dataset(tmp_path / "z.zarr", engine=zx.ZarrxBackendEntrypoint, store=object())


@pytest.mark.parametrize("name", [1, "", 0, (4, 5), True])
def test_a_variable_name_that_is_not_a_string_is_refused_before_anything_is_written(tmp_path,
                                                                                    name):
    """xarray refuses them for zarr files (TypeError for 1, ValueError for ""); None is a
    name it takes."""
    ds = xr.Dataset({name: ("x", np.arange(3.0))})
    for write in (lambda p: ds.to_zarr(p), lambda p: zx.to_zarrx(ds, p)):
        with pytest.raises((TypeError, ValueError)):
            write(tmp_path / f"{id(write)}.zarr")
    with pytest.raises(zarrx.ArgumentTypeError) as info:
        zx.to_zarrx(ds, tmp_path / "z.zarr")
    assert str(info.value) == (f"to_zarrx: invalid variable name {name!r}: expected a "
                               "non-empty string or None, as xarray requires for zarr files")
    assert not (tmp_path / "z.zarr").exists()


@pytest.mark.parametrize("kw", [{"append_dim": "time"}, {"mode": "a-", "append_dim": "time"},
                                {"mode": "a", "region": {"time": slice(0, 2)}},
                                {"region": "auto"}, {"mode": "r+"}])
@pytest.mark.parametrize("group", [None, "sub"])
def test_an_append_or_region_write_without_a_stored_group_creates_none(tmp_path, kw, group):
    # (engine "zarr" leaves an empty group behind when it refuses an append)
    path = tmp_path / "z.zarr"
    ds = xr.Dataset({"v": ("time", np.arange(2.0))})
    if group is not None:
        zx.to_zarrx(xr.Dataset(), path)
    with pytest.raises(zarrx.errors.GroupNotFoundError, match=re.escape(
            f"open_group: no group at '{group or '/'}' in LocalStore('{path}')")) as info:
        zx.to_zarrx(ds, path, group=group, **kw)
    assert isinstance(info.value, ValueError)       # as engine "zarr" raises for an append
    if group is None:
        assert not path.exists()
    else:
        assert list(zarrx.open_group(path, mode="r").members()) == []


@pytest.mark.parametrize("lazy", [False, True])
def test_a_region_ending_before_its_start_covers_nothing(tmp_path, lazy):
    # as ds.isel(time=slice(3, 1)) selects nothing, the region slice(3, 1) holds nothing
    # (engine "zarr" takes its length as -1 and refuses it)
    path = tmp_path / "z.zarr"
    ds = xr.Dataset({"v": ("time", np.arange(4.0))})
    zx.to_zarrx(ds, path)
    empty = ds.isel(time=slice(3, 1)) + 10
    zx.to_zarrx(empty.chunk() if lazy else empty, path, region={"time": slice(3, 1)})
    xr.testing.assert_identical(xr.open_zarr(path).load(), ds)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_refused_write_in_mode_w_or_w_minus_leaves_the_store_as_it_was(tmp_path, fmt):
    """Mode "w" replaces the group only once every variable is checked (xarray's writer has
    already emptied it when it refuses these)."""
    ds = xr.Dataset({"a": ("x", [1.0, 2.0])}, attrs={"title": "kept"})
    refused = [
        (ds.assign_attrs(bad=b"x"), {}, zarrx.ArgumentTypeError,
         "to_zarrx: the dataset attribute 'bad': expected JSON values (object, array, string, "
         "number, bool, null), found 'bytes'"),
        (ds.assign(a=ds.a.assign_attrs(bad={1, 2})), {}, zarrx.ArgumentTypeError,
         "to_zarrx: variable 'a' attribute 'bad': expected JSON values (object, array, string, "
         "number, bool, null), found 'set'"),
        (ds.assign(o=("x", np.array([{}, 1], dtype=object))), {}, zarrx.ZarrError,
         "to_zarrx: variable 'o': cannot store an object array holding dict, int"),
        (ds, {"encoding": {"a": {"compressors": [{"name": "nope"}]}}}, zarrx.CodecError,
         "unknown codec 'nope'")]
    path = tmp_path / "z.zarr"
    zx.to_zarrx(ds, path, zarr_format=fmt)
    before = stored(path)
    for bad, kw, error, message in refused:
        with pytest.raises(error, match=re.escape(message)):
            zx.to_zarrx(bad, path, mode="w", zarr_format=fmt, **kw)
        assert stored(path) == before
        xr.testing.assert_identical(xr.open_zarr(path).load(), ds)
        with pytest.raises(error, match=re.escape(message)):
            zx.to_zarrx(bad, tmp_path / "new.zarr", mode="w-", zarr_format=fmt, **kw)
        assert not (tmp_path / "new.zarr").exists()
    with pytest.raises(zarrx.NodeExistsError, match=re.escape(
            "to_zarrx: a node exists at '/' (mode 'w-' creates")):
        zx.to_zarrx(ds, path, mode="w-")


@pytest.mark.parametrize("kw, message", [
    ({"mode": "x"}, "to_zarrx: mode: expected one of w, w-, a, a-, r+, found 'x'"),
    ({"append_dim": "nope"}, "to_zarrx: append_dim='nope' is not a dimension of '/' (found "
                             "['time'])"),
    ({"append_dim": "time", "mode": "r+"}, "to_zarrx: append_dim needs mode 'a' or 'a-', found "
                                           "'r+'"),
    ({"append_dim": "time", "region": "auto"}, "to_zarrx: append_dim and region cannot be used "
                                               "together"),
    ({"region": {"time": slice(0, 4, 2)}}, "to_zarrx: region['time']: expected a slice with "
                                           "step 1, found slice(0, 4, 2)"),
    ({"region": {"time": slice(3, 5)}}, "to_zarrx: region['time'] = slice(3, 5, None) covers 1 "
                                        "elements of the stored 4, but the dataset has 2 along "
                                        "'time'"),
    ({"region": {"time": slice(3, 1)}}, "to_zarrx: region['time'] = slice(3, 1, None) covers 0 "
                                        "elements of the stored 4, but the dataset has 2 along "
                                        "'time'"),
    ({"region": {"nope": slice(0, 2)}}, "to_zarrx: region names 'nope', which is not a "
                                        "dimension of the dataset (found ['time'])"),
    ({"encoding": {"v": {"foo": 1}}, "mode": "w"}, "to_zarrx: encoding of 'v': unexpected keys "
                                                   "['foo']"),
    ({"mode": "r+", "region": {"time": slice(0, 2)}, "extra": True},
     "to_zarrx: mode 'r+' writes only existing variables; 'extra' is not in <zarrx.Group '/'> "
     "(use mode='a' to add it)")])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_bad_arguments_are_value_errors_as_with_xarray(tmp_path, writer, kw, message):
    """xarray raises ValueError for each: ``except ValueError`` catches zarrx's refusal too."""
    path = tmp_path / "z.zarr"
    ds = xr.Dataset({"v": ("time", np.arange(4.0))})
    WRITERS[writer](ds, path)
    kw = dict(kw)
    more = ds.isel(time=slice(0, 2))
    if kw.pop("extra", False):
        more = more.assign(extra=("time", [1.0, 2.0]))
    with pytest.raises(ValueError) as info:
        WRITERS[writer](more, path, **kw)
    if writer == "zarrx":
        assert isinstance(info.value, zarrx.ArgumentError)
        assert str(info.value) == message


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_compressor_is_not_an_encoding_key_compressors_none_is_no_compressor(tmp_path, writer,
                                                                            fmt):
    """Engine "zarr" (with zarr-python 3) takes ``compressors`` in either format and refuses
    ``compressor``; ``compressors: None`` stores the array uncompressed."""
    ds = xr.Dataset({"v": ("x", np.arange(4.0))})
    with pytest.raises(ValueError) as info:
        WRITERS[writer](ds, tmp_path / "a.zarr", zarr_format=fmt,
                        encoding={"v": {"compressor": None}})
    if writer == "zarrx":
        assert str(info.value) == ("to_zarrx: encoding of 'v': unexpected keys ['compressor']; "
                                   "use compressors")
    WRITERS[writer](ds, tmp_path / "b.zarr", zarr_format=fmt,
                    encoding={"v": {"compressors": None}})
    assert zarr.open_array(tmp_path / "b.zarr", path="v").compressors == ()


def _codecs(path, fmt):
    """What the stored document of array ``v`` says of its chunking and codecs."""
    import json
    if fmt == 3:
        doc = json.loads((path / "v" / "zarr.json").read_text())
        return doc["chunk_grid"], doc["codecs"]
    doc = json.loads((path / "v" / ".zarray").read_text())
    return doc["chunks"], doc["filters"], doc["dtype"], doc["order"]


BYTES_BIG = {"name": "bytes", "configuration": {"endian": "big"}}


@pytest.mark.parametrize("fmt,enc", [
    (3, {"serializer": BYTES_BIG}),
    (3, {"serializer": "auto"}),
    (3, {"filters": None}),
    (3, {"filters": []}),
    (3, {"compressors": None}),
    (3, {"compressors": ()}),
    (3, {"shards": None}),
    (3, {"shards": (20,), "chunks": (5,)}),
    (3, {"shards": 20, "chunks": (5,)}),
    (3, {"shards": "auto", "chunks": (2,)}),
    (3, {"shards": {"shape": (20,), "index_location": "start"}, "chunks": (5,)}),
    # zarr-python codecs leave blosc's typesize and shuffle to the array (4, "shuffle")
    (3, {"compressors": [zarr.codecs.BloscCodec(cname="zstd", clevel=3)]}),
    (3, {"compressors": zarr.codecs.BloscCodec(cname="lz4"), "shards": (20,), "chunks": (5,)}),
    (3, {"compressors": [zarr.codecs.BloscCodec(typesize=2, shuffle="noshuffle")]}),
    (2, {"serializer": "auto"}),
    (2, {"filters": None}),
    (2, {"compressors": None}),
    (2, {"shards": None}),
], ids=lambda v: repr(v) if isinstance(v, dict) else None)
def test_codec_encoding_keys_store_what_engine_zarr_stores(tmp_path, fmt, enc):
    """Each codec key of ``create_array`` in a variable's encoding gives the chunking and
    codecs that engine "zarr" (zarr-python 3) stores; compressors are compared where both
    writers have the same default."""
    ds = xr.Dataset({"v": ("x", np.arange(40, dtype="i4"))})
    for writer in WRITERS:
        WRITERS[writer](ds, tmp_path / writer, zarr_format=fmt, encoding={"v": dict(enc)},
                        consolidated=False)
    assert _codecs(tmp_path / "zarrx", fmt) == _codecs(tmp_path / "zarr", fmt)
    assert zarr.open_array(tmp_path / "zarrx", path="v")[...].tolist() == list(range(40))


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_serializer_none_is_refused_as_engine_zarr_refuses_it(tmp_path, writer, fmt):
    """A chunk always has a serializer: engine "zarr" hands ``None`` to zarr-python, which
    raises (a TypeError for Zarr v3, a ValueError for v2); to_zarrx raises an ArgumentTypeError,
    both."""
    ds = xr.Dataset({"v": ("x", np.arange(4, dtype="i4"))})
    with pytest.raises(TypeError if fmt == 3 else ValueError) as info:
        WRITERS[writer](ds, tmp_path / "a.zarr", zarr_format=fmt,
                        encoding={"v": {"serializer": None}})
    if writer == "zarrx":
        assert str(info.value) == ("to_zarrx: encoding of 'v': serializer: expected an "
                                   "array->bytes codec or 'auto', found None")


@pytest.mark.parametrize("parent_fmt", [2, 3])
@pytest.mark.parametrize("mode", ["w", "w-", "a"])
def test_a_group_written_into_a_hierarchy_takes_its_format(tmp_path, mode, parent_fmt):
    # a new group inside a Zarr v2 hierarchy was made Zarr v3 and refused (MetadataError)
    path = str(tmp_path / "h.zarr")
    zarrx.open_group(path, mode="w", zarr_format=parent_fmt).create_group("sub")
    ds = xr.Dataset({"v": ("t", np.arange(3))}, attrs={"title": "x"})
    zx.to_zarrx(ds, path, mode=mode, group="sub/g")
    assert zarrx.open_group(path, path="sub/g", mode="r").metadata.zarr_format == parent_fmt
    assert zarrx.open_array(path, path="sub/g/v", mode="r").metadata.zarr_format == parent_fmt
    xr.testing.assert_identical(xr.open_zarr(path, group="sub/g").load(), ds)


@pytest.mark.parametrize("kind", ["U", "S"])
@pytest.mark.parametrize("kw", [{"append_dim": "t"}, {"region": {"t": slice(0, 8)}}])
def test_dask_strings_into_fixed_width_text_are_checked_one_block_at_a_time(tmp_path, kind, kw):
    # the strings were computed all at once, before the write, to check they fit
    import weakref

    import dask.array as da

    path = tmp_path / "z.zarr"
    element = (lambda v: v) if kind == "U" else (lambda v: v.encode())
    zx.to_zarrx(xr.Dataset({"s": ("t", np.array(["abc"] * 8, dtype=f"{kind}3"))}), path,
                encoding={"s": {"chunks": (2,)}})
    computed, made = [], []     # (block start, blocks made before and still held); references
    def strings(block, too_long=False, block_info=None):
        start = block_info[None]["array-location"][0][0]
        computed.append((start, sum(ref() is not None for ref in made)))
        out = np.array([element("toolong" if too_long and start == 6 else f"v{start + i}")
                        for i in range(len(block))], dtype=object)
        made.append(weakref.ref(out))
        return out

    for too_long in (False, True):
        computed.clear()
        values = da.zeros(8, chunks=2).map_blocks(strings, too_long, dtype=object,
                                                  meta=np.empty((0,), object))
        written = zx.to_zarrx(xr.Dataset({"s": ("t", values)}), path, compute=False, **kw)
        assert computed == []           # nothing computed before the write
        if too_long:
            with pytest.raises(zarrx.ArgumentError, match=re.escape(
                    f"to_zarrx: variable 's': {element('toolong')!r} is longer than the 3 "
                    f"{'characters' if kind == 'U' else 'bytes'} of the stored "
                    f"{np.dtype(kind + '3').str}: fixed-width strings would be cut")):
                written.compute(scheduler="sync")
        else:
            written.compute(scheduler="sync")
        # each block computed once (all of them unless one is refused), none held meanwhile
        starts = [start for start, _ in computed]
        assert sorted(starts) == sorted(set(starts)) and set(starts) <= {0, 2, 4, 6}
        assert len(starts) == 4 or too_long
        assert max(n for _, n in computed) == 0
    first = 8 if "append_dim" in kw else 0
    got = zarr.open_array(path, path="s")[first:first + 8].tolist()
    assert got == [element(f"v{i}") for i in range(8)]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("na", [None, np.nan])
def test_missing_stringdtype_values_stored_as_vlen_utf8_in_v2_are_empty_strings(tmp_path, lazy,
                                                                              na):
    # (before: NaN refused as "cannot store float nan" from memory, stored as "nan" from dask)
    import dask.array as da
    from numcodecs import VLenUTF8

    values = np.array(["a", na, "ccc"], dtype=np.dtypes.StringDType(na_object=na))
    data = da.from_array(values, chunks=2) if lazy else values
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"s": ("t", data)}), path, zarr_format=2,
                encoding={"s": {"filters": [VLenUTF8()]}})
    assert zarrx.open_array(path, path="s")[:].tolist() == ["a", "", "ccc"]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("how", ["values", "encoding"])
def test_big_endian_numbers_are_stored_in_the_byte_order_engine_zarr_stores(tmp_path, fmt, how):
    # Zarr v2 keeps the byte order (">i2"); in Zarr v3 xarray's writer (zarr-python) stores
    # little-endian whatever the dtype says, where to_zarrx stored a big-endian "bytes" codec
    values = np.array([1, -2, 3], ">i2" if how == "values" else "i2")
    ds = xr.Dataset({"v": ("x", values)})
    if how == "encoding":           # (as reading a big-endian Zarr v2 array gives it)
        ds.v.encoding["dtype"] = np.dtype(">i2")
    for name, write in WRITERS.items():
        write(ds, tmp_path / f"{name}.zarr", zarr_format=fmt)
    arrays = [zarr.open_array(tmp_path / f"{name}.zarr", path="v") for name in WRITERS]
    assert arrays[1].metadata.to_dict() == arrays[0].metadata.to_dict()
    assert arrays[1][...].tolist() == [1, -2, 3]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("values", [[1.5, np.nan], np.array(["a", "bc"], dtype=object),
                                    np.array([b"a", b"bc"]), [True, False]],
                         ids=["float", "str", "bytes", "bool"])
def test_default_codecs_are_those_engine_zarr_stores(tmp_path, fmt, values):
    # xarray's writer (zarr-python's Group.create) compresses Zarr v2 arrays with blosc (lz4),
    # to_zarrx with zstd; in Zarr v3 it gave bytes an endian, which they do not have
    ds = xr.Dataset({"v": ("x", values)})
    for name, write in WRITERS.items():
        write(ds, tmp_path / f"{name}.zarr", zarr_format=fmt)
    docs = [zarr.open_array(tmp_path / f"{name}.zarr", path="v").metadata.to_dict()
            for name in WRITERS]
    for doc in docs:                # (padded for bytes in Zarr v3, see docs/guide/xarray.md)
        doc.pop("fill_value")
    assert docs[1] == docs[0]
