"""Small raw chunks are spread over the threads when the store writes outside the GIL
(``Store.parallel_writes``), and written on the calling thread when it does not."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, MemoryStore


class Recording(MemoryStore):
    """A memory store that notes which thread wrote each chunk (and takes a while to). It has
    no box writer, so every chunk goes through the general path, whose choice is tested."""

    def box_writer(self, head, sep):  # noqa: ANN001
        return None

    def __init__(self, parallel: bool) -> None:
        super().__init__()
        self.parallel_writes = parallel
        self.writers: set[int] = set()

    def set(self, key, value):  # noqa: ANN001
        if "/c/" in f"/{key}" or key.startswith("c"):
            self.writers.add(threading.get_ident())
            time.sleep(0.002)
        super().set(key, value)


@pytest.mark.parametrize("parallel", [False, True])
def test_small_raw_chunks_go_where_the_store_says(parallel):
    store = Recording(parallel)
    a = zarrx.create_array(store, shape=(64 * 16,), chunks=(16,), dtype="f4",
                           compressors=None, fill_value=0)
    with zarrx.config.set(threads=2):
        a[:] = np.arange(64 * 16, dtype="f4") + 1
    np.testing.assert_array_equal(a[:], np.arange(64 * 16, dtype="f4") + 1)
    if parallel:
        assert len(store.writers) == 2
    else:
        assert store.writers == {threading.get_ident()}


def test_which_stores_write_in_parallel(tmp_path):
    assert LocalStore(tmp_path).parallel_writes
    assert not MemoryStore().parallel_writes
    z = zarrx.store.ZipStore(tmp_path / "a.zip", mode="w")
    assert not z.parallel_writes
    z.close()


def test_a_dask_write_encodes_on_the_task_threads():
    """dask already runs a task per core: the chunks of a block are encoded on the task's
    thread, not handed to zarrx's pool on top of it."""
    da = pytest.importorskip("dask.array")
    import zarrx.dask

    class Named(Recording):
        def set(self, key, value):  # noqa: ANN001
            if key.startswith("c"):
                self.writers.add(threading.current_thread().name)
            MemoryStore.set(self, key, value)

    store = Named(True)
    a = zarrx.create_array(store, shape=(64 * 16,), chunks=(16,), dtype="f4",
                           compressors=None, fill_value=0)
    x = da.arange(64 * 16, chunks=32 * 16, dtype="f4")
    import dask
    with zarrx.config.set(threads=2), dask.config.set(scheduler="threads"):
        zarrx.dask.to_zarrx(x, a)
    np.testing.assert_array_equal(a[:], np.arange(64 * 16, dtype="f4"))
    assert store.writers and not any(n.startswith("zarrx") for n in store.writers)
