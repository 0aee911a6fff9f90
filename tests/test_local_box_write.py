"""Box writes to a LocalStore: a selection of integers and step-1 slices of an array of raw,
unsharded chunks is written by the store's kernel straight from the value, with no Python work
per chunk it covers whole. The files it writes must be the files the general path writes (same
keys, same bytes, same generations contract), on every grid, key encoding, fill setting and
thread count; chunks it leaves (covered in part, all fill, failing) go through the general
path, which merges, deletes or words them."""
from __future__ import annotations

import os
from time import time_ns

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import zarrx
from zarrx import batch_merge
from zarrx.errors import ZarrError
from zarrx.store import LocalStore

from box_arrays import (box_write_case, draw_box, raw_array, stored_both_ways,
                        whole_and_cell_writers)
from link_methods import linking  # noqa: F401  (a fixture)
from zarrx.store._localboxwrite import write_box


@pytest.fixture
def kernel_chunks(monkeypatch):
    """The chunk ranges the box kernel was asked to write, and what it left."""
    import zarrx.store.localboxes as local
    calls: list[tuple[int, int, list[int]]] = []
    orig = local.write_box

    def recording(*args):
        left = orig(*args)
        calls.append((args[-2], args[-1], left))
        return left

    monkeypatch.setattr(local, "write_box", recording)
    return calls


_array = raw_array


def _files(path) -> dict[str, bytes]:
    """Every chunk file below the array, by its path relative to the store."""
    out = {}
    root = os.path.join(path, "g", "a")
    for d, _, names in os.walk(root):
        for n in names:
            if n not in ("zarr.json", ".zarray", ".zattrs"):
                with open(os.path.join(d, n), "rb") as f:
                    out[os.path.relpath(os.path.join(d, n), path)] = f.read()
    return out


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 13)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    sel = draw_box(draw, st, shape)
    return (shape, chunks, sel, draw(st.sampled_from([2, 3])),
            draw(st.sampled_from(["/", "."])), draw(st.sampled_from(["f4", "u1", "i8", "c8"])),
            draw(st.sampled_from([1, 2])), draw(st.sampled_from(["data", "fill", "scalar"])),
            draw(st.booleans()), draw(st.booleans()))


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_box_writes_store_what_the_general_path_stores(tmp_path_factory, monkeypatch, case):
    shape, chunks, sel, fmt, sep, dtype, threads, kind, before, empty = case
    base, value, ref = box_write_case(shape, sel, dtype, kind, before)

    def make(way):
        path = tmp_path_factory.mktemp(way)
        z = _array(path, shape, chunks, dtype, fmt, sep, write_empty_chunks=empty)
        return (z, lambda: zarrx.open_array(LocalStore(path), path="g/a"),
                lambda: _files(path))

    stored_both_ways(monkeypatch, make, sel, value, ref, base, before, threads)


@pytest.mark.parametrize("merged", [False, True], ids=["one-by-one", "merged"])
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_whole_chunks_go_through_the_kernel_and_the_rest_through_the_general_path(
        tmp_path, kernel_chunks, threads, merged, monkeypatch):
    a = np.random.default_rng(5).random((300, 517)).astype("f8")
    z = _array(tmp_path, a.shape, (7, 64), "f8", fill=0.0)
    monkeypatch.setattr(batch_merge, "ENABLED", merged)
    with zarrx.config.set(threads=threads):
        z[...] = a
    # 43 x 9 chunks: the last row (300 = 42 * 7 + 6) and column (517 = 8 * 64 + 5) are border
    # chunks, left to the general path (they hold cells outside the array)
    left = sorted(i for _, _, part in kernel_chunks for i in part)
    if merged:    # the 51 border chunks merged a slab at a time, the kernel takes the rest
        assert sum(hi - lo for lo, hi, _ in kernel_chunks) == 42 * 8
        assert not left
    else:
        assert sum(hi - lo for lo, hi, _ in kernel_chunks) == 43 * 9
        assert left == sorted({r * 9 + 8 for r in range(43)} | set(range(42 * 9, 43 * 9)))
    np.testing.assert_array_equal(zarrx.open_array(LocalStore(tmp_path), path="g/a")[...], a)


def test_chunks_of_fill_are_deleted_not_written(tmp_path, kernel_chunks):
    z = _array(tmp_path, (8, 8), (4, 4), "i2", fill=0)
    z[...] = 5
    assert len(_files(tmp_path)) == 4
    z[:4, :] = 0                                 # two chunks become fill: their files go
    assert sorted(_files(tmp_path)) == ["g/a/c/1/0", "g/a/c/1/1"]
    assert not os.path.exists(tmp_path / "g" / "a" / "c" / "0")     # pruned, as a delete does
    z2 = _array(tmp_path / "keep", (8, 8), (4, 4), "i2", fill=0, write_empty_chunks=True)
    z2[...] = 0
    assert len(_files(tmp_path / "keep")) == 4


