"""Partial writes into hostile stored bytes: every codec chain of :data:`hostile_bytes.CASES`
has some of its chunks or shards mutated (:func:`hostile_bytes.mutants`: index entries pointing
anywhere, nested shards, lying size fields, cut and flipped bytes), then takes writes of every
selection kind that cover chunks in part (read-modify-write: the merges of ``shard_merge``
and ``batch_merge``, points and masks) or whole (the batch writes), from a MemoryStore and a
LocalStore.

The oracle needs no expected values: a write raises a ``ZarrError`` or succeeds, and a write
that succeeds reads back (through the same selection) what the same writes give on the
unmutated array, whatever the stored bytes around it held. ``ZARRX_SLOW=1`` runs
``ZARRX_FUZZ_ROUNDS`` (default 100) mutants per chain.
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
ROUNDS = int(os.environ.get("ZARRX_FUZZ_ROUNDS", "100")) if SLOW else 3
SHAPE, CHUNKS = (16, 12), [2, 3]          # 8 x 4 chunks; sharded: 2 x 2 shards of 8 x 8
_same = hb.same_values


def seeds(name: str) -> dict[str, bytes]:
    return hb.seeded_once(name, SHAPE, CHUNKS)


def writes(rng: random.Random) -> list:
    """Selections (kind, selection) covering chunks in part, and one covering shards whole."""
    r, c = rng.randrange(SHAPE[0]), rng.randrange(SHAPE[1])
    rows = sorted({rng.randrange(SHAPE[0]) for _ in range(3)})
    cols = sorted({rng.randrange(SHAPE[1]) for _ in range(3)})
    mask = np.zeros(SHAPE, dtype=bool)
    mask.flat[rng.sample(range(mask.size), 6)] = True
    return [("basic", np.s_[r:r + 5, c:c + 4]), ("basic", np.s_[::-3, 1::2]),
            ("basic", (r, c)), ("orth", (rows, cols)),
            ("coord", (np.array([r, rows[0]]), np.array([c, cols[0]]))),
            ("mask", mask), ("basic", np.s_[:8, :])]


def _get(a, kind: str, sel):
    return {"basic": lambda: a[sel], "orth": lambda: a.oindex[sel],
            "coord": lambda: a.vindex[sel], "mask": lambda: a[sel]}[kind]()


def _value(source: np.ndarray, kind: str, sel) -> np.ndarray:
    """The cells of ``source`` a write of ``sel`` takes, as an array (a point of an object
    array too: its item may itself be an array)."""
    if kind == "orth":
        return source[np.ix_(*sel)]
    if kind == "basic" and all(isinstance(i, int) for i in sel):
        return source[tuple(slice(i, i + 1) for i in sel)].reshape(())
    return source[sel]


def _set(a, kind: str, sel, value) -> None:
    if kind == "orth":
        a.oindex[sel] = value
    elif kind == "coord":
        a.vindex[sel] = value
    else:
        a[sel] = value


def _store(kind: str, objects: dict[str, bytes], root) -> MemoryStore | LocalStore:
    if kind == "memory":
        return MemoryStore(dict(objects))
    for key, value in objects.items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(value)
    return LocalStore(str(root))


def fuzz_case(name: str, rounds: int, tmp_path) -> int:
    """The writes of ``rounds`` mutants of ``name``; how many succeeded."""
    case = hb.CASES[name]
    objects = seeds(name)
    meta_key = ".zarray" if case.fmt == 2 else "zarr.json"
    data_keys = sorted(k for k in objects if k != meta_key)
    rng = random.Random(f"writes/{name}")
    generators = {k: hb.mutants(rng, case, k, objects[k]) for k in data_keys}
    source = np.flip(hb.values(case, SHAPE))       # other values than the stored ones
    done = 0
    for r in range(rounds):
        hostile = dict(objects)
        for key in rng.sample(data_keys, rng.randint(1, min(3, len(data_keys)))):
            hostile[key] = next(generators[key])
        kind = "local" if r % 2 else "memory"
        a = zarrx.open_array(_store(kind, hostile, tmp_path / f"h{r}"), mode="r+")
        twin = zarrx.open_array(MemoryStore(dict(objects)), mode="r+")
        for sel_kind, sel in writes(rng):
            value = _value(source, sel_kind, sel)
            _set(twin, sel_kind, sel, value)
            try:
                _set(a, sel_kind, sel, value)
            except ZarrError:
                continue
            done += 1
            got = _get(a, sel_kind, sel)
            assert _same(got, _get(twin, sel_kind, sel)), (name, kind, r, sel_kind, sel)
    return done


@pytest.mark.parametrize("name", sorted(hb.CASES))
def test_hostile_stored_bytes_take_writes_or_raise_zarr_errors(name, tmp_path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert fuzz_case(name, ROUNDS, tmp_path) > 0      # some writes went through


def test_writes_into_the_seeds_read_back() -> None:
    """Unmutated, every write succeeds and reads back: the mutants start from arrays that
    take them."""
    rng = random.Random(0)
    for name, case in hb.CASES.items():
        a = zarrx.open_array(MemoryStore(dict(seeds(name))), mode="r+")
        source = np.flip(hb.values(case, SHAPE))
        for sel_kind, sel in writes(rng):
            value = _value(source, sel_kind, sel)
            _set(a, sel_kind, sel, value)
            _get(a, sel_kind, sel)
