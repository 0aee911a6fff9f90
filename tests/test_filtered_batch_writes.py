"""Batch writes of chains the ``bytes`` codec does not start: filters (``delta``, ``astype``,
``fixedscaleoffset``, ``quantize``), transpositions (v2 order "F", ``transpose``) and big-endian
``bytes``. Each slab's chunks are laid out as stored (``stored_rows``) and compressed together;
what is stored must be what the general path stores, chunk by chunk."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx import batch_merge, batch_write
from zarrx.codecs import AsType, Delta, FixedScaleOffset, Quantize, Zstd
from zarrx.store import LocalStore, MemoryStore

from call_counts import calls_made

CHAINS = {
    "v2 delta zstd": dict(zarr_format=2, filters=[Delta(dtype="<f8")], compressors=Zstd(level=1)),
    "v2 fixedscaleoffset": dict(zarr_format=2, compressors=Zstd(level=1), filters=[
        FixedScaleOffset(offset=1, scale=100, dtype="<f8", astype="<i4")]),
    "v2 astype quantize": dict(zarr_format=2, compressors=None, filters=[
        Quantize(digits=3, dtype="<f8"), AsType(encode_dtype="<f4", decode_dtype="<f8")]),
    "v2 order F": dict(zarr_format=2, order="F", compressors=Zstd(level=1)),
    "v3 transpose": dict(filters=[{"name": "transpose", "configuration": {"order": [1, 0]}}],
                         compressors=Zstd(level=1)),
    "v3 big-endian": dict(serializer={"name": "bytes", "configuration": {"endian": "big"}},
                          compressors=[{"name": "crc32c"}]),
}


def _objects(store) -> dict[str, bytes]:
    return {k: bytes(store.get(k)) for k in store.list_prefix("")
            if k.rpartition("/")[2] not in ("zarr.json", ".zarray", ".zattrs", ".zgroup")}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("empty", [False, True], ids=["skip-empty", "write-empty"])
@pytest.mark.parametrize("chain", list(CHAINS))
def test_whole_writes_of_filtered_chunks_store_what_the_general_path_stores(
        monkeypatch, tmp_path, chain, empty, where, threads):
    shape, chunks = (61, 48), (8, 8)         # the last row of chunks reaches past the end
    rng = np.random.default_rng(3)
    a = np.round(rng.standard_normal(shape) * 100, 2)
    a[:16] = 3                                # two rows of chunks all fill
    stored, got = {}, {}
    for way in ("batch", "general"):
        store = MemoryStore() if where == "memory" else LocalStore(tmp_path / way)
        z = zarrx.create_array(store, shape=shape, chunks=chunks, dtype="<f8", fill_value=3,
                               write_empty_chunks=empty, **CHAINS[chain])
        with monkeypatch.context() as m, zarrx.config.set(threads=threads):
            if way == "general":
                m.setattr(batch_write, "write_batches", lambda io, plan, value: False)
                m.setattr(batch_merge, "ENABLED", False)
            z[...] = rng.standard_normal(shape)       # chunks there already
            z[...] = a
            z[5:59, 3:45] = 7.5                        # a scalar, over a box of chunks
        got[way] = zarrx.open_array(store, mode="r")[...]
        stored[way] = _objects(store)
    assert stored["batch"] == stored["general"]
    np.testing.assert_array_equal(got["batch"], got["general"])
    np.testing.assert_allclose(got["batch"][5:59, 3:45], 7.5, atol=1e-9)   # delta: sums


def test_a_whole_write_of_delta_filtered_chunks_makes_no_python_call_per_chunk():
    """1,024 chunks of 4 KiB, v2 ``delta`` and ``zstd``: under 2 calls per chunk (before: 79,
    each chunk a projection, a fill test, an encode through each codec and a store call)."""
    a = np.random.default_rng(1).random((1024, 1024)).astype("f4")
    z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(32, 32), dtype="f4",
                           zarr_format=2, filters=[Delta(dtype="<f4")],
                           compressors=Zstd(level=0), fill_value=0)
    with zarrx.config.set(threads=1):
        z[...] = a
        per_chunk = calls_made(lambda: z.__setitem__(Ellipsis, a + 1)) / 1024
    assert per_chunk < 2, f"{per_chunk:.2f} calls per chunk"
    np.testing.assert_array_equal(z[...], a + 1)


@pytest.mark.parametrize("jump", [100, 40_000], ids=["held", "too-wide"])
def test_narrow_delta_differences_store_or_fail_as_by_the_general_path(monkeypatch, jump):
    """``delta`` of int32 stored as int16: differences int16 holds are stored as the general
    path stores them; one it does not hold fails as the general path fails, naming it."""
    a = np.arange(64 * 64, dtype="<i4").reshape(64, 64) % 7
    a[40, 17] = jump
    got = {}
    for way in ("batch", "general"):
        store = MemoryStore()
        z = zarrx.create_array(store, shape=a.shape, chunks=(8, 8), dtype="<i4", fill_value=0,
                               zarr_format=2, compressors=Zstd(level=1),
                               filters=[Delta(dtype="<i4", astype="<i2")])
        with monkeypatch.context() as m:
            if way == "general":
                m.setattr(batch_write, "write_batches", lambda io, plan, value: False)
            try:
                z[...] = a
            except zarrx.ZarrError as exc:
                got[way] = (type(exc), str(exc))
                continue
        got[way] = _objects(store)
    assert got["batch"] == got["general"]
    if jump > 2**15:
        cls, text = got["batch"]
        assert issubclass(cls, zarrx.CodecError)
        assert text.startswith("array '/' chunk '5.2': numcodecs.delta: the difference "
                               "between items 0 and 1, 40000, is not held"), text
