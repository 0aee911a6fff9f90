"""Dask reads and writes through zarrx: block layout, values, graph size, shard-aligned writes.

Every value read or written is compared with numpy; stored objects are counted to show that no
two tasks write one shard.
"""
from __future__ import annotations

import io
import pickle
import re
from contextlib import redirect_stdout

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from dask.delayed import Delayed  # noqa: E402
from dask.diagnostics import Callback, ProgressBar  # noqa: E402

import zarrx  # noqa: E402
import zarrx.dask as zd  # noqa: E402
from zarrx.dask.chunks import aligned_chunks, default_chunks, object_edges  # noqa: E402
from zarrx.store import CountingStore, LocalStore, MemoryStore  # noqa: E402

MiB = 2**20


def data(shape, dtype="f4", seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random(shape) * 1000).astype(dtype)


def sharded(store, shape=(200, 150), chunks=(10, 15), shards=(40, 30), dtype="f4", **kw):
    return zarrx.create_array(store, shape=shape, dtype=dtype, chunks=chunks, shards=shards,
                              fill_value=-1, **kw)


def boundaries(sizes):
    return np.cumsum((0,) + tuple(sizes)).tolist()


# -- reads ------------------------------------------------------------------------------------

def test_default_blocks_are_whole_shards_merged_up_to_128_mib():
    """A 40 GB array (nothing written): every block is a group of whole shards, <= 128 MiB,
    and merging stops only where the next doubling would exceed the target."""
    z = sharded(MemoryStore(), shape=(100_000, 100_000), chunks=(100, 100), shards=(1000, 1000))
    x = z.to_dask()
    assert x.dtype == np.float32 and x.shape == z.shape
    for sizes in x.chunks:
        assert all(b % 1000 == 0 for b in boundaries(sizes))
    block = [max(c) for c in x.chunks]
    assert np.prod(block) * 4 <= 128 * MiB
    assert np.prod(block) * 4 * 2 > 128 * MiB / 2        # not needlessly small
    assert block == [4000, 8000]                          # 122 MiB, square-ish


def test_default_blocks_follow_chunks_when_unsharded_and_cover_small_arrays_whole():
    z = zarrx.create_array(MemoryStore(), shape=(1000, 999), dtype="i2", chunks=(7, 100))
    assert z.to_dask().chunks == ((1000,), (999,))
    big = zarrx.create_array(MemoryStore(), shape=(10**6, 300), dtype="f8", chunks=(3000, 7))
    x = big.to_dask()
    assert all(b % 3000 == 0 or b == 10**6 for b in boundaries(x.chunks[0]))
    assert all(b % 7 == 0 or b == 300 for b in boundaries(x.chunks[1]))
    assert max(x.chunks[0]) * max(x.chunks[1]) * 8 <= 128 * MiB


def test_default_chunks_of_a_smaller_target_and_a_rectilinear_grid():
    z = sharded(MemoryStore())
    assert default_chunks(z.metadata, target=40 * 30 * 4) == ((40,) * 5, (30,) * 5)
    assert default_chunks(z.metadata, target=80 * 60 * 4) == ((80, 80, 40), (60, 60, 30))
    store = MemoryStore()
    store.set("zarr.json", b'{"zarr_format": 3, "node_type": "array", "shape": [10, 4], '
              b'"data_type": "int32", "chunk_grid": {"name": "rectilinear", "configuration": '
              b'{"kind": "inline", "chunk_shapes": [[2, 3, 5], [4]]}}, "chunk_key_encoding": '
              b'{"name": "default"}, "fill_value": 0, "codecs": [{"name": "bytes", '
              b'"configuration": {"endian": "little"}}]}')
    r = zarrx.open_array(store)
    r[...] = np.arange(40, dtype="i4").reshape(10, 4)
    assert object_edges(r.metadata) == [[0, 2, 5, 10], [0, 4]]
    assert default_chunks(r.metadata, target=16) == ((2, 3, 5), (4,))
    np.testing.assert_array_equal(zd.from_zarrx(r).compute(), np.arange(40).reshape(10, 4))


