"""Zarr v3 arrays written by zarrs (the Rust implementation, through its zarr-python codec
pipeline) read by zarrx, and arrays zarrx writes read by zarrs.

tests/data/zarrs/corpus.zarr is what zarrs 0.2.3 wrote (see its README.md): shards with the
index at the start and at the end, nested shards, partial shard writes, inner chunks left out.
When the ``zarrs`` package is installed the same arrays are also written and read now.
"""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

import zarrx

DATA_DIR = Path(__file__).resolve().parent / "data" / "zarrs"
CORPUS = DATA_DIR / "corpus.zarr"
HAVE_ZARRS = importlib.util.find_spec("zarrs") is not None \
    and importlib.util.find_spec("zarr") is not None
needs_zarrs = pytest.mark.skipif(not HAVE_ZARRS, reason="zarrs not installed (pip install zarrs)")

# what the corpus holds and how it was written, as tests/data/zarrs/make_corpus.py uses it
_spec = importlib.util.spec_from_file_location("zarrs_corpus_pattern", DATA_DIR / "pattern.py")
pattern = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(pattern)
NAMES = ["shard_end", "shard_start", "shard_start_zstd", "shard_index_no_crc", "shard_nested",
         "shard_nested_start", "blosc", "crc32c_transpose_big", "partial_end", "partial_start",
         "empty_written", "empty_skipped"]
SELECTIONS = [Ellipsis, (slice(1, 9), slice(2, 11)), (5, slice(None)), (slice(None, None, 3), 7)]


def zarrs_config():
    import zarr
    importlib.import_module("zarrs")        # makes its pipeline known to zarr-python
    return zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline",
                            "codec_pipeline.strict": True})


@pytest.mark.parametrize("name", NAMES)
def test_arrays_written_by_zarrs_read_back(name):
    arr = zarrx.open_group(str(CORPUS), mode="r")[name]
    for sel in SELECTIONS:
        np.testing.assert_array_equal(arr[sel], pattern.expected(name)[sel], err_msg=str(sel))


@pytest.mark.parametrize("name", [n for n in NAMES if n != "shard_nested_start"])
def test_zarrx_writes_the_bytes_zarrs_writes(tmp_path, name):
    # same metadata, same values, same write pattern: the same stored objects, byte for byte,
    # inner chunks in the same order, none of fill values (not shard_nested_start: gzip
    # encoders differ)
    dst = tmp_path / "x.zarr"
    shutil.copytree(CORPUS, dst, ignore=lambda d, names: [n for n in names if n == "c"])
    config = {"write_empty_chunks": name != "empty_skipped"} if name.startswith("empty") else {}
    arr = zarrx.open_array(str(dst / name), mode="r+", config=config)
    pattern.write(arr, name)
    ours = {p.relative_to(dst / name): p.read_bytes() for p in (dst / name).rglob("*")
            if p.is_file() and p.name != "zarr.json"}
    theirs = {p.relative_to(CORPUS / name): p.read_bytes() for p in (CORPUS / name).rglob("*")
              if p.is_file() and p.name != "zarr.json"}
    assert ours == theirs


@needs_zarrs
@pytest.mark.parametrize("name", NAMES)
def test_zarrs_and_zarrx_read_what_the_other_writes(tmp_path, name):
    import zarr
    src = tmp_path / "zarrs.zarr"
    meta_only = tmp_path / "meta.zarr"
    shutil.copytree(CORPUS, meta_only, ignore=lambda d, names: [n for n in names if n == "c"])
    shutil.copytree(meta_only, src)
    with zarrs_config():
        arr = zarr.open_array(src / name, mode="r+")
        arr[...] = pattern.expected(name)
        arr[2:4, 3:5] = 9
    want = pattern.expected(name).copy()
    want[2:4, 3:5] = 9
    np.testing.assert_array_equal(zarrx.open_array(str(src / name), mode="r")[...], want)
    ours = zarrx.open_array(str(meta_only / name), mode="r+")
    ours[...] = pattern.expected(name)
    ours[2:4, 3:5] = 9
    with zarrs_config():
        np.testing.assert_array_equal(zarr.open_array(meta_only / name, mode="r")[...], want)
