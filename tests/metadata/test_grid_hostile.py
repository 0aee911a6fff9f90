"""Chunk grids use memory proportional to their document, never to the number of chunks."""
from __future__ import annotations

import json
import time
import tracemalloc

import numpy as np
import pytest

import zarrx
from zarrx.metadata import parse_v3
from zarrx.metadata.grid import AxisEdges, chunk_edges, grid_json, grid_shape
from zarrx.store import MemoryStore


def rectilinear_doc(ndim: int, runs: list, shape: list[int]) -> bytes:
    return json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
        "chunk_grid": {"name": "rectilinear",
                       "configuration": {"kind": "inline", "chunk_shapes": [runs] * ndim}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": 7,
        "codecs": [{"name": "bytes"}]}, separators=(",", ":")).encode()


def test_a_tiny_document_declaring_2_to_the_20_chunks_per_axis_opens_cheaply():
    doc = rectilinear_doc(64, [[1, 1 << 20]], [1] * 64)
    assert len(doc) < 1600
    store = MemoryStore({"zarr.json": doc})
    tracemalloc.start()
    t = time.process_time()
    a = zarrx.open_array(store, mode="r")
    values = a[...]
    elapsed = time.process_time() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert values.shape == (1,) * 64 and values.item() == 7
    assert elapsed < 1.0 and peak < 4 << 20         # was 10 s and 590 MiB
    meta = parse_v3(doc, "zarr.json")
    assert len(meta.chunk_grid.chunk_sizes[0]) == 1 << 20
    assert grid_shape(meta.chunk_grid, meta.shape) == (1,) * 64
    assert grid_json(meta.chunk_grid, meta.shape)["configuration"]["chunk_shapes"][0] == \
        [[1, 1 << 20]]


def test_edges_are_looked_up_without_expanding():
    edges = AxisEdges([(3, 2), (5, 1 << 20), (5, 4), (2, 1)])   # equal runs merge
    assert edges.runs() == [(3, 2), (5, (1 << 20) + 4), (2, 1)]
    assert len(edges) == (1 << 20) + 7 and edges.total == 6 + 5 * ((1 << 20) + 4) + 2
    assert (edges[0], edges[1], edges[2], edges[-2], edges[-1]) == (3, 3, 5, 5, 2)
    assert [edges.offset(k) for k in (0, 1, 2, 3)] == [0, 3, 6, 11]
    assert edges.offset(len(edges)) == edges.total
    assert [edges.chunk_at(p) for p in (0, 2, 3, 5, 6, 10, 11)] == [0, 0, 1, 1, 2, 2, 3]
    assert edges.chunk_at(edges.total - 1) == len(edges) - 1
    assert edges.chunk_at(edges.total) == len(edges)
    assert edges.count_below(0) == 0 and edges.count_below(7) == 3
    assert edges.covering(0) == (3,) and edges.covering(7) == (3, 3, 5)
    assert edges[1:4] == (3, 5, 5) and edges[::1 << 19][:2] == (3, 5)
    assert edges.gcd() == 1 and AxisEdges([(4, 3), (6, 2)]).gcd() == 2 and AxisEdges().gcd() == 1
    assert AxisEdges.of((2, 2, 2, 4, 9)) == (2, 2, 2, 4, 9) == AxisEdges([(2, 3), (4, 1), (9, 1)])
    assert AxisEdges.of([1, 1]) != (1, 1, 1) and hash(AxisEdges([(1, 2)])) == hash(AxisEdges.of([1, 1]))
    with pytest.raises(IndexError):
        edges[len(edges)]


@pytest.mark.parametrize("chunks", [[[2, 3], 4, 9], [1, [2, 2], 3, [1, 4]]])
def test_rectilinear_arrays_read_and_write_through_run_length_edges(chunks):
    store = MemoryStore({"zarr.json": rectilinear_doc(1, chunks, [10])})
    a = zarrx.open_array(store, mode="r+")
    a[2:9] = np.arange(7, dtype="u1")
    expected = np.full(10, 7, dtype="u1")
    expected[2:9] = np.arange(7)
    np.testing.assert_array_equal(a[...], expected)
    meta = parse_v3(store.get("zarr.json"), "zarr.json")
    assert tuple(chunk_edges(meta.chunk_grid, meta.shape, 0)) == tuple(
        e for e in AxisEdges.of(_expand(chunks)).covering(10))


