"""An array opened by zarr-python and by zarrx: its properties, chunk counts, shape changes,
order, numpy conversion, structured fields and appends agree."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")

from parity_helpers import LIBS, arr, both  # noqa: E402
from parity_helpers import _quiet  # noqa: E402, F401  (an autouse fixture)


@pytest.mark.parametrize("writes", [[(0, 0)], [(slice(None), slice(None))], [(0, 0), (19, 19)],
                                    [(slice(0, 6), 3)]], ids=["one", "all", "corners", "column"])
@pytest.mark.parametrize("shards", [None, (10, 10), (20, 10)])
def test_nchunks_initialized_counts_as_zarr_python(writes, shards):
    def case(lib):
        a = lib.create_array({}, shape=(20, 20), dtype="i4", chunks=(5, 5), shards=shards)
        for w in writes:
            a[w] = 1
        return a.nchunks_initialized, a.nchunks, a.cdata_shape
    got = both(case)
    assert got["zarrx"] == got["zarr"]


def test_nshards_initialized():
    a = zarrx.create_array({}, shape=(20, 20), dtype="i4", chunks=(5, 5), shards=(10, 10))
    a[0, 0] = 1
    assert (a.nshards_initialized, a.nchunks_initialized) == (1, 4)


def test_resize_update_attributes_info():
    def case(lib):
        a = arr(lib)
        a.resize((5, 6))
        b = lib.create_array({}, shape=(10,), dtype="i4")
        b.resize(4)
        same = type(a.update_attributes({"x": 1})).__name__
        info = dict(line.split(" : ", 1) for line in str(a.info_complete()).splitlines())
        return (a.shape, b.shape, same, dict(a.attrs),
                {k.strip(): info[k].strip() for k in info if k.strip() in
                 ("Shape", "Chunk shape", "Zarr format", "Order", "Read-only")}, a[...])
    got = both(case)
    for theirs, ours in zip(got["zarr"], got["zarrx"]):
        np.testing.assert_array_equal(ours, theirs)


def test_setting_shape_resizes_and_put_takes_d():
    def case(lib):
        a = lib.create_array({}, shape=(4,), dtype="i4", chunks=(2,))
        a[...] = [1, 2, 3, 4]
        a.shape = (6,)
        a.attrs.put(d={"x": 1})
        reopened = lib.open_array(a.store)
        return a.shape, a[...].tolist(), reopened.shape, dict(reopened.attrs)
    got = both(case)
    assert got["zarrx"] == got["zarr"] == ((6,), [1, 2, 3, 4, 0, 0], (6,), {"x": 1})
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "/: resize expected 1 non-negative ints below 2**63, found (2, 2)")):
        zarrx.create_array({}, shape=(4,), dtype="i4").shape = (2, 2)


def test_fields_of_structured_arrays_as_numpy():
    """zarr-python 3.1 cannot read fields (it raises a cast error and writes every field on a
    field write), so zarrx is checked against numpy, the semantics zarr-python 2 had."""
    dt = np.dtype([("x", "<i4"), ("y", "<f8")])
    expected = np.array([(1, 2.0), (3, 4.0), (5, 6.0), (7, 8.0)], dtype=dt)
    z = zarrx.create_array({}, shape=(4,), dtype=dt, chunks=(2,))
    z[...] = expected
    np.testing.assert_array_equal(z["x"], expected["x"])
    np.testing.assert_array_equal(z["y", 1:3], expected["y"][1:3])
    np.testing.assert_array_equal(z[1:3, "y"], expected["y"][1:3])
    assert z[["y", "x"]].dtype.names == ("y", "x")
    np.testing.assert_array_equal(z[["y", "x"]]["x"], expected["x"])
    np.testing.assert_array_equal(z.get_orthogonal_selection([1, 3], fields="y"), [4.0, 8.0])
    np.testing.assert_array_equal(z.get_coordinate_selection([0, 2], fields=["x"])["x"], [1, 5])
    np.testing.assert_array_equal(z.get_mask_selection(np.array([1, 0, 1, 0], bool),
                                                       fields="x"), [1, 5])
    assert z[2, "x"] == 5
    z["x"] = 9
    z.set_basic_selection(slice(0, 2), 5.5, fields="y")
    expected["x"] = 9
    expected["y"][:2] = 5.5
    np.testing.assert_array_equal(z[...], expected)
    with pytest.raises(IndexError, match="no field 'z'; the fields are 'x', 'y'"):
        z["z"]
    with pytest.raises(ValueError) as info:            # numpy's class
        z[["x", "y", "x"]]
    assert isinstance(info.value, zarrx.IndexingError)
    assert str(info.value) == "/: fields: expected each field once, found 'x' more than once"
    with pytest.raises(zarrx.IndexingError) as info:
        z.get_basic_selection(0, fields=5)
    assert str(info.value) == "/: fields: expected a field name or a list of field names, " \
                              "found 5"


@pytest.mark.parametrize("fmt, order", [(2, "F"), (2, "C"), (3, "F"), (3, "C")])
def test_order_is_reported_as_zarr_python_reports_it(fmt, order):
    """A Zarr v2 array reports the order its chunks are stored in; Zarr v3 arrays have no
    such field and report ``"C"``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = both(lambda lib: lib.create_array({}, shape=(2, 3), dtype="i4", zarr_format=fmt,
                                                order=order).order)
    assert got["zarrx"] == got["zarr"]


