"""Random trees of keys for the listing tests: names with unusual characters, a key that is
also the name of a folder, folders below folders."""
from __future__ import annotations

import random

SEGMENTS = ["a", "b", "c", "zarr.json", "a b", "ü", "x+y", "p%20q", "=", "~!'()", "k.1",
            "0", "dot.", "-", "_z"]


def random_tree(seed: int) -> list[str]:
    """About 60 keys of up to 4 levels, with ``k``, ``k/x``, ``k/k`` and ``k/k/y``."""
    rnd = random.Random(seed)
    keys = set()
    for _ in range(60):
        depth = rnd.choice([1, 1, 2, 2, 3, 4])
        keys.add("/".join(rnd.choice(SEGMENTS) for _ in range(depth)))
    keys = {k for k in keys if not any(o.startswith(k + "/") for o in keys) or rnd.random() < .5}
    # a key that is also the name of a folder, and a folder named with both
    keys |= {"k", "k/x", "k/k", "k/k/y"}
    return sorted(keys)


def folders_of(keys: list[str]) -> set[str]:
    """Every folder (ending in "/") holding one of ``keys``."""
    return {k[:i + 1] for k in keys for i in range(len(k)) if k[i] == "/"}
