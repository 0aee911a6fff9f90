"""The top-level functions of zarr-python and of zarrx: save and load, open and its modes,
``*_like``, ``from_array``, consolidation, and the keywords creation takes and refuses."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
from zarr.codecs import BytesCodec, ZstdCodec  # noqa: E402

from parity_helpers import LIBS, both, codec_ids, doc, existing  # noqa: E402
from parity_helpers import _quiet  # noqa: E402, F401  (an autouse fixture)


def test_save_load_and_dict_stores():
    def case(lib):
        one, many, nested = {}, {}, {}
        lib.save(one, np.arange(5))
        lib.save(many, np.arange(3), np.ones(2), x=np.zeros(4))
        lib.save_array(nested, np.arange(3), path="sub/p")
        lib.save_group(nested, y=np.zeros(2), path="grp")
        return (sorted(one), sorted(many), sorted(nested), lib.load(one),
                lib.load(nested, path="sub/p"), lib.open(many, mode="r")["x"][...])
    got = both(case)
    for theirs, ours in zip(got["zarr"], got["zarrx"]):
        np.testing.assert_array_equal(ours, theirs)


def test_load_of_a_group_returns_its_arrays():
    """zarr-python 3.1 raises NotImplementedError here; zarrx returns the arrays by name."""
    store: dict = {}
    zarrx.save(store, np.arange(3), x=np.zeros(2))
    loaded = zarrx.load(store)
    assert sorted(loaded) == ["arr_0", "x"]
    np.testing.assert_array_equal(loaded["arr_0"], np.arange(3))


def test_open_with_a_dict_store_and_default_modes():
    def case(lib):
        d: dict = {}
        a = lib.open(d, mode="w", shape=(4,), dtype="i4", chunks=(2,))
        a[...] = [1, 2, 3, 4]
        again = lib.open(d)
        return sorted(d), type(again).__name__, again[...], again.read_only, \
            type(lib.open_consolidated({})).__name__
    got = both(case)
    theirs, ours = got["zarr"], got["zarrx"]
    assert ours[0] == theirs[0] and ours[1] == theirs[1] and ours[3] == theirs[3]
    np.testing.assert_array_equal(ours[2], theirs[2])
    assert ours[4] == theirs[4] == "Group"


def test_like_functions_default_to_the_source_fill_value():
    def case(lib):
        a = lib.create_array({}, shape=(4,), dtype="i4", chunks=(2,), fill_value=7)
        f, e, z, o = lib.full_like(a), lib.empty_like(a), lib.zeros_like(a), lib.ones_like(a)
        n = lib.full_like(np.zeros(3), fill_value=2)
        return ([(x.shape, x.chunks, str(x.dtype), x.fill_value, x[...].tolist())
                 for x in (f, e, z, o)], n[...].tolist(), str(n.dtype))
    got = both(case)
    assert got["zarrx"] == got["zarr"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_fill_value_unset_is_the_default_and_none_is_null_in_v2(fmt):
    def case(lib):
        out = []
        for kw in ({}, {"fill_value": None}):
            store: dict = {}
            a = lib.create_array(store, shape=(3,), dtype="i4", chunks=(3,), zarr_format=fmt,
                                 **kw)
            key = ".zarray" if fmt == 2 else "zarr.json"
            out.append((a.fill_value, doc(store, key)["fill_value"]))
        return out
    got = both(case)
    assert got["zarrx"] == got["zarr"]
    assert got["zarrx"][1] == ((None, None) if fmt == 2 else (0, 0))


def test_from_array():
    def case(lib):
        a = lib.create_array({}, shape=(8,), dtype="i4", chunks=(2,), zarr_format=2,
                             compressors=None)
        a[...] = np.arange(8)
        b = lib.from_array({}, data=a)
        c = lib.from_array({}, data=np.arange(10), chunks=(5,))
        d = lib.from_array({}, data=np.arange(10))
        return (b.chunks, b.metadata.zarr_format, b.compressors, b[...].tolist(),
                c.chunks, c.shards, codec_ids(c.compressors), c[...].tolist(), d.chunks)
    got = both(case)
    assert got["zarrx"] == got["zarr"]


def test_from_array_keeps_shards_codecs_and_fill():
    src = zarrx.create_array({}, shape=(8,), dtype="i4", chunks=(2,), shards=(4,),
                             compressors=zarrx.codecs.GzipCodec(level=2), fill_value=3,
                             dimension_names=["x"])
    src[:5] = np.arange(5)
    out = zarrx.from_array({}, data=src)
    assert (out.chunks, out.shards, out.fill_value, out.dimension_names) == \
        ((2,), (4,), 3, ("x",))
    assert codec_ids(out.compressors) == [("gzip", {"level": 2})]
    np.testing.assert_array_equal(out[...], src[...])
    np.testing.assert_array_equal(zarrx.from_array({}, data=src, write_data=False)[...],
                                  np.full(8, 3))


def test_consolidate_metadata_and_open_consolidated():
    def case(lib):
        store = existing(lib)
        lib.consolidate_metadata(store, zarr_format=3)
        g = lib.open_consolidated(store)
        return sorted(g), g.read_only, lib.open_consolidated(store, mode="r").read_only
    got = both(case)
    assert got["zarrx"] == got["zarr"]


@pytest.mark.parametrize("fmt", [2, 3])
def test_consolidated_documents_wrapping_deep_attributes_open(tmp_path, fmt):
    """Attributes nested as deep as zarrx writes them (64 levels) stay readable once a
    consolidated document wraps their node's document a few levels deeper."""
    deep: object = 1
    for _ in range(63):
        deep = [deep]
    path = str(tmp_path / "g.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = zarr.open_group(path, mode="w", zarr_format=fmt)
        g.create_array("a", shape=(2,), dtype="i4").attrs["x"] = deep
        zarr.consolidate_metadata(path)
    for kw in ({}, {"use_consolidated": False}):
        assert zarrx.open_group(path, mode="r", **kw)["a"].attrs["x"] == deep
    zarrx.consolidate_metadata(path)
    assert zarrx.open_group(path, mode="r")["a"].attrs["x"] == deep
    with pytest.raises(zarrx.MetadataError, match="attributes: expected JSON nested at most 64"):
        zarrx.open_group(path)["a"].attrs["y"] = [deep]


def test_zarr_python_keyword_names():
    """The keyword names zarr-python's methods take, with the same results."""
    def calls(lib):
        a = lib.create_array({}, shape=(4,), dtype="i4")
        a.resize(new_shape=(6,))
        g = lib.group({})
        g.create_array("x", shape=(2,), dtype="i4")
        return (a.shape, g.get(path="nope", default=0), g.get(path="x").shape,
                [n for n, _ in g.members(use_consolidated_for_children=False)])
    got = both(calls)
    assert got["zarrx"] == got["zarr"] == ((6,), 0, (2,), ["x"])
    for lib in LIBS.values():
        with pytest.raises(ValueError):
            lib.group({}).members(max_depth=-1)


@pytest.mark.parametrize("mode", ["r", "r+", "a"])
def test_open_with_array_arguments_on_a_group_is_a_type_error(tmp_path, mode):
    path = str(tmp_path / "g.zarr")
    zarrx.create_group(path)
    got = both(lambda lib: lib.open(path, mode=mode, shape=(4,), dtype="i4"))
    assert isinstance(got["zarr"], TypeError) and isinstance(got["zarrx"], TypeError)
    assert isinstance(got["zarrx"], zarrx.ZarrError)
    assert str(got["zarrx"]).startswith("open: shape= is an array argument, but the node at '/'")


CREATE_CHUNKS = {"auto": True, "one-chunk": False, "int": 4, "short": (3,),
                 "full-axis": (-1, 4), "none-axis": (None, 4), "dask-regular": ((4, 4, 2), (5, 5))}


@pytest.mark.parametrize("chunks", list(CREATE_CHUNKS.values()), ids=list(CREATE_CHUNKS))
@pytest.mark.parametrize("fn", ["create", "zeros", "open", "open_array"])
def test_chunks_of_create_and_open_read_as_in_zarr_python(fn, chunks):
    """create, zeros, ... and open/open_array (which create arrays with create) take
    zarr.create's chunks forms: True, False (one chunk), an int, too few sizes, -1 or None for
    a whole axis, dask-style edges."""
    def make(lib):
        if fn.startswith("open"):
            return getattr(lib, fn)({}, mode="w", shape=(10, 10), dtype="i4", chunks=chunks)
        return getattr(lib, fn)((10, 10), dtype="i4", chunks=chunks)
    got = both(lambda lib: make(lib).chunks)
    assert got["zarrx"] == got["zarr"]


@pytest.mark.parametrize("chunks", [(2.5, 3), 1.5, "x"], ids=["float-in-tuple", "float", "str"])
@pytest.mark.parametrize("fn", ["create_array", "zeros"])
def test_chunks_that_are_not_ints_are_type_errors(fn, chunks):
    """zarr-python raises TypeError; zarrx used to truncate (2.5, 3) to (2, 3)."""
    if fn == "create_array":
        got = both(lambda lib: lib.create_array({}, shape=(6, 6), dtype="i4", chunks=chunks))
    else:
        got = both(lambda lib: lib.zeros((6, 6), dtype="i4", chunks=chunks))
    assert isinstance(got["zarr"], TypeError)
    assert isinstance(got["zarrx"], zarrx.ArgumentTypeError)
    assert str(got["zarrx"]).startswith("chunks: expected a tuple of positive ints")
    assert repr(chunks) in str(got["zarrx"])


@pytest.mark.parametrize("fn", ["open", "open_array"])
def test_open_creates_with_the_keywords_of_create(fn):
    """zarr-python's open and open_array create arrays with zarr.create, so its keywords
    (dimension_separator, chunk_shape, codecs) work there."""
    def make(lib):
        store: dict = {}
        v2 = getattr(lib, fn)(store, mode="w", shape=(4, 4), dtype="i4", chunks=(2, 2),
                              zarr_format=2, dimension_separator="/")
        v3 = getattr(lib, fn)({}, mode="w", shape=(4, 4), dtype="i4", chunk_shape=(2, 2),
                              codecs=[BytesCodec(), ZstdCodec(level=1)])
        v2[...] = v3[...] = 1
        return (v2.chunks, sorted(k for k in store if "/" in k), v3.chunks,
                [c.to_dict()["name"] for c in v3.compressors])
    got = both(make)
    assert got["zarrx"] == got["zarr"] == ((2, 2), ["0/0", "0/1", "1/0", "1/1"], (2, 2),
                                            ["zstd"])


def test_create_array_refuses_data_of_another_shape_before_creating_anything():
    """zarr-python refuses shape= with data= (ValueError); zarrx takes a shape equal to the
    data's, and refuses another one before it writes anything."""
    stores: dict = {}

    def create(lib):
        stores[lib.__name__] = {}
        return lib.create_array(stores[lib.__name__], data=np.zeros((3, 4)), shape=(12,))
    got = both(create)
    assert isinstance(got["zarr"], ValueError) and isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]) == ("create_array: shape= (12,) differs from the shape (3, 4) of "
                                 "data= (give one of them)")
    assert stores["zarrx"] == {}
    assert zarrx.create_array({}, data=np.ones((3, 4)), shape=(3, 4))[...].sum() == 12