def test_copies_of_a_zarr_python_array_keep_its_settings():
    """``from_array`` and ``*_like`` of a zarr-python array keep its chunks, codecs and fill
    value, as zarr-python keeps them (and as they keep a zarrx array's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        src = zarr.create_array({}, shape=(4,), chunks=(2,), dtype="i4", fill_value=5,
                                compressors=None)
        src[...] = np.arange(4)
        got = both(lambda lib: [(a.chunks, a.compressors, a.fill_value) for a in (
            lib.from_array({}, data=src), lib.zeros_like(src), lib.empty_like(src))])
    assert got["zarrx"] == [((2,), (), 5), ((2,), (), 0), ((2,), (), 5)]
    # (zarr-python 3.1's from_array takes the default fill value: see migrating.md)
    assert [(c, len(k)) for c, k, _ in got["zarrx"]] == [(c, len(k)) for c, k, _ in got["zarr"]]
    assert [f for _, _, f in got["zarr"]][1:] == [0, 5]
    assert zarrx.from_array({}, data=src)[...].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("shape", [(), (3,)], ids=["0-d", "1-d"])
def test_numpy_conversion_as_in_zarr_python(shape):
    """np.asarray of a 0-d array is a 0-d ndarray; copy=False is refused with a ValueError (a
    read always copies), as numpy's protocol asks and zarr-python does."""
    def convert(lib):
        a = lib.create_array({}, shape=shape, dtype="i4", fill_value=7)
        out = np.asarray(a), np.asarray(a, dtype="f8"), np.array(a, copy=True)
        return [(type(o), o.shape, o.dtype.str, o.tolist()) for o in out]
    got = both(convert)
    assert got["zarrx"] == got["zarr"]
    for lib in LIBS.values():
        with pytest.raises(ValueError):
            np.array(lib.create_array({}, shape=shape, dtype="i4"), copy=False)
    with pytest.raises(zarrx.ArgumentError, match="^/: np.array\\(..., copy=False\\) cannot be "
                                                  "honoured"):
        np.array(zarrx.create_array({}, shape=shape, dtype="i4"), copy=False)


def test_open_of_an_existing_array_takes_write_empty_chunks_from_config():
    """zarr.open(store, config={"write_empty_chunks": True}) stores chunks of fill values; so
    does zarrx (and its open_array, and the write_empty_chunks= keyword: see migrating.md)."""
    def write_zeros(lib, fn="open", **kw):
        store: dict = {}
        lib.create_array(store, shape=(4,), dtype="i4", chunks=(2,))
        a = getattr(lib, fn)(store, mode="a", **kw)
        a[...] = 0
        return a.nchunks_initialized
    got = both(lambda lib: write_zeros(lib, config={"write_empty_chunks": True}))
    assert got["zarrx"] == got["zarr"] == 2
    assert write_zeros(zarrx, "open_array", config={"write_empty_chunks": True}) == 2
    assert write_zeros(zarrx, "open_array", write_empty_chunks=True) == 2
    assert write_zeros(zarrx, "open_array") == 0