@pytest.mark.parametrize("scheduler", ["sync", "threads", "processes"])
def test_from_zarrx_reads_every_value(tmp_path, scheduler):
    a = data((200, 150))
    sharded(LocalStore(tmp_path / "a.zarr"))[...] = a
    x = zd.from_zarrx(str(tmp_path / "a.zarr"), chunks=(64, 70))   # not aligned: still exact
    assert x.chunks == ((64, 64, 64, 8), (70, 70, 10))
    whole, part, total = dask.compute(x, x[13:77, ::7], x.sum(dtype="f8"), scheduler=scheduler)
    np.testing.assert_array_equal(whole, a)
    np.testing.assert_array_equal(part, a[13:77, ::7])
    assert float(total) == pytest.approx(float(a.sum(dtype="f8")), rel=1e-9)



def test_a_slice_of_a_block_reads_only_the_chunks_it_covers():
    """Slicing a dask array read from zarrx is folded into the block's read, as
    ``dask.array.from_zarr`` folds it: a few elements of a one-block array read the chunks
    (and shard indexes) they lie in, not the 1,200 chunks of the block."""
    counted = CountingStore(MemoryStore())
    z = sharded(counted)
    a = data(z.shape)
    z[...] = a
    for x in (zd.from_zarrx(z), z.to_dask(), zd.from_zarrx(z, inline_array=True)):
        assert x.numblocks == (1, 1)
        counted.reset()
        np.testing.assert_array_equal(x[3:7, 5:9].compute(), a[3:7, 5:9])
        assert counted.counts["get"] <= 2                 # chunk (0, 0) and its shard's index
        counted.reset()
        np.testing.assert_array_equal(x[::50, 16:31].compute(), a[::50, 16:31])
        assert counted.counts["get"] <= 16                # 8 chunks in 8 shards


def test_from_zarrx_of_groups_v2_and_stores(tmp_path):
    g = zarrx.open_group(tmp_path / "g.zarr", mode="w", zarr_format=2)
    arr = g.create_array("temp/t", shape=(30, 20), dtype="<i8", chunks=(7, 6), fill_value=0)
    a = np.arange(600, dtype="i8").reshape(30, 20)
    arr[...] = a
    x = zd.from_zarrx(tmp_path / "g.zarr", component="temp/t")
    assert x.chunks == ((30,), (20,))
    np.testing.assert_array_equal(x.compute(), a)
    np.testing.assert_array_equal(zd.from_zarr(LocalStore(tmp_path / "g.zarr"),
                                               component="temp/t", chunks=5).compute(), a)


def test_graph_pickles_as_a_store_spec_a_path_and_metadata(tmp_path):
    """Each task is a getter over the array key and slices; the array key pickles as the
    store's root, the array path and its metadata: no data (the array holds 4 MiB)."""
    import cloudpickle

    a = data((1024, 1024))
    sharded(LocalStore(tmp_path / "a.zarr"), shape=a.shape, chunks=(64, 64),
            shards=(256, 256))[...] = a
    x = zd.from_zarrx(str(tmp_path / "a.zarr"))
    y = zd.from_zarrx(str(tmp_path / "a.zarr"), chunks=(256, 256))
    for arr in (x, y):
        graph = dict(arr.__dask_graph__())
        assert len(graph) == arr.npartitions + 1
        sizes = {k: len(cloudpickle.dumps(v)) for k, v in graph.items()}
        assert max(n for k, n in sizes.items() if not isinstance(k, str)) < 1024, sizes
        [key] = [k for k in graph if isinstance(k, str)]          # the array, once
        assert sizes[key] < 4096, sizes
        blob = cloudpickle.dumps(graph[key])
        assert str(tmp_path).encode() in blob and b"a.zarr" in blob
        clone = pickle.loads(blob)
        clone = getattr(clone, "value", clone)          # a bare value or a DataNode
        np.testing.assert_array_equal(clone[5:9, 100:104], a[5:9, 100:104])
    assert x.name == zd.from_zarrx(str(tmp_path / "a.zarr")).name      # deterministic
    assert x.name != y.name


def test_memory_store_arrays_get_their_own_names():
    """Two memory stores with the same keys are different data: different dask names."""
    a, b = sharded(MemoryStore()), sharded(MemoryStore())
    a[...] = 1
    b[...] = 2
    x, y = a.to_dask(), b.to_dask()
    assert x.name != y.name
    assert float((x - y).sum().compute()) == -200 * 150


