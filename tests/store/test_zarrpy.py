"""zarr-python stores passed to zarrx: the store contract through ZarrPythonStore, and arrays
written by one library and read by the other through the same store object."""
from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest
from store_contract import StoreContract

import zarrx
from zarrx.errors import ReadOnlyError, StoreError
from zarrx.store import LocalStore, make_store
from zarrx.store.locks import object_lock
from zarrx.store.zarrpy import ZarrPythonStore, is_zarr_store

zarr = pytest.importorskip("zarr")
fsspec = pytest.importorskip("fsspec")


class TestZarrMemoryStore(StoreContract):
    snapshot_pins_version = True     # generations digest the whole object: a snapshot holds it

    def make_store(self, tmp_path):
        return ZarrPythonStore(zarr.storage.MemoryStore())

    def reopen_read_only(self, store, tmp_path):
        return ZarrPythonStore(store.store.with_read_only(True))


class TestZarrZipStore(StoreContract):
    supports_delete = False        # zarr-python's ZipStore cannot delete
    supports_overwrite = False     # ... nor replace an entry

    def make_store(self, tmp_path):
        return ZarrPythonStore(zarr.storage.ZipStore(tmp_path / "a.zip", mode="w"))

    def reopen_read_only(self, store, tmp_path):
        store.close()
        return ZarrPythonStore(zarr.storage.ZipStore(tmp_path / "a.zip", mode="r"))


def _data(shape=(40, 30)):
    return np.arange(np.prod(shape), dtype="<f8").reshape(shape) / 7


def _stores(tmp_path):
    return {
        "memory": zarr.storage.MemoryStore(),
        "logging-memory": zarr.storage.LoggingStore(zarr.storage.MemoryStore()),
        "local": zarr.storage.LocalStore(tmp_path / "local"),
    }


@pytest.mark.parametrize("kind", ["memory", "logging-memory", "local"])
@pytest.mark.parametrize("shards", [None, (20, 10)], ids=["plain", "sharded"])
def test_zarrx_writes_zarr_reads(tmp_path, kind, shards):
    zs = _stores(tmp_path)[kind]
    a = _data()
    z = zarrx.create_array(zs, shape=a.shape, chunks=(10, 5), shards=shards, dtype=a.dtype,
                           compressors=[{"name": "zstd", "configuration": {"level": 1}}])
    z[...] = a
    z[3:7, 2:29] = -1.0
    a[3:7, 2:29] = -1.0
    assert np.array_equal(zarr.open_array(zs, mode="r")[...], a)
    assert np.array_equal(zarrx.open_array(zs, mode="r")[...], a)


@pytest.mark.parametrize("kind", ["memory", "logging-memory", "local"])
def test_zarr_writes_zarrx_reads(tmp_path, kind):
    zs = _stores(tmp_path)[kind]
    a = _data()
    g = zarr.open_group(zs, mode="w")
    g.create_array("x", shape=a.shape, chunks=(10, 10), shards=(20, 20), dtype=a.dtype)[...] = a
    g.attrs["title"] = "t"
    zarr.consolidate_metadata(zs)
    got = zarrx.open_group(zs, mode="r")
    assert got.attrs["title"] == "t"
    assert np.array_equal(got["x"][...], a)
    assert np.array_equal(zarrx.open_consolidated(zs)["x"][20:, 5:], a[20:, 5:])


def test_local_store_becomes_a_zarrx_local_store(tmp_path):
    st = make_store(zarr.storage.LocalStore(tmp_path), "a")
    assert isinstance(st, LocalStore) and not st.read_only
    ro = make_store(zarr.storage.LocalStore(tmp_path, read_only=True), "r")
    assert isinstance(ro, LocalStore) and ro.read_only
    with pytest.raises(ReadOnlyError):
        make_store(zarr.storage.LocalStore(tmp_path, read_only=True), "w")


def test_read_only_store_refuses_writes():
    ms = zarr.storage.MemoryStore()
    zarrx.create_array(ms, shape=(4,), chunks=(2,), dtype="i4")[...] = [1, 2, 3, 4]
    ro = make_store(ms.with_read_only(True), "r")
    assert isinstance(ro, ZarrPythonStore) and ro.read_only
    with pytest.raises(ReadOnlyError) as info:
        ro.set("k", b"v")
    assert str(info.value) == f"{ro!r}: cannot write 'k': the store is read-only"
    assert list(zarrx.open_array(ms.with_read_only(True), mode="r")[...]) == [1, 2, 3, 4]


def test_failures_name_the_key():
    class Broken(zarr.storage.MemoryStore):
        async def get(self, key, prototype, byte_range=None):
            raise OSError("disk on fire")
    st = ZarrPythonStore(Broken())
    with pytest.raises(StoreError) as info:
        st.get("a/zarr.json")
    assert str(info.value) == f"{st!r}: get 'a/zarr.json': OSError: disk on fire"


