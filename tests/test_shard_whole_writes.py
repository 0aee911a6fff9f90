"""Writes of whole shards of small chunks: the shard's inner chunks gathered and encoded
together, with no Python call per chunk, raw (assembled in place) or compressed (packed from
their bytes). What is stored must be exactly what the general path stores."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import zarrx
from zarrx import shard_box
from zarrx.store import LocalStore, MemoryStore

from box_arrays import box_write_case, draw_box, stored_both_ways
from call_counts import calls_made
from test_shard_box_write import general_calls  # noqa: F401 - a fixture

CODECS = {"raw": None, "zstd": [{"name": "zstd", "configuration": {"level": 0}}],
          "crc32c": [{"name": "crc32c"}],
          "gzip+crc32c": [{"name": "gzip", "configuration": {"level": 1}}, {"name": "crc32c"}]}


def _array(store, shape, chunks, ratio, codecs, dtype="f4", fill=7, loc="end", **kw):
    shards = {"shape": tuple(c * r for c, r in zip(chunks, ratio)), "index_location": loc}
    return zarrx.create_array(store, name="g/a", shape=shape, chunks=chunks, shards=shards,
                              dtype=dtype, fill_value=fill, compressors=CODECS[codecs], **kw)


@pytest.mark.parametrize("local", [False, True], ids=["memory", "local"])
@pytest.mark.parametrize("codecs", ["raw", "zstd", "crc32c"])
def test_a_whole_write_of_shards_makes_no_python_call_per_inner_chunk(tmp_path, codecs, local):
    """1,024 inner chunks of 4 KiB in 16 shards: fewer than 3 calls per chunk (before: about
    6 to 8, a projection or a place in the shard made per chunk), for a value and a scalar."""
    a = np.random.default_rng(2).random((1024, 1024)).astype("f4")
    store = LocalStore(str(tmp_path)) if local else MemoryStore()
    z = _array(store, a.shape, (32, 32), (8, 8), codecs, fill=0)
    with zarrx.config.set(threads=1):
        z[...] = a                                    # plans made, shards stored
        per_chunk = calls_made(lambda: z.__setitem__(Ellipsis, a + 1)) / 1024
        assert per_chunk < 3, f"{per_chunk:.2f} calls per chunk"
        np.testing.assert_array_equal(z[...], a + 1)
        per_chunk = calls_made(lambda: z.__setitem__(Ellipsis, 3.0)) / 1024
        assert per_chunk < 3, f"{per_chunk:.2f} calls per chunk (scalar)"
    np.testing.assert_array_equal(zarrx.open_array(store, path="g/a")[...], 3.0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("codecs", ["zstd", "gzip+crc32c"])
@pytest.mark.parametrize("in_part", [True, False], ids=["in-part", "in-part-off"])
def test_whole_shards_of_compressed_chunks_skip_the_general_path(monkeypatch, general_calls,
                                                                codecs, threads, in_part):
    monkeypatch.setattr(shard_box, "ENABLED", in_part)
    a = np.random.default_rng(1).random((40, 36)).astype("f8")
    store = MemoryStore()
    z = _array(store, a.shape, (4, 6), (2, 3), codecs, "f8", fill=0.0)   # shards of 8 x 18
    with zarrx.config.set(threads=threads):
        z[...] = a                  # 5 x 2 shards, all inside the array: no general path
        assert general_calls == []
        z[1:40, 0:36] = a[1:, :] + 1     # the first shard row is covered in part
    # its shards' chunks merged or encoded together (zarrx.shard_box), else by the general path
    assert general_calls == ([] if in_part else [2 * 2 * 3])
    want = a.copy()
    want[1:] += 1
    np.testing.assert_array_equal(zarrx.open_array(store, path="g/a")[...], want)


def test_inner_chunks_of_fill_are_left_out_of_a_compressed_shard(general_calls):
    store = MemoryStore()
    z = _array(store, (32,), (4,), (4,), "zstd", "i4", fill=0)     # two shards of 16
    v = np.arange(1, 33, dtype="i4")
    v[4:8] = 0                                                     # inner chunk 1 is fill
    z[...] = v
    assert general_calls == []
    np.testing.assert_array_equal(z[...], v)
    # the index at the shard's end (4 entries of offset and size, then its CRC-32C): inner
    # chunk 1 is missing, the others are there
    entries = np.frombuffer(store.get("g/a/c/0")[-68:-4], "<u8").reshape(4, 2)
    assert (entries[1] == 2**64 - 1).all() and (entries[[0, 2, 3], 1] > 0).all()
    z[16:32] = 0                                                   # a shard all fill: deleted
    assert store.get("g/a/c/1") is None and general_calls == []


def _objects(store) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list_prefix("g/a/c")}


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 13)) for _ in range(ndim))
    return dict(shape=shape, chunks=tuple(draw(st.integers(1, 3)) for _ in range(ndim)),
                ratio=tuple(draw(st.integers(1, 3)) for _ in range(ndim)),
                sel=draw_box(draw, st, shape),
                dtype=draw(st.sampled_from(["f4", "u1", "i8", ">f8"])),
                codecs=draw(st.sampled_from(["zstd", "crc32c", "gzip+crc32c"])),
                loc=draw(st.sampled_from(["end", "start"])),
                threads=draw(st.sampled_from([1, 2])),
                kind=draw(st.sampled_from(["data", "fill", "scalar", "some fill"])),
                before=draw(st.booleans()), empty=draw(st.booleans()),
                local=draw(st.booleans()))


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_compressed_shard_writes_store_what_the_general_path_stores(tmp_path_factory,
                                                                   monkeypatch, c):
    shape, dtype = c["shape"], c["dtype"]
    base, value, ref = box_write_case(shape, c["sel"], dtype, c["kind"], c["before"])

    def make(way):
        store = LocalStore(str(tmp_path_factory.mktemp(way))) if c["local"] else MemoryStore()
        z = _array(store, shape, c["chunks"], c["ratio"], c["codecs"], dtype, loc=c["loc"],
                   write_empty_chunks=c["empty"])
        return z, lambda: zarrx.open_array(store, path="g/a"), lambda: _objects(store)

    stored_both_ways(monkeypatch, make, c["sel"], value, ref, base, c["before"], c["threads"],
                     "_write_shards")
