"""``zarrx bench``: functional smoke tests with tiny sizes. No timing is ever asserted."""
from __future__ import annotations

import importlib.util
import io
import json

import numpy as np
import pytest

import zarrx

from zarrx.bench import main, parse_args
from zarrx.bench.ceilings import CEILING_KEYS, case_ceiling, measure_ceilings
from zarrx.bench.report import render, summarise
from zarrx.bench.worker import LATENCY_OPS, serve
from zarrx.bench.workload import CASE_NAMES, CASES_BY_NAME, Params, make_data

TINY = ["--reps", "1", "--size", "256", "--chunk", "64", "--shard", "128",
        "--latency-iters", "2", "--quiet"]


def test_data_is_deterministic_and_float32() -> None:
    a, b = make_data(64, seed=3), make_data(64, seed=3)
    assert a.dtype == np.float32 and a.shape == (64, 64)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, make_data(64, seed=4))


@pytest.mark.parametrize("argv, want", [
    (["--quick"], {"size": 1024, "reps": 3, "latency_iters": 20}),
    ([], {"size": 4096, "reps": 5, "chunk": 256, "shard": 1024}),
    (["--systems", "zarrx,zarr", "--configs", "single", "--cases", "raw,zstd-0"],
     {"systems": ("zarrx", "zarr"), "configs": ("single",), "cases": ("raw", "zstd-0")}),
    (["--size", "512", "--reps", "7"], {"size": 512, "reps": 7}),
], ids=["quick", "defaults", "subsets", "explicit"])
def test_parse_args(argv: list[str], want: dict) -> None:
    params, _ = parse_args(argv)
    for key, value in want.items():
        assert getattr(params, key) == value


@pytest.mark.parametrize("argv", [
    ["--systems", "h5py"], ["--configs", "many"], ["--cases", "zstd-9"], ["--reps", "0"],
    ["--size", "1000"],
], ids=["unknown-system", "unknown-config", "unknown-case", "zero-reps", "size-not-multiple"])
def test_parse_args_rejects(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(argv)
    assert "zarrx bench" in capsys.readouterr().err


def test_ceilings_in_process() -> None:
    res = measure_ceilings(make_data(128), 64)
    for key in CEILING_KEYS:
        assert res[key] > 0, key
    for name in CASE_NAMES:
        w, r = case_ceiling(CASES_BY_NAME[name], res)
        assert w and r and w > 0 and r > 0, name


def _fake_result() -> dict:
    params = Params(size=64, chunk=32, shard=64, reps=2, cases=("raw", "zstd-0"),
                    systems=("zarrx", "zarr", "tensorstore"), configs=("single",))
    samples = [{"config": "single", "rep": rep, "case": case, "system": s, "write_s": 0.01 * k,
                "read_s": 0.005 * k, "write_cpu_s": 0.01 * k * (1.25 if s == "zarr" else 1),
                "read_cpu_s": 0.005 * k, "stored": 8000, "raw": 16384, "verified": True}
               for rep in range(2) for case in params.cases
               for k, s in enumerate(("zarrx", "zarr"), start=1)]
    ops = {op: {"median_us": 10.0, "min_us": 8.0, "iters": 2} for op in LATENCY_OPS}
    return {"machine": {"cpu": "test cpu", "cpus": 2, "python": "3", "numpy": np.__version__},
            "params": params.to_json(),
            "systems": {"zarrx": {"available": True, "version": "0"},
                        "zarr": {"available": True, "version": "3"},
                        "tensorstore": {"available": False, "error": "ImportError"}},
            "samples": samples,
            "ceilings": [{"rep": 0, **{k: 100.0 for k in CEILING_KEYS}}],
            "latency": [{"config": "single", "rep": 0, "system": s, "ops": ops}
                        for s in ("zarrx", "zarr")],
            "notes": ["tensorstore skipped (single): ImportError"]}


def test_summary_and_tables_from_samples() -> None:
    result = _fake_result()
    summary = summarise(result)
    row = summary["cases"]["single"]["raw"]
    assert row["systems"]["zarr"]["zarrx_ratio"]["write"] == pytest.approx(2.0)
    assert row["systems"]["zarrx"]["stored_raw"] == pytest.approx(8000 / 16384)
    assert row["ceiling"]["write"] == pytest.approx(100.0)
    assert "tensorstore" not in row["systems"]
    text = render(result, summary)
    assert "### Throughput, single-threaded (MiB/s)" in text
    assert "zarrx/zarr-python" in text
    assert "### Latency, single-threaded" in text
    assert "tensorstore skipped" in text
    assert row["systems"]["zarr"]["cores"] == pytest.approx({"write": 1.25, "read": 1.0})
    assert "### Cores busy, single-threaded (process CPU time over wall time, write · read)" \
        in text and "| raw | 1.00 · 1.00 | 1.25 · 1.00 |" in text
    json.dumps(result)                      # everything is plain JSON


def test_worker_protocol_in_process() -> None:
    reqs = [{"op": "init", "params": Params(size=128, chunk=64, shard=128).to_json()},
            {"op": "case", "case": "zstd-0"}, {"op": "case", "case": "sharded raw"},
            {"op": "latency", "iters": 2}, {"op": "bogus"}, {"op": "quit"}]
    out = io.StringIO()
    # a worker process configures zarrx for its whole life ("single": one thread); here it
    # shares this process, whose settings the block gives back
    with zarrx.config.set(threads=zarrx.config.threads):
        serve("zarrx", "single", io.StringIO("\n".join(json.dumps(r) for r in reqs) + "\n"),
              out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["ok"] for r in replies] == [True, True, True, True, False, True], replies
    assert replies[1]["verified"] and replies[1]["raw"] == 128 * 128 * 4
    assert 0 < replies[1]["stored"] < replies[1]["raw"]
    assert replies[2]["stored"] > replies[2]["raw"]          # raw data plus the shard index
    for r in replies[1:3]:            # process CPU time of the timed calls: some, at most 2 cores
        for d in ("write", "read"):
            assert 0 < r[f"{d}_cpu_s"] <= 2 * r[f"{d}_s"] + 0.05
    assert set(replies[3]["latency"]) == set(LATENCY_OPS)


def test_bench_cli_zarrx_quick(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bench.json"
    assert main(["--quick", "--systems", "zarrx", *TINY, "--json", str(path)]) == 0
    text = capsys.readouterr().out
    for heading in ("### Throughput, single-threaded", "### Throughput, default threading",
                    "### Ratios and ceilings, single-threaded", "### Ceilings",
                    "### Latency, single-threaded", "### Latency, default threading"):
        assert heading in text, heading
    for case in CASE_NAMES:
        assert f"| {case} |" in text, case
    doc = json.loads(path.read_text())
    assert set(doc) >= {"machine", "params", "systems", "samples", "ceilings", "latency",
                        "summary", "markdown", "notes"}
    assert doc["notes"] == []
    assert len(doc["samples"]) == len(CASE_NAMES) * 2          # 8 cases × 2 configs × 1 rep
    assert all(s["verified"] for s in doc["samples"])
    assert doc["params"]["size"] == 256 and doc["systems"]["zarrx"]["available"]
    assert set(doc["summary"]["latency"]["single"]["zarrx"]) == set(LATENCY_OPS)


@pytest.mark.skipif(importlib.util.find_spec("zarr") is None, reason="zarr-python not installed")
def test_bench_cli_with_a_peer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--systems", "zarrx,zarr", "--configs", "single", "--cases", "raw,zstd-0",
                 *TINY]) == 0
    text = capsys.readouterr().out
    assert "zarrx/zarr-python" in text and "| zstd-0 |" in text


