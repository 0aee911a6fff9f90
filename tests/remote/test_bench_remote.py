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