def test_groups_and_arrays_compare_equal_when_opened_twice():
    def case(lib):
        store: dict = {}
        g = lib.open_group(store, mode="w")
        a = g.create_array("a", shape=(2,), dtype="f4")
        sub = g.create_group("sub")
        again = lib.open_group(store, mode="r+")
        return (g == again, g != again, a == lib.open_array(store, path="a"), a == again["a"],
                sub == g, a == g, g == a, a == 1)
    got = both(case)
    assert got["zarrx"] == got["zarr"] == (True, False, True, True, False, False, False, False)
    g = zarrx.group({})
    assert hash(g) == hash(zarrx.open_group(g.store)) and len({g, zarrx.open_group(g.store)}) == 1
    # fill values compare bit for bit: a NaN-filled array is equal to itself reopened (never
    # so in zarr-python 3.1, whose metadata compare NaN != NaN)
    a = g.create_array("n", shape=(2,), dtype="f4", fill_value=np.nan)
    assert a == g["n"]


@pytest.mark.parametrize("fmt, kw, order", [
    (3, {"config": {"order": "F"}}, "F"), (3, {"order": "F"}, "C"),
    (2, {"order": "F"}, "F"), (2, {"config": {"order": "F"}}, "C"), (3, {}, "C")])
def test_the_order_of_config_is_the_layout_reads_hand_out(fmt, kw, order):
    """Zarr v3 stores no order: ``config``'s is the handle's (not stored); a Zarr v2 array's
    is the order stored. Reads come out in that layout."""
    def case(lib):
        store: dict = {}
        a = lib.create_array(store, shape=(2, 3), dtype="i4", zarr_format=fmt, **kw)
        a[...] = np.arange(6).reshape(2, 3)
        back = a[...]
        return (a.order, back.flags.f_contiguous, back.tolist(),
                a.oindex[[0, 1], :].flags.f_contiguous, lib.open_array(store).order)
    got = both(case)
    assert got["zarrx"] == got["zarr"]
    assert got["zarrx"][0] == order
    opened = zarrx.open(zarrx.create_array({}, shape=(2, 2), dtype="i4").store,
                        config={"order": "F"})
    assert opened.order == "F" and opened[...].flags.f_contiguous


@pytest.mark.parametrize("fn", ["open", "open_array", "create_array"])
def test_a_config_order_other_than_c_or_f_is_refused(fn):
    store = zarrx.create_array({}, shape=(2,), dtype="i4").store
    kw = {"shape": (2,), "dtype": "i4", "overwrite": True} if fn == "create_array" else {}
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"{fn}: config: order: expected 'C' or 'F', found 'K'")):
        getattr(zarrx, fn)(store, config={"order": "K"}, **kw)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("fn", ["create_array", "zeros", "open"])
def test_an_order_other_than_c_or_f_is_refused(fn, fmt):
    """zarr-python refuses it for Zarr v2 (a ValueError) and ignores it for Zarr v3; zarrx
    refuses it for both, as it refuses unknown settings rather than ignore them."""
    call = {"create_array": lambda **kw: zarrx.create_array({}, **kw),
            "zeros": lambda **kw: zarrx.zeros(store={}, **kw),
            "open": lambda **kw: zarrx.open({}, mode="w", **kw)}[fn]
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            f"{fn}: order: expected 'C' or 'F', found 'K'")):
        call(shape=(2,), dtype="i4", order="K", zarr_format=fmt)


@pytest.mark.parametrize("data", [[[1, 2], [3]], [["x", "y"]], np.array([["x", "y"]])],
                         ids=["ragged", "text", "text-array"])
