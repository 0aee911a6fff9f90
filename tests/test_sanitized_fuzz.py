"""Hostile stored bytes through the Cython/C kernels: every codec chain of
:data:`hostile_bytes.CASES` has its chunks, shards (index entries pointing anywhere, nested
shards) and metadata documents mutated (:mod:`hostile_bytes`), then read through every
selection kind from a MemoryStore and a LocalStore. Each read returns a value or raises a
``zarrx.ZarrError``: never another exception (MemoryError included), a crash or a sanitizer
report, and the process's peak memory stays bounded. The metadata documents also go straight
to the JSON scanners (``zarrx.metadata._jsonscan``, ``zarrx.codecs._documents``).

The fast variant runs a few mutants per case; ``ZARRX_SLOW=1`` runs the long trial
(``ZARRX_FUZZ_ROUNDS`` mutants per case, 400 by default). Both are meant to run under
AddressSanitizer and UndefinedBehaviorSanitizer too (``make sanitize``)."""
from __future__ import annotations

import importlib
import math
import os
import random
import resource
import sys
import warnings
from pathlib import Path

import hostile_bytes as hb
import numpy as np
import pytest

import zarrx
from zarrx.codecs._documents import json_values, msgpack_values
from zarrx.errors import ZarrError
from zarrx.metadata._jsonscan import scan
from zarrx.store import LocalStore, MemoryStore

SLOW = bool(os.environ.get("ZARRX_SLOW"))
ROUNDS = int(os.environ.get("ZARRX_FUZZ_ROUNDS", "400")) if SLOW else 6
#: the most the process's peak resident memory may grow over one case's mutants: the arrays
#: hold 42 items, so anything near this is an allocation sized from hostile bytes
PEAK_GROWTH = 256 << 20
ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
if ASAN:
    PEAK_GROWTH += 256 << 20    # ASan's quarantine holds up to 256 MiB of freed memory

_SEEDS: dict[str, dict[str, bytes]] = {}


def seeds(name: str) -> dict[str, bytes]:
    if name not in _SEEDS:
        _SEEDS[name] = hb.seeded(hb.CASES[name])
    return _SEEDS[name]


def selections(rng: random.Random, shape: tuple) -> list:
    """One read of every selection kind (with an ``out=`` array for some) over ``shape``, any
    rank and size (a hostile document may declare any)."""
    nd = len(shape)
    if nd == 0:
        return [lambda a: a[...], lambda a: a[()]]
    pos = [rng.randrange(n) if n else 0 for n in shape]
    some = [sorted({rng.randrange(n) for _ in range(3)}) if n else [] for n in shape]
    small = math.prod(shape) <= 1 << 12
    mask = np.zeros(shape if small else (0,) * nd, dtype=bool)
    if small and mask.size:
        mask.flat[rng.sample(range(mask.size), min(5, mask.size))] = True
    box = tuple(slice(p, min(p + 4, n)) for p, n in zip(pos, shape))
    return [
        lambda a: a[...],
        lambda a: a[(slice(1, None, 2),) * (nd - 1) + (slice(None, None, -1),)],
        lambda a: a[tuple(pos)],
        lambda a: a[-1],
        lambda a: a.oindex[tuple(some)],
        lambda a: a.vindex[tuple([p, 0] for p in pos)],
        lambda a: a[mask],
        lambda a: a.vindex[mask],
        lambda a: a.blocks[(rng.randrange(max(a.cdata_shape[0], 1)),) + (-1,) * (nd - 1)],
        lambda a: a.get_basic_selection(box, out=np.empty(
            tuple(b.stop - b.start for b in box), dtype=a.dtype, order="F")),
        lambda a: a.get_orthogonal_selection((some[0],) + (slice(None),) * (nd - 1),
                                             out=np.empty((len(some[0]),) + a.shape[1:],
                                                          dtype=a.dtype) if small else None),
    ]


def read_all(store, rng: random.Random) -> int:
    """Open the array in ``store`` and make every read; the number of reads that gave a
    value. Anything but a value or a ZarrError escapes."""
    ok = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a = zarrx.open_array(store, mode="r")
        except ZarrError:
            return 0
        for read in selections(rng, a.shape):
            try:
                out = read(a)
            except ZarrError:
                continue
            assert isinstance(out, np.ndarray | np.generic | str | bytes | list | dict |
                              int | float | type(None)), type(out)
            ok += 1
    return ok


def local_store(root, objects: dict[str, bytes]) -> LocalStore:
    for key, value in objects.items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(value)
    return LocalStore(str(root), read_only=True)


def peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def fuzz_case(name: str, rounds: int, tmp_path) -> None:
    case = hb.CASES[name]
    objects = seeds(name)
    rng = random.Random(f"{name}/{rounds}")
    data_keys = sorted(k for k in objects if k not in (".zarray", "zarr.json"))
    meta_key = ".zarray" if case.fmt == 2 else "zarr.json"
    before = peak()
    generators = {k: hb.mutants(rng, case, k, objects[k]) for k in data_keys}
    for r in range(rounds):
        hostile = dict(objects)
        for key in rng.sample(data_keys, rng.randint(1, len(data_keys))):
            hostile[key] = next(generators[key])
        read_all(MemoryStore(hostile), rng)
        if r % 4 == 0:
            read_all(local_store(tmp_path / f"r{r}", hostile), rng)
        if r % 3 == 0:                                  # a hostile document over good chunks
            doc = hb.mutate_bytes(rng, objects[meta_key])
            for scanner in (scan, json_values, msgpack_values):
                scanner(doc)
            read_all(MemoryStore({**objects, meta_key: doc}), rng)
    assert peak() - before < PEAK_GROWTH, (peak() - before) >> 20
    for r in range(rounds // 3):                        # documents whose settings lie
        doc = hb.mutate_document(rng, objects[meta_key])
        read_all(MemoryStore({**objects, meta_key: doc}), rng)
    # Under ASan a declared chunk of 16 GiB (allocated, never touched) costs 2 GiB of shadow
    # memory: the bound holds without it
    if not ASAN:
        assert peak() - before < PEAK_GROWTH, (peak() - before) >> 20


@pytest.mark.parametrize("name", sorted(hb.CASES))
def test_hostile_bytes_give_values_or_zarr_errors(name, tmp_path) -> None:
    fuzz_case(name, ROUNDS, tmp_path)


def test_seeds_read_back_through_every_selection() -> None:
    """The unmutated arrays give a value for every read: the mutants start from good data."""
    for name, case in hb.CASES.items():
        n = len(selections(random.Random(0), hb.SHAPE))
        assert read_all(MemoryStore(dict(seeds(name))), random.Random(0)) == n, name
        a = zarrx.open_array(MemoryStore(dict(seeds(name))), mode="r")
        got, want = a[...], hb.values(case)
        assert got.shape == want.shape, name
        if want.dtype.kind == "f":      # quantize, fixedscaleoffset, bitround: lossy filters
            assert np.allclose(got, want, rtol=0.02, atol=0.06), name
        else:
            assert str(got.tolist()) == str(want.tolist()), name


FUZZ = Path(__file__).resolve().parent.parent / "fuzz"
HARNESSES = sorted(p.stem for p in FUZZ.glob("fuzz_*.py"))


@pytest.mark.parametrize("name", HARNESSES)
def test_mutated_fuzz_corpora_give_values_or_zarr_errors(name) -> None:
    """Every seed of the fuzz harnesses' corpora (fuzz/corpus), mutated as stored objects are,
    through its harness's own ``test_one_input``: only ZarrErrors may come out."""
    if str(FUZZ) not in sys.path:
        sys.path.insert(0, str(FUZZ))
    run = importlib.import_module(name).test_one_input
    rng = random.Random(name)
    before = peak()
    for path in sorted((FUZZ / "corpus" / name).iterdir()):
        data = path.read_bytes()
        for _ in range(max(ROUNDS // 10, 1)):
            data = hb.mutate_bytes(rng, data) if rng.random() < 0.8 else path.read_bytes()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    run(data)
                except BaseException as exc:
                    exc.add_note(f"{path.name} mutated: {data!r}"[:4000])
                    raise
    assert peak() - before < PEAK_GROWTH, (peak() - before) >> 20


@pytest.mark.parametrize("doc", [
    b"", b'"', b'"\\', b"\\", b"[" * 5000, b"]" * 5000, b'{"a":' * 300, b'"\\"' * 100,
    b'{"' + b"\\" * 999 + b'":1}', bytes(range(256)), b"\xc6\xff\xff\xff\xff" + b"\x00" * 3,
    b"\xdb\x80\x00\x00\x00", b"\xc9\xff\xff\xff\xff\x01", b"\xd9", b"\xc5\x01",
])
def test_json_scanners_take_any_bytes(doc) -> None:
    """The scanners count what they can of any text, truncated and unclosed ones included."""
    depth, keys = scan(doc)
    assert depth >= 0
    assert keys >= 0
    assert json_values(doc) >= 1
    assert 0 <= msgpack_values(doc) <= len(doc)


@pytest.mark.skipif(not SLOW, reason="set ZARRX_SLOW=1 to run")
def test_scanners_on_random_text() -> None:
    rng = random.Random(7)
    alphabet = b'{}[]":,\\ \t\nab01\xc4\xd9\xdb\xdd\xde\xc7'
    for _ in range(20000):
        doc = bytes(rng.choice(alphabet) for _ in range(rng.randrange(64)))
        scan(doc)
        assert json_values(doc) >= 1
        assert 0 <= msgpack_values(doc) <= len(doc)
