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
    """A memory store that notes which thread wrote each chunk (and takes a while to)."""

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
