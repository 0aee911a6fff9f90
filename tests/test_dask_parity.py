"""zarrx.dask where dask code written for zarr-python meets it: the stores ``da.from_zarr`` and
``to_zarr`` take, the keys of graphs over several arrays, handles sent to worker processes.

``dask.array`` over zarr-python is the oracle: what it reads and writes, zarrx reads and writes.
"""
from __future__ import annotations

import pickle
import re
import shutil

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import zarrx  # noqa: E402
import zarrx.dask as zd  # noqa: E402
from zarrx.store import MemoryStore  # noqa: E402


@pytest.fixture
def foreign_stores(tmp_path):
    """Store objects made by other libraries, by name: each call gives a fresh one over
    ``path`` (a directory) when the library can name one."""
    zarr = pytest.importorskip("zarr")
    fsspec = pytest.importorskip("fsspec")
    return {"zarr-python LocalStore": lambda path: zarr.storage.LocalStore(path),
            "fsspec mapper": lambda path: fsspec.get_mapper(str(path), auto_mkdir=True)}


@pytest.mark.parametrize("kind", ["zarr-python LocalStore", "fsspec mapper"])
def test_store_objects_dask_takes_are_read_and_written(tmp_path, foreign_stores, kind):
    """``da.from_zarr`` and ``to_zarr`` take a zarr-python store or an fsspec mapper; so do
    ``from_zarrx`` and ``to_zarrx`` (anything ``zarrx.open_array`` opens)."""
    make = foreign_stores[kind]
    x = da.arange(60, chunks=7, dtype="i4").reshape(6, 10)
    zd.to_zarrx(x, make(tmp_path / "z.zarr"), chunks=(3, 5))
    x.rechunk((3, 5)).to_zarr(make(tmp_path / "d.zarr"))     # dask's needs aligned blocks
    ours = zd.from_zarrx(make(tmp_path / "z.zarr"))
    theirs = da.from_zarr(make(tmp_path / "d.zarr"))
    np.testing.assert_array_equal(ours.compute(), theirs.compute())
    np.testing.assert_array_equal(zd.from_zarrx(make(tmp_path / "d.zarr")).compute(),
                                  np.arange(60).reshape(6, 10))
    zd.to_zarrx(x + 1, make(tmp_path / "z.zarr"), mode="r+")
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "z.zarr", mode="r")[...],
                                  np.arange(60).reshape(6, 10) + 1)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_zarr_python_array_is_read_and_written_as_dask_takes_it(tmp_path, fmt):
    """``da.from_zarr`` and ``to_zarr`` take a ``zarr.Array``; so do ``from_zarrx`` and
    ``to_zarrx``, through zarrx at the array's path in its store."""
    zarr = pytest.importorskip("zarr")
    group = zarr.open_group(tmp_path / "z.zarr", mode="w", zarr_format=fmt)
    z = group.create_array("sub/a", shape=(6, 10), dtype="i4", chunks=(3, 5))
    x = da.from_array(np.arange(60, dtype="i4").reshape(6, 10), chunks=(3, 5))
    zd.to_zarr(x, z)
    np.testing.assert_array_equal(z[...], np.arange(60).reshape(6, 10))
    np.testing.assert_array_equal(zd.from_zarr(z).compute(), da.from_zarr(z).compute())
    zd.to_zarr(x[:2] * 0, z, region=(slice(2, 4),))
    expect = np.arange(60).reshape(6, 10)
    expect[2:4] = 0
    np.testing.assert_array_equal(zd.from_zarr(z, chunks=(2, 10)).compute(), expect)
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "from_zarrx: component= applies to a location, not to an Array")):
        zd.from_zarr(z, component="a")
    with pytest.raises(zarrx.ReadOnlyError):
        zd.to_zarr(x, zarr.open_array(tmp_path / "z.zarr", path="sub/a", mode="r"))


def test_a_dict_is_a_store_and_non_stores_are_refused():
    d: dict = {}
    zd.to_zarrx(da.arange(10, chunks=4), d, chunks=(5,))
    assert "zarr.json" in d
    np.testing.assert_array_equal(zd.from_zarrx(d).compute(), np.arange(10))
    x = da.arange(10, chunks=4)
    for call, where in ((lambda url: zd.from_zarrx(url), "from_zarrx"),
                        (lambda url: zd.to_zarrx(x, url), "to_zarrx")):
        for bad, found in ((None, "NoneType"), (3, "int"), (b"a.zarr", "bytes"),
                           (["a"], "list")):
            with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
                    f"{where}: expected a path, URL, store or zarrx.Array, found {found}")):
                call(bad)