def test_append_of_data_numpy_cannot_convert_is_an_argument_error(data):
    """Refused before the shape grows (zarr-python 3.1 grows the array, then fails)."""
    got = both(lambda lib: arr(lib, shape=(2, 2), chunks=(1, 1)).append(data))
    assert isinstance(got["zarr"], ValueError)
    assert isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]).startswith(f"/: cannot convert value of type {type(data).__name__} "
                                        f"to dtype int32: ")
    z = arr(zarrx, shape=(2, 2), chunks=(1, 1))
    with pytest.raises(zarrx.ArgumentError):
        z.append(data)
    assert z.shape == (2, 2) and zarrx.open_array(z.store, mode="r").shape == (2, 2)


def test_append_converts_data_to_the_array_dtype_as_a_write_does():
    rec = zarrx.create_array({}, shape=(1,), dtype=[("x", "i4"), ("y", "f8")])
    assert rec.append([(1, 2.0)]) == (2,)
    assert rec[1].tolist() == (1, 2.0)
    z = arr(zarrx, shape=(2,), chunks=(1,))
    z.append([1.5, 2.5])                              # as z[...] = [1.5, 2.5] converts it
    assert z[...].tolist() == [0, 1, 1, 2]


def test_numpy_conversion_to_a_dtype_the_values_cannot_take_is_an_argument_error():
    def convert(lib):
        s = lib.create_array({}, shape=(2,), dtype=str)
        s[...] = ["ab", "c"]
        return np.asarray(s, dtype="i4")
    got = both(convert)
    assert isinstance(got["zarr"], ValueError) and isinstance(got["zarrx"], zarrx.ArgumentError)
    assert str(got["zarrx"]) == "/: cannot convert value of type ndarray to dtype int32: " \
                                "invalid literal for int() with base 10: 'ab'"
    z = zarrx.create_array({}, shape=(2,), dtype="i4")
    with pytest.raises(TypeError) as info:                  # numpy's class for an unknown dtype
        z.__array__("foo")
    assert isinstance(info.value, zarrx.ArgumentTypeError)


PROPERTIES = ("shape", "chunks", "shards", "dtype", "fill_value", "order", "ndim", "size",
              "nbytes", "nchunks", "nchunks_initialized", "cdata_shape", "read_only", "path",
              "name", "basename")


@pytest.mark.parametrize("fmt, shards", [(2, None), (3, None), (3, (6, 4))],
                         ids=["v2", "v3", "v3-sharded"])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_array_properties_and_shape_changes_as_in_zarr_python(tmp_path, kind, fmt, shards):
    """The same properties, before and after a write, a shrink, a grow and an append on each
    axis, over a memory and a local store; each library reads the other's result."""
    def make(lib):
        store = {} if kind == "memory" else str(tmp_path / lib.__name__)
        a = lib.create_array(store, name="g/a", shape=(10, 7), chunks=(3, 2), shards=shards,
                             dtype="i4", zarr_format=fmt, fill_value=-1)
        states = [{p: getattr(a, p) for p in PROPERTIES}]
        a[2:9, 1:6] = np.arange(35, dtype="i4").reshape(7, 5)
        for change in (lambda: a.resize((8, 5)), lambda: a.resize((12, 8)),
                       lambda: a.append(np.full((2, 8), 5, "i4")),
                       lambda: a.append(np.full((14, 1), 6, "i4"), axis=1)):
            change()
            states.append({p: getattr(a, p) for p in PROPERTIES})
        return states, a
    (x, ax), (z, az) = make(zarrx), make(zarr)
    for got, want in zip(x, z):
        assert got == want
    expected = np.full((14, 9), -1, "i4")     # as numpy cuts and pads (see migrating.md)
    expected[2:8, 1:5] = np.arange(35, dtype="i4").reshape(7, 5)[:6, :4]
    expected[12:, :8] = 5
    expected[:, 8] = 6
    assert np.array_equal(ax[...], expected)
    if kind == "local":             # each library reads what the other wrote
        for lib, other, data in ((zarr, "zarrx", expected), (zarrx, "zarr", az[...])):
            back = lib.open_array(str(tmp_path / other), path="g/a", mode="r")
            assert back.shape == data.shape and np.array_equal(np.asarray(back[...]), data)
