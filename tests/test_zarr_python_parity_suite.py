"""What zarr-python's own test suite expects of the public API and zarrx lacked: each case runs
on both libraries where zarr-python 3.1 has the feature, and on zarrx alone (with the behaviour
zarr-python 3.3 gives) where it came later."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.errors import (ArrayNotFoundError, ContainsArrayError, ContainsGroupError,
                          GroupNotFoundError)

from parity_helpers import LIBS, both, doc
from parity_helpers import _quiet  # noqa: F401  (an autouse fixture)


A = np.arange(20, dtype="i4").reshape(4, 5)
ROWS = np.array([True, False, True, True])
OUTER = {
    "two-masks": (ROWS, np.array([False, True, False, False, True])),
    "mask-and-ints": (ROWS, [0, 4]),
    "ints-and-mask": ([3, 0], np.array([True, True, False, False, True])),
    "mask-lists": ([True, False, True, True], [True] * 5),
    "equal-counts": (ROWS, np.array([True, False, True, True, False])),  # numpy pairs these
}


def _grid(lib):
    z = lib.create_array({}, shape=A.shape, dtype="i4", chunks=(2, 2))
    z[...] = A
    return z


@pytest.mark.parametrize("sel", list(OUTER.values()), ids=list(OUTER))
def test_boolean_index_arrays_on_every_axis_select_their_outer_product(sel):
    expected = A[np.ix_(*(np.asarray(s) for s in sel))]
    got = both(lambda lib: _grid(lib)[sel])
    for name in LIBS:
        np.testing.assert_array_equal(got[name], expected, err_msg=name)


@pytest.mark.parametrize("sel", list(OUTER.values()), ids=list(OUTER))
def test_writes_through_boolean_index_arrays_on_every_axis_fill_their_outer_product(sel):
    expected = A.copy()
    expected[np.ix_(*(np.asarray(s) for s in sel))] = -1

    def write(lib):
        z = _grid(lib)
        z[sel] = -1
        return z[...]
    got = both(write)
    for name in LIBS:
        np.testing.assert_array_equal(got[name], expected, err_msg=name)


INDEXES = {"mask": [False, True] * 5, "ints": [0, 2, 4, 5]}
READS = {
    "getitem": lambda z, ix: z[ix],
    "oindex": lambda z, ix: z.oindex[ix],
    "vindex": lambda z, ix: z.vindex[ix],
}


@pytest.mark.parametrize("read", list(READS.values()), ids=list(READS))
@pytest.mark.parametrize("index", list(INDEXES), ids=list(INDEXES))
def test_an_array_of_the_library_is_an_index_array(read, index):
    def case(lib):
        store: dict = {}
        z = lib.array(np.arange(10), chunks=2, store=store, path="a")
        ix = lib.array(INDEXES[index], chunks=2, store=store, path="ix",
                       dtype="bool" if index == "mask" else "i4")
        return read(z, ix)
    got = both(case)
    for name in LIBS:
        np.testing.assert_array_equal(got[name], np.arange(10)[INDEXES[index]], err_msg=name)


def test_arrays_index_writes_and_tuples_of_axes():
    # zarr-python 3.1 reads these, and fails on the writes inside its indexer
    z = zarrx.array(np.arange(12).reshape(3, 4), chunks=(2, 2))
    rows, cols = zarrx.array(np.array([True, False, True])), zarrx.array(np.array([1, 3]))
    assert z[rows, cols].tolist() == [[1, 3], [9, 11]]
    assert z.oindex[rows, :].tolist() == [[0, 1, 2, 3], [8, 9, 10, 11]]
    assert z.get_orthogonal_selection((rows, cols)).tolist() == [[1, 3], [9, 11]]
    z[rows, cols] = -1
    z.vindex[zarrx.array(np.array([1])), cols[:1]] = -2          # the point (1, 1)
    z.set_orthogonal_selection((zarrx.array(np.array([1])), cols), -3)
    assert z[...].tolist() == [[0, -1, 2, -1], [4, -3, 6, -3], [8, -1, 10, -1]]


def _tree():
    g = zarrx.open_group({}, mode="w")
    g.create_array("a", shape=(2,), dtype="i4")
    g.create_group("s").create_array("b", shape=(1,), dtype="i4")
    return g


def test_get_array_and_get_group_return_the_member_of_their_kind():
    # zarr-python 3.3's accessors (3.1 has neither)
    g = _tree()
    assert g.get_array("a").path == "a" and g.get_array("s/b").shape == (1,)
    assert isinstance(g.get_group("s"), zarrx.Group) and g.get_group("s").path == "s"
    assert g.get_group("s").get_array("b").path == "s/b"


@pytest.mark.parametrize("call, path, error, message", [
    ("get_array", "x", ArrayNotFoundError, "get_array: group '/': no array at 'x' (no node there)"),
    ("get_array", "s", ContainsGroupError, "get_array: group '/': expected an array at 's', "
                                           "found a group"),
    ("get_group", "s/x", GroupNotFoundError, "get_group: group '/': no group at 's/x' "
                                             "(no node there)"),
    ("get_group", "a", ContainsArrayError, "get_group: group '/': expected a group at 'a', "
                                           "found an array"),
])
def test_get_array_and_get_group_name_what_is_at_the_path(call, path, error, message):
    with pytest.raises(error) as info:
        getattr(_tree(), call)(path)
    assert str(info.value) == message


@pytest.mark.parametrize("method", ["zeros_like", "ones_like", "full_like", "empty_like"])
@pytest.mark.parametrize("source_format, group_format", [(3, 2), (2, 3), (2, 2)])
def test_group_like_methods_create_the_array_in_the_group_format(method, source_format,
                                                                   group_format):
    source = zarrx.ones(store={}, shape=(11, 12), dtype="uint8", chunks=(11, 4),
                        zarr_format=source_format)
    g = zarrx.create_group({}, zarr_format=group_format)
    made = getattr(g, method)(name="foo", data=source, shape=(10, 10), dtype="int8")
    assert made.metadata.zarr_format == group_format
    assert (made.shape, made.chunks, made.dtype) == ((10, 10), (11, 4), np.dtype("int8"))
    assert list(g.array_keys()) == ["foo"]           # listed: the hierarchy holds one format
    expected = {"zeros_like": 0, "ones_like": 1}.get(method, 1)     # full/empty: the source's
    assert (made[...] == expected).all()


@pytest.mark.parametrize("call", ["ones", "zeros", "empty", "create", "open_array"])
@pytest.mark.parametrize("order", [None, "C", "F"])
@pytest.mark.parametrize("config", [{"order": "F"}, {"order": "C"}, {}], ids=["F", "C", "none"])
def test_zarr_v2_order_of_the_create_family_comes_from_config_when_order_is_not_given(
        call, order, config):
    def case(lib):
        store: dict = {}
        kw = {"mode": "w", "dtype": "i4"} if call == "open_array" else {}
        a = getattr(lib, call)(store=store, shape=(2, 3), order=order, zarr_format=2,
                               config=config, **kw)
        a[...] = np.arange(6).reshape(2, 3)
        return a.order, doc(store, ".zarray")["order"], a[...].flags.f_contiguous
    got = both(case)
    expected = order or config.get("order", "C")
    assert got["zarr"] == got["zarrx"] == (expected, expected, expected == "F")


def test_the_deprecation_warning_of_tree_reads_as_zarr_python_words_it():
    # a filter written for zarr-python's message (message="Use Group.tree instead") holds
    for lib in LIBS.values():
        g = lib.open_group({}, mode="w")
        with pytest.warns(DeprecationWarning, match=r"Use Group\.tree instead\.$"):
            lib.tree(g)


def test_a_zarr_v3_codec_object_compresses_a_zarr_v2_array_in_its_numcodecs_form():
    # zarr-python 3.1 refuses its v3 classes for Zarr v2 (ValueError); zarrx's serve both
    for codec in (zarrx.codecs.ZstdCodec(level=2), LIBS["zarr"].codecs.ZstdCodec(level=2)):
        store: dict = {}
        zarrx.create(store=store, shape=(3,), dtype="u1", zarr_format=2, compressor=codec)
        assert doc(store, ".zarray")["compressor"] == {"id": "zstd", "level": 2}
    with pytest.raises(ValueError):
        LIBS["zarr"].create(store={}, shape=(3,), dtype="u1", zarr_format=2,
                            compressor=LIBS["zarr"].codecs.ZstdCodec(level=2))


@pytest.mark.parametrize("chunks", [(-1, 2), (None, 2)], ids=["minus-one", "none"])
def test_a_whole_axis_chunk_of_an_empty_axis_is_one_long_so_the_axis_grows(chunks):
    got = both(lambda lib: lib.create(shape=(0, 6), chunks=chunks, dtype="i4", store={}).chunks)
    assert got == {"zarr": (0, 2), "zarrx": (1, 2)}       # zarr-python's axis cannot grow
    z = zarrx.create_array({}, shape=(0, 6), chunks=chunks, dtype="i4")
    z.append(np.ones((3, 6), "i4"))
    assert z.shape == (3, 6) and z.chunks == (1, 2) and z[...].sum() == 18
    assert zarrx.create_array({}, shape=(4, 6), chunks=(-1, 2), dtype="i4").chunks == (4, 2)
