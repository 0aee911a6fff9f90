"""Outer selections that are not boxes (``oindex`` index arrays, stepped and reversed slices,
integers among slices) of sharded arrays of small inner chunks: what they return (against
numpy: repeated, unsorted and negative indices, empty selections, partial border shards,
shards never written, inner chunks emptied, several data types, both index locations, ``out=``,
zarr-python's reads of the same array), the errors they raise (corrupt inner chunks and
shard indexes: the error the general path raises, the first in shard-major order), and the
Python work per inner chunk (counted in calls, never timed)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import ZarrError
from zarrx.store.local import LocalStore
from zarrx.store.memory import MemoryStore

from call_counts import calls_made
from test_small_chunk_point_reads import sharded_with_holes  # noqa: E402 - shared setup

C = zarrx.codecs
STORED = {"raw": {"compressors": None}, "zstd": {"compressors": C.Zstd(level=1)},
          "zstd-crc32c": {"compressors": [C.Zstd(level=1), C.Crc32c()]}}
THREADS = pytest.mark.parametrize("threads", [1, 2], ids=["1thread", "2threads"])


def _store(where: str, tmp_path) -> object:
    return MemoryStore() if where == "memory" else LocalStore(str(tmp_path / "a.zarr"))


def _data(shape: tuple[int, ...], dtype: str = "f4", seed: int = 3) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * 100).astype(dtype)


def _outer(a: np.ndarray, sel: tuple) -> np.ndarray:
    """numpy's outer (``oindex``) selection of ``a``."""
    return a[np.ix_(*[np.arange(n)[s] if not isinstance(s, int) else np.array([s])
                      for s, n in zip(sel, a.shape)])].reshape(
        [len(np.arange(n)[s]) for s, n in zip(sel, a.shape) if not isinstance(s, int)])


RNG = np.random.default_rng(1)
IX, IY = RNG.integers(0, 1024, 700), RNG.integers(0, 1024, 700)
READS = {"oindex": (lambda z: z.oindex[IX, IY], lambda a: a[np.ix_(IX, IY)]),
         "sorted-oindex": (lambda z: z.oindex[np.sort(IX), np.sort(IY)],
                           lambda a: a[np.ix_(np.sort(IX), np.sort(IY))]),
         "steps": (lambda z: z[::2, ::-3], lambda a: a[::2, ::-3]),
         "array-and-step": (lambda z: z.oindex[IX, 1::3], lambda a: a[IX][:, 1::3])}


@pytest.mark.parametrize("codecs", ["raw", "zstd"])
@pytest.mark.parametrize("kind", list(READS))
@pytest.mark.parametrize("where", ["memory", "local"])
def test_an_outer_read_of_small_inner_chunks_of_shards_makes_few_calls_per_chunk(
        tmp_path, where, kind, codecs):
    """Outer selections over all 1,024 inner chunks of 4 KiB in 16 shards: calls are made per
    shard and per slab, not per inner chunk (26 to 39 calls per inner chunk, chunk by chunk)."""
    read, expect = READS[kind]
    a = _data((1024, 1024))
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(_store(where, tmp_path), shape=a.shape, chunks=(32, 32),
                               shards=(256, 256), dtype="f4", **STORED[codecs])
        z[...] = a
        np.testing.assert_array_equal(read(z), expect(a))
        got: list = []
        n = calls_made(lambda: got.append(read(z)))
    np.testing.assert_array_equal(got[0], expect(a))
    assert n / 1024 < 6, n


@pytest.mark.parametrize("codecs", ["raw", "zstd"])
def test_a_row_of_a_sharded_array_read_with_a_step_makes_calls_per_shard(codecs):
    """An integer and a stepped slice: 1,024 inner chunks in 8 shards, read through each
    shard's slots (32 to 45 calls per inner chunk, chunk by chunk)."""
    a = _data((64, 4096))
    with zarrx.config.set(threads=1):
        z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(4, 4),
                               shards=(16, 512), dtype="f4", **STORED[codecs])
        z[...] = a
        np.testing.assert_array_equal(z[5, ::-3], a[5, ::-3])
        got: list = []
        n = calls_made(lambda: got.append(z[5, ::-3]))
    np.testing.assert_array_equal(got[0], a[5, ::-3])
    assert n / 1024 < 4, n


def _selections(rng: np.random.Generator, shape: tuple[int, ...]) -> list[tuple]:
    """Outer selections: index arrays (repeated, unsorted, negative, empty), slices of any
    step (reversed, empty), integers among them."""
    out: list[tuple] = [(slice(None, None, -1), slice(None, None, 2)),
                        (np.array([], dtype=np.int64), np.arange(shape[1])),
                        (np.arange(shape[0])[::-1], slice(None)),
                        (slice(5, 5), slice(None, None, 3)),
                        (slice(None, None, -2), -1), (0, slice(None, None, -3))]
    for _ in range(12):
        arrays = [rng.integers(-n, n, int(rng.integers(1, 40))) for n in shape]
        steps = [slice(int(rng.integers(-n, n)), None, int(rng.choice([-5, -2, -1, 2, 3])))
                 for n in shape]
        out += [tuple(arrays), tuple(steps), (arrays[0], steps[1]), (steps[0], arrays[1]),
                (int(rng.integers(-shape[0], shape[0])), steps[1]),
                (np.sort(arrays[0]), np.unique(arrays[1]))]
    return out