def test_dask_from_array_reads_a_zarrx_array():
    z = sharded(MemoryStore())
    a = data(z.shape)
    z[...] = a
    np.testing.assert_array_equal(da.from_array(z, chunks=(40, 30)).compute(), a)


# -- writes -----------------------------------------------------------------------------------

def shard_sets(store):
    return {k: n for k, n in store.sets_by_key.items() if "/c/" in k or k.startswith("c/")}


def test_to_zarrx_regroups_misaligned_blocks_so_each_shard_is_written_once():
    counted = CountingStore(MemoryStore())
    z = sharded(counted)
    a = data(z.shape)
    x = da.from_array(a, chunks=(33, 47))                 # no boundary on a shard edge
    counted.reset()
    with dask.config.set(scheduler="threads", num_workers=4):
        zd.to_zarrx(x, z)
    sets = shard_sets(counted)
    assert len(sets) == 25 and set(sets.values()) == {1}
    assert counted.counts["get"] == 0                     # aligned: nothing read back
    np.testing.assert_array_equal(z[...], a)


def test_aligned_chunks_move_boundaries_to_the_nearest_object_edge():
    edges = [list(range(0, 201, 40))]
    assert aligned_chunks(((33,) * 6 + (2,),), edges, (0,)) == ((40, 40, 40, 40, 40),)
    assert aligned_chunks(((100, 100),), edges, (0,)) == ((80, 120),)
    # a region starting at 5: the first block ends on the first shard edge
    assert aligned_chunks(((60, 60),), edges, (5,)) == ((75, 45),)


def test_to_zarrx_into_an_unaligned_region_keeps_the_rest(tmp_path):
    z = sharded(LocalStore(tmp_path / "a.zarr"))
    before = data(z.shape, seed=1)
    z[...] = before
    a = data((123, 101), seed=2)
    x = da.from_array(a, chunks=(50, 50))
    zd.to_zarrx(x, z, region=(slice(7, 130), slice(33, 134)))
    expect = before.copy()
    expect[7:130, 33:134] = a
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "a.zarr", mode="r")[...], expect)


def test_to_zarrx_creates_the_array_from_the_dask_array(tmp_path):
    a = data((90, 70), dtype="i4")
    x = da.from_array(a, chunks=(30, 35))
    assert zd.to_zarrx(x, str(tmp_path / "new.zarr"), component="v", zarr_format=2,
                       compressors={"id": "zlib", "level": 1}) is None
    z = zarrx.open_array(tmp_path / "new.zarr", path="v", mode="r")
    assert (z.zarr_format, z.chunks, z.dtype, z.shape) == (2, (30, 35), np.dtype("i4"), a.shape)
    np.testing.assert_array_equal(z[...], a)
    # sharded, with misaligned blocks
    zd.to_zarrx(x, tmp_path / "s.zarr", chunks=(10, 10), shards=(20, 20), dimension_names=("y", "x"))
    s = zarrx.open_array(tmp_path / "s.zarr", mode="r")
    assert (s.shards, s.dimension_names) == ((20, 20), ("y", "x"))
    np.testing.assert_array_equal(s[...], a)
    with pytest.raises(zarrx.NodeExistsError):
        zd.to_zarrx(x, tmp_path / "s.zarr", chunks=(10, 10))
    zd.to_zarrx(x + 1, tmp_path / "s.zarr", mode="w", chunks=(45, 35))
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "s.zarr", mode="r")[...], a + 1)
    zd.to_zarrx(x * 0 + 5, tmp_path / "s.zarr", mode="r+")
    assert (zarrx.open_array(tmp_path / "s.zarr", mode="r")[...] == 5).all()


def test_to_zarrx_with_compute_false_returns_a_delayed_that_writes(tmp_path):
    z = sharded(LocalStore(tmp_path / "a.zarr"))
    a = data(z.shape)
    d = zd.to_zarrx(da.from_array(a, chunks=(40, 75)), z, compute=False)
    assert isinstance(d, Delayed)
    assert z.nchunks_initialized == 0                     # nothing written yet
    started = []

    class Count(Callback):
        def _start_state(self, dsk, state):
            started.append(len(state["ready"]) + len(state["waiting"]))

    out = io.StringIO()
    with Count(), ProgressBar(out=out), redirect_stdout(out):
        d.compute(scheduler="threads")
    np.testing.assert_array_equal(z[...], a)
    assert started and started[0] >= 10                  # 10 blocks, their reads and writes
    assert re.search(r"\[#+\] \| 100% Completed", out.getvalue())


