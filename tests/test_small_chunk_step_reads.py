"""Reads of many small chunks that are not boxes: slices with a step (positive or negative),
integers among them, ``oindex`` with slices and index arrays. What they return (against
numpy, with missing chunks, border chunks, fill values, v2 Fortran order, ``out=``), the
errors of chunks that do not decode, the chunks they fetch, and the Python work per chunk
(counted in calls, never timed)."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError
from zarrx.store.local import LocalStore
from zarrx.store.memory import MemoryStore

from call_counts import calls_made

C = zarrx.codecs
STORED = {"raw": {"compressors": None}, "zstd": {"compressors": C.Zstd(level=1)},
          "zstd-crc32c": {"compressors": [C.Zstd(level=1), C.Crc32c()]},
          "blosc": {"compressors": C.Blosc()}, "gzip": {"compressors": C.Gzip(level=1)}}


def _store(where: str, tmp_path) -> object:
    return MemoryStore() if where == "memory" else LocalStore(str(tmp_path / "a.zarr"))


def _data(shape: tuple[int, ...], dtype: str = "f4", seed: int = 3) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 100).astype(dtype)


@pytest.mark.parametrize("codecs", list(STORED))
@pytest.mark.parametrize("where", ["memory", "local"])
@pytest.mark.parametrize("sel", [np.s_[::2, ::2], np.s_[::-1, ::-3], np.s_[::-2],
                                 np.s_[np.arange(1023, 0, -3), ::3]],
                         ids=["step2", "reversed", "1d", "array"])
def test_a_stepped_read_of_1024_small_chunks_makes_under_one_call_per_chunk(
        tmp_path, where, codecs, sel):
    """1,024 chunks of 4 KiB read with a step (or an index array): the general path made 13
    to 41 calls per chunk (a projection, a store request, a decode and a copy each)."""
    shape, chunks = ((1 << 20,), (1024,)) if isinstance(sel, slice) else ((1024, 1024), (32, 32))
    a = _data(shape)
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(_store(where, tmp_path), shape=shape, chunks=chunks, dtype="f4",
                               **STORED[codecs])
        z[...] = a
        np.testing.assert_array_equal(z[sel], a[sel])     # plans made, index cached
        got: list = []
        n = calls_made(lambda: got.append(z[sel]))
    np.testing.assert_array_equal(got[0], a[sel])
    # a gzip chunk counts at its stored-size limit in a slab (78 KiB for 4 KiB: a member may
    # carry a 64 KiB header field), so 1,024 of them take three slabs of 32 MiB stored
    assert n / 1024 < (1.5 if codecs == "gzip" else 1), n


def test_chunks_a_step_skips_are_not_fetched():
    """A step of three chunks reads a third of the chunks along each axis."""
    fetched: list = []

    class Counting(MemoryStore):
        def get(self, key, *args, **kwargs):
            fetched.append(key)
            return super().get(key, *args, **kwargs)

        def get_many(self, requests, *args, **kwargs):
            requests = list(requests)
            fetched.extend(r[0] for r in requests)
            return super().get_many(requests, *args, **kwargs)

        def get_many_buffers(self, requests, *args, **kwargs):
            requests = list(requests)
            fetched.extend(r[0] for r in requests)
            return super().get_many_buffers(requests, *args, **kwargs)

    a = _data((96, 96))
    z = zarrx.create_array(Counting(), shape=a.shape, chunks=(4, 4), dtype="f4")
    z[...] = a
    fetched.clear()
    np.testing.assert_array_equal(z[1::12, ::-12], a[1::12, ::-12])
    chunk_keys = {k for k in fetched if k.startswith("c/")}
    assert chunk_keys == {f"c/{i}/{j}" for i in range(0, 24, 3) for j in range(2, 24, 3)}


def _steps(rng: np.random.Generator, n: int) -> slice:
    step = int(rng.choice([s for s in range(-5, 6) if s]))
    start = None if rng.random() < .3 else int(rng.integers(-n - 2, n + 2))
    stop = None if rng.random() < .3 else int(rng.integers(-n - 2, n + 2))
    return slice(start, stop, step)


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
@pytest.mark.parametrize("layout", ["v3", "v2-C", "v2-F"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("where", ["memory", "local"])
def test_stepped_reads_of_small_chunks_match_numpy(tmp_path, where, ndim, layout, threads):
    """Random slices (steps -5 to 5, starts and stops anywhere), integers and index arrays
    over an array of partial border chunks, some chunks never written, some emptied (the
    fill value), read as numpy reads them; into ``out=`` too."""
    rng = np.random.default_rng(ndim * 10 + len(layout))
    shape = [(203,), (37, 29), (13, 11, 9)][ndim - 1]
    chunks = [(4,), (3, 4), (2, 3, 2)][ndim - 1]
    a = np.full(shape, -1.5, dtype="f8")
    kw = {} if layout == "v3" else {"zarr_format": 2, "order": layout[-1]}
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(_store(where, tmp_path), shape=shape, chunks=chunks, dtype="f8",
                               fill_value=-1.5, compressors=C.Zstd(level=1), **kw)
        part = tuple(slice(s // 4, s - 1) for s in shape)
        a[part] = _data(a[part].shape, "f8")
        z[part] = a[part]
        a[part[0].start:part[0].start + 2] = -1.5       # emptied chunks
        z[part[0].start:part[0].start + 2] = -1.5
        for _ in range(40):
            sel = tuple(_steps(rng, n) for n in shape)
            if ndim > 1 and rng.random() < .3:
                ax = int(rng.integers(0, ndim))
                sel = sel[:ax] + (int(rng.integers(-shape[ax], shape[ax])),) + sel[ax + 1:]
            want = a[sel]
            np.testing.assert_array_equal(z[sel], want, err_msg=repr(sel))
            out = np.empty(want.shape, dtype="f8")
            z.get_basic_selection(sel, out=out)
            np.testing.assert_array_equal(out, want, err_msg=repr(sel))
            osel = sel[:-1] + (rng.integers(0, shape[-1], 7),)
            want = a[np.ix_(*[np.arange(n)[s] if not isinstance(s, int) else [s]
                              for s, n in zip(osel[:-1], shape)], osel[-1])]
            got = z.get_orthogonal_selection(osel)
            np.testing.assert_array_equal(got.reshape(want.shape), want, err_msg=repr(osel))


@pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])
@pytest.mark.parametrize("where", ["memory", "local"])
def test_a_corrupt_chunk_in_a_stepped_read_raises_what_reading_it_alone_raises(
        tmp_path, where, threads):
    """The error names the chunk's key and says what reading that chunk alone says; with two
    corrupt chunks, the first in C order of their coordinates, even when read in reverse."""
    store = _store(where, tmp_path)
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(store, shape=(64, 64), chunks=(4, 4), dtype="f4",
                               compressors=C.Zstd(level=1))
        z[...] = _data((64, 64))
        store.set("c/9/3", b"not a zstd frame at all")
        store.set("c/12/1", b"not a zstd frame either")
        with pytest.raises(CodecError) as alone:
            z[36:40, 12:16]
        for sel in [np.s_[::2, ::3], np.s_[::-1, ::-1], np.s_[1::5, 14]]:
            with pytest.raises(CodecError) as stepped:
                z[sel]
            assert "'c/9/3'" in str(stepped.value)
            assert str(stepped.value) == str(alone.value)
            assert type(stepped.value) is type(alone.value)