@THREADS
@pytest.mark.parametrize("index_location", ["end", "start"])
@pytest.mark.parametrize("dtype", ["f8", "bool", "U2", "i2"])
def test_outer_reads_of_small_inner_chunks_of_shards_match_numpy(dtype, index_location,
                                                                 threads):
    """Partial border shards, shards never written and inner chunks emptied (the fill value),
    read as numpy reads them, into a new array and into ``out=``."""
    rng = np.random.default_rng(len(dtype) + len(index_location))
    with zarrx.config.set(threads=threads):
        a, z = sharded_with_holes(dtype, index_location)
        shape = a.shape
        for sel in _selections(rng, shape):
            want = _outer(a, sel)
            np.testing.assert_array_equal(z.oindex[sel], want, err_msg=repr(sel))
            out = np.empty(want.shape, dtype=z.dtype)
            z.get_orthogonal_selection(sel, out=out)
            np.testing.assert_array_equal(out, want, err_msg=repr(sel))
            if not any(isinstance(s, np.ndarray) for s in sel):
                np.testing.assert_array_equal(z[sel], want, err_msg=repr(sel))


@THREADS
@pytest.mark.parametrize("gather", ["outer-copy", "numpy"])
def test_outer_reads_split_into_slabs_match_numpy(monkeypatch, gather, threads):
    """A shard's inner chunks are decoded a slab of rows at a time: slabs of one row of
    inner chunks, their cells gathered by a copy between outer products or by numpy (slabs
    larger than ``OUTER_COPY_BYTES``), read as numpy reads them."""
    from zarrx import shard_read
    monkeypatch.setattr(shard_read, "SLAB_BYTES", 1)
    if gather == "numpy":
        monkeypatch.setattr(shard_read, "OUTER_COPY_BYTES", 0)
    a = _data((60, 60))
    rng = np.random.default_rng(7)
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(MemoryStore(), shape=a.shape, chunks=(4, 4), shards=(20, 20),
                               dtype="f4", compressors=C.Zstd(level=1))
        z[...] = a
        for sel in _selections(rng, a.shape):
            np.testing.assert_array_equal(z.oindex[sel], _outer(a, sel), err_msg=repr(sel))


@THREADS
def test_outer_reads_over_many_shards_mostly_never_written_are_the_fill_value(tmp_path,
                                                                              threads):
    """Reads of 16 or more shards skip the shards the store tells are not stored: those
    read as the fill value, the stored ones as written."""
    a = np.full((96, 96), 7, dtype="i4")
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(LocalStore(str(tmp_path / "a.zarr")), shape=a.shape,
                               chunks=(2, 2), shards=(8, 8), dtype="i4", fill_value=7,
                               compressors=C.Zstd(level=1))
        a[10:14, 40:60] = np.arange(80).reshape(4, 20)
        z[10:14, 40:60] = a[10:14, 40:60]
        for sel in [(slice(None, None, 3), slice(None, None, -1)),
                    (np.arange(96)[::-1], np.array([41, 0, 59, 41, 95]))]:
            np.testing.assert_array_equal(z.oindex[sel], _outer(a, sel))


def _corrupt(z, key: str, at: int) -> None:
    v = bytearray(z.store.get(key))
    v[at] ^= 0xFF
    z.store.set(key, bytes(v))


@THREADS
@pytest.mark.parametrize("index_location", ["end", "start"])
def test_a_corrupt_inner_chunk_in_an_outer_read_raises_what_reading_it_alone_raises(
        index_location, threads):
    """Two shards with a corrupt inner chunk each: the error is that of the first in C order
    of the shards, the one reading that inner chunk alone raises, even when read in reverse."""
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(MemoryStore(), shape=(64, 64), chunks=(4, 4), dtype="f4",
                               shards={"shape": (16, 16), "index_location": index_location},
                               compressors=[C.Zstd(level=1), C.Crc32c()])
        z[...] = _data((64, 64))
        first = 20 if index_location == "end" else 16 * 16 + 4 + 20   # past the index
        for key in ("c/1/2", "c/3/0"):
            _corrupt(z, key, first)                   # inside the shard's first inner chunk
        with pytest.raises(ZarrError) as alone:
            z[16:20, 32:36]
        assert "'c/1/2'" in str(alone.value)
        rng = np.random.default_rng(3)
        for sel in [np.s_[::2, ::-3], np.s_[::-1, 0:64:5], np.s_[17, ::-1],
                    (rng.integers(0, 64, 300), rng.integers(0, 64, 300)[::-1])]:
            with pytest.raises(ZarrError) as got:
                z.oindex[sel]
            assert str(got.value) == str(alone.value)
            assert type(got.value) is type(alone.value)