def test_writes_into_two_memory_stores_holding_the_same_keys_both_land():
    """Two memory stores with equal contents are two stores: writes of one dask array into
    each, computed together, are two writes (they had one dask key, and one was dropped)."""
    a, b = (zarrx.create_array(MemoryStore(), shape=(20,), dtype="i4", chunks=(5,),
                               fill_value=0) for _ in range(2))
    x = da.arange(20, chunks=5, dtype="i4")
    wa, wb = zd.to_zarrx(x, a, compute=False), zd.to_zarrx(x, b, compute=False)
    assert wa.key != wb.key
    dask.compute(wa, wb, scheduler="threads")
    np.testing.assert_array_equal(a[...], np.arange(20))
    np.testing.assert_array_equal(b[...], np.arange(20))
    ra, rb = a.to_dask(), b.to_dask()
    assert ra.name != rb.name
    assert ra.name == a.to_dask().name          # the same store read twice: the same keys
    a[...] = 7
    np.testing.assert_array_equal(dask.compute(ra, rb)[0], np.full(20, 7))


def test_naming_an_in_memory_array_does_not_copy_its_data():
    """Building a graph over an array in memory copies none of its data (its store was
    pickled whole to name the graph's keys: twice the memory of the array, for a moment)."""
    copies = []

    class Watched(MemoryStore):
        def __getstate__(self):
            copies.append(len(self))
            return super().__getstate__()

    z = zarrx.create_array(Watched(), shape=(40, 40), dtype="f8", chunks=(10, 10))
    z[...] = 1
    x = zd.from_zarrx(z)
    write = zd.to_zarrx(x + 1, z, compute=False, return_stored=True)
    assert x.name == zd.from_zarrx(z).name
    assert copies == []
    np.testing.assert_array_equal(write.compute(scheduler="threads"), np.full((40, 40), 2.0))
    # plain dask names a zarrx array (da.from_array, da.store) the same way
    y = da.from_array(z, chunks=(20, 20))
    assert y.name == da.from_array(z, chunks=(20, 20)).name
    assert copies == []
    other = zarrx.create_array(MemoryStore(), shape=(40, 40), dtype="f8", chunks=(10, 10))
    other[...] = 1
    assert da.from_array(other, chunks=(20, 20)).name != y.name
    dask.compute(da.store(y * 3, z, lock=False, compute=False),
                 da.store(y * 3, other, lock=False, compute=False), scheduler="threads")
    assert float(z[...].sum()) == float(other[...].sum()) == 6.0 * 40 * 40


def test_dask_names_a_zarrx_array_on_disk_by_its_location_and_metadata(tmp_path):
    a = zarrx.create_array(tmp_path / "a.zarr", shape=(6,), dtype="i4", chunks=(3,))
    zarrx.create_array(tmp_path / "b.zarr", shape=(6,), dtype="i4", chunks=(3,))
    name = da.from_array(a).name
    assert da.from_array(zarrx.open_array(tmp_path / "a.zarr")).name == name
    assert da.from_array(zarrx.open_array(tmp_path / "b.zarr")).name != name
    a.resize((8,))
    assert da.from_array(a).name != name


def _both_formats(root):
    """A node holding a v3 array (4 int32, 3s) and a v2 array (6 float64, 2s) side by side."""
    zarrx.create_array(root / "v3.zarr", shape=(4,), dtype="i4", chunks=(2,), fill_value=3)
    zarrx.create_array(root / "v2.zarr", shape=(6,), dtype="f8", chunks=(2,), fill_value=2,
                       zarr_format=2)
    shutil.copy(root / "v2.zarr" / ".zarray", root / "v3.zarr" / ".zarray")
    return root / "v3.zarr"


def test_a_handle_opened_as_v2_reopens_as_v2_in_worker_processes(tmp_path):
    """A pickled handle keeps the format it was opened with (as zarr-python's does), so a
    worker process reads the array the graph was built from."""
    path = _both_formats(tmp_path)
    v2 = zarrx.open_array(path, mode="r", zarr_format=2)
    clone = pickle.loads(pickle.dumps(v2))
    assert (clone.zarr_format, clone.shape, clone.dtype) == (2, (6,), np.dtype("f8"))
    assert pickle.loads(pickle.dumps(zarrx.open_array(path, mode="r"))).shape == (4,)
    x = zd.from_zarrx(path, zarr_format=2, chunks=2)
    np.testing.assert_array_equal(x.compute(scheduler="processes", num_workers=2),
                                  np.full(6, 2.0))
    g = zarrx.open_group(tmp_path / "g.zarr", mode="w", zarr_format=2)
    zarrx.open_group(tmp_path / "g3.zarr", mode="w")
    shutil.copy(tmp_path / "g3.zarr" / "zarr.json", tmp_path / "g.zarr" / "zarr.json")
    g2 = zarrx.open_group(tmp_path / "g.zarr", mode="r", zarr_format=2)
    assert pickle.loads(pickle.dumps(g2)).zarr_format == 2
    assert pickle.loads(pickle.dumps(g)).zarr_format == 2


