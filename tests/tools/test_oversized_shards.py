"""``zarrx check`` and ``zarrx chunk`` refuse a shard longer than any shard of its array can be
as readers do, without reading it whole: a sparse 1 GiB file where a 196-byte shard belongs
(before: read whole, twice, 4 GiB at the peak and 40 s)."""
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


def test_check_and_chunk_refuse_an_oversized_shard_unread(tmp_path):
    z = zarrx.create_array(tmp_path, shape=(64,), chunks=(8,), shards=(32,), dtype="i4",
                           compressors=None)
    z[:] = np.arange(64)
    os.truncate(tmp_path / "c" / "0", HUGE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    detail = (f"{HUGE} bytes stored, more than the 196 bytes a shard can take: its 68-byte "
              f"index and 4 inner chunks of at most 32 bytes each")
    assert got["findings"] == [["corrupt", "c/0", detail]]
    assert got["index"] == {"error": f"corrupt: {detail}"}
    assert got["grew_mib"] < 64