def test_read_memory_zarrx_tiny(tmp_path) -> None:
    from zarrx.bench.memory import measure_read_memory, render_memory
    mem = measure_read_memory(side=512, chunk=64, shard=256, threads=1, system="zarrx",
                              tmpdir=str(tmp_path))
    assert mem["notes"] == [] and set(mem["results"]) == {"zarrx"}
    assert mem["output_bytes"] == 512 * 512 * 4 and 0 < mem["stored_bytes"] < 512 * 512 * 4
    r = mem["results"]["zarrx"]
    assert r["output_bytes"] == 512 * 512 * 4 and r["verified"] and r["threads"] == 1
    assert r["peak_bytes"] >= r["before_bytes"] > 0
    assert r["overhead_mib"] == pytest.approx(
        (r["peak_bytes"] - r["before_bytes"] - r["output_bytes"]) / (1 << 20))
    assert list(tmp_path.iterdir()) == []                    # the temporary folder is gone
    assert "| zarrx | 1.0 |" in render_memory(mem)
    json.dumps(mem)


# --- local store, small chunks, hierarchy -----------------------------------------------------

@pytest.mark.parametrize("argv, want", [
    (["--store", "local"], {"workload": "throughput", "store": "local", "cold": False}),
    (["--workload", "small-chunks"], {"store": "local", "small_chunks": 65536, "warmup": 1}),
    (["--workload", "small-chunks", "--quick", "--store", "memory"],
     {"store": "memory", "small_chunks": 4096, "reps": 3, "warmup": 0}),
    (["--workload", "hierarchy"], {"store": "local", "arrays": 1000}),
    (["--workload", "hierarchy", "--arrays", "20", "--cold"], {"arrays": 20, "cold": True}),
], ids=["local", "small-chunks", "small-quick-memory", "hierarchy", "hierarchy-cold"])
def test_parse_args_workloads(argv: list[str], want: dict) -> None:
    params, _ = parse_args(argv)
    for key, value in want.items():
        assert getattr(params, key) == value