def test_to_zarrx_return_stored(tmp_path):
    a = data((80, 60))
    x = da.from_array(a, chunks=(40, 30))
    stored = zd.to_zarrx(x, tmp_path / "a.zarr", return_stored=True, compute=False)
    assert not (tmp_path / "a.zarr" / "c").exists()
    np.testing.assert_array_equal(stored.compute(), a)
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "a.zarr")[...], a)


@pytest.mark.parametrize("codec", ["raw", "zstd"])
def test_plain_dask_store_without_a_lock_on_shard_aligned_blocks(tmp_path, codec):
    z = sharded(LocalStore(tmp_path / "a.zarr"),
                compressors=None if codec == "raw" else zarrx.codecs.Zstd(level=1))
    a = data(z.shape)
    x = da.from_array(a, chunks=(80, 60))                 # two shards per block on each axis
    da.store(x, z, lock=False, scheduler="threads", num_workers=4)
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "a.zarr", mode="r")[...], a)
    da.store(x[:40] + 1, z, regions=(slice(0, 40),), lock=False, scheduler="threads")
    a[:40] += 1
    np.testing.assert_array_equal(zarrx.open_array(tmp_path / "a.zarr", mode="r")[...], a)


def test_write_errors_name_the_problem(tmp_path):
    z = sharded(MemoryStore())
    x = da.zeros((10, 10), chunks=5)
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "to_zarrx(/): the dask array's shape (10, 10) does not match the region's shape "
            "(200, 150)")):
        zd.to_zarrx(x, z)
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "to_zarrx(/): region[0]: expected a slice with a positive step, found "
            "slice(19, None, -2)")):
        zd.to_zarrx(x, z, region=(slice(19, None, -2), slice(0, 10)))
    with pytest.raises(zarrx.ZarrError, match="expected a dask array, found ndarray"):
        zd.to_zarrx(np.zeros(3), z)
    with pytest.raises(zarrx.ZarrError, match="takes no creation arguments, found \\['chunks'\\]"):
        zd.to_zarrx(x, tmp_path / "n.zarr", mode="r+", chunks=(5, 5))
    ro = zarrx.open_array(z.store, mode="r")
    with pytest.raises(zarrx.ZarrError, match="open read-only"):
        zd.to_zarrx(da.zeros(z.shape), ro)


def test_memory_store_writes_are_refused_on_worker_processes():
    """A worker process would write into a pickled copy of the store: the data would be lost."""
    x = da.ones((20, 20), chunks=10, dtype="i4")
    z = zarrx.create_array(MemoryStore(), shape=(20, 20), dtype="i4", chunks=(10, 10),
                           fill_value=0)
    refusal = re.escape("to_zarrx(/): cannot store into an in-memory array (MemoryStore) using "
                        "the processes scheduler")
    with pytest.raises(zarrx.ZarrError, match=refusal):
        with dask.config.set(scheduler="processes"):
            zd.to_zarrx(x, z)
    write = zd.to_zarrx(x, z, compute=False)             # the scheduler is chosen later
    with pytest.raises(zarrx.ZarrError, match=re.escape(
            "cannot store into an in-memory array (MemoryStore) using the distributed or "
            "process scheduler")):
        write.compute(scheduler="processes", num_workers=2)
    assert int(z[...].sum()) == 0
    write.compute(scheduler="threads")
    assert int(z[...].sum()) == 400


@pytest.mark.parametrize("url", ["memory://zarrx-dask-obstore", "memory://zarrx-dask-fsspec"])
def test_memory_url_writes_are_refused_on_worker_processes(url):
    """obstore's and fsspec's ``memory://`` live in one process, as a MemoryStore does."""
    from zarrx.store.remote import FsspecStore, ObjectStore
    kind = ObjectStore if "obstore" in url else FsspecStore
    pytest.importorskip("obstore" if kind is ObjectStore else "fsspec")
    z = zarrx.create_array(kind(url), shape=(20, 20), dtype="i4", chunks=(10, 10),
                           fill_value=0, overwrite=True)
    with pytest.raises(zarrx.ZarrError, match="cannot store into an in-memory array"):
        with dask.config.set(scheduler="processes"):
            zd.to_zarrx(da.ones((20, 20), chunks=10, dtype="i4"), z)
    assert int(z[...].sum()) == 0


