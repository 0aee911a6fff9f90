"""Peak memory of operations on large arrays, measured in a fresh process: the resident peak
(``VmHWM``, reset just before the operation) and the peak of Python's own allocations
(``tracemalloc``). The bounds are generous multiples of what each operation must hold."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import zarrx

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="/proc/self/status and /proc/self/clear_refs")

# the child runs SETUP, then OPERATION measured; it prints the peaks above the resident size
# before the operation, and what it left allocated, in MiB: "<resident> <traced> <kept>"
_CHILD = """
import gc, sys, tracemalloc
import numpy as np
import zarrx
from zarrx.store import LocalStore, MemoryStore

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) << 10 for line in f if line.startswith(field))

root = sys.argv[1]
{setup}
gc.collect()
before = status("VmRSS:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
tracemalloc.start()
{operation}
gc.collect()
kept, traced = tracemalloc.get_traced_memory()
print((status("VmHWM:") - before) >> 20, traced >> 20, kept >> 20)
"""


def _peaks(tmp_path: Path, setup: str, operation: str) -> tuple[int, int, int]:
    """``(resident, traced)`` peak MiB of ``operation`` after ``setup``, in a fresh process
    (``root``: a directory to write in), and the MiB of Python allocations it left."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    code = _CHILD.format(setup=textwrap.dedent(setup).strip(),
                         operation=textwrap.dedent(operation).strip())
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    resident, traced, kept = proc.stdout.split()
    return int(resident), int(traced), int(kept)


# a 64 MiB shard of raw data, 256 inner chunks of 256 KiB
_SHARD = """
    store = {store}
    z = zarrx.create_array(store, shape=(8192, 8192), dtype="u1", chunks=(512, 512),
                           shards=(8192, 8192), compressors=None, fill_value=0)
    z[...] = 7
"""


@pytest.mark.parametrize("store", ["LocalStore(root)", "MemoryStore()"])
def test_rewriting_one_inner_chunk_holds_the_old_shard_and_one_new_copy_at_most(tmp_path,
                                                                               store):
    """The new shard is written from views of the stored one (a file, piece by piece) or
    assembled once into the value a memory store keeps: not joined into a new copy first
    (which held the old shard and two new ones: 128 MiB above the old shard here)."""
    resident, traced, _ = _peaks(tmp_path, _SHARD.format(store=store), """
        z[0:512, 512:1024] = 1
        assert z[0, 512] == 1 and z[0, 0] == 7 and z[8191, 8191] == 7
    """)
    # LocalStore: the shard read (64 MiB) and the new inner chunk; MemoryStore: the new shard
    # (the old one is the store's)
    assert resident < 100, resident
    assert traced < 100, traced


def test_overwriting_an_array_in_memory_holds_a_batch_of_new_chunks_above_the_old_ones(
        tmp_path):
    """A whole-array write over stored chunks frees each old chunk as its new one is stored:
    the box writer gathers at most ``GATHER_BATCH`` (8 MiB) of chunks before storing them, so
    one thread never holds the new array beside the old one (256 MiB more here)."""
    resident, traced, _ = _peaks(tmp_path, """
        zarrx.config.set(threads=1, memory_pool=0)
        z = zarrx.create_array(MemoryStore(), shape=(8192, 8192), dtype="f4",
                               chunks=(256, 256), compressors=None, fill_value=0)
        z[...] = 1.0
        new = np.full((8192, 8192), 2.0, dtype="f4")
    """, """
        z[...] = new
        assert z[8191, 8191] == 2.0
    """)
    assert resident < 48, resident
    assert traced < 48, traced


def test_iterating_an_array_holds_one_row_of_chunks_at_a_time(tmp_path):
    """``for row in z`` reads a row of chunks (16 MiB here) at a time; the row the caller
    still holds while the next one is read is a copy, so the previous row of chunks is freed
    (it was held until the next one was read: 32 MiB)."""
    resident, traced, _ = _peaks(tmp_path, """
        z = zarrx.create_array(MemoryStore(), shape=(2048, 4096), dtype="f8",
                               chunks=(512, 512), compressors=None)
        z[...] = np.arange(2048 * 4096, dtype="f8").reshape(2048, 4096)
    """, """
        n = 0
        for row in z:
            assert row[1] == n * 4096 + 1
            n += 1
        assert n == 2048
    """)
    assert traced < 24, traced
    assert resident < 24, resident


def test_the_metadata_parse_cache_holds_about_its_cap_of_parsed_documents(tmp_path):
    """The parse cache is bounded by the memory its parsed documents hold (64 MiB), not by
    their bytes: 24 documents of 2.8 MiB (attributes of 200,000 numbers, 9 MiB each once
    parsed) left about 250 MiB in it when 64 MiB of document bytes were counted."""
    _, _, kept = _peaks(tmp_path, """
        import json
        store = MemoryStore()
        zarrx.create_array(store, name="a", shape=(2,), dtype="u1", chunks=(2,))
        doc = json.loads(store.get("a/zarr.json"))
        for i in range(24):
            doc["attributes"] = {"v": list(range(i << 20, (i << 20) + 200_000))}
            store.set(f"a{i}/zarr.json", json.dumps(doc).encode())
        from zarrx.metadata import parse_cache
        parse_cache._parsed.clear()
        parse_cache._parsed_bytes = 0
    """, """
        for i in range(24):
            z = zarrx.open_array(store, path=f"a{i}", mode="r")
        assert z.attrs["v"][-1] == (23 << 20) + 199_999
        del z
    """)
    assert kept < 100, kept
