"""A read-only ZipStore opened before a fork is shared by the forked processes (a
multiprocessing pool, a data loader's workers): each reads its entries whatever the others
read meanwhile."""
from __future__ import annotations

import multiprocessing
import os

import numpy as np
import pytest

import zarrx
from zarrx.store import ZipStore

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

_VALUES = {f"e{i}": bytes([i]) * 3000 for i in range(12)}     # straddle 8 KiB read buffers


def _read_far_entry(store: ZipStore) -> None:
    assert store.get("e11") == _VALUES["e11"]


def test_entries_read_after_a_forked_process_read_the_archive(tmp_path):
    path = str(tmp_path / "data.zip")
    with ZipStore(path, mode="w") as w:
        for key, value in _VALUES.items():
            w.set(key, value)
    store = ZipStore(path, mode="r")
    assert store.get("e0") == _VALUES["e0"]
    child = multiprocessing.get_context("fork").Process(target=_read_far_entry, args=(store,))
    child.start()
    child.join()
    assert child.exitcode == 0
    for key in ("e1", "e2", "e3", "e4"):
        assert store.get(key) == _VALUES[key], key
    store.close()


_SHARED: dict = {}


def _batch(idx: list[int]) -> np.ndarray:
    return _SHARED["x"][idx]


def test_pool_workers_read_an_array_of_an_archive_opened_before_the_fork(tmp_path):
    path = str(tmp_path / "data.zip")
    data = np.random.default_rng(0).integers(0, 255, (2000, 3, 8, 8), dtype="u1")
    with ZipStore(path, mode="w") as w:
        zarrx.create_array(w, name="x", data=data, chunks=(16, 3, 8, 8), shards=(128, 3, 8, 8),
                           compressors=None)
    _SHARED["x"] = zarrx.open_array(path, path="x", mode="r")
    batches = [np.random.default_rng(i).integers(0, 2000, 32).tolist() for i in range(60)]
    try:
        with multiprocessing.get_context("fork").Pool(2) as pool:
            for idx, got in zip(batches, pool.map(_batch, batches, chunksize=1)):
                np.testing.assert_array_equal(got, data[idx])
    finally:
        _SHARED.clear()