@pytest.mark.parametrize("call", [
    lambda s, **kw: zarrx.open(s, mode="w", **kw),
    lambda s, **kw: zarrx.open_group(s, mode="w", **kw),
    lambda s, **kw: zarrx.group(s, **kw),
    lambda s, **kw: zarrx.open_array(s, mode="w", shape=(2,), dtype="i4", **kw),
    lambda s, **kw: zarrx.create((2,), store=s, dtype="i4", **kw),
    lambda s, **kw: zarrx.save_array(s, np.arange(2), **kw),
    lambda s, **kw: zarrx.save_group(s, np.arange(2), **kw),
    lambda s, **kw: zarrx.save(s, np.arange(2), **kw),
], ids=["open", "open_group", "group", "open_array", "create", "save_array", "save_group",
        "save"])
def test_zarr_version_is_zarr_pythons_deprecated_spelling_of_zarr_format(call):
    store = zarrx.storage.MemoryStore()
    with pytest.warns(DeprecationWarning, match="zarr_version is deprecated, use zarr_format"):
        call(store, zarr_version=2)
    assert store.get(".zgroup") is not None or store.get(".zarray") is not None
    with pytest.warns(DeprecationWarning):
        assert zarrx.load(store, zarr_version=2) is not None
    with pytest.raises(zarrx.ArgumentError, match="zarr_format 3 and zarr_version 2 differ"):
        call(zarrx.storage.MemoryStore(), zarr_version=2, zarr_format=3)