def test_backend_errors_of_any_type_are_store_errors_without_credentials():
    """A zarr-python store's backend raises its own exception types (aiohttp's, botocore's):
    each becomes a StoreError, and URL credentials never reach the message or the repr."""
    class BackendError(Exception):
        pass

    class Remote(zarr.storage.MemoryStore):
        def __repr__(self):
            return "Remote('http://user:PASSW0RD@host/d.zarr')"

        async def get(self, key, prototype, byte_range=None):
            raise BackendError("500, message='oops', url='http://user:PASSW0RD@host/d.zarr/k'")
    st = ZarrPythonStore(Remote())
    assert repr(st) == "ZarrPythonStore(Remote('http://host/d.zarr'))"
    with pytest.raises(StoreError) as info:
        zarrx.open_array(st, mode="r")
    assert "PASSW0RD" not in str(info.value)
    assert str(info.value).startswith(
        "ZarrPythonStore(Remote('http://host/d.zarr')): get ")
    assert "BackendError: 500, message='oops', url='http://host/d.zarr/k'" in str(info.value)


def test_pickle_carries_the_wrapped_store(tmp_path):
    zs = zarr.storage.ZipStore(tmp_path / "p.zip", mode="w")
    st = ZarrPythonStore(zs, read_only=False)
    st.set("k", b"value")
    st.close()
    back = pickle.loads(pickle.dumps(ZarrPythonStore(
        zarr.storage.ZipStore(tmp_path / "p.zip", mode="r"), read_only=True)))
    assert back.read_only and back.get("k") == b"value"


def test_only_zarr_stores_are_wrapped():
    assert is_zarr_store(zarr.storage.MemoryStore())
    assert not is_zarr_store({})
    assert not is_zarr_store(fsspec.filesystem("memory"))
    with pytest.raises(StoreError) as info:
        ZarrPythonStore({})
    assert str(info.value) == "ZarrPythonStore: expected a zarr-python store, found dict"


@pytest.mark.parametrize("shards", [None, (20, 10)], ids=["plain", "sharded"])
def test_fsspec_mapper_is_writable(shards):
    fs = fsspec.filesystem("memory")
    mapper = fs.get_mapper("/zarrx-mapper-write")
    a = _data()
    z = zarrx.create_array(mapper, shape=a.shape, chunks=(10, 5), shards=shards, dtype=a.dtype)
    z[...] = a
    via_zarr = zarr.open_array(zarr.storage.FsspecStore.from_mapper(mapper), mode="r")
    assert np.array_equal(via_zarr[...], a)
    fs.rm("/zarrx-mapper-write", recursive=True)


def test_zarr_python_fsspec_store_of_a_synchronous_filesystem():
    """zarr-python wraps a synchronous filesystem (memory://) in fsspec's
    AsyncFileSystemWrapper; zarrx uses the filesystem inside it."""
    store = zarr.storage.FsspecStore.from_url("memory://zarrx-wrapped/x")
    z = zarrx.create_array(store, name="q", shape=(4,), chunks=(2,), dtype="i4")
    z[...] = [1, 2, 3, 4]
    again = zarr.storage.FsspecStore.from_url("memory://zarrx-wrapped/x", read_only=True)
    assert zarr.open_array(again, path="q", mode="r")[...].tolist() == [1, 2, 3, 4]
    assert zarrx.open_group(store, mode="r")["q"][...].tolist() == [1, 2, 3, 4]
    fsspec.filesystem("memory").rm("/zarrx-wrapped", recursive=True)


def test_stores_over_one_dict_share_their_object_locks():
    # zarr-python's with_read_only makes a memory store over the same dict, and a wrapper
    # (LoggingStore, WrapperStore) stores in its inner store: zarrx takes each for the same
    # objects, so partial writes of one chunk through two of them take turns
    mem = zarr.storage.MemoryStore()
    same = [mem, mem.with_read_only(False), zarr.storage.WrapperStore(mem)]
    names = {object_lock(ZarrPythonStore(s), "a/c/0")._name for s in same}
    assert len(names) == 1          # before: one lock per store object
    other = ZarrPythonStore(zarr.storage.MemoryStore())
    assert object_lock(other, "a/c/0")._name not in names
    z = zarrx.create_array(mem, shape=(64,), chunks=(64,), dtype="i4", fill_value=0,
                           compressors=None)
    for _ in range(5):
        z[:] = 0
        handles = [zarrx.open_array(s, mode="r+") for s in same[:2]]

        def write(a, start):
            for i in range(start, 64, 2):
                a[i] = i + 1
        threads = [threading.Thread(target=write, args=(a, i)) for i, a in enumerate(handles)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        np.testing.assert_array_equal(z[:], np.arange(1, 65))   # before: ~30 of 64 lost
