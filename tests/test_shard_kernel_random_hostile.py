"""Random hostile shard indexes read through the shard kernels of a MemoryStore and a
LocalStore: entries whose offsets and lengths are 0, 1, 2^63 - 1, 2^63, 2^64 - 1, the index's
own place, the shard's size and one past it, copies of other entries, half-missing pairs, with
checksums made valid or damaged, and shards cut short. Each read gives what the Python path
gives (the kernel turned off): the same values, or a ZarrError of the same class and message."""
from __future__ import annotations

import random

import numpy as np
import pytest

from zarrx.store import LocalStore, MemoryStore, _localshard, _memshard

import test_local_shard_hostile as H
import test_memory_shard_kernel as MK

M = 2**64 - 1
KEY = "c/0/1"


def _hostile(rng: random.Random, blob: bytes, layout: str) -> bytes:
    at, n = H._index_at(blob, layout)
    e = H._entries(blob, layout).copy()
    size = len(blob)
    odd = [0, 1, M, M - 1, 2**63 - 1, 2**63, at, n, at + n, size - 1, size, size + 1,
           size - n, size - n + 1]
    for _ in range(rng.randint(1, 4)):
        s, r = rng.randrange(H.N), rng.random()
        if r < 0.5:
            e[s] = [rng.choice(odd), rng.choice(odd)]
        elif r < 0.65:
            e[s] = e[rng.randrange(H.N)]                          # overlapping another
        elif r < 0.8:
            e[s] = [at, n]                                        # the index itself
        else:
            e[s] = [(size - int(e[s][1]) + 1) % 2**64, e[s][1]]   # past the end by one
    out = bytearray(H._with_entries(blob, layout, e))
    r = rng.random()
    if r < 0.2 and len(H.LAYOUTS[layout][0]) > 1:
        out[at + rng.randrange(n)] ^= 1 << rng.randrange(8)       # a wrong crc32c
    elif r < 0.35:
        out = out[:rng.randrange(len(out) + 1)]                   # cut short
    return bytes(out)


def _selection(rng: random.Random):
    if rng.random() < 0.5:
        return rng.choice(list(H.SELS.values()))
    a, b = sorted(rng.sample(range(65), 2))
    c, d = sorted(rng.sample(range(65), 2))
    return lambda z: z[a:b, c:d]


def _check(monkeypatch, store, cls, attr, sel) -> None:
    got = MK._outcome(store, sel)
    with monkeypatch.context() as m:
        m.setattr(cls, attr, lambda self: None)
        want = MK._outcome(store, sel)
    MK._same(got, want)


@pytest.mark.parametrize("seed", range(12))
def test_random_hostile_indexes_read_as_the_python_path_reads_them(monkeypatch, tmp_path,
                                                                   seed):
    rng = random.Random(seed)
    layout = list(H.LAYOUTS)[seed % len(H.LAYOUTS)]
    mem = MemoryStore()
    MK._make(mem, layout)
    H._make(tmp_path / "a", layout)
    f = tmp_path / "a" / "c" / "0" / "1"
    good = f.read_bytes()
    assert bytes(mem.get(KEY)) == good
    before = _memshard.counts()["read"], _localshard.counts()["opened"]
    for _ in range(8):
        blob = _hostile(rng, good, layout)
        sel = _selection(rng)
        mem.set(KEY, blob)
        _check(monkeypatch, mem, MemoryStore, "kernel_values", sel)
        f.write_bytes(blob)
        _check(monkeypatch, LocalStore(str(tmp_path / "a")), LocalStore, "kernel_paths", sel)
    # (the kernels read these shards themselves, not only through the Python path)
    assert _memshard.counts()["read"] > before[0]
    assert _localshard.counts()["opened"] > before[1]
