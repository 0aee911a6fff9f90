"""A read of more chunks than one call takes is refused by its count, before anything sized by
the selection is made: its output (numpy fills an array of objects as it allocates it), or a
step per chunk of an index array."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import indexing
from zarrx.errors import SelectionSizeError
from zarrx.store import MemoryStore

ROOT = Path(__file__).resolve().parent.parent

# under an address-space limit of what the interpreter maps plus 512 MiB: an output of 2**28
# objects (2 GiB) cannot be made
CHILD = textwrap.dedent("""
    import json, resource
    import zarrx
    from zarrx.store import MemoryStore
    doc = {"zarr_format": 3, "node_type": "array", "shape": [2**28], "data_type": "string",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "",
           "codecs": [{"name": "vlen-utf8"}]}
    z = zarrx.open_array(MemoryStore({"zarr.json": json.dumps(doc).encode()}), mode="r")
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
    for read in (lambda: z[...], lambda: z[::-1], lambda: z.oindex[:]):
        try:
            read()
        except zarrx.ZarrError as exc:
            print(type(exc).__name__, exc)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="AddressSanitizer reserves more address space than the limit")
def test_a_read_of_too_many_chunks_is_refused_before_its_output_is_made():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # before: an ArgumentError (the output did not fit); without the limit, 16 GiB and two
    # minutes for 2**31 strings
    want = (f"SelectionSizeError array '/': the selection touches {2**26} chunks; at most "
            f"{indexing.MAX_CHUNKS} are read or written in one call: select less at a time")
    assert out.stdout.splitlines() == [want] * 3


def test_an_index_array_over_too_many_chunks_is_refused_by_its_count(monkeypatch):
    z = zarrx.create_array(MemoryStore(), shape=(2**40,), chunks=(4,), dtype="i4",
                           fill_value=0)
    steps = []
    real = indexing._project_array
    monkeypatch.setattr(indexing, "_project_array",
                        lambda *a: steps.append(1) or real(*a))
    picks = np.arange(indexing.MAX_CHUNKS + 1, dtype=np.int64) * 8
    with pytest.raises(SelectionSizeError, match=f"touches {indexing.MAX_CHUNKS + 1} chunks"):
        z.oindex[picks]                 # before: projected chunk by chunk, 92 s, then refused
    with pytest.raises(SelectionSizeError):
        z.set_orthogonal_selection(picks, 1)
    assert steps == []
    assert z.oindex[picks[:5]].tolist() == [0] * 5     # a few chunks: read
    # an empty selection reads nothing, however many chunks its other axes list
    y = zarrx.create_array(MemoryStore(), shape=(2**40, 3), chunks=(4, 1), dtype="i4",
                           fill_value=0)
    assert y.oindex[picks, []].shape == (len(picks), 0)