def test_to_zarrx_takes_overwrite_as_dask_to_zarr_does(tmp_path):
    x = da.arange(20, chunks=6)
    for write in (lambda p, **kw: x.to_zarr(str(p), **kw),          # dask and zarr-python
                  lambda p, **kw: zd.to_zarrx(x, p, **kw)):
        path = tmp_path / f"{len(list(tmp_path.iterdir()))}.zarr"
        write(path, overwrite=True)
        write(path, overwrite=True)                                 # replaces it
        np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], np.arange(20))
    with pytest.raises(zarrx.NodeExistsError):
        zd.to_zarrx(x, path, overwrite=False)
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            "to_zarrx: overwrite: expected True or False, found 'yes'")):
        zd.to_zarrx(x, tmp_path / "n.zarr", overwrite="yes")
    with pytest.raises(zarrx.ZarrError, match=re.escape("chunks=0: ")):
        zd.from_zarrx(path, chunks=0)


def test_to_zarrx_takes_the_array_path_as_component_or_name(tmp_path):
    x = da.arange(20, chunks=6)
    with pytest.raises(ValueError, match="Cannot specify both 'component' and 'name'"):
        x.to_zarr(str(tmp_path / "d.zarr"), component="a", name="b")    # dask refuses it too
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "to_zarrx: component='a' and name='b' both give the array's path; pass only one")):
        zd.to_zarrx(x, tmp_path / "z.zarr", component="a", name="b")
    assert not (tmp_path / "z.zarr").exists()
    zd.to_zarrx(x, tmp_path / "z.zarr", name="b")
    np.testing.assert_array_equal(zd.from_zarrx(tmp_path / "z.zarr", component="b"),
                                  np.arange(20))


def test_bad_arguments_raise_the_builtin_dask_raises(tmp_path):
    """dask.array.to_zarr raises ValueError for a bad mode, unknown chunk sizes or a region that
    does not fit; zarrx's refusals are also ValueErrors (TypeErrors for the wrong kind)."""
    x = da.arange(20, chunks=6)
    z = zarrx.create_array(tmp_path / "z.zarr", shape=(20,), dtype="i8", chunks=(5,))
    unknown = x[x > 3]
    for call, dask_call in (
            (lambda: zd.to_zarrx(x, tmp_path / "m.zarr", mode="r"),
             lambda: x.to_zarr(str(tmp_path / "d.zarr"), mode="r")),
            (lambda: zd.to_zarrx(unknown, tmp_path / "u.zarr"),
             lambda: unknown.to_zarr(str(tmp_path / "d.zarr"))),
            (lambda: zd.to_zarrx(x[:5], z, region=(slice(0, 4),)), None),
            (lambda: zd.to_zarrx(x, z, region=(slice(0, 20, 2),)), None),
            (lambda: zd.to_zarrx(x, zarrx.open_array(tmp_path / "z.zarr", mode="r")), None)):
        if dask_call is not None:
            with pytest.raises(ValueError):
                dask_call()
        with pytest.raises(ValueError) as info:
            call()
        assert isinstance(info.value, zarrx.ZarrError)
    with pytest.raises(ValueError):
        da.from_zarr(str(tmp_path / "z.zarr"), chunks=((3, 6),))
    with pytest.raises(zarrx.ArgumentError, match=re.escape(
            "from_zarrx: chunks=((3, 6),): axis 0: block sizes (3, 6) add up to 9, but the axis "
            "has 20 elements")):
        zd.from_zarrx(z, chunks=((3, 6),))
    for call in (lambda: zd.to_zarrx(np.arange(3), z), lambda: zd.to_zarrx(x, 3),
                 lambda: zd.from_zarrx(3)):
        with pytest.raises(TypeError) as info:
            call()
        assert isinstance(info.value, zarrx.ArgumentTypeError)


