"""Fuzz zip archives: a ZipStore opened over the input.

Opening succeeds or raises a ZarrError (hostile entry names are skipped with a warning). Each
listed entry is read whole, by a slice and by a suffix, and through a snapshot; its size is the
length of what a whole read returns, and ranged reads return the matching bytes. The root node
(if any) then opens and its small arrays are read.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from _common import expected, exercise_node, fuzz, instrumented, quiet

with instrumented(__name__ == "__main__", "zipfile"):
    from zarrx.store import ByteRange, ZipStore

#: one file per process, rewritten for every input (ZipStore opens a path); its folder goes
#: when the process ends
_DIR = tempfile.mkdtemp(prefix="zarrx-fuzz-zip-",
                        dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_PATH = os.path.join(_DIR, "input.zip")
MAX_ENTRIES = 16


def test_one_input(data: bytes) -> None:
    with open(_PATH, "wb") as f:
        f.write(data)
    with quiet(), expected():
        store = ZipStore(_PATH, "r")
        try:
            _read(store)
        finally:
            store.close()


def _read(store: ZipStore) -> None:
    keys = list(store.list_prefix(""))
    assert len(set(keys)) == len(keys), keys
    for key in keys[:MAX_ENTRIES]:
        with expected():
            whole = store.get(key)
            assert whole is not None and store.getsize(key) == len(whole), key
            n = len(whole)
            for rng in (ByteRange.slice(n // 3, 7), ByteRange.last(5), ByteRange.slice(n + 1)):
                assert store.get(key, rng) == rng.apply(whole), (key, rng)
            snap = store.snapshot(key)
            assert snap is not None
            assert snap.read([None, ByteRange.slice(1, 2)]) == [whole, whole[1:3]]
        with expected():                    # a ranged read first, before the entry is verified
            store.get(key, ByteRange.slice(1, 3))
    with expected():
        store.list_dir("")
    exercise_node(store, write=False)


if __name__ == "__main__":
    fuzz(test_one_input)