def test_zarr_python_memory_stores_behind_wrappers_are_refused_on_worker_processes():
    """A zarr-python MemoryStore inside a LoggingStore or WrapperStore, or a subclass of it,
    keeps its data in this process: a write from worker processes would go to copies (it did,
    and the array stayed empty without an error)."""
    zarr = pytest.importorskip("zarr")

    class Kept(zarr.storage.MemoryStore):
        pass

    x = da.ones(20, chunks=5, dtype="i4")
    for store in (zarr.storage.WrapperStore(zarr.storage.MemoryStore()),
                  zarr.storage.LoggingStore(zarr.storage.MemoryStore(), log_level="ERROR"),
                  Kept()):
        z = zarrx.create_array(store, shape=(20,), dtype="i4", chunks=(5,), fill_value=0)
        with pytest.raises(zarrx.ZarrError, match=re.escape(
                "to_zarrx(/): cannot store into an in-memory array (MemoryStore) using the "
                "processes scheduler")):
            with dask.config.set(scheduler="processes"):
                zd.to_zarrx(x, z)
        zd.to_zarrx(x, z)
        assert int(z[...].sum()) == 20
    write = zd.to_zarrx(x * 2, z, compute=False)      # the scheduler is chosen later
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "to_zarrx(/): cannot store into an in-memory array (MemoryStore) using the "
            "distributed or process scheduler")):
        write.compute(scheduler="processes", num_workers=2)
    assert int(z[...].sum()) == 20


def test_storage_options_are_ignored_for_local_paths_as_dask_does(tmp_path):
    """One call serves a local path and a URL: dask ignores ``storage_options`` for a path."""
    options = {"auto_mkdir": True}
    x = da.arange(12, chunks=5)
    x.to_zarr(str(tmp_path / "d.zarr"), storage_options=options)
    zd.to_zarrx(x, str(tmp_path / "z.zarr"), storage_options=options, chunks=(4,))
    zd.to_zarrx(x + 1, tmp_path / "z.zarr", storage_options=options, mode="r+")
    for path in ("d.zarr", "z.zarr"):
        np.testing.assert_array_equal(
            zd.from_zarrx(str(tmp_path / path), storage_options=options).compute(),
            da.from_zarr(str(tmp_path / path), storage_options=options).compute())
    np.testing.assert_array_equal(zd.from_zarrx(tmp_path / "z.zarr").compute(),
                                  np.arange(12) + 1)


@pytest.mark.parametrize("compute", [True, False])
def test_a_zip_archive_path_is_in_place_once_written(tmp_path, compute):
    """``to_zarrx(x, "out.zip", compute=False)``: once the Delayed has run, the archive is
    there to open (it was put in place only when the Delayed was dropped)."""
    path = tmp_path / "out.zip"
    write = zd.to_zarrx(da.arange(20, chunks=6), str(path), chunks=(5,), compute=compute)
    if not compute:
        assert not path.exists()
        dask.compute(write, scheduler="threads")
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], np.arange(20))
    np.testing.assert_array_equal(zd.from_zarrx(str(path)).compute(), np.arange(20))
    assert [p.name for p in tmp_path.iterdir()] == ["out.zip"]


def test_shards_without_chunks_take_the_block_shape_as_chunks(tmp_path):
    """``to_zarr(x, url, shards=...)`` makes the chunks ``x``'s block shape, as dask's does
    (it sets the chunks from the blocks whatever else is given); zarrx left them to
    ``create_array``'s default, which the shards could not hold."""
    zarr = pytest.importorskip("zarr")
    x = da.arange(3600, chunks=180, dtype="i4").reshape(60, 60).rechunk((3, 3))
    x.to_zarr(str(tmp_path / "d.zarr"), shards=(18, 18))
    zd.to_zarrx(x, str(tmp_path / "z.zarr"), shards=(18, 18))
    theirs = zarr.open_array(str(tmp_path / "d.zarr"), mode="r")
    ours = zarrx.open_array(str(tmp_path / "z.zarr"), mode="r")
    assert (ours.chunks, ours.shards) == (theirs.chunks, theirs.shards) == ((3, 3), (18, 18))
    assert np.array_equal(ours[...], x.compute())


@pytest.mark.parametrize("url", ["memory://zarrx-dask-read-obstore", "memory://zarrx-dask-read-fsspec"])
def test_memory_url_reads_are_refused_in_worker_processes(url):
    """A ``memory://`` store reopened in another process is that process's own, empty one: its
    blocks read as the fill value there (with dask and zarr-python too, without an error)."""
    from zarrx.store.remote import FsspecStore, ObjectStore
    kind = ObjectStore if "obstore" in url else FsspecStore
    pytest.importorskip("obstore" if kind is ObjectStore else "fsspec")
    z = zarrx.create_array(kind(url), shape=(20, 20), dtype="i4", chunks=(10, 10),
                           fill_value=0, overwrite=True)
    z[...] = 7
    x = zd.from_zarrx(z)
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "from_zarrx(/): cannot read an in-memory array (memory://) in another process")):
        x.sum().compute(scheduler="processes", num_workers=2)
    assert int(pickle.loads(pickle.dumps(x)).sum().compute(scheduler="threads")) == 2800