def test_array_takes_the_keywords_of_create():
    """zarr-python's array creates with zarr.create: mode=, path= and shape= (the data's)
    work there; zarrx's array also keeps create_array's name=."""
    def make(lib):
        store: dict = {}
        a = lib.array(np.arange(3), store=store, path="x", mode="w", shape=(3,), chunks=(2,))
        b = lib.array(np.arange(2), store=store, path="x", mode="w")
        try:
            lib.array(np.arange(2), store=store, path="x", mode="w-")
        except FileExistsError as exc:
            refused = type(exc).__name__
        return a.path, a.chunks, b[...].tolist(), refused
    got = both(make)
    assert got["zarr"][:3] == got["zarrx"][:3] == ("x", (2,), [0, 1])
    assert (got["zarr"][3], got["zarrx"][3]) == ("FileExistsError", "ContainsArrayError")
    assert zarrx.array(np.arange(2), store={}, name="y").path == "y"


@pytest.mark.parametrize("call", [
    lambda lib: lib.create((2,), store={}, name="x"),
    lambda lib: lib.zeros((2,), store={}, name="x"),
    lambda lib: lib.open({}, mode="w", shape=(2,), name="x"),
    lambda lib: lib.open_array({}, mode="w", shape=(2,), name="x"),
])
def test_create_and_open_refuse_name_as_zarr_python_does(call):
    # zarrx failed inside with "create_array() got multiple values for keyword argument 'name'"
    got = both(call)
    assert type(got["zarr"]) is TypeError
    assert isinstance(got["zarrx"], zarrx.errors.ArgumentTypeError)
    assert "unexpected keyword argument 'name'" in str(got["zarrx"])


