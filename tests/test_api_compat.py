"""zarr-python spellings users bring along: create, ones, *_like, open_consolidated, storage."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore


def test_create_with_older_signature():
    store = MemoryStore()
    z = zarrx.create((10, 10), store=store, chunks=(5, 5), dtype="i4", zarr_format=2,
                     dimension_separator="/", compressor={"id": "zlib", "level": 1})
    z[...] = 3
    assert sorted(store.list_prefix(""))[:3] == [".zarray", "0/0", "0/1"]
    assert zarrx.open_array(store, mode="r")[...].sum() == 300
    auto = zarrx.create(100, dtype="f8")
    assert auto.chunks == (100,) and auto.zarr_format == 3


def test_ones_and_like():
    o = zarrx.ones((3, 4), dtype="f4", chunks=(2, 2))
    np.testing.assert_array_equal(o[...], np.ones((3, 4), "f4"))
    assert o.nchunks_initialized == 0            # nothing stored: every cell is the fill value
    z = zarrx.zeros_like(o)
    assert (z.shape, z.chunks, z.dtype) == ((3, 4), (2, 2), np.dtype("f4"))
    f = zarrx.full_like(np.zeros((2, 2), "i2"), 7)
    np.testing.assert_array_equal(f[...], np.full((2, 2), 7, "i2"))


def test_open_consolidated_requires_consolidated_metadata():
    store = zarrx.storage.MemoryStore()
    g = zarrx.open_group(store, mode="w")
    g.create_array("a", shape=(2,), dtype="u1", chunks=(2,))
    with pytest.raises(zarrx.MetadataError, match="has no consolidated metadata"):
        zarrx.open_consolidated(store)
    zarrx.consolidate_metadata(store)
    assert list(zarrx.open_consolidated(store).keys()) == ["a"]


def test_nbytes_stored():
    z = zarrx.create_array(MemoryStore(), shape=(8,), dtype="<i4", chunks=(4,), compressors=None)
    z[:4] = 1
    assert z.nbytes_stored() == 16


def test_a_dict_is_a_store_that_holds_the_data():
    d: dict = {}
    z = zarrx.create_array(d, shape=(4,), dtype="u1", chunks=(2,), compressors=None)
    z[...] = [1, 2, 3, 4]
    assert d["c/1"] == bytes([3, 4]) and "zarr.json" in d
    assert zarrx.open(d, mode="r")[...].tolist() == [1, 2, 3, 4]
    assert zarrx.open(d, mode="r").read_only
    with pytest.raises(zarrx.StoreError, match="expected str keys and bytes values, found str "
                                               "key 'zarr.json' with dict value"):
        zarrx.open({"zarr.json": {"zarr_format": 3}})


def test_a_dict_holding_large_values_opens_again_and_holds_bytes():
    d: dict = {}
    z = zarrx.create_array(d, shape=(1 << 18,), dtype="f8", chunks=(1 << 16,), compressors=None)
    z[...] = np.arange(1 << 18)
    assert {type(v) for v in d.values()} == {bytes}
    assert np.array_equal(zarrx.open_array(d)[...], np.arange(1 << 18))
    assert np.array_equal(pickle.loads(pickle.dumps(zarrx.open_array(d)))[-3:],
                          np.arange((1 << 18) - 3, 1 << 18))


def test_a_dict_zarr_python_wrote_reads_and_stays_readable_by_zarr_python():
    zarr = pytest.importorskip("zarr")
    d: dict = {}
    g = zarr.open_group(d, mode="w")
    g.create_array("a", shape=(1 << 18,), chunks=(1 << 16,), dtype="f8", compressors=None)[:] = \
        np.arange(1 << 18)
    g.create_array("s", shape=(4,), chunks=(2,), dtype="i2")[:] = [1, 2, 3, 4]
    a = zarrx.open_array(d, path="a", mode="r+")
    assert np.array_equal(a[...], np.arange(1 << 18))
    a[:10] = -1
    zarrx.open_array(d, path="s", mode="r+")[1:3] = 9
    zarrx.open_group(d).create_array("n", shape=(3,), dtype="i4")[...] = 7
    zarrx.open_group(d).attrs["k"] = "v"
    back = zarr.open_group(d, mode="r")
    assert back["a"][:12].tolist() == [-1] * 10 + [10, 11]
    assert back["s"][:].tolist() == [1, 9, 9, 4]
    assert back["n"][:].tolist() == [7, 7, 7] and back.attrs["k"] == "v"


def test_open_mode_defaults_to_read_only_for_a_read_only_store():
    store = MemoryStore()
    zarrx.create_group(store)
    ro = MemoryStore(dict(store._data), read_only=True)
    assert zarrx.open(ro).read_only and not zarrx.open(store).read_only
    with pytest.raises(zarrx.ReadOnlyError):
        zarrx.open(ro, mode="a")


def test_handles_opened_on_one_dict_one_after_another_write_as_one_store():
    """Each open of a dict makes a new store over it; they share its generations, so a chunk
    the first handle deleted is written by the second (it was a ConflictError after 64
    attempts: the second store still held the deleted chunk's generation)."""
    d: dict = {}
    a = zarrx.create_array(d, shape=(4,), dtype="i4", chunks=(4,), fill_value=0)
    a[...] = [1, 2, 3, 4]
    b = zarrx.open_array(d)
    a[...] = 0                                   # all fill value: the chunk is deleted
    assert sorted(d) == ["zarr.json"]
    b[1] = 7
    assert zarrx.open_array(d)[...].tolist() == [0, 7, 0, 0]
    a[2] = 5                                     # and the other way round
    assert zarrx.open_array(d)[...].tolist() == [0, 7, 5, 0]