@THREADS
def test_a_corrupt_shard_index_in_an_outer_read_raises_what_reading_the_shard_raises(threads):
    """A shard whose index does not check: the outer read raises what a box read of that
    shard raises, naming the shard."""
    with zarrx.config.set(threads=threads):
        z = zarrx.create_array(MemoryStore(), shape=(64, 64), chunks=(4, 4), shards=(16, 16),
                               dtype="f4", compressors=C.Zstd(level=1))
        z[...] = _data((64, 64))
        v = z.store.get("c/2/1")
        _corrupt(z, "c/2/1", len(v) - 6)          # the index's checksum
        with pytest.raises(ZarrError) as alone:
            z[32:48, 16:32]
        assert "'c/2/1'" in str(alone.value)
        for sel in [np.s_[::3, ::-2], np.s_[40, 1::2]]:
            with pytest.raises(ZarrError) as got:
                z.oindex[sel]
            assert str(got.value) == str(alone.value)
            assert type(got.value) is type(alone.value)


def test_outer_reads_match_zarr_python_both_ways(tmp_path):
    """An array of small inner chunks written by zarr-python reads as zarr-python reads it,
    and one written by zarrx reads the same in zarr-python."""
    zarr = pytest.importorskip("zarr")
    a = _data((70, 50), "i4")
    rng = np.random.default_rng(9)
    # zarr-python refuses slices of negative step
    sels = [s for s in _selections(rng, a.shape)
            if not any(isinstance(x, slice) and (x.step or 1) < 0 for x in s)]
    theirs = zarr.create_array(str(tmp_path / "theirs.zarr"), shape=a.shape, chunks=(5, 5),
                               shards=(20, 25), dtype="i4")
    theirs[...] = a
    ours = zarrx.open_array(str(tmp_path / "theirs.zarr"), mode="r")
    for sel in sels:
        np.testing.assert_array_equal(ours.oindex[sel], theirs.oindex[sel], err_msg=repr(sel))
    mine = zarrx.create_array(LocalStore(str(tmp_path / "ours.zarr")), shape=a.shape,
                              chunks=(5, 5), shards=(20, 25), dtype="i4")
    mine[...] = a
    read = zarr.open_array(str(tmp_path / "ours.zarr"), mode="r")
    for sel in sels:
        np.testing.assert_array_equal(read.oindex[sel], mine.oindex[sel], err_msg=repr(sel))


@pytest.mark.parametrize("shards", [(8, 10), None], ids=["sharded", "unsharded"])
@pytest.mark.parametrize("kind", ["basic", "orthogonal"])
@pytest.mark.parametrize("sel", [(slice(None, None, -1),) * 2,
                                 (slice(None, None, -1), slice(1, 19)),
                                 (slice(22, 1, -2), slice(None)),
                                 (slice(None), slice(18, None)),
                                 (slice(3, 17), slice(2, None, 3))])
def test_selections_read_into_an_out_of_an_ndarray_subclass(shards, kind, sel):
    # out= takes any ndarray; the readers reshaped views of a subclass that allows 2 axes only
    # (np.matrix): a ValueError ("shape too large to be a matrix")
    z = zarrx.create_array(MemoryStore(), shape=(24, 20), dtype="i4", chunks=(2, 2),
                           shards=shards)
    data = np.arange(480, dtype="i4").reshape(24, 20)
    z[...] = data
    expected = data[sel]
    with warnings.catch_warnings():     # (numpy: "the matrix subclass is not the recommended...")
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        out = np.asmatrix(np.full(expected.shape, -7, "i4"))
    got = getattr(z, f"get_{kind}_selection")(sel, out=out)
    assert got is out and type(got) is np.matrix
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("shards", [(8, 10), None], ids=["sharded", "unsharded"])
@pytest.mark.parametrize("sel", [(slice(None),) * 2, (slice(None, None, -1),) * 2,
                                 (slice(0, 4), slice(18, None))])
def test_a_masked_out_gets_the_values_and_keeps_its_mask(shards, sel):
    # (before: some selections unmasked what they wrote, others not, and a corner of the
    # array raised numpy's ValueError "cannot reshape array of size 4 into shape (16,)")
    z = zarrx.create_array(MemoryStore(), shape=(24, 20), dtype="i4", chunks=(2, 2),
                           shards=shards)
    data = np.arange(480, dtype="i4").reshape(24, 20)
    z[...] = data
    out = np.ma.masked_all(data[sel].shape, "i4")
    assert z.get_orthogonal_selection(sel, out=out) is out
    np.testing.assert_array_equal(out.data, data[sel])
    assert out.mask.all()
