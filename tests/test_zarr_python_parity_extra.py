"""More of the same calls on zarr-python and on zarrx (see test_zarr_python_parity_*.py): the
fill value of copies of plain data, the path types of the local and zip stores, the numcodecs
interface of a Zarr v2 array's codecs, and the exception classes of storage_options without a
URL, of a zip archive in a missing folder, of a negative tree level and of writes through
read-only handles."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
LIBS = {"zarr": zarr, "zarrx": zarrx}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # zarr-python's Zarr v2 and v3 warnings
        yield


def both(case):
    """``{"zarr": result, "zarrx": result}``."""
    return {name: case(lib) for name, lib in LIBS.items()}


@pytest.mark.parametrize("data", [np.arange(3), [1.5, 2.5], np.array(["a", "bb"])],
                         ids=["ints", "list-of-floats", "text"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_from_array_of_plain_data_takes_the_default_fill_value(data, fmt):
    """Plain data has no fill value to keep: the copy gets the type's default, which a Zarr v2
    array stores (not null)."""
    got = both(lambda lib: lib.from_array({}, data=data, zarr_format=fmt).fill_value)
    assert got["zarrx"] == got["zarr"]
    assert got["zarrx"] is not None


@pytest.mark.parametrize("fmt", [2, 3])
def test_from_array_fill_value_none(fmt):
    """``None`` is ``null`` for plain data in Zarr v2 (the default in Zarr v3), and keeps the
    fill value of an array source, in both libraries."""
    def case(lib):
        src = lib.create_array({}, shape=(3,), dtype="i4", zarr_format=fmt, fill_value=5)
        return (lib.from_array({}, data=np.arange(3), zarr_format=fmt, fill_value=None).fill_value,
                lib.from_array({}, data=src, fill_value=None).fill_value)
    got = both(case)
    assert got["zarrx"] == got["zarr"] == ((None if fmt == 2 else 0), 5)


def test_local_store_root_and_zip_store_path_are_paths(tmp_path):
    """``LocalStore.root`` and ``ZipStore.path`` are absolute :class:`pathlib.Path` objects in
    both libraries (``store.root / "x"`` works); the stores still work with them."""
    def case(lib):
        (tmp_path / lib.__name__).mkdir()
        local = lib.storage.LocalStore(str(tmp_path / lib.__name__ / "data.zarr"))
        zipped = lib.storage.ZipStore(tmp_path / lib.__name__ / "data.zip", mode="w")
        lib.create_array(local, shape=(2,), dtype="i1")[...] = 1
        lib.create_array(zipped, shape=(2,), dtype="i1")[...] = 1
        zipped.close()
        return (type(local.root), local.root.relative_to(tmp_path / lib.__name__),
                (local.root / "zarr.json").exists(), type(zipped.path),
                zipped.path.relative_to(tmp_path / lib.__name__),
                local.with_read_only(True).root == local.root)
    got = both(case)
    assert got["zarrx"] == got["zarr"]
    assert got["zarrx"][0] is got["zarrx"][3] is type(tmp_path)


V2_CODECS = {
    "default": {},
    "blosc": {"compressors": "blosc"},
    "zstd-3": {"compressors": "zstd-3"},
    "gzip-delta": {"compressors": "gzip", "filters": "delta"},
}


def _numcodecs(name: str):
    numcodecs = pytest.importorskip("numcodecs")
    return {"blosc": numcodecs.Blosc(cname="zstd", clevel=3, shuffle=2),
            "zstd-3": numcodecs.Zstd(level=3), "gzip": numcodecs.GZip(level=2),
            "delta": [numcodecs.Delta(dtype="<i4")]}[name]


@pytest.mark.parametrize("kw", list(V2_CODECS.values()), ids=list(V2_CODECS))
def test_zarr_v2_codecs_have_the_numcodecs_interface(kw):
    """zarr-python hands out numcodecs codecs for a Zarr v2 array: ``codec_id`` and
    ``get_config()`` give the same there, and the codecs compare equal to numcodecs ones."""
    args = {k: _numcodecs(v) for k, v in kw.items()}

    def case(lib):
        a = lib.create_array({}, shape=(4,), dtype="i4", zarr_format=2, **args)
        return [(c.codec_id, c.get_config()) for c in (*a.filters, a.compressor)]
    got = both(case)
    assert got["zarrx"] == got["zarr"]
    theirs = zarr.create_array({}, shape=(4,), dtype="i4", zarr_format=2, **args)
    ours = zarrx.create_array({}, shape=(4,), dtype="i4", zarr_format=2, **args)
    assert ours.compressor == theirs.compressor and theirs.compressor == ours.compressor
    assert ours.filters == theirs.filters


def test_codecs_without_a_zarr_v2_form_have_no_codec_id_or_get_config():
    """As for other objects that are not numcodecs codecs, a numcodecs codec compares unequal
    to them (rather than failing)."""
    numcodecs = pytest.importorskip("numcodecs")
    a = zarrx.create_array({}, shape=(4,), dtype="i4")
    assert not hasattr(a.serializer, "codec_id") and not hasattr(a.serializer, "get_config")
    with pytest.raises(AttributeError, match="^Bytes codec 'bytes' has no numcodecs id"):
        a.serializer.get_config()
    assert numcodecs.Zstd() != a.serializer and a.serializer != numcodecs.Zstd()
    assert a.compressors[0].get_config() == {"id": "zstd", "level": 0, "checksum": False}
    assert numcodecs.Zstd() == a.compressors[0]


@pytest.mark.parametrize("store", ["path", "dict", "store", "none"])
def test_storage_options_without_a_url_are_a_type_error(tmp_path, store):
    def case(lib):
        target = {"path": str(tmp_path / lib.__name__), "dict": {},
                  "store": lib.storage.MemoryStore(), "none": None}[store]
        with pytest.raises(TypeError) as info:
            lib.create_array(target, shape=(2,), dtype="i1", storage_options={"anon": True})
        return info.value
    got = both(case)
    assert isinstance(got["zarrx"], zarrx.ArgumentTypeError)
    assert "storage_options" in str(got["zarrx"])


@pytest.mark.parametrize("mode", ["w", "x", "a"])
def test_a_zip_archive_in_a_missing_folder_is_a_file_not_found_error(tmp_path, mode):
    """zarr-python's ZipStore raises FileNotFoundError when it first writes there; zarrx's when
    it opens the archive, naming the folder, and leaves nothing behind."""
    def case(lib):
        path = tmp_path / lib.__name__ / "nowhere" / "a.zip"
        (tmp_path / lib.__name__).mkdir()
        with pytest.raises(FileNotFoundError) as info:
            store = lib.storage.ZipStore(path, mode=mode)
            lib.create_group(store)
            store.close()
        return info.value, path
    got = both(case)
    exc, path = got["zarrx"]
    assert isinstance(exc, zarrx.errors.StoreNotFoundError)
    assert str(exc) == (f"ZipStore({str(path)!r}, mode={mode!r}): cannot open in mode {mode!r}: "
                        f"the folder {str(path.parent)!r} does not exist (No such file or "
                        f"directory)")
    assert not path.parent.exists()


@pytest.mark.parametrize("call", [lambda lib, g: g.tree(level=-1),
                                  lambda lib, g: lib.tree(g, level=-1)],
                         ids=["Group.tree", "tree"])
def test_a_negative_tree_level_is_a_value_error(call):
    def case(lib):
        g = lib.group({})
        g.create_group("a").create_group("b")
        with pytest.raises(ValueError) as info:
            call(lib, g)
        return info.value
    got = both(case)
    assert isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]) == "tree: level: expected an int >= 0, found -1"


@pytest.mark.parametrize("dtype, fill", [
    ("f4", "1.5"), ("f4", "nan"), ("f4", "inf"), ("f8", "-0.0"), ("f2", "1e400"),
    ("c8", "1+2j"), ("c16", "nan"), ("i4", "5"), ("u8", " 18446744073709551615 "),
    ("i4", True), ("u1", np.True_)],
    ids=["f4-text", "f4-nan-text", "f4-inf-text", "f8-minus-zero-text", "f2-past-range-text",
         "c8-text", "c16-nan-text", "i4-text", "u8-text-max", "i4-true", "u1-numpy-true"])
@pytest.mark.parametrize("fmt", [2, 3])
def test_numbers_given_as_text_or_booleans_are_fill_values_as_in_zarr_python(dtype, fill, fmt):
    """zarr-python reads a number given as text (other than the JSON spellings "NaN",
    "Infinity", "-Infinity", which both take) as numpy reads it, and True as 1: zarrx refused
    them with FillValueError."""
    got = both(lambda lib: lib.create_array({}, shape=(2,), dtype=dtype, fill_value=fill,
                                            zarr_format=fmt))
    want, mine = got["zarr"], got["zarrx"]
    assert np.asarray(mine.fill_value).tobytes() == np.asarray(want.fill_value).tobytes()
    assert mine[...].tobytes() == want[...].tobytes()


@pytest.mark.parametrize("dtype, fill", [("i4", "1.5"), ("f4", "one"), ("c8", "1+")])
def test_text_that_is_no_number_of_the_type_is_refused(dtype, fill):
    with pytest.raises(zarrx.errors.FillValueError):
        zarrx.create_array({}, shape=(2,), dtype=dtype, fill_value=fill)


@pytest.mark.parametrize("axis", [-1, -2])
def test_append_counts_a_negative_axis_from_the_end_as_numpy(axis):
    """zarr-python 3.1 refuses a negative axis (it compares the data's shape along the wrong
    axis); zarrx appends as numpy.concatenate does (docs/guide/migrating.md)."""
    start = np.arange(6, dtype="i4").reshape(2, 3)
    data = np.full((2, 2) if axis == -1 else (1, 3), 9, dtype="i4")
    got = both(lambda lib: lib.create_array({}, shape=(2, 3), chunks=(1, 2), dtype="i4"))
    for z in got.values():
        z[...] = start
    assert isinstance(got["zarr"], zarr.Array)
    with pytest.raises(ValueError):
        got["zarr"].append(data, axis=axis)
    mine = got["zarrx"]
    want = np.concatenate([start, data], axis=axis)
    assert mine.append(data, axis=axis) == want.shape
    assert mine[...].tolist() == want.tolist()
    assert zarrx.open_array(mine.store, mode="r")[...].tolist() == want.tolist()


READ_ONLY_WRITES = {
    "array setitem": lambda lib, p: lib.open_array(p / "a", mode="r").__setitem__(0, 1),
    "array attrs": lambda lib, p: lib.open_array(p / "a", mode="r").attrs.__setitem__("k", 1),
    "array resize": lambda lib, p: lib.open_array(p / "a", mode="r").resize((8,)),
    "group create_group": lambda lib, p: lib.open_group(p / "g", mode="r").create_group("x"),
    "group create_array": lambda lib, p: lib.open_group(p / "g", mode="r").create_array(
        "x", shape=(2,), dtype="i4"),
    "group attrs": lambda lib, p: lib.open_group(p / "g", mode="r").attrs.__setitem__("k", 1),
    "read-only store": lambda lib, p: lib.open_array(
        lib.storage.LocalStore(p / "a", read_only=True)).__setitem__(0, 1),
}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("write", list(READ_ONLY_WRITES))
def test_writes_through_read_only_handles_are_value_errors_as_in_zarr_python(tmp_path, write,
                                                                             fmt):
    """zarr-python raises ValueError ("store was opened in read-only mode"); zarrx's
    ReadOnlyError is one (and a PermissionError), so ``except ValueError`` keeps working."""
    raised = {}
    for name, lib in LIBS.items():
        path = tmp_path / name
        lib.create_array(path / "a", shape=(4,), dtype="i4", zarr_format=fmt)
        lib.open_group(path / "g", mode="w", zarr_format=fmt)
        with pytest.raises(ValueError) as info:
            READ_ONLY_WRITES[write](lib, path)
        raised[name] = info.value
    assert type(raised["zarr"]) is ValueError
    assert isinstance(raised["zarrx"], zarrx.ReadOnlyError)
    assert isinstance(raised["zarrx"], PermissionError)
    assert "read-only" in str(raised["zarrx"])
    assert zarrx.open_array(tmp_path / "zarrx" / "a")[...].tolist() == [0, 0, 0, 0]
