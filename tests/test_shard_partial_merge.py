"""Partial writes into shards of small chunks: the inner chunks of a shard a write covers in
part are decoded, merged and encoded together (``zarrx.shard_merge``), not one by one. What
is stored, and the error a chunk that does not decode raises, must be the general path's."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import zarrx
from zarrx import shard_merge
from zarrx.store import LocalStore, MemoryStore

from call_counts import calls_made
from test_shard_whole_writes import CODECS, _array

@pytest.mark.parametrize("codecs", ["raw", "zstd"])
def test_a_partial_write_of_shards_makes_few_python_calls_per_inner_chunk(codecs):
    """1,024 inner chunks of 4 KiB in 16 shards, each covered in part by a stepped or an
    index-array write: fewer than 16 calls per chunk (before: 44 to 53, a decode, a merge and
    an encode each); 12 for a box not aligned to the chunks (before: 17 to 18)."""
    a = np.random.default_rng(2).random((1024, 1024)).astype("f4")
    z = _array(MemoryStore(), a.shape, (32, 32), (8, 8), codecs, fill=0)
    want = a.copy()
    with zarrx.config.set(threads=1):
        z[...] = a
        per_chunk = calls_made(lambda: z.__setitem__(np.s_[::2, :], a[::2] + 1)) / 1024
        want[::2] += 1
        assert per_chunk < 16, f"{per_chunk:.2f} calls per chunk (steps)"
        rows = np.arange(0, 1024, 3)
        per_chunk = calls_made(lambda: z.oindex.__setitem__((rows, slice(None)), 4.0)) / 1024
        want[rows] = 4
        assert per_chunk < 16, f"{per_chunk:.2f} calls per chunk (index array)"
        per_chunk = calls_made(lambda: z.__setitem__(np.s_[16:1000, 5:1019], 2.0)) / 1024
        want[16:1000, 5:1019] = 2
        assert per_chunk < 12, f"{per_chunk:.2f} calls per chunk (box)"
    np.testing.assert_array_equal(z[...], want)


def _objects(store) -> dict[str, bytes]:
    return {k: store.get(k) for k in store.list_prefix("g/a/c")}


def _both_ways(monkeypatch, make, write, threads):
    """The stored objects (or the error's class and text) after ``write(z)`` merging
    together, then with the merge off (the general path, chunk by chunk); and the array
    written together."""
    got, arrays = {}, {}
    for way in ("together", "general"):
        z, store = arrays[way] = make(way)
        with monkeypatch.context() as m:
            if way == "general":
                m.setattr(shard_merge, "mergeable", lambda io: False)
            with zarrx.config.set(threads=threads):
                try:
                    write(z)
                except zarrx.ZarrError as exc:
                    got[way] = (type(exc), str(exc))
                    continue
        got[way] = _objects(store)
    assert got["together"] == got["general"]
    return got["together"], arrays["together"][0]


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 13)) for _ in range(ndim))
    sel = []
    for n in shape:
        a = draw(st.integers(0, n - 1))
        b = draw(st.integers(a + 1, n))
        step = draw(st.sampled_from([1, 2, 3, -1, -2]))
        sel.append(slice(a, b, step) if step > 0 else slice(b - 1, a - 1 if a else None, step))
    return dict(shape=shape, chunks=tuple(draw(st.integers(1, 3)) for _ in range(ndim)),
                ratio=tuple(draw(st.integers(1, 3)) for _ in range(ndim)), sel=tuple(sel),
                dtype=draw(st.sampled_from(["f4", "u1", "i8", ">f8"])),
                codecs=draw(st.sampled_from(list(CODECS))),
                loc=draw(st.sampled_from(["end", "start"])),
                threads=draw(st.sampled_from([1, 2])),
                kind=draw(st.sampled_from(["data", "fill", "scalar"])),
                before=draw(st.sampled_from([None, "data", "some"])),
                empty=draw(st.booleans()), local=draw(st.booleans()))


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_partial_shard_writes_store_what_the_general_path_stores(tmp_path_factory, monkeypatch,
                                                                 c):
    shape, dtype, sel = c["shape"], c["dtype"], c["sel"]
    base = (np.arange(int(np.prod(shape))).reshape(shape) % 11).astype(dtype)
    target = np.empty(shape, "u1")[sel].shape
    value = {"data": (np.arange(int(np.prod(target))).reshape(target) % 5).astype(dtype),
             "fill": np.full(target, 7, dtype), "scalar": 3}[c["kind"]]

    def make(way):
        store = LocalStore(str(tmp_path_factory.mktemp(way))) if c["local"] else MemoryStore()
        z = _array(store, shape, c["chunks"], c["ratio"], c["codecs"], dtype, loc=c["loc"],
                   write_empty_chunks=c["empty"])
        if c["before"] == "data":
            z[...] = base
        elif c["before"] == "some":           # some inner chunks stored, the others missing
            z[tuple(slice(0, (n + 1) // 2) for n in shape)] = base[
                tuple(slice(0, (n + 1) // 2) for n in shape)]
        return z, store

    def write(z):
        z[sel] = value

    z = _both_ways(monkeypatch, make, write, c["threads"])[1]
    want = np.full(shape, 7, dtype)
    if c["before"] == "data":
        want[...] = base
    elif c["before"] == "some":
        half = tuple(slice(0, (n + 1) // 2) for n in shape)
        want[half] = base[half]
    want[sel] = value
    np.testing.assert_array_equal(zarrx.open_array(z.store, path="g/a")[...], want)


@pytest.mark.parametrize("codecs", ["zstd", "crc32c"])
def test_an_inner_chunk_that_does_not_decode_is_named_as_by_the_general_path(monkeypatch,
                                                                            codecs):
    a = np.arange(16 * 16, dtype="i4").reshape(16, 16)

    def make(way):
        store = MemoryStore()
        z = _array(store, a.shape, (4, 4), (4, 4), codecs, "i4", fill=0)
        z[...] = a
        shard = bytearray(store.get("g/a/c/0/0"))
        entries = np.frombuffer(bytes(shard[-16 * 16 - 4:-4]), "<u8").reshape(16, 2)
        off, nb = entries[5].tolist()                  # inner chunk (1, 1): bytes spoiled
        shard[off:off + nb] = bytes(nb)
        store.set("g/a/c/0/0", bytes(shard))
        return z, store

    def write(z):
        z[::2, :] = 9                                   # every inner chunk covered in part

    cls, text = _both_ways(monkeypatch, make, write, 1)[0]
    assert issubclass(cls, zarrx.CodecError)
    assert text.startswith("array 'g/a' shard 'g/a/c/0/0' inner chunk 'c/1/1': "), text
