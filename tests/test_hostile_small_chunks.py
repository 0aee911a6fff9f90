"""Hostile stored bytes read through the batched paths: arrays of many small chunks (and shards
of many small inner chunks) of every codec chain of :data:`hostile_bytes.CASES`, some of their
chunks mutated, swapped with chunks of other arrays or deleted, read whole, by slices, steps,
orthogonal and point selections from a MemoryStore and a LocalStore, on one thread and two.

The oracle needs no expected values: a read that gives a value agrees with the same chunks read
one at a time (a read of one chunk takes the general path, not a batch) and with the whole
read; a chunk that does not read alone makes the whole read fail; one thread and two raise the
same error for the same read; and every error is a ``ZarrError`` naming a stored key. Runs
under AddressSanitizer and UndefinedBehaviorSanitizer too (``make sanitize``);
``ZARRX_SLOW=1`` runs ``ZARRX_FUZZ_ROUNDS`` (default 200) mutants per chain.
"""
from __future__ import annotations

import os
import random
import warnings

import hostile_bytes as hb
import numpy as np
import pytest

import zarrx
from zarrx.errors import ZarrError
from zarrx.store import LocalStore, MemoryStore

SLOW = bool(os.environ.get("ZARRX_SLOW"))
ROUNDS = int(os.environ.get("ZARRX_FUZZ_ROUNDS", "200")) if SLOW else 3
SHAPE, CHUNKS = (24, 18), [2, 3]          # 12 x 6 chunks; sharded: 3 x 3 shards of 8 x 8
_same = hb.same_values


def seeds(name: str) -> dict[str, bytes]:
    return hb.seeded_once(name, SHAPE, CHUNKS)


def hostile(rng: random.Random, name: str) -> tuple[dict[str, bytes], list[str]]:
    """The stored objects of ``name`` with a few chunks mutated, swapped for an object of another
    array or deleted; the keys touched."""
    case = hb.CASES[name]
    objects = dict(seeds(name))
    keys = sorted(k for k in objects if k not in (".zarray", "zarr.json"))
    touched = rng.sample(keys, min(len(keys), rng.choice([1, 2, 3, 8])))
    for key in touched:
        op = rng.random()
        if op < 0.1:
            del objects[key]
        elif op < 0.3:
            other = seeds(rng.choice(sorted(hb.CASES)))     # a chunk or document of it
            objects[key] = other[rng.choice(sorted(other))]
        elif op < 0.6:
            b = bytearray(objects[key])
            for _ in range(rng.choice([1, 2, 4])):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            if case.crc_tail:
                hb._fix_crc(b, 0, len(b))
            objects[key] = bytes(b)
        else:
            objects[key] = next(hb.mutants(rng, case, key, objects[key]))
    return objects, touched


def _reads(rng: random.Random, shape: tuple) -> list:
    n0, n1 = shape
    rows = sorted(rng.sample(range(n0), 5))
    cols = rng.sample(range(n1), 4)
    pts = ([rng.randrange(n0) for _ in range(6)], [rng.randrange(n1) for _ in range(6)])
    r, s = rng.randrange(n0), rng.randrange(n0)
    return [
        ("slice", lambda a: a[s:, 1:-1], lambda x: x[s:, 1:-1]),
        ("step", lambda a: a[::3, 1::2], lambda x: x[::3, 1::2]),
        ("negative step", lambda a: a[::-1, ::-2], lambda x: x[::-1, ::-2]),
        ("oindex", lambda a: a.oindex[rows, cols], lambda x: x[np.ix_(rows, cols)]),
        ("vindex", lambda a: a.vindex[pts], lambda x: x[pts[0], pts[1]]),
        ("row", lambda a: a[r], lambda x: x[r]),
    ]


def _outcome(read, a):
    try:
        return read(a)
    except ZarrError as exc:
        return exc


def check(objects: dict[str, bytes], store, rng: random.Random, alone: dict) -> dict:
    """Every read of the array in ``store``; the outcomes by name. ``alone`` (filled on first
    use) holds each chunk read on its own."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a = zarrx.open_array(store, mode="r")
        except ZarrError:
            return {}
        if a.shape != SHAPE or tuple(a.chunks) != tuple(CHUNKS):
            return {}
        if not alone:
            for p in range(0, SHAPE[0], CHUNKS[0]):
                for q in range(0, SHAPE[1], CHUNKS[1]):
                    alone[p, q] = _outcome(lambda a: a[p:p + CHUNKS[0], q:q + CHUNKS[1]], a)
        whole = _outcome(lambda a: a[...], a)
        out = {"whole": whole}
        stored = [k for k in objects if k not in (".zarray", "zarr.json")]
        if isinstance(whole, ZarrError):
            assert any(k in str(whole) for k in stored), whole
            assert any(isinstance(v, ZarrError) for v in alone.values()), whole
        else:
            for (p, q), v in alone.items():
                assert not isinstance(v, ZarrError), (p, q, v)
                assert _same(whole[p:p + CHUNKS[0], q:q + CHUNKS[1]], v), (p, q)
        for name, read, expect in _reads(rng, SHAPE):
            got = out[name] = _outcome(read, a)
            if isinstance(got, ZarrError):
                assert any(k in str(got) for k in stored), (name, got)
                assert isinstance(whole, ZarrError), (name, got)
            elif not isinstance(whole, ZarrError):
                assert _same(got, expect(whole)), name
    return out


def fuzz(name: str, rounds: int, tmp_path) -> None:
    rng = random.Random(f"small/{name}")
    for r in range(rounds):
        objects, _ = hostile(rng, name)
        root = tmp_path / f"r{r}"
        for key, value in objects.items():
            (root / key).parent.mkdir(parents=True, exist_ok=True)
            (root / key).write_bytes(value)
        alone: dict = {}
        results = {}
        for kind, threads in (("memory", 1), ("memory", 2), ("local", 1), ("local", 2)):
            store = MemoryStore(dict(objects)) if kind == "memory" else \
                LocalStore(str(root), read_only=True)
            with zarrx.config.set(threads=threads):
                results[kind, threads] = check(objects, store, random.Random(r), alone)
        for kind in ("memory", "local"):
            one, two = results[kind, 1], results[kind, 2]
            for read, x in one.items():
                y = two[read]
                if isinstance(x, ZarrError) or isinstance(y, ZarrError):
                    # errors found while fetching (an index, a size) may come first on threads
                    if not any(w in str(x) + str(y) for w in ("index", "truncated",
                                                              "bytes stored, more than")):
                        assert str(x) == str(y), (kind, read, x, y)
                else:
                    assert _same(x, y), (kind, read)


@pytest.mark.parametrize("name", sorted(hb.CASES))
def test_hostile_chunks_among_many_read_as_they_do_alone(name, tmp_path) -> None:
    fuzz(name, ROUNDS, tmp_path)


def test_seeds_of_many_chunks_read_back() -> None:
    for name, case in hb.CASES.items():
        a = zarrx.open_array(MemoryStore(dict(seeds(name))), mode="r")
        got, want = a[...], hb.values(case, SHAPE)
        assert a.nchunks >= 9, name
        if want.dtype.kind == "f":      # quantize, fixedscaleoffset, bitround: lossy filters
            assert np.allclose(got, want, rtol=0.02, atol=0.06), name
        else:
            assert str(got.tolist()) == str(want.tolist()), name
