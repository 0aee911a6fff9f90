"""Sizes, counts and indices at and past the 64-bit limits, from metadata and from arguments:
each is refused with a ZarrError naming what was found and what was expected."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.errors import ArgumentError, DataTypeError, IndexingError
from zarrx.storage import MemoryStore

ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


@pytest.mark.parametrize("nones, ndim", [(63, 65), (100, 102)])
def test_a_basic_selection_of_more_dimensions_than_numpy_holds_is_an_indexing_error(nones, ndim):
    # reads said the result "does not fit in memory", writes that a scalar "cannot be
    # broadcast" to it
    a = zarrx.create_array(MemoryStore(), shape=(6, 4), chunks=(2, 2), dtype="i4")
    message = f"basic selection: the result would have {ndim} dimensions, more than numpy's 64"
    with pytest.raises(IndexingError) as info:
        a[(None,) * nones]
    assert str(info.value) == message and isinstance(info.value, IndexError)
    with pytest.raises(IndexingError) as info:
        a[(None,) * nones] = 1
    assert str(info.value) == message


def test_a_basic_selection_of_64_dimensions_still_reads_and_writes():
    a = zarrx.create_array(MemoryStore(), shape=(6, 4), chunks=(2, 2), dtype="i4", fill_value=1)
    assert a[(None,) * 62].shape == (1,) * 62 + (6, 4)
    a[(0,) + (None,) * 63] = 5              # an integer takes away the axis it indexes
    assert a[0].tolist() == [5, 5, 5, 5] and a[1].tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("fmt", [2, 3])
def test_resizing_to_more_than_2_to_the_63_elements_is_an_argument_error(fmt):
    # the shape was written into the metadata, whose check blamed the document: "zarr.json
    # shape: expected a shape whose product fits in 64 bits"
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(4, 4), chunks=(2, 2), dtype="u1", zarr_format=fmt)
    with pytest.raises(ArgumentError) as info:
        a.resize((2**62, 2))
    assert str(info.value) == ("/: resize expected a shape of at most 2**63-1 elements, found "
                               f"({2**62}, 2)")
    assert a.shape == zarrx.open_array(store, mode="r").shape == (4, 4)
    a.resize((2**63 - 1, 1))
    assert a.shape == (2**63 - 1, 1)


@pytest.mark.parametrize("fmt", [2, 3])
def test_appending_past_2_to_the_63_elements_is_an_argument_error(fmt):
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(2**63 - 2,), chunks=(1000,), dtype="u1",
                           zarr_format=fmt)
    with pytest.raises(ArgumentError) as info:
        a.append(np.zeros(5, "u1"))
    assert str(info.value) == (f"/: append: the array would grow to shape ({2**63 + 3},), "
                               "expected at most 2**63-1 along each axis and in all")
    assert a.shape == zarrx.open_array(store, mode="r").shape == (2**63 - 2,)
    a.append(np.full(1, 9, "u1"))
    assert a[-1] == 9 and a.shape == (2**63 - 1,)


@pytest.mark.parametrize("fmt, shards", [(2, None), (3, None), (3, (2000,))],
                         ids=["v2", "v3", "v3-sharded"])
def test_growing_and_shrinking_within_a_chunk_of_the_2_to_the_63_limit(fmt, shards):
    # the last chunk reaches past 2**63-1: the views writing it (and clearing what a shrink
    # leaves outside) raised OverflowError
    store = MemoryStore()
    a = zarrx.create_array(store, shape=(2**63 - 3,), chunks=(1000,), shards=shards,
                           dtype="u1", zarr_format=fmt)
    a[-2] = 4
    assert a.append(np.array([5, 6], "u1")) == (2**63 - 1,)
    assert a[-4:].tolist() == [4, 0, 5, 6]
    a.resize((2**63 - 2,))
    assert zarrx.open_array(store, mode="r").shape == (2**63 - 2,)
    a.resize((2**63 - 1,))
    assert a[-4:].tolist() == [4, 0, 5, 0]


HUGE_OBJECTS = ("array '/': axis 0 has 4611686018427388 stored objects; at most 4194304 are "
                "listed per axis to lay out dask blocks")


def test_a_dask_array_over_more_stored_objects_than_can_be_listed_is_refused():
    pytest.importorskip("dask.array")
    from zarrx.errors import SelectionSizeError
    a = zarrx.create_array(MemoryStore(), shape=(2**62,), chunks=(1000,), dtype="u1",
                           fill_value=1)
    with pytest.raises(SelectionSizeError) as info:        # was a bare MemoryError
        a.to_dask()
    assert str(info.value) == HUGE_OBJECTS and isinstance(info.value, MemoryError)
    # given blocks, the stored objects are not listed
    x = a.to_dask(chunks=(2**61,))
    assert x.numblocks == (2,) and a[-3:].tolist() == [1, 1, 1]


def test_xarray_opens_an_array_of_more_stored_objects_than_can_be_listed(tmp_path):
    xr = pytest.importorskip("xarray")
    from zarrx.store import LocalStore
    g = zarrx.open_group(LocalStore(str(tmp_path / "x.zarr")), mode="w")
    g.create_array("v", shape=(2**62,), chunks=(1000,), dtype="u1", fill_value=1,
                   dimension_names=["x"])
    ds = xr.open_dataset(tmp_path / "x.zarr", engine="zarrx", chunks=None)   # was MemoryError
    # whole stored objects, at most 2**22 blocks of them (chunks={} makes these blocks)
    preferred = ds["v"].encoding["preferred_chunks"]["x"]
    assert preferred % 1000 == 0 and -(-2**62 // preferred) <= 2**22
    assert ds["v"][-3:].values.tolist() == [1, 1, 1]


@pytest.mark.parametrize("shape", [(2**63,), (2**21, 2**21, 2**21), (2**63, 0)])
def test_a_shape_argument_past_2_to_the_63_is_an_argument_error(shape):
    # was a MetadataError about "array metadata shape"
    with pytest.raises(ArgumentError) as info:
        zarrx.create_array(MemoryStore(), shape=shape, dtype="u1")
    assert str(info.value) == ("shape: expected at most 2**63-1 elements and along each axis, "
                               f"found {shape!r}")
    assert zarrx.create_array(MemoryStore(), shape=(2**63 - 1, 0), dtype="u1").size == 0


# run under an address-space limit of what the interpreter has mapped plus 512 MiB, so that an
# index array converted whole (8 TiB here) fails to allocate instead of exhausting the machine
HUGE_INDEX_CHILD = textwrap.dedent("""
    import numpy as np
    import zarrx
    from zarrx.errors import SelectionSizeError
    from zarrx.storage import MemoryStore

    a = zarrx.create_array(MemoryStore(), shape=(10, 10), chunks=(5, 5), dtype="u1")
    big = np.broadcast_to(np.int64(0), (2**40,))
    row, col = np.arange(2**20)[:, None], np.arange(2**20) % 10
    vm = limit_address_space(512 << 20)
    for select in (lambda: a.vindex[big, big], lambda: a.oindex[big, 0], lambda: a[big],
                   lambda: a.vindex[row % 10, col],
                   lambda: a.vindex.__setitem__((big, big), 1)):
        try:
            select()
        except SelectionSizeError as exc:       # was numpy's MemoryError
            print(exc)
