"""``zarrx.check`` finds data stored outside an array's shape, which a shrink by zarr-python 3
(or tensorstore) leaves in the objects straddling the new edge and a later grow would read back,
and ``--repair`` clears it as zarrx's own shrink does."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import zarrx
from zarrx import cli

zarr = pytest.importorskip("zarr")


def _kinds(report):
    return sorted((f.kind, f.key, f.inner) for f in report.findings)


def _shrunk_by_zarr(path, shape, small, chunks, shards=None, fill_value=0, dtype="i4"):
    """An array written whole, then shrunk, by zarr-python; returns what it holds."""
    z = zarr.create_array(path, shape=shape, chunks=chunks, shards=shards, dtype=dtype,
                          fill_value=fill_value)
    data = (np.arange(np.prod(shape)) + 1).astype(dtype).reshape(shape)
    z[...] = data
    z.resize(small)
    return data[tuple(slice(0, n) for n in small)]


def _grown_back(path, shape, kept, fill_value):
    expected = np.full(shape, fill_value, dtype=kept.dtype)
    expected[tuple(slice(0, n) for n in kept.shape)] = kept
    zarrx.open_array(path, mode="r+").resize(shape)
    return expected


def test_cells_a_zarr_python_shrink_leaves_in_its_boundary_chunk_are_found_and_cleared(
        tmp_path):
    path = str(tmp_path / "a.zarr")
    kept = _shrunk_by_zarr(path, (10,), (6,), chunks=(4,))
    report = zarrx.check(path)
    assert _kinds(report) == [("stale", "c/1", None)]
    assert "values other than the fill value 0 stored outside the array's shape (6,), in " \
           "[6:8]" in str(report.findings[0])
    report = zarrx.check(path, repair=True)
    assert report.findings and not report.remaining
    assert zarrx.check(path).ok
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], kept)
    expected = _grown_back(path, (10,), kept, 0)
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], expected)
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], expected)


def test_inner_chunks_a_zarr_python_shrink_leaves_in_an_edge_shard_are_found_and_cleared(
        tmp_path):
    path = str(tmp_path / "s.zarr")
    kept = _shrunk_by_zarr(path, (20,), (11,), chunks=(2,), shards=(8,))
    report = zarrx.check(path)
    assert _kinds(report) == [("stale", "c/1", "c/1"), ("stale", "c/1", "c/2"),
                              ("stale", "c/1", "c/3")]
    text = str(report)
    assert "c/1 inner chunk c/1: values other than the fill value 0 stored outside the " \
           "array's shape (11,), in [11:12]" in text
    assert "c/1 inner chunk c/3: stored wholly outside the array's shape (11,)" in text
    report = zarrx.check(path, repair=True)
    assert len(report.repaired) == 3 and not report.remaining
    assert zarrx.check(path).ok
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], kept)
    expected = _grown_back(path, (20,), kept, 0)
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], expected)
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], expected)


def test_cells_outside_both_axes_with_a_nan_fill_value(tmp_path):
    path = str(tmp_path / "n.zarr")
    kept = _shrunk_by_zarr(path, (8, 8), (5, 3), chunks=(4, 4), fill_value=np.nan,
                           dtype="f8")
    report = zarrx.check(path)
    assert _kinds(report) == [("stale", "c/0/0", None), ("stale", "c/1/0", None)]
    first, second = sorted(report.findings, key=lambda f: f.key)
    assert "fill value nan stored outside the array's shape (5, 3), in [0:4, 3:4]:" in str(first)
    assert "in [5:8, 0:4], [4:5, 3:4]:" in str(second)
    zarrx.check(path, repair=True)
    assert zarrx.check(path).ok
    expected = _grown_back(path, (8, 8), kept, np.nan)
    np.testing.assert_array_equal(zarrx.open_array(path, mode="r")[...], expected)
    np.testing.assert_array_equal(zarr.open_array(path, mode="r")[...], expected)


def test_fill_values_outside_the_shape_and_zarrx_shrinks_are_not_findings(tmp_path):
    """Only what a grow would bring back is found: a ragged edge chunk holding the fill value
    past the edge (as every writer stores it) and an array zarrx shrank are sound."""
    z = zarrx.create_array(str(tmp_path / "z.zarr"), shape=(10, 7), chunks=(4, 4),
                           shards=(8, 4), dtype="u1", fill_value=3)
    z[...] = 1
    z.resize((5, 6))
    p = zarr.create_array(str(tmp_path / "p.zarr"), shape=(10,), chunks=(4,), dtype="u1",
                          fill_value=0)
    p[:6] = 1
    p.resize((6,))
    assert zarrx.check(str(tmp_path / "z.zarr")).ok
    assert zarrx.check(str(tmp_path / "p.zarr")).ok


def _shrink_in_document(path, shape):
    """Shrink the array at ``path`` by writing its document alone, as a writer that does not
    clear would."""
    doc_path = os.path.join(path, "zarr.json")
    doc = json.load(open(doc_path))
    doc["shape"] = list(shape)
    json.dump(doc, open(doc_path, "w"))


def test_nested_shards_and_the_command_line(tmp_path, capsys):
    path = str(tmp_path / "nested.zarr")
    inner = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    z = zarrx.create_array(path, shape=(16,), dtype="u2", chunks=(16,), fill_value=0,
                           serializer={"name": "sharding_indexed", "configuration": {
                               "chunk_shape": [4], "codecs": [inner],
                               "index_codecs": [{"name": "bytes",
                                                 "configuration": {"endian": "little"}}]}})
    z[...] = np.arange(1, 17)
    _shrink_in_document(path, (5,))
    assert cli.main(["check", path]) == 1
    out = capsys.readouterr().out
    assert "stale: c/0 inner chunk c/2: values other than the fill value 0 stored outside " \
           "the array's shape (5,), in [5:6]" in out
    assert "stale: c/0 inner chunk c/7: values other than the fill value 0 stored wholly " \
           "outside the array's shape (5,)" in out
    assert cli.main(["check", path, "--repair"]) == 4
    assert cli.main(["check", path]) == 0
    capsys.readouterr()
    zarrx.open_array(path, mode="r+").resize((16,))
    assert zarrx.open_array(path, mode="r")[...].tolist() == [1, 2, 3, 4, 5] + [0] * 11


def test_a_corrupt_boundary_chunk_is_corrupt_and_not_stale(tmp_path):
    path = str(tmp_path / "c.zarr")
    z = zarrx.create_array(path, shape=(10,), chunks=(4,), dtype="u2", fill_value=0,
                           compressors=[{"name": "zstd"}, {"name": "crc32c"}])
    z[...] = np.arange(10)
    chunk = os.path.join(path, "c", "2")
    data = bytearray(open(chunk, "rb").read())
    data[3] ^= 0xFF
    open(chunk, "wb").write(bytes(data))
    assert _kinds(zarrx.check(path)) == [("corrupt", "c/2", None)]


def test_a_rectilinear_grid_has_nothing_outside_its_shape(tmp_path):
    path = str(tmp_path / "r.zarr")
    z = zarrx.create_array(path, shape=(10,), chunks=[[4, 6]], dtype="u1", fill_value=0)
    z[...] = 1
    assert zarrx.check(path).ok


def test_a_lossy_zfp_edge_chunk_is_not_reported_stale_nor_rewritten(tmp_path):
    # zfp's lossy modes mix the values of a block: the fill value past the edge decodes as
    # other numbers, which are no data a grow would read back wrongly from a shrink
    pytest.importorskip("zfpy")
    path = str(tmp_path / "z.zarr")
    z = zarrx.create_array(path, shape=(10, 10), chunks=(8, 8), dtype="f8", fill_value=0.0,
                           serializer={"name": "numcodecs.zfpy",
                                       "configuration": {"mode": 4, "tolerance": 0.5}})
    z[...] = np.random.default_rng(0).normal(100, 30, (10, 10))
    before = {k: open(os.path.join(path, "c", *k.split("/")), "rb").read()
              for k in ("0/1", "1/0", "1/1")}
    assert zarrx.check(path).ok
    assert not zarrx.check(path, repair=True).findings
    assert before == {k: open(os.path.join(path, "c", *k.split("/")), "rb").read()
                      for k in before}


def test_a_pcodec_edge_chunk_shrunk_by_zarr_python_is_still_found(tmp_path):
    pytest.importorskip("pcodec")
    path = str(tmp_path / "p.zarr")
    z = zarr.create_array(path, shape=(10,), chunks=(4,), dtype="i4", fill_value=0,
                          serializer=zarr.codecs.numcodecs.PCodec())
    z[...] = np.arange(1, 11, dtype="i4")
    z.resize((6,))
    report = zarrx.check(path)
    assert _kinds(report) == [("stale", "c/1", None)]
