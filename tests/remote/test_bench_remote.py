"""``zarrx bench --remote``: a functional smoke run at a tiny size. No timing is asserted."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("obstore", reason="obstore is not installed")
pytest.importorskip("aiohttp", reason="aiohttp is not installed")
pytest.importorskip("moto", reason="moto[server] is not installed")


def test_remote_bench_smoke(tmp_path, capsys):
    from zarrx.bench import main

    out = tmp_path / "r.json"
    rc = main(["--remote", "--mib", "1", "--systems", "zarrx-obstore", "--skip-single",
               "--latency-ms", "1", "--bandwidth-mib", "512", "--quiet", "--json", str(out)])
    assert rc == 0
    result = json.loads(out.read_text())
    rows = result["rows"]
    assert {(r["layout"], r["op"]) for r in rows} == {
        ("unsharded", "write"), ("unsharded", "read"), ("sharded", "write"), ("sharded", "read")}
    for r in rows:
        assert r["requests"] > 0 and r["bytes"] >= 1 << 20 and r["ideal_s"] > 0
    table = capsys.readouterr().out
    assert "| sharded | read | zarrx-obstore |" in table



def _spilled(pid: int) -> int:
    """Temporary files (unlinked) the process holds open."""
    import os
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}").endswith("(deleted)")
        except OSError:
            pass
    return n


@pytest.mark.parametrize("in_memory, spills", [(0, True), (64 << 20, False)],
                         ids=["moto-default", "in-memory"])
def test_the_bench_server_keeps_large_objects_in_memory_and_empties_between_runs(in_memory,
                                                                                 spills):
    """moto keeps a 6 MiB object in a temporary file unless told otherwise; the benchmark's
    server keeps it in memory, and ``reset_moto`` drops every object but keeps the bucket."""
    import os

    from zarrx.bench.servers import (S3_KEYS, ServerUnavailable, create_bucket, reset_moto,
                                     start_moto)
    from zarrx.store.remote import ObjectStore

    try:
        server = start_moto(in_memory=in_memory)
    except ServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        create_bucket(server.url, "bench-b")
        store = ObjectStore("s3://bench-b/p", storage_options={"endpoint": server.url,
                                                                **S3_KEYS})
        body = os.urandom(6 << 20)
        store.set("k", body)
        assert store.get("k") == body
        assert (_spilled(server.proc.pid) > 0) == spills
        reset_moto(server.url, "bench-b")
        assert store.get("k") is None                     # the object is gone
        store.set("k2", b"x")                              # the bucket is not
        assert store.get("k2") == b"x"
    finally:
        server.stop()