""")


#: what every child below starts with: ``limit_address_space(extra)`` caps the address space
#: at what the process has mapped (``vm``, measured then unless given) plus ``extra`` bytes
_LIMITS = textwrap.dedent("""
    import resource

    def limit_address_space(extra, vm=None):
        if vm is None:
            with open("/proc/self/status") as f:
                vm = next(int(line.split()[1]) * 1024 for line in f
                          if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + extra, resource.RLIM_INFINITY))
        return vm
""")


def _under_limits(test):
    """Skip ``test`` where its child cannot limit its address space."""
    test = pytest.mark.skipif(ASAN, reason="AddressSanitizer reserves more address space "
                              "than the limit allows")(test)
    return pytest.mark.skipif(not sys.platform.startswith("linux"),
                              reason="RLIMIT_AS and /proc")(test)


def _run_child(source: str) -> subprocess.CompletedProcess:
    """``source`` run by a fresh interpreter importing this zarrx (it sets its own limits with
    ``limit_address_space``, see :data:`_LIMITS`)."""
    source = _LIMITS + source
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", source], env=env,
                          capture_output=True, text=True, timeout=120)


@_under_limits
def test_index_arrays_of_more_positions_than_memory_holds_are_selection_size_errors():
    proc = _run_child(HUGE_INDEX_CHILD)
    assert proc.returncode == 0, proc.stderr
    message = ("index array on axis 0: 1099511627776 positions (8796093022208 bytes as int64) "
               "do not fit in memory; select less at a time")
    assert proc.stdout.splitlines() == [message] * 5


# a new array's items are at most 1 MiB (its fill value, one item, is written in full into its
# metadata document); past that the dtype is refused before anything item-sized is made: run
# under an address-space limit of what the interpreter has mapped plus 512 MiB, where an item
# of 2 GiB cannot be allocated (it was, for the default fill value: a MemoryError)
HUGE_ITEM_CHILD = textwrap.dedent("""
    import zarrx
    from zarrx.errors import DataTypeError

    vm = limit_address_space(512 << 20)
    for fmt in (3, 2):
        for dtype in ("S2147483647", "U536870911", "V2147483647", [("a", "S2000000000")]):
            try:
                zarrx.create_array(store={}, shape=(1,), dtype=dtype, zarr_format=fmt)
            except DataTypeError as exc:
                print(exc)
    z = zarrx.create_array(store={}, shape=(2,), dtype="S1048576", fill_value=b"ab")
    z[1] = b"xyz"
    print(z[...].tolist())