RAGGED = [[1, 2], [3]]


@pytest.mark.parametrize("call, what", [
    (lambda g: g.__setitem__("s", RAGGED), "group '/': setting member 's'"),
    (lambda g: g.create_dataset("s", data=RAGGED), "group '/': create_dataset('s')"),
    (lambda g: g.array("s", RAGGED), "group '/': create_dataset('s')"),
    (lambda g: zarrx.create_array({}, data=RAGGED), "create_array"),
    (lambda g: g.zeros_like(name="s", data=RAGGED), "*_like")],
    ids=["setitem", "create_dataset", "array", "create_array", "zeros_like"])
def test_data_numpy_cannot_make_an_array_of_is_an_argument_error(call, what):
    g = zarrx.create_group({})
    with pytest.raises(zarrx.ArgumentError) as info:
        call(g)
    assert str(info.value).startswith(f"{what}: data is not an array: setting an array element "
                                      f"with a sequence")
    assert list(g.keys()) == []


@pytest.mark.parametrize("call, what", [
    (lambda g, d: g.__setitem__("s", d), "group '/': setting member 's'"),
    (lambda g, d: g.create_dataset("s", data=d), "group '/': create_dataset('s')"),
    (lambda g, d: g.create_array("s", data=d), "create_array"),
    (lambda g, d: zarrx.array(d, store={}), "array"),
    (lambda g, d: zarrx.from_array({}, data=d), "from_array")],
    ids=["setitem", "create_dataset", "create_array", "array", "from_array"])
@pytest.mark.parametrize("lib", ["zarrx", "zarr"])
def test_a_group_given_as_data_is_a_type_error(call, what, lib):
    # numpy made an array of the group's member names (['a']), stored without a word;
    # zarr-python refuses a group there (TypeError, AttributeError or ValueError by the call)
    g = zarrx.create_group({})
    data = (zarrx if lib == "zarrx" else zarr).create_group({})
    data.create_group("a")
    with pytest.raises(zarrx.ArgumentTypeError) as info:
        call(g, data)
    assert isinstance(info.value, TypeError)
    assert str(info.value) == (f"{what}: expected array data, found Group {data!r}: a group "
                               f"holds no data of its own (create groups with create_group, "
                               f"copy them with zarrx.copy)")
    assert list(g.keys()) == []


@pytest.mark.parametrize("shape, cls", [("x", TypeError), (None, TypeError), ((4.0,), TypeError),
                                        ((4, "a"), TypeError), (4.5, TypeError),
                                        ((-1,), ValueError)])
def test_require_array_of_an_existing_array_checks_the_shape_argument(shape, cls):
    def case(lib):
        g = lib.create_group({})
        g.create_array("a", shape=(4,), dtype="i4")
        return g.require_array("a", shape=shape, dtype="i4")
    got = both(case)
    assert isinstance(got["zarr"], cls) and isinstance(got["zarrx"], cls)
    assert isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]) == f"shape: expected a tuple of non-negative ints, found {shape!r}"


@pytest.mark.parametrize("path", ["", "sub"])
def test_open_array_mode_w_without_shape_is_a_type_error_that_deletes_nothing(path):
    """Both raise a TypeError; zarr-python 3.1 has then deleted everything at the path (see
    migrating.md), zarrx refuses before it deletes anything."""
    def case(lib):
        store = lib.storage.MemoryStore()
        g = lib.open_group(store, mode="w")
        g.create_group("sub").create_array("x", shape=(2,), dtype="i1")
        try:
            lib.open_array(store, path=path, mode="w")
        except TypeError as exc:
            left = [k for k, _ in lib.open_group(store, mode="r").members(max_depth=None)] \
                if lib is zarrx or path else None
            return type(exc), left
    got = both(case)
    assert got["zarr"][1] in (None, [])
    assert got["zarrx"][0] is zarrx.ArgumentTypeError and got["zarrx"][1] == ["sub", "sub/x"]


def test_load_of_a_missing_path_writes_nothing():
    """zarr-python 3.1 creates a group at the path, then raises NotImplementedError (see
    migrating.md); zarrx raises GroupNotFoundError and the store stays as it was."""
    def case(lib):
        store = lib.storage.MemoryStore()
        lib.open_group(store, mode="w").create_array("a", shape=(2,), dtype="i1")
        try:
            lib.load(store, path="q/r")
        except Exception as exc:  # noqa: BLE001 - compared below
            return type(exc), sorted(lib.open_group(store, mode="r").keys())
    got = both(case)
    assert got["zarr"] == (NotImplementedError, ["a", "q"])
    assert got["zarrx"] == (zarrx.errors.GroupNotFoundError, ["a"])
