"""Box reads from a LocalStore: a selection of integers and step-1 slices of an array of raw,
unsharded chunks is read by the store's kernel straight into the output, with no Python work
per chunk. What it reads must equal numpy, on every grid, key encoding and thread count; and
every chunk the kernel cannot vouch for (a wrong size, a link, an unreadable file) must read
exactly as the general path reads it, errors included."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import zarrx
from zarrx import box_read
from zarrx.errors import CodecError, ZarrError
from zarrx.store import LocalStore

from box_arrays import draw_box, raw_array
from zarrx.store._localbox import read_box


@pytest.fixture
def python_reads(monkeypatch):
    """The chunk keys the general path reads from a LocalStore (the box reader reads none)."""
    seen: list[str] = []
    orig = LocalStore._get_batch

    def recording(self, reqs, arena=None):
        seen.extend(k for k, _ in reqs if k.startswith("c/") or "/c/" in k)
        return orig(self, reqs, arena)

    monkeypatch.setattr(LocalStore, "_get_batch", recording)
    return seen


@pytest.fixture
def kernel_calls(monkeypatch):
    """How many times the box kernel ran."""
    import zarrx.store.localboxes as local
    calls = []
    orig = local.read_box

    def counting(*args):
        calls.append(args[2])
        return orig(*args)

    monkeypatch.setattr(local, "read_box", counting)
    return calls


_array = raw_array


def _reopen(path):
    return zarrx.open_array(LocalStore(path), path="g/a", mode="r")


@st.composite
def cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 13)) for _ in range(ndim))
    chunks = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    written = tuple(slice(0, draw(st.integers(0, n))) for n in shape)
    sel = draw_box(draw, st, shape)
    fmt = draw(st.sampled_from([2, 3]))
    return shape, chunks, written, sel, fmt, draw(st.sampled_from(["/", "."])), \
        draw(st.sampled_from(["f4", "u1", "i8", "c8"])), draw(st.sampled_from([1, 2]))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases())
def test_box_reads_match_numpy(tmp_path_factory, case):
    shape, chunks, written, sel, fmt, sep, dtype, threads = case
    path = tmp_path_factory.mktemp("box")
    z = _array(path, shape, chunks, dtype, fmt, sep)
    src = np.arange(int(np.prod(shape))).reshape(shape).astype(dtype) + 1
    z[written] = src[written]
    ref = np.full(shape, 7, dtype)
    ref[written] = src[written]
    with zarrx.config.set(threads=threads):
        r = _reopen(path)
        np.testing.assert_array_equal(r[sel], ref[sel])
        np.testing.assert_array_equal(r[...], ref)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_many_chunks_on_several_threads(tmp_path, python_reads, threads):
    a = np.random.default_rng(5).random((300, 517)).astype("f8")
    z = _array(tmp_path, a.shape, (7, 64), "f8", fill=np.nan)
    z[...] = a
    z[50:80, 100:300] = np.nan                     # absent chunks read as the fill value
    a[50:80, 100:300] = np.nan
    with zarrx.config.set(threads=threads):
        r = _reopen(tmp_path)
        np.testing.assert_array_equal(r[...], a)
        np.testing.assert_array_equal(r[3:299, 5], a[3:299, 5])
        np.testing.assert_array_equal(r[1:2, 60:461], a[1:2, 60:461])
        out = np.empty((296, 400))
        r.get_basic_selection((slice(3, 299), slice(17, 417)), out=out)
        np.testing.assert_array_equal(out, a[3:299, 17:417])
    assert python_reads == []                      # every chunk came through the kernel


def test_only_raw_unsharded_boxes_take_the_kernel(tmp_path, kernel_calls):
    a = np.arange(64 * 64, dtype="i4").reshape(64, 64)
    z = _array(tmp_path, a.shape, (16, 16), "i4")
    z[...] = a
    r = _reopen(tmp_path)
    np.testing.assert_array_equal(r[2:60, 3:9], a[2:60, 3:9])
    assert len(kernel_calls) == 1
    kernel_calls.clear()
    np.testing.assert_array_equal(r[::2, 3:9], a[::2, 3:9])         # a step: the general path
    np.testing.assert_array_equal(r.oindex[[1, 40], :], a[[1, 40], :])
    out = np.empty((64, 64), dtype="i4", order="F")                  # not C-contiguous
    r.get_basic_selection(Ellipsis, out=out)
    np.testing.assert_array_equal(out, a)
    assert kernel_calls == []
    for name, kw in [("zstd", {"compressors": zarrx.codecs.Zstd(level=1)}),
                     ("crc", {"compressors": [zarrx.codecs.Crc32c()]}),
                     ("sharded", {"shards": (32, 32)})]:
        kw.setdefault("compressors", None)
        s = zarrx.create_array(LocalStore(tmp_path / name), shape=a.shape, chunks=(16, 16),
                               dtype="i4", **kw)
        s[...] = a
        np.testing.assert_array_equal(zarrx.open_array(LocalStore(tmp_path / name))[...], a)
        assert kernel_calls == [], name


def _chunk_file(path, *coords):
    return os.path.join(path, "g", "a", "c", *map(str, coords))


@pytest.mark.parametrize("shape, chunks", [((8, 8), (4, 4)), ((8, 256), (4, 64)),
                                           ((8, 8), (4, 8)), ((16, 600), (8, 300))],
                         ids=["copied", "scattered", "one-run", "scattered-wide"])
@pytest.mark.parametrize("delta", [-1, 1], ids=["short", "long"])
def test_a_chunk_of_the_wrong_size_is_worded_by_the_general_path(tmp_path, python_reads, shape,
                                                                 chunks, delta):
    z = _array(tmp_path, shape, chunks, "f4")
    z[...] = 1
    nbytes = 4 * chunks[0] * chunks[1]
    with open(_chunk_file(tmp_path, 1, 0), "wb") as f:
        f.write(b"\0" * (nbytes + delta))
    for sel in [Ellipsis, np.s_[3:chunks[0] + 2, 2:5]]:    # whole chunks, and parts of chunks
        python_reads.clear()
        with pytest.raises(CodecError) as err:
            _reopen(tmp_path)[sel]
        assert python_reads == ["g/a/c/1/0"]
        assert f"expected {nbytes} bytes for a chunk of shape {chunks} and data type float32, " \
            f"found {nbytes + delta}" in str(err.value)
        assert "'g/a/c/1/0'" in str(err.value)


def test_links_and_odd_files_read_as_the_general_path_reads_them(tmp_path, monkeypatch):
    z = _array(tmp_path, (8, 8), (4, 4), "i2")
    z[...] = 3
    os.remove(_chunk_file(tmp_path, 0, 1))
    os.symlink(_chunk_file(tmp_path, 0, 0), _chunk_file(tmp_path, 0, 1))   # a link: refused
    os.remove(_chunk_file(tmp_path, 1, 1))
    os.mkdir(_chunk_file(tmp_path, 1, 1))                                   # not a file

    def outcome():
        try:
            return _reopen(tmp_path)[...]
        except ZarrError as exc:
            return type(exc), str(exc)

    fast = outcome()
    monkeypatch.setattr(box_read, "read_box", lambda io, plan, out: False)
    general = outcome()
    assert type(fast) is type(general)
    if isinstance(fast, tuple):
        assert fast == general
    else:
        np.testing.assert_array_equal(fast, general)


def test_the_kernel_checks_its_arguments():
    out = np.zeros((4, 4), "f4")
    SCR = np.zeros(16, np.uint8)
    for args, msg in [
        ((b"/x/", "/", out, (0, 0), (2, 2), b"\0" * 4, SCR, 0, 0, 0, 5), "outside 0..4"),
        ((b"/x/", "/", out, (0, 0), (2, 2), b"\0" * 2, SCR, 0, 0, 0, 1), "fill value of 4 bytes"),
        ((b"/x/", ",", out, (0, 0), (2, 2), b"\0" * 4, SCR, 0, 0, 0, 1), "separator"),
        ((b"/x/", "/", out, (0,), (2, 2), b"\0" * 4, SCR, 0, 0, 0, 1), "start and chunk"),
        ((b"/x/", "/", out, (0, 0), (0, 2), b"\0" * 4, SCR, 0, 0, 0, 1), "chunk > 0"),
        ((b"/x/", "/", out, (0, 0), (1 << 62, 2), b"\0" * 4, SCR, 0, 0, 0, 1), "overflows"),
        ((b"/x/", "/", out[:, ::2], (0, 0), (2, 2), b"\0" * 4, SCR, 0, 0, 0, 1), "C-contiguous"),
        ((b"/" * 5000, "/", out, (0, 0), (2, 2), b"\0" * 4, SCR, 0, 0, 0, 1), "exceed"),
    ]:
        with pytest.raises(ValueError, match=msg):
            read_box(*args)
    with pytest.raises(ValueError, match="scratch array of at least 16 bytes, found 15"):
        read_box(b"/x/", "/", out, (0, 0), (2, 2), b"\0" * 4, SCR[:15], 0, 0, 0, 1)
    with pytest.raises(ValueError, match="writable C-contiguous scratch"):
        read_box(b"/x/", "/", out, (0, 0), (2, 2), b"\0" * 4, SCR[::2], 0, 0, 0, 1)


@pytest.mark.parametrize("nchunks", [1, 2, 5, 7, 9, 13, 17, 31])
@pytest.mark.parametrize("threads", [2, 3])
def test_every_split_into_tasks_covers_each_chunk_once(tmp_path, nchunks, threads):
    """Chunks of 1 MiB make one task per chunk up to four per thread: whatever the count, the
    ranges the threads take cover every chunk once."""
    a = np.arange(nchunks * (1 << 18), dtype="f4")
    z = _array(tmp_path, a.shape, (1 << 18,), "f4")
    z[...] = a
    with zarrx.config.set(threads=threads):
        np.testing.assert_array_equal(_reopen(tmp_path)[...], a)


def test_the_last_chunk_of_an_axis_of_2_63_minus_1_cells_is_clipped_to_the_box(tmp_path):
    """That chunk ends past 2**63 - 1: its end wrapped, so its part inside the box was taken
    whole and its file read over the end of the output (the heap was corrupted)."""
    n, c = 2**63 - 1, 1000
    last = (n - 1) // c * c                         # the last chunk holds n - last = 807 cells
    z = _array(tmp_path, (n,), (c,), "u1")
    z[last:] = np.arange(n - last, dtype="u1")
    assert os.path.getsize(_chunk_file(tmp_path, last // c)) == c
    r = _reopen(tmp_path)
    np.testing.assert_array_equal(r[last:], np.arange(n - last, dtype="u1"))
    np.testing.assert_array_equal(r[-5:], np.arange(n - last, dtype="u1")[-5:])
    guard = np.full(n - last + 64, 0xEE, np.uint8)  # the kernel writes the output, not past it
    left = read_box(os.fsencode(_chunk_file(tmp_path, "")), "/", guard[:n - last], (last,),
                    (c,), b"\0", np.zeros(c, np.uint8), 0, 0, 0, 1)
    assert left == []
    np.testing.assert_array_equal(guard[:n - last], np.arange(n - last, dtype="u1"))
    assert (guard[n - last:] == 0xEE).all()


def test_chunks_of_more_than_2_62_bytes_read_through_the_kernel(tmp_path):
    """The kernel refused them with a ValueError, which reached the caller."""
    z = _array(tmp_path, (2**63 - 1,), (2**62 + 8,), "u1")
    np.testing.assert_array_equal(_reopen(tmp_path)[:5], np.full(5, 7, "u1"))
    with pytest.raises(ValueError, match="the box on axis 0 .* ends past 2"):
        read_box(b"/x/", "/", np.zeros(4, "u1"), (2**63 - 3,), (8,), b"\0", np.zeros(8, "u1"),
                 0, 0, 0, 1)