def _expand(items: list) -> list[int]:
    out: list[int] = []
    for item in items:
        out += [item[0]] * item[1] if isinstance(item, list) else [item]
    return out


@pytest.mark.parametrize("runs, shape, found", [
    ([[1 << 61, 2]], [1 << 62], 1 << 64),              # was accepted: chunks of 2**64 bytes
    ([4, [1 << 61, 1]], [5], 1 << 64),                 # the longest edge holding elements
], ids=["run", "edge"])
def test_a_rectilinear_chunk_of_more_than_2_to_the_63_bytes_is_refused_as_a_regular_one(
        runs, shape, found):
    doc = json.loads(rectilinear_doc(1, runs, shape))
    doc["data_type"] = "int64"
    with pytest.raises(zarrx.errors.MetadataError) as info:
        zarrx.open_array(MemoryStore({"zarr.json": json.dumps(doc).encode()}), mode="r")
    assert str(info.value) == ("zarr.json chunk_grid: expected a chunk of at most 2**63-1 bytes, "
                               f"found {found} bytes")


def test_rectilinear_edges_beyond_the_array_do_not_count_towards_its_largest_chunk():
    doc = json.loads(rectilinear_doc(1, [4, [1 << 61, 1]], [4]))
    doc["data_type"] = "int64"
    a = zarrx.open_array(MemoryStore({"zarr.json": json.dumps(doc).encode()}), mode="r")
    assert a[...].tolist() == [7, 7, 7, 7]


@pytest.mark.parametrize("runs", [[4, [1 << 62, 2]], [4, (1 << 63) - 5]], ids=["past", "at"])
def test_rectilinear_edges_summing_past_2_to_the_63_read_and_write(runs):
    # the chunk boundaries were summed in int64: the last wrapped negative and every read,
    # write or nchunks raised "expected lengths summing to at least the axis size ..., found
    # sum -9223372036854775804"
    store = MemoryStore({"zarr.json": rectilinear_doc(1, runs, [(1 << 63) - 1])})
    a = zarrx.open_array(store, mode="r+")
    assert a.nchunks == len(_expand(runs))
    a[1:3] = [5, 6]
    assert a[:5].tolist() == [7, 5, 6, 7, 7] and a[-1] == 7 and a[-3:].tolist() == [7, 7, 7]
    assert a.vindex[[2, -1]].tolist() == [6, 7] and a[:: 1 << 62].tolist() == [7, 7]


def test_explicit_edges_are_written_in_run_length_form_and_created_cheaply():
    # 2^20 edges of 1 per axis, as lists and as another array's grid holds them (zarrx
    # convert passes those): before, the document listed every edge (6 MB) and creating the
    # array parsed it three times, in about 40 s
    ones = [1] * (1 << 20)
    store = MemoryStore()
    t = time.process_time()
    a = zarrx.create_array(store, shape=(1 << 20, 1 << 20), dtype="u1", chunks=(ones, ones))
    b = zarrx.create_array(MemoryStore(), shape=a.shape, dtype="u1",
                           chunks=a.metadata.chunk_grid.chunk_sizes)
    assert time.process_time() - t < 4
    doc = json.loads(store.get("zarr.json"))
    assert doc["chunk_grid"]["configuration"]["chunk_shapes"] == [[[1, 1 << 20]]] * 2
    assert a.metadata.chunk_grid == b.metadata.chunk_grid
    a[-1, -2:] = 5
    assert a[-1, -3:].tolist() == [0, 5, 5] and a.nchunks == 1 << 40


def test_explicit_edges_keep_their_order_and_bad_ones_their_error():
    store = MemoryStore()
    zarrx.create_array(store, shape=(9, 4), dtype="u1", chunks=([2, 2, 3, 1, 1], 4))
    doc = json.loads(store.get("zarr.json"))
    assert doc["chunk_grid"]["configuration"]["chunk_shapes"] == [[[2, 2], 3, [1, 2]], 4]
    a = zarrx.open_array(store, mode="r")
    assert chunk_edges(a.metadata.chunk_grid, a.shape, 0) == (2, 2, 3, 1, 1)
    with pytest.raises(zarrx.ZarrError, match=r"chunks: expected a tuple of positive ints"):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="u1", chunks=([2, 2.5],))
    with pytest.raises(zarrx.ZarrError, match=r"chunk_shapes\[0\]\[1\]"):
        zarrx.create_array(MemoryStore(), shape=(4,), dtype="u1", chunks=([2, 0, 2],))