@pytest.mark.parametrize("compute", [True, False])
def test_to_zarrx_return_stored_into_a_region_reads_the_region(tmp_path, compute):
    """As dask.array.to_zarr: the stored values, in the shape of the array written."""
    x = da.arange(6, chunks=2).astype("f8")
    theirs = pytest.importorskip("zarr").create_array(tmp_path / "d.zarr", shape=(10,),
                                                      dtype="f8", chunks=(2,), fill_value=-1)
    z = zarrx.create_array(tmp_path / "z.zarr", shape=(10,), dtype="f8", chunks=(2,),
                           fill_value=-1)
    ref = x.to_zarr(theirs, region=(slice(2, 8),), return_stored=True, compute=compute)
    stored = zd.to_zarrx(x, z, region=(slice(2, 8),), return_stored=True, compute=compute)
    assert stored.shape == ref.shape == (6,) and stored.chunks == x.chunks
    np.testing.assert_array_equal(stored.compute(), ref.compute())
    np.testing.assert_array_equal(z[...], [-1, -1, 0, 1, 2, 3, 4, 5, -1, -1])


WHOLE = "a block size of at least 1, -1 or None (the whole axis), 'auto' or a byte size"


@pytest.mark.parametrize("chunks, error, message", [
    ((0, 5), zarrx.ArgumentError, f"axis 0: expected {WHOLE}, found 0"),
    (0, zarrx.ArgumentError, f"axis 0: expected {WHOLE}, found 0"),
    ({1: 0}, zarrx.ArgumentError, f"axis 1: expected {WHOLE}, found 0"),
    ((5, -2), zarrx.ArgumentError, f"axis 1: expected {WHOLE}, found -2"),
    (-3, zarrx.ArgumentError, f"axis 0: expected {WHOLE}, found -3"),
    ((5,), zarrx.ArgumentError,
     "expected 2 entries, one per axis of the array of shape (10, 20), found 1"),
    ((5, 5, 5), zarrx.ArgumentError,
     "expected 2 entries, one per axis of the array of shape (10, 20), found 3"),
    ((2.5, 5), zarrx.ArgumentTypeError,
     f"axis 0: expected {WHOLE}, or a tuple of block sizes, found float 2.5"),
    ((5, True), zarrx.ArgumentTypeError,
     f"axis 1: expected {WHOLE}, or a tuple of block sizes, found bool True"),
    (((5, 5), (10, -1)), zarrx.ArgumentError,
     "axis 1: expected block sizes of at least 0, found (10, -1)"),
    (((4, 4), (20,)), zarrx.ArgumentError,
     "axis 0: block sizes (4, 4) add up to 8, but the axis has 10 elements"),
    ({2: 5}, zarrx.ArgumentError, "names axis 2, but the array of shape (10, 20) has axes 0 to 1"),
    ({-1: 5}, zarrx.ArgumentError,
     "names axis -1, but the array of shape (10, 20) has axes 0 to 1"),
    ("nonsense", zarrx.ArgumentError,
     "expected 'auto' or a byte size such as '100MiB', found 'nonsense'"),
    (("x", 5), zarrx.ArgumentError,
     "axis 0: expected 'auto' or a byte size such as '100MiB', found 'x'"),
    (2.0, zarrx.ArgumentTypeError, "expected an int, a tuple of one entry per axis, a dict of "
                                   "axis -> entry, 'auto' or a byte size such as '100MiB', found "
                                   "float"),
])
def test_invalid_chunks_are_refused_with_a_message_naming_them(tmp_path, chunks, error, message):
    # chunks=(0, 5) gave dask's "integer division or modulo by zero", -3 a raw ValueError, and
    # a dict naming a missing axis was ignored
    path = tmp_path / "z.zarr"
    z = zarrx.create_array(path, shape=(10, 20), dtype="i4", chunks=(5, 5))
    for call, where in ((lambda: zd.from_zarr(path, chunks=chunks), "from_zarrx"),
                        (lambda: z.to_dask(chunks), "to_dask")):
        with pytest.raises(error) as info:
            call()
        assert str(info.value) == f"{where}: chunks={chunks!r}: {message}"
    for fine in ((-1, 5), (None, 5), {0: 5}, ((0, 10), (20,)), "auto", "1KiB", 5, ("auto", 5),
                 ("40B", 5)):
        assert zd.from_zarr(path, chunks=fine).compute().shape == (10, 20)
