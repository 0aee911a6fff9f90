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


def test_the_bench_server_slicing_ranges_answers_as_moto_does():
    """The benchmark's server serves a range without copying the whole object first; every
    answer (ranges, suffixes, past the end, whole objects, objects spilled to a file) is the
    one moto as it is gives."""
    import os

    from zarrx.bench.servers import S3_KEYS, ServerUnavailable, create_bucket, start_moto
    from zarrx.errors import ZarrError
    from zarrx.store.remote import ObjectStore
    from zarrx.store.base import ByteRange

    ranges = [ByteRange.slice(0, 16), ByteRange.slice(1 << 20, 3 << 20), ByteRange.last(100),
              ByteRange.slice(5 << 20), ByteRange.slice((6 << 20) - 1, 1 << 30), None]
    body = os.urandom(6 << 20)
    answers = []
    for sliced in (False, True):
        try:
            server = start_moto(in_memory=7 << 20, sliced_ranges=sliced)
        except ServerUnavailable as exc:
            pytest.skip(str(exc))
        try:
            create_bucket(server.url, "slice-b")
            store = ObjectStore("s3://slice-b/p", storage_options={"endpoint": server.url,
                                                                    **S3_KEYS})
            store.set("small", body)
            store.set("spilled", body + body)              # over in_memory: in a file
            got = []
            for key in ("small", "spilled"):
                for r in ranges:
                    got.append(store.get(key, r))
                try:
                    store.get(key, ByteRange.slice(1 << 30, 16))
                except ZarrError as exc:
                    got.append(type(exc).__name__)
            got.append(store.get("missing", ByteRange.slice(0, 1)))
            answers.append(got)
        finally:
            server.stop()
    assert answers[0] == answers[1]
    assert answers[1][0] == body[:16] and answers[1][5] == body
    assert answers[1][2] == body[-100:] and answers[1][4] == body[-1:]
    assert answers[1][-1] is None
