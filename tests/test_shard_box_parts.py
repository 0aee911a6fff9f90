"""Box writes into the shards a box covers in part (``zarrx/shard_box.py``): the inner chunks
the box covers whole are encoded together and the ones at its edges merged with what is
stored, with no chunk projection made per chunk. What is stored must be byte for byte what the
way before stores (every chunk of those shards projected and written by ``write_from``)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import zarrx
from zarrx import shard_box
from zarrx.codecs import Zstd
from zarrx.store import LocalStore, MemoryStore

from call_counts import calls_made

COMPRESSORS = {"raw": [], "zstd": [{"name": "zstd", "configuration": {"level": 1}}],
               "crc32c": [{"name": "crc32c"}],
               "gzip+crc32c": [{"name": "gzip", "configuration": {"level": 1}},
                               {"name": "crc32c"}]}
FILLS = {"f4": 7.0, "u1": 7, "i8": -1, ">f8": 0.0}


def _document(shape, chunks, ratio, dtype, compressor, loc, crc, nested):
    endian = "big" if dtype.startswith(">") else "little"
    inner = [{"name": "bytes", "configuration": {"endian": endian}}] + COMPRESSORS[compressor]
    index = [{"name": "bytes", "configuration": {"endian": "little"}}] + \
        ([{"name": "crc32c"}] if crc else [])
    if nested:            # inner shards of chunks of half their size (or 1) along each axis
        inner = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [max(1, c // 2) for c in chunks], "codecs": inner,
            "index_codecs": index, "index_location": loc}}]
    return {"zarr_format": 3, "node_type": "array", "shape": list(shape),
            "data_type": {"f4": "float32", "u1": "uint8", "i8": "int64",
                          ">f8": "float64"}[dtype],
            "chunk_grid": {"name": "regular", "configuration": {
                "chunk_shape": [c * r for c, r in zip(chunks, ratio)]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": FILLS[dtype],
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": list(chunks), "codecs": inner, "index_codecs": index,
                "index_location": loc}}]}


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 24 if ndim < 3 else 12)) for _ in range(ndim))
    box = []
    for n in shape:
        a = draw(st.integers(0, n - 1))
        box.append(slice(a, draw(st.integers(a + 1, n))))
    nested = draw(st.integers(0, 5)) == 0
    return dict(shape=shape, chunks=tuple(draw(st.integers(2 if nested else 1, 4))
                                          for _ in range(ndim)),
                ratio=tuple(draw(st.integers(1, 4)) for _ in range(ndim)), box=tuple(box),
                # (big-endian chunks are not encoded together: both ways write them one by one)
                dtype=draw(st.sampled_from(["f4", "u1", "i8", "f4", "u1", ">f8"])),
                compressor=draw(st.sampled_from(list(COMPRESSORS))),
                loc=draw(st.sampled_from(["end", "start"])), crc=draw(st.booleans()),
                nested=nested, threads=draw(st.sampled_from([1, 2])),
                kind=draw(st.sampled_from(["data", "fill", "scalar", "some fill"])),
                before=draw(st.sampled_from([None, "data", "some", "fill"])),
                empty=draw(st.booleans()), local=draw(st.booleans()))


def _value(c, target):
    dtype, fill = c["dtype"], FILLS[c["dtype"]]
    data = (np.arange(int(np.prod(target))).reshape(target) % 13 + 20).astype(dtype)
    if c["kind"] == "some fill" and data.size:
        data.reshape(-1)[: max(1, data.size // 3)] = fill     # whole chunks of fill, maybe
    return {"data": data, "some fill": data, "fill": np.full(target, fill, dtype),
            "scalar": np.dtype(dtype).type(5)}[c["kind"]]


def _stored(c, path, enabled, monkeypatch):
    """The objects stored by the write of case ``c`` with ``shard_box.ENABLED`` set so, and the
    cells then read back."""
    shape, dtype = c["shape"], c["dtype"]
    store = LocalStore(str(path)) if c["local"] else MemoryStore()
    doc = _document(shape, c["chunks"], c["ratio"], dtype, c["compressor"], c["loc"], c["crc"],
                    c["nested"])
    store.set("g/a/zarr.json", json.dumps(doc).encode())
    base = (np.arange(int(np.prod(shape))).reshape(shape) % 11).astype(dtype)
    with zarrx.config.set(threads=c["threads"], write_empty_chunks=c["empty"]):
        z = zarrx.open_array(store, path="g/a")
        if c["before"] == "data":
            z[...] = base
        elif c["before"] == "fill":
            z[...] = FILLS[dtype]
        elif c["before"] == "some":           # some inner chunks stored, the others missing
            half = tuple(slice(0, (n + 1) // 2) for n in shape)
            z[half] = base[half]
        with monkeypatch.context() as m:
            m.setattr(shard_box, "ENABLED", enabled)
            z[c["box"]] = _value(c, np.empty(shape, "u1")[c["box"]].shape)
    objects = {k: store.get(k) for k in store.list_prefix("g/a/c")}
    return objects, zarrx.open_array(store, path="g/a")[...]


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_shards_covered_in_part_store_what_the_way_before_stores(tmp_path_factory, monkeypatch,
                                                                 c):
    got = {way: _stored(c, tmp_path_factory.mktemp(way), way == "new", monkeypatch)
           for way in ("new", "before")}
    assert got["new"][0] == got["before"][0]
    np.testing.assert_array_equal(got["new"][1], got["before"][1])


def _array(store, inner, shard, compressors, **kw):
    return zarrx.create_array(store, shape=(1024, 1024), dtype="f4", chunks=(inner, inner),
                              shards=(shard, shard), compressors=compressors, fill_value=0, **kw)


@pytest.mark.parametrize("local", [False, True], ids=["memory", "local"])
@pytest.mark.parametrize("compressors", [None, "zstd"], ids=["raw", "zstd"])
def test_a_window_over_shards_in_part_makes_no_python_call_per_inner_chunk(tmp_path, local,
                                                                           compressors):
    """Inner chunks of 8x8 in shards of 256x256 (1,024 each), stored beforehand; windows over
    16 shards, the outer 12 covered in part (read, merged, written back). Before, each inner
    chunk of those got a chunk projection: 5 to 8 calls per chunk."""
    store = LocalStore(str(tmp_path)) if local else MemoryStore()
    z = _array(store, 8, 256, Zstd(level=1) if compressors else None)
    a = np.random.default_rng(3).random((1024, 1024)).astype("f4")
    with zarrx.config.set(threads=1):
        z[...] = a
        # along the inner chunks' edges: every chunk the window touches is covered whole
        sel = (slice(64, 960), slice(64, 960))
        v = a[sel] + 1
        z[sel] = v                                      # plans and codecs made
        per_chunk = calls_made(lambda: z.__setitem__(sel, v)) / (112 * 112)
        assert per_chunk < 0.5, f"{per_chunk:.2f} calls per inner chunk (aligned)"
        # across them: the chunks at the window's edges are merged one projection each
        sel = (slice(61, 963), slice(3, 1021))
        v = a[sel] + 2
        z[sel] = v
        per_chunk = calls_made(lambda: z.__setitem__(sel, v)) / (114 * 128)
        assert per_chunk < 1, f"{per_chunk:.2f} calls per inner chunk (unaligned)"
    want = a.copy()
    want[64:960, 64:960] += 1
    want[sel] = v
    np.testing.assert_array_equal(zarrx.open_array(store)[...], want)


def test_a_shard_whose_chunks_do_not_encode_goes_to_the_general_path(monkeypatch):
    """When the chunks the box covers whole do not encode together, their shard's chunks go
    to the general path (which encodes them one by one and words the error of the one that
    fails)."""
    from zarrx import chunk_write
    store = MemoryStore()
    z = _array(store, 8, 64, Zstd(level=1))

    def failing(io, views, raw_fill):
        return None

    monkeypatch.setattr(shard_box, "encode_views", failing)
    calls = []
    orig = chunk_write.write_from

    def recording(io, projections, value, **kw):
        calls.append(len(projections))
        return orig(io, projections, value, **kw)

    monkeypatch.setattr("zarrx.box_write.write_from", recording)
    z[8:40, 0:64] = 3.0                    # one shard, covered in part: 4 x 8 inner chunks
    assert calls == [32]
    np.testing.assert_array_equal(z[8:40, 0:64], 3.0)
