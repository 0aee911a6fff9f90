"""A value given as :class:`~zarrx.store.pieces.Pieces` (a shard rewritten in part: new inner
chunks between runs of the stored shard's bytes) is written to a file in ``writev`` batches of
at most ``_IOV_MAX`` parts and ``WRITE_PIECE`` bytes, a large part alone, found from the parts'
sizes together: no Python call per part."""
from __future__ import annotations

import os

import numpy as np
import pytest

from zarrx.store import LocalStore, localio
from zarrx.store.pieces import Pieces

from call_counts import calls_made


def _batches(sizes: list[int]) -> list[list[int]]:
    """The parts (by index) each write takes, part by part: the rule the batches follow."""
    out: list[list[int]] = []
    batch: list[int] = []
    total = 0
    for i, n in enumerate(sizes):
        if len(batch) == localio._IOV_MAX or (batch and total + n > localio.WRITE_PIECE):
            out.append(batch)
            batch, total = [], 0
        if n >= localio.WRITE_PIECE:
            out.append([i])
        elif n:
            batch.append(i)
            total += n
    if batch:
        out.append(batch)
    return out


def _parts(sizes: list[int]) -> list[bytes]:
    return [bytes([i % 251]) * n for i, n in enumerate(sizes)]


def _written(tmp_path, parts):
    """The path of a new file that ``localio.write_all`` wrote ``parts`` to."""
    path = tmp_path / "f"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        localio.write_all(fd, Pieces(parts))
    finally:
        os.close(fd)
    return path


@pytest.mark.parametrize("seed", range(8))
def test_parts_are_written_in_the_batches_of_the_rule(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    W = localio.WRITE_PIECE
    pool = [0, 1, 7, 4096, W // 3, W - 1, W, W + 5]
    sizes = [int(x) for x in rng.choice(pool, size=int(rng.integers(1, 40)),
                                        p=[.1, .3, .1, .3, .08, .04, .04, .04])]
    if seed == 0:
        sizes = [3] * (2 * localio._IOV_MAX + 5)       # more parts than one writev takes
    parts = _parts(sizes)
    seen: list[int] = []
    writev, write = os.writev, os.write
    monkeypatch.setattr(os, "writev", lambda fd, bufs: seen.append(len(bufs)) or writev(fd, bufs))
    monkeypatch.setattr(os, "write", lambda fd, buf: seen.append(-1) or write(fd, buf))
    path = _written(tmp_path, parts)
    assert path.read_bytes() == b"".join(parts)
    # a large part alone by write() (a piece at a time), the others batched by writev()
    want = []
    for batch in _batches(sizes):
        if len(batch) == 1 and sizes[batch[0]] >= W:
            want += [-1] * -(-sizes[batch[0]] // W)
        else:
            want.append(len(batch))
    assert seen == want


def test_a_shard_of_many_parts_is_written_with_no_call_per_part(tmp_path):
    store = LocalStore(str(tmp_path))
    parts = _parts([16, 0, 300] * 1500)                 # 4,500 parts, 3,000 of them written
    value = Pieces(parts)
    store.set("c/0", value)
    per_part = calls_made(lambda: store.set("c/0", value)) / len(parts)
    assert per_part < 0.1, f"{per_part:.2f} calls per part"     # (before: 2)
    assert store.get("c/0") == b"".join(parts)


@pytest.mark.parametrize("seed", range(6))
def test_short_writes_leave_the_file_whole(tmp_path, monkeypatch, seed):
    """``writev`` and ``write`` may write less than they are given (a signal, a full pipe):
    the rest is written, in order, and no call takes an empty part, more than ``_IOV_MAX``
    parts or more than ``WRITE_PIECE`` bytes, whatever the parts' sizes around those limits."""
    rng = np.random.default_rng(seed)
    W, most = localio.WRITE_PIECE, localio._IOV_MAX
    pool = [1, 2, 4096, W // 2, W - 1, W, W + 1]
    # about _IOV_MAX parts not empty (all small for even seeds: one writev's worth, give or
    # take one), and empty ones among them
    sizes = [int(x) for x in rng.choice(pool, size=most - 1 + seed % 3, p=[.5, .3, .2, 0, 0, 0, 0]
                                        if seed % 2 == 0 else [.4, .3, .2, .04, .02, .02, .02])]
    for _ in range(int(rng.integers(0, 50))):
        sizes.insert(int(rng.integers(0, len(sizes) + 1)), 0)
    parts = _parts(sizes)
    writev, write = os.writev, os.write
    bad: list[str] = []

    def short(n: int) -> int:
        return int(rng.integers(1, n)) if n > 1 and rng.random() < 0.4 else n

    def part_writev(fd, bufs):
        views = [memoryview(b) for b in bufs]
        total = sum(v.nbytes for v in views)
        if not 0 < len(views) <= most or total > W or not all(v.nbytes for v in views):
            bad.append(f"writev of {len(views)} parts, {total} bytes")
        return write(fd, b"".join(views)[:short(total)])

    def part_write(fd, buf):
        view = memoryview(buf)
        if not 0 < view.nbytes <= W:
            bad.append(f"write of {view.nbytes} bytes")
        return write(fd, view[:short(view.nbytes)])

    monkeypatch.setattr(os, "writev", part_writev)
    monkeypatch.setattr(os, "write", part_write)
    path = _written(tmp_path, parts)
    monkeypatch.setattr(os, "writev", writev)
    monkeypatch.setattr(os, "write", write)
    assert bad == []
    assert path.read_bytes() == b"".join(parts)
