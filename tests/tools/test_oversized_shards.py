"""``zarrx check`` and ``zarrx chunk`` read a shard longer than any shard of its array packed
without gaps as readers do, as its index and inner chunks, never whole: a sparse 1 GiB file
where a 196-byte shard belongs (before: read whole, twice, 4 GiB at the peak and 40 s) is
reported by what is wrong with its index; one whose valid index points at its chunks past
unused bytes (a writer updating it in place left them) is sound."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

import zarrx

ROOT = Path(__file__).resolve().parent.parent.parent
HUGE = 1 << 30

CHILD = textwrap.dedent("""
    import json, resource, sys
    import zarrx
    from zarrx.tools.check import check
    from zarrx.tools.summary import chunk_report
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    report = check(sys.argv[1])
    chunk = chunk_report(zarrx.open_array(sys.argv[1], mode="r"), "c/0")
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(json.dumps({"findings": [[f.kind, f.key, f.detail] for f in report.findings],
                      "index": chunk["index"], "grew_mib": grew}))
""")


def _checked(path):
    """What ``check`` and ``chunk_report`` say of the array at ``path``, run in a child
    process (whose peak memory is measured alone)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_check_and_chunk_refuse_an_oversized_shard_unread(tmp_path):
    z = zarrx.create_array(tmp_path, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                           compressors=None)
    z[:] = np.arange(64)
    os.truncate(tmp_path / "c" / "0", HUGE)
    got = _checked(tmp_path)
    # longer than any shard packed without gaps: its index is read as a range, and found to
    # be the zeros of the sparse file (the original index lies before them, unused)
    detail = ("index checksum mismatch: stored crc32c 0x00000000, computed 0x03c8eb67 over "
              "the 64-byte index")
    assert got["findings"] == [["corrupt", "c/0", detail]]
    assert got["index"] == {"error": f"corrupt: {detail}"}
    assert got["grew_mib"] < 64


def test_check_and_chunk_read_a_shard_with_unused_bytes_as_sound(tmp_path):
    """Its valid index at the end of a sparse 1 GiB file points at the 4 inner chunks just
    before it (before: reported corrupt as longer than any shard, and ``check --repair
    --fill-corrupt`` overwrote its data with the fill value)."""
    z = zarrx.create_array(tmp_path, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                           compressors=None)
    z[:] = np.arange(64)
    key = tmp_path / "c" / "0"
    blob = key.read_bytes()
    entries = np.frombuffer(blob[-68:-4], "<u8").reshape(4, 2) + np.array([HUGE, 0], "<u8")
    index = entries.astype("<u8").tobytes()
    from zarrx.codecs import Crc32c
    with open(key, "r+b") as f:
        f.truncate(0)
        f.seek(HUGE)
        f.write(blob[:-68] + index + Crc32c().encode(index)[-4:])
    got = _checked(tmp_path)
    assert got["findings"] == []
    assert got["index"] == {"location": "end", "inner_chunks": 4, "present": 4,
                            "inner_bytes_min": 32, "inner_bytes_max": 32}
    assert got["grew_mib"] < 64
    from zarrx.tools.check import check
    check(str(tmp_path), repair=True, fill_corrupt=True)
    np.testing.assert_array_equal(zarrx.open_array(tmp_path, mode="r")[:], np.arange(64))