@pytest.mark.parametrize("argv", [
    ["--cold"], ["--store", "local", "--dir", "/nonexistent/zarrx-bench"],
    ["--workload", "many"], ["--store", "disk"], ["--memory", "--workload", "hierarchy"],
    ["--workload", "small-chunks", "--small-chunks", "0"],
    ["--workload", "small-chunks", "--warmup", "-1"],
], ids=["cold-memory", "dir-missing", "unknown-workload", "unknown-store", "memory-workload",
        "zero-chunks", "negative-warmup"])
def test_parse_args_rejects_workload_options(argv: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(argv)
    assert "zarrx bench" in capsys.readouterr().err


def test_local_store_in_process(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker on a local store: files under the run's directory, removed once measured;
    with ``cold`` the page cache is emptied before every timed read (here: counted)."""
    import zarrx.bench.worker as worker
    drops: list[int] = []
    monkeypatch.setattr(worker, "drop_caches", lambda: drops.append(1))
    params = Params(store="local", root=str(tmp_path), cold=True, size=128, chunk=64, shard=128)
    reqs = [{"op": "init", "params": params.to_json()}, {"op": "case", "case": "raw"},
            {"op": "case", "case": "sharded zstd-0"}, {"op": "quit"}]
    out = io.StringIO()
    # a worker process configures zarrx for its whole life ("single": one thread); here it
    # shares this process, whose settings the block gives back
    with zarrx.config.set(threads=zarrx.config.threads):
        serve("zarrx", "single", io.StringIO("\n".join(json.dumps(r) for r in reqs) + "\n"),
              out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert all(r["ok"] for r in replies), replies
    assert replies[1]["verified"] and replies[1]["stored"] > replies[1]["raw"] == 128 * 128 * 4
    assert 0 < replies[2]["stored"] < replies[2]["raw"] and replies[2]["verified"]
    assert drops == [1, 1]
    assert list(tmp_path.iterdir()) == []                  # every store directory is removed


def _run_json(tmp_path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, dict]:
    path = tmp_path / "bench.json"
    base = tmp_path / "runs"
    base.mkdir()
    assert main([*argv, "--reps", "1", "--configs", "single", "--quiet", "--json", str(path),
                 "--dir", str(base)]) == 0
    assert list(base.iterdir()) == []                       # the run's directory is gone
    return capsys.readouterr().out, json.loads(path.read_text())


def test_bench_cli_local_store(tmp_path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    import zarrx.bench.runner as runner
    monkeypatch.setattr(runner, "cold_problem", lambda: "not running as root")
    text, doc = _run_json(tmp_path, ["--store", "local", "--systems", "zarrx", "--size", "256",
                                     "--chunk", "64", "--shard", "128", "--latency-iters", "2",
                                     "--cases", "raw,sharded raw", "--cold"], capsys)
    assert "local store (a fresh directory per write" in text and "page cache warm" in text
    assert "### Throughput, single-threaded (MiB/s)" in text and "| sharded raw |" in text
    assert doc["params"]["store"] == "local" and doc["params"]["cold"] is False
    assert doc["notes"] == ["--cold ignored (not running as root): every read found the data "
                            "in the page cache"]
    assert [s["case"] for s in doc["samples"]] == ["raw", "sharded raw"]
    assert all(s["verified"] and s["stored"] > s["raw"] for s in doc["samples"])


def test_bench_cli_small_chunks(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    text, doc = _run_json(tmp_path, ["--workload", "small-chunks", "--small-chunks", "256",
                                     "--systems", "zarrx", "--warmup", "2"], capsys)
    assert "### Small chunks, single-threaded (chunks/s)" in text
    assert "1 repetitions after 2 untimed, median" in text      # the warm-ups' samples dropped
    assert "256 chunks of 1,024 elements" in text and "| zarrx |" in text
    assert doc["notes"] == [] and doc["params"]["store"] == "local"
    (s,) = doc["samples"]
    assert s["chunks"] == 256 and s["raw"] == 256 * 4096 and s["verified"] and s["calls"] == 1
    assert s["stored"] > s["raw"] and s["write_s"] > 0 and s["read_s"] > 0
    assert doc["summary"]["configs"]["single"]["systems"]["zarrx"]["write"]["n"] == 1


PEERS = ",".join(["zarrx"] + [n for n in ("zarr", "tensorstore")
                             if importlib.util.find_spec(n) is not None])


def test_bench_cli_hierarchy(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    from zarrx.bench.hierarchy import OPS
    text, doc = _run_json(tmp_path, ["--workload", "hierarchy", "--arrays", "20",
                                     "--systems", PEERS], capsys)
    assert "### Hierarchy of 20 arrays, single-threaded (ms)" in text
    assert "| open every array by path |" in text and "µs per array" in text
    assert doc["notes"] == [] and all(s["verified"] for s in doc["samples"])
    by = {s["system"]: s for s in doc["samples"]}
    assert set(by) == set(PEERS.split(","))
    assert all(v is not None and v > 0 for v in by["zarrx"]["seconds"].values())
    assert set(by["zarrx"]["seconds"]) == set(OPS)
    if "tensorstore" in by:                                 # no groups: only opens by path
        assert [op for op, v in by["tensorstore"]["seconds"].items() if v] == ["open by path"]
        assert "n/a" in text
    if "zarr" in by:
        assert "### Targets, single-threaded" in text and "vs zarr-python" in text


def _fake(workload: str, samples: list[dict], **params) -> dict:
    p = Params(workload=workload, store="local", root="/tmp/x", reps=2, configs=("single",),
               systems=("zarrx", "zarr", "tensorstore"), **params)
    return {"machine": {"cpu": "test cpu", "cpus": 2, "python": "3"}, "params": p.to_json(),
            "systems": {s: {"available": True, "version": "1"} for s in p.systems},
            "samples": samples, "ceilings": [], "latency": [], "notes": []}


def test_small_chunks_summary_and_tables() -> None:
    from zarrx.bench.small import render as small_render
    from zarrx.bench.small import summarise as small_summarise
    speeds = {"zarrx": (1.0, 0.5), "zarr": (8.0, 4.0), "tensorstore": (4.0, 2.0)}  # seconds
    samples = [{"config": "single", "rep": rep, "system": s, "write_s": w, "read_s": r,
                "write_cpu_s": w * (1.5 if s == "tensorstore" else 1), "read_cpu_s": r / 2,
                "chunks": 1000, "raw": 4096000, "stored": 4096500, "calls": 1, "verified": True}
               for rep in range(2) for s, (w, r) in speeds.items()]
    result = _fake("small-chunks", samples, small_chunks=1000)
    summary = small_summarise(result)
    row = summary["configs"]["single"]
    assert row["systems"]["zarrx"]["write"]["median"] == pytest.approx(1000.0)
    assert row["zarrx_best"]["write"] == {"ratio": pytest.approx(4.0), "peer": "tensorstore"}
    text = small_render(result, summary)
    assert "| write chunks/s | ≥ 2.0× best peer | 4.00 (tensorstore) | yes |" in text
    assert row["systems"]["tensorstore"]["cores"] == {"write": 1.5, "read": 0.5}
    assert "| 1.000 | 1.50 · 0.50 |" in text
    json.dumps(summary)


def test_hierarchy_summary_and_tables() -> None:
    from zarrx.bench.hierarchy import OPS
    from zarrx.bench.hierarchy import render as h_render
    from zarrx.bench.hierarchy import summarise as h_summarise
    secs = {"zarrx": dict.fromkeys(OPS, 0.1), "zarr": dict.fromkeys(OPS, 0.4),
            "tensorstore": {**dict.fromkeys(OPS), "open by path": 0.08}}
    samples = [{"config": "single", "rep": rep, "system": s, "arrays": 1000, "seconds": v,
                "stored": 1, "verified": True} for rep in range(2) for s, v in secs.items()]
    result = _fake("hierarchy", samples, arrays=1000)
    summary = h_summarise(result)
    ops = summary["configs"]["single"]
    assert ops["open by path"]["zarrx_time_ratio"] == {"zarr": pytest.approx(0.25),
                                                       "tensorstore": pytest.approx(1.25)}
    assert ops["list members"]["systems"]["tensorstore"] is None
    text = h_render(result, summary)
    assert "| … µs per array (median) | 100.0 | 400.0 | 80.0 |" in text
    assert "| open 1,000 arrays vs zarr-python | ≤ 0.5× | 0.25 (zarr-python) | yes |" in text
    assert "| open 1,000 arrays vs tensorstore | ≤ 1.0× | 1.25 (tensorstore) | no |" in text
    assert "| list the group's members | 100.0 [100.0–100.0] | 400.0 [400.0–400.0] | n/a |" \
        in text


def test_local_targets_table() -> None:
    result = _fake_result()
    result["params"]["store"] = "local"
    result["params"]["root"] = "/tmp/x"
    text = render(result, summarise(result))
    assert "local store (a fresh directory per write under /tmp/x; page cache warm)" in text
    assert "### Targets, single-threaded (zarrx over the best peer's MiB/s)" in text
    assert "| raw write | ≥ 1.5× best peer | 2.00 (zarr-python) | yes |" in text
    assert "| zstd-0 read | ≥ 1.0× best peer | 2.00 (zarr-python) | yes |" in text
    assert "zarrx/best peer" in text