""")


@_under_limits
def test_a_new_array_of_items_past_1_mib_is_a_data_type_error_without_allocating_one():
    proc = _run_child(HUGE_ITEM_CHILD)
    assert proc.returncode == 0, proc.stderr
    want = "dtype: expected a data type of at most 1048576 bytes an item (a new array's fill " \
        "value, one item, is written in full into its metadata document), found {}"
    found = ["'S2147483647' of 2147483647 bytes an item",
             "'U536870911' of 2147483644 bytes an item",
             "'V2147483647' of 2147483647 bytes an item",
             "[('a', 'S2000000000')] of 2000000000 bytes an item"]
    assert proc.stdout.splitlines() == [want.format(f) for f in found] * 2 + [
        "[b'ab', b'xyz']"]


# a document read may state items of up to 2**31-1 bytes: the fill value of such an array is
# one item, which memory may not hold (it was numpy's MemoryError at the first read)
HUGE_FILL_CHILD = textwrap.dedent("""
    import json
    import zarrx
    from zarrx.errors import CodecError, MetadataError
    from zarrx.storage import MemoryStore

    # room for the output (2 GiB, never touched) but not for a second item
    vm = limit_address_space(3 << 30)
    docs = [{"zarr_format": 3, "node_type": "array", "shape": [1], "fill_value": fill,
             "data_type": {"name": name, "configuration": {"length_bytes": n}},
             "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
             "chunk_key_encoding": {"name": "default"},
             "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}
            for name, n, fill in (("fixed_length_utf32", 2147483644, "a"),
                                  ("null_terminated_bytes", 2147483647, ""))]
    docs += [{"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": dtype, "fill_value": None,
              "order": "C", "filters": None, "compressor": None}     # null: zeros of the type
             for dtype in ("<U536870911", "|V2147483647")]
    for doc in docs:
        key = "zarr.json" if doc["zarr_format"] == 3 else ".zarray"
        a = zarrx.open_array(MemoryStore({key: json.dumps(doc).encode()}), mode="r")
        for read in (lambda: a[:0].shape, lambda: a[...]):  # the output fits; the fill may not
            try:
                print(read())
            except CodecError as exc:
                print(exc)
    limit_address_space(512 << 20, vm)
    ntb = {"name": "null_terminated_bytes", "configuration": {"length_bytes": 2147483640}}
    doc = {**docs[0], "data_type": {"name": "struct", "configuration": {"fields": [
        {"name": "a", "data_type": ntb}, {"name": "b", "data_type": "int8"}]}},
        "fill_value": {"a": "", "b": 1}}       # made field by field into an item of zeros
    try:
        zarrx.open_array(MemoryStore({"zarr.json": json.dumps(doc).encode()}), mode="r")
    except MetadataError as exc:
        print(exc)
""")


@_under_limits
def test_a_fill_value_item_memory_cannot_hold_is_a_codec_error():
    proc = _run_child(HUGE_FILL_CHILD)
    assert proc.returncode == 0, proc.stderr
    message = "array '/': cannot allocate {} bytes for the fill value of data type {}"
    u, s, v = (message.format(2147483644, "<U536870911"),
               message.format(2147483647, "|S2147483647"),
               message.format(2147483647, "|V2147483647"))
    # nothing read, no fill value made: only raw items need their zeros made first
    struct = ("zarr.json fill_value: expected a fill value that fits in memory, found an item "
              "of 2147483641 bytes (fields 'a', 'b')")
    assert proc.stdout.splitlines() == ["(0,)", u, "(0,)", s, "(0,)", u, v, v, struct]


@pytest.mark.parametrize("fmt", [2, 3])
def test_the_largest_item_of_a_new_array_is_1_mib(fmt):
    with pytest.raises(DataTypeError, match=r"^dtype: expected a data type of at most 1048576 "
                       r"bytes an item .*, found 'S1048577' of 1048577 bytes an item$"):
        zarrx.create_array(MemoryStore(), shape=(1,), dtype="S1048577", zarr_format=fmt)
    z = zarrx.create_array(MemoryStore(), shape=(1,), dtype="S1048576", zarr_format=fmt)
    assert zarrx.open_array(z.store, mode="r").dtype == np.dtype("S1048576")


# a Zarr v2 raw type's fill value "" means zeros, one item: no document bounds its size
HUGE_V2_FILL_CHILD = textwrap.dedent("""
    import json
    import zarrx
    from zarrx.errors import MetadataError

    zarray = {"zarr_format": 2, "shape": [1], "chunks": [1], "dtype": "|V2147483647",
              "fill_value": "", "order": "C", "filters": None, "compressor": None}
    vm = limit_address_space(512 << 20)
    try:
        zarrx.open_array({".zarray": json.dumps(zarray).encode()}, mode="r")
    except MetadataError as exc:            # was a MemoryError
        print(exc)
""")


@_under_limits
def test_a_v2_raw_fill_value_larger_than_memory_is_a_metadata_error():
    proc = _run_child(HUGE_V2_FILL_CHILD)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        ".zarray fill_value: expected a fill value that fits in memory, found '' (zeros of "
        "2147483647 bytes, one item of |V2147483647)"]


@pytest.mark.parametrize("shards", [None, (2**20,)])
def test_iterating_over_an_axis_of_2_to_the_62_chunks_reads_row_by_row(shards):
    # iteration made every chunk boundary of the first axis at once: a ValueError from numpy
    # ("array is too big") here, 16 GiB for 2**31 chunks
    z = zarrx.create_array({}, shape=(2**62,), chunks=(1,), shards=shards, dtype="u1",
                           fill_value=0)
    z[1] = 7
    z[-1] = 9
    rows = iter(z)
    assert [next(rows) for _ in range(3)] == [0, 7, 0]


def test_slices_in_the_last_chunk_of_an_axis_of_2_to_the_63_minus_1_cells():
    """That chunk's end passes 2**63 - 1: the projection of a slice onto it took an end that
    wrapped (never seeing that the slice covers the chunk's cells), and a position outside
    the axis or its chunks sent the projection into a loop that never ended."""
    from zarrx import _indexing
    n = 2**63 - 1
    last = (n - 1) // 1000 * 1000                  # the last chunk holds 807 cells
    a = zarrx.create_array(MemoryStore(), shape=(n,), chunks=(1000,), dtype="u1",
                           compressors=zarrx.codecs.Zstd())
    a[last:] = np.arange(n - last, dtype="u1")
    tail = np.concatenate([np.zeros(10, "u1"), np.arange(n - last, dtype="u1")])
    np.testing.assert_array_equal(a[last - 10:], tail)              # from last - 10 to the end
    np.testing.assert_array_equal(a[last + 1::3], tail[11::3])
    np.testing.assert_array_equal(a[:last - 3:-2], tail[:6:-2])
    assert _indexing.project_slice(last, n - last, 1, n, 1000, None) == [
        (last // 1000, slice(0, n - last, None), slice(0, n - last), True)]
    with pytest.raises(IndexingError, match="position 12 lies outside the axis of size 10"):
        _indexing.project_slice(12, 1, 1, 10, 4, None)
    with pytest.raises(IndexingError, match=r"position 5 .* \(chunk 0 ends at 3\)"):
        _indexing.project_slice(5, 1, 1, 10, 0, np.array([0, 3], np.int64))