def test_a_strided_or_broadcast_value_is_gathered(tmp_path):
    a = np.arange(24 * 30, dtype="i4").reshape(24, 30)
    z = _array(tmp_path, (12, 15), (4, 5), "i4")
    z[...] = a[::-2, ::2]                         # negative and doubled strides
    np.testing.assert_array_equal(z[...], a[::-2, ::2])
    z[4:12, 5:15] = np.arange(10, dtype="i4")     # broadcast along the first axis
    want = a[::-2, ::2].copy()
    want[4:12, 5:15] = np.arange(10)
    np.testing.assert_array_equal(z[...], want)
    z[None, 0:4, 0:5] = -1                        # a new axis in the selection
    want[0:4, 0:5] = -1
    np.testing.assert_array_equal(z[...], want)


def test_only_raw_unsharded_native_boxes_take_the_kernel(tmp_path, kernel_chunks):
    a = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    z = _array(tmp_path, a.shape, (16, 16), "i4")
    z[::2, :] = a[::2, :]                        # a step: the general path
    z.oindex[[1, 40], :] = a[[1, 40], :]
    assert kernel_chunks == []
    for name, kw in [("zstd", {"compressors": zarrx.codecs.Zstd(level=1)}),
                     ("crc", {"compressors": [zarrx.codecs.Crc32c()]}),
                     ("sharded", {"shards": (32, 32)}),
                     ("nan", {"fill_value": np.nan, "dtype": "f4"})]:
        kw.setdefault("compressors", None)
        kw.setdefault("dtype", "i4")
        s = zarrx.create_array(LocalStore(tmp_path / name), shape=a.shape, chunks=(16, 16), **kw)
        s[...] = a
        np.testing.assert_array_equal(zarrx.open_array(LocalStore(tmp_path / name))[...], a)
        assert kernel_chunks == [], name
    ro = zarrx.open_array(LocalStore(tmp_path, read_only=True), path="g/a", mode="r")
    with pytest.raises(ZarrError):
        ro[...] = a
    assert kernel_chunks == []


def test_a_failing_chunk_is_worded_by_the_general_path(tmp_path, kernel_chunks):
    z = _array(tmp_path, (8, 8), (4, 4), "i2")
    z[...] = 1
    target = tmp_path / "g" / "a" / "c" / "1" / "0"
    os.remove(target)
    os.mkdir(target)                              # a directory where a chunk file goes
    (target / "x").write_bytes(b"")
    with pytest.raises(ZarrError) as err:
        z[...] = 2
    assert "g/a/c/1/0" in str(err.value)
    assert [left for _, _, left in kernel_chunks][-1] == [2]
    os.remove(target / "x")
    os.rmdir(target)
    z[...] = 2
    np.testing.assert_array_equal(z[...], np.full((8, 8), 2, "i2"))


def test_a_link_on_the_way_is_refused(tmp_path):
    z = _array(tmp_path / "s", (8, 8), (4, 4), "i2")
    z[...] = 1
    outside = tmp_path / "outside"
    outside.mkdir()
    c1 = tmp_path / "s" / "g" / "a" / "c" / "1"
    for name in os.listdir(c1):
        os.remove(c1 / name)
    os.rmdir(c1)
    os.symlink(outside, c1)                       # a folder of the array is a link
    with pytest.raises(ZarrError):
        z[...] = 2
    assert os.listdir(outside) == []              # nothing was written through it


def test_the_kernel_checks_its_arguments():
    src = np.zeros((4, 4), "f4")
    SCR = np.zeros(16, np.uint8)
    for args, msg in [
        ((b"/x/", "/", src, (0, 0), (2, 2), None, SCR, 0, False, 0, 5), "outside 0..4"),
        ((b"/x/", "/", src, (0, 0), (2, 2), b"\0" * 2, SCR, 0, False, 0, 1),
         "fill value of 4 bytes"),
        ((b"/x/", ",", src, (0, 0), (2, 2), None, SCR, 0, False, 0, 1), "separator"),
        ((b"/x/", "/", src, (0,), (2, 2), None, SCR, 0, False, 0, 1), "start and chunk"),
        ((b"/x/", "/", src, (0, 0), (0, 2), None, SCR, 0, False, 0, 1), "chunk > 0"),
        ((b"/x/", "/", src, (0, 0), (1 << 62, 2), None, SCR, 0, False, 0, 1), "overflows"),
        ((b"/x/", "/", src, (-1, 0), (2, 2), None, SCR, 0, False, 0, 1), "start >= 0"),
        ((b"x/", "/", src, (0, 0), (2, 2), None, SCR, 0, False, 0, 1), "absolute"),
        ((b"/" * 5000, "/", src, (0, 0), (2, 2), None, SCR, 0, False, 0, 1), "exceed"),
        ((b"/x/", "/", np.zeros((2, 2), object), (0, 0), (2, 2), None, SCR, 0, False, 0, 1),
         "fixed-size"),
    ]:
        with pytest.raises(ValueError, match=msg):
            write_box(*args)
    with pytest.raises(ValueError, match="scratch array of at least 16 bytes, found 15"):
        write_box(b"/x/", "/", src, (0, 0), (2, 2), None, SCR[:15], 0, False, 0, 1)
    with pytest.raises(ValueError, match="writable C-contiguous scratch"):
        write_box(b"/x/", "/", src, (0, 0), (2, 2), None, SCR[::2], 0, False, 0, 1)


