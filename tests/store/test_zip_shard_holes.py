"""Shards with unused bytes between their inner chunks (writers updating a shard in place leave
them; a directory store holding such shards, zipped) in a zip archive: they read as anywhere
else, at the cost of one pass over the entry for its CRC-32, and a compressed entry's ranges
are inflated once per read, not once per inner chunk."""
from __future__ import annotations

import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
from test_shard_holes import with_holes

import zarrx
from zarrx.codecs import Zstd
from zarrx.store import LocalStore, MemoryStore, ZipStore, zipread

METHODS = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED,
           "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}


def _holey(compressors=None) -> MemoryStore:
    """A sharded int32 array of 64 items (shards of 4 inner chunks), shard c/0 rebuilt with
    its chunks shuffled and 5,000 unused bytes before the first (the packed bound is 196)."""
    store = MemoryStore()
    zarrx.create_array(store, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                       compressors=compressors)[:] = np.arange(64)
    store.set("c/0", with_holes(store.get("c/0"), 4, [5000, 17, 0, 64, 9], [2, 0, 3, 1]))
    return store


def _zip(store: MemoryStore, path, method: int) -> None:
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        for key in sorted(store.list_prefix("")):
            zf.writestr(key, store.get(key))


@pytest.mark.parametrize("method", METHODS, ids=list(METHODS))
def test_a_shard_with_unused_bytes_in_a_zip_archive_reads(tmp_path, method):
    path = tmp_path / "a.zip"
    _zip(_holey(), path, METHODS[method])
    with ZipStore(path) as store:
        z = zarrx.open_array(store, mode="r")       # before: CodecError, 5218 bytes > 196
        np.testing.assert_array_equal(z[:], np.arange(64))
        np.testing.assert_array_equal(z[9:11], [9, 10])
    zarr = pytest.importorskip("zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = zarr.open_array(zarr.storage.ZipStore(str(path), mode="r"), mode="r")[:]
    np.testing.assert_array_equal(got, np.arange(64))


def test_a_directory_store_with_such_a_shard_copied_into_a_zip_archive_reads_and_checks(
        tmp_path):
    src = LocalStore(tmp_path / "a.zarr")
    holey = _holey([Zstd(level=1)])
    for key in holey.list_prefix(""):
        src.set(key, holey.get(key))
    dst = tmp_path / "a.zip"
    for args in (["copy", str(tmp_path / "a.zarr"), str(dst)], ["check", str(dst)]):
        done = subprocess.run([sys.executable, "-m", "zarrx", *args], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    with ZipStore(dst) as store:
        np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[:], np.arange(64))


def test_ranges_of_a_large_compressed_shard_entry_inflate_once_per_read(tmp_path, monkeypatch):
    """An entry too large for the inflate cache: the index's read inflates it whole once (its
    CRC-32), and the four inner chunks read together inflate it once more, not four times."""
    path = tmp_path / "a.zip"
    _zip(_holey(), path, zipfile.ZIP_DEFLATED)
    monkeypatch.setattr(zipread, "INFLATE_CACHE_BYTES", 1000)
    passes: list[str] = []
    real = zipread.Reader._blocks
    monkeypatch.setattr(zipread.Reader, "_blocks", lambda self, fp, info, *a:
                        passes.append(info.filename) or real(self, fp, info, *a))
    with ZipStore(path) as store:
        z = zarrx.open_array(store, mode="r")
        passes.clear()
        np.testing.assert_array_equal(z[:32], np.arange(32))
    assert passes == ["c/0", "c/0"]