@pytest.mark.parametrize("nchunks", [1, 2, 5, 7, 9, 13, 17, 31])
@pytest.mark.parametrize("threads", [2, 3])
def test_every_split_into_tasks_covers_each_chunk_once(tmp_path, kernel_chunks, nchunks,
                                                       threads):
    a = np.arange(nchunks * (1 << 18), dtype="f4")
    z = _array(tmp_path, a.shape, (1 << 18,), "f4")
    with zarrx.config.set(threads=threads):
        z[...] = a
    covered = sorted(i for lo, hi, _ in kernel_chunks for i in range(lo, hi))
    assert covered == list(range(nchunks))
    np.testing.assert_array_equal(zarrx.open_array(LocalStore(tmp_path), path="g/a")[...], a)


def test_whole_chunk_writes_and_partial_writes_of_one_chunk_lose_nothing(tmp_path, kernel_chunks,
                                                                          linking):
    """Whole replaces through the kernel (no object lock) against single-cell writes (see
    :func:`box_arrays.whole_and_cell_writers`) lose no update."""
    z = _array(tmp_path, (64,), (64,), "i4", fill=0)
    whole_and_cell_writers(z, 300)
    assert kernel_chunks == [(0, 1, [])] * 300      # every whole write took the kernel


def test_a_file_system_whose_locks_may_not_order_threads_takes_the_general_path(
        tmp_path, kernel_chunks, monkeypatch):
    """The kernel orders its replaces with conditional writers by ``flock`` alone; where a file
    system may emulate it per process (network file systems), writes keep the general path and
    its in-process object locks."""
    import zarrx.store.local as local
    from zarrx.store._localwrite import flock_orders_threads
    assert flock_orders_threads(str(tmp_path).encode())
    assert not flock_orders_threads(b"/proc")
    assert not flock_orders_threads(b"/no/such/place")
    monkeypatch.setattr(local, "flock_orders_threads", lambda path: False)
    z = _array(tmp_path, (8, 8), (4, 4), "i2")
    z[...] = 3
    assert kernel_chunks == []
    np.testing.assert_array_equal(z[...], np.full((8, 8), 3, "i2"))


def test_a_replaced_chunk_gets_a_later_generation_than_the_one_it_replaces(tmp_path,
                                                                          kernel_chunks, linking):
    """Generations of a LocalStore are stamped with the clock; a chunk whose stored stamp is
    ahead of the clock (another machine's, a coarse one) still gets a later one."""
    z = _array(tmp_path, (8,), (4,), "i2")
    z[...] = 1
    f = tmp_path / "g" / "a" / "c" / "0"
    ahead = time_ns() + 10**10
    os.utime(f, ns=(ahead, ahead))
    z[...] = 2
    assert kernel_chunks[-1] == (0, 2, [])
    assert os.stat(f).st_mtime_ns > ahead
    np.testing.assert_array_equal(z[...], np.full(8, 2, "i2"))


def test_whole_chunks_past_2_62_on_an_axis_of_2_63_minus_1_cells(tmp_path, kernel_chunks):
    """The kernel refused a box starting past 2**62 with a ValueError, which reached the
    caller; the last chunk of such an axis (which ends past 2**63 - 1) is covered in part."""
    n, c = 2**63 - 1, 1000
    z = _array(tmp_path, (n,), (c,), "u1")
    start = (2**62 // c + 5) * c
    last = (n - 1) // c * c
    z[start:start + 2 * c] = 3
    z[last - c:] = 4
    assert [left for _, _, left in kernel_chunks] == [[], [1]]
    r = zarrx.open_array(LocalStore(tmp_path), path="g/a", mode="r")
    np.testing.assert_array_equal(r[start - 1:start + 2 * c + 1], [7] + [3] * 2 * c + [7])
    np.testing.assert_array_equal(r[last - c - 1:], [7] + [4] * (n - last + c))
