"""``zarrx bench``: zarrx against zarr-python and tensorstore on one workload, in one run.

    zarrx bench                      # full run: 4096×4096 float32, 5 repetitions, both configs
    zarrx bench --quick              # 1024×1024, 3 repetitions, fewer latency calls
    zarrx bench --systems zarrx --configs single --cases zstd-0,raw --json out.json
    zarrx bench --store local --size 16384   # the 1 GiB workload, on the local file system
    zarrx bench --workload small-chunks      # 65,536 chunks of 4 KiB: chunks per second
    zarrx bench --workload hierarchy         # open and list the 1,000 arrays of a group
    zarrx bench --memory             # only the peak RSS of reading a 1 GiB sharded zstd array
    zarrx bench --remote             # remote I/O: a local S3 server behind a slow link

Each system runs in its own worker process; the systems are interleaved within every
repetition. The output is markdown: throughput (median [min–max]), zarrx/peer ratios, the
fraction of the measured ceilings each system reaches, and a latency table.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections.abc import Callable

from zarrx.bench.local import STORE_KINDS
from zarrx.bench.systems import SYSTEMS
from zarrx.bench.workload import CASE_NAMES, WORKLOADS, Params

__all__ = ["main", "parse_args", "run_bench", "run_memory"]

SYSTEM_NAMES = ("zarrx", "zarr", "tensorstore")
MEMORY_SHARD = 2048
CONFIG_NAMES = ("single", "default")


def _list(kind: str, known: tuple[str, ...]) -> Callable[[str], tuple[str, ...]]:
    def parse(text: str) -> tuple[str, ...]:
        items = tuple(t.strip() for t in text.split(",") if t.strip())
        bad = [t for t in items if t not in known]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"--{kind}: expected a comma-separated subset of {', '.join(known)}, "
                f"found {text!r}")
        return items
    return parse


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, found {text!r}")
    return value


def parse_args(argv: list[str]) -> tuple[Params, argparse.Namespace]:
    ap = argparse.ArgumentParser(prog="zarrx bench", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=_positive, help="array side (default 4096; --quick: 1024)")
    ap.add_argument("--chunk", type=_positive, default=256, help="chunk side (default 256)")
    ap.add_argument("--shard", type=_positive, default=1024,
                    help="shard side for the sharded cases (default 1024)")
    ap.add_argument("--reps", type=_positive, help="repetitions (default 5; --quick: 3)")
    ap.add_argument("--warmup", type=_count, metavar="N",
                    help="small-chunks and hierarchy: untimed repetitions of every system "
                         "before the timed ones, interleaved as they are (default 1; --quick: 0)")
    ap.add_argument("--latency-iters", type=_positive,
                    help="calls per latency measurement (default 200; --quick: 20)")
    ap.add_argument("--quick", action="store_true", help="a small run that takes under a minute")
    ap.add_argument("--systems", type=_list("systems", tuple(SYSTEMS)), default=SYSTEM_NAMES,
                    help="comma-separated: zarrx,zarr,tensorstore (default: all three), and "
                         "zarrx-none: zarrx with consistency='none', to measure the cost of "
                         "the consistency guarantees beside zarrx")
    ap.add_argument("--configs", type=_list("configs", CONFIG_NAMES), default=CONFIG_NAMES,
                    help="comma-separated: single,default (default: both)")
    ap.add_argument("--cases", type=_list("cases", CASE_NAMES), default=CASE_NAMES,
                    help="comma-separated subset of: " + ", ".join(CASE_NAMES))
    ap.add_argument("--workload", choices=WORKLOADS, default="throughput",
                    help="throughput (default): whole arrays per case, and latency; "
                         "small-chunks: many 4 KiB chunks; hierarchy: the arrays of a group")
    ap.add_argument("--store", choices=STORE_KINDS,
                    help="where the arrays are stored (default: memory for throughput, local "
                         "for small-chunks and hierarchy)")
    ap.add_argument("--dir", metavar="PATH",
                    help="--store local: make the run's directory here (default: the "
                         "temporary directory); it is removed at the end")
    ap.add_argument("--cold", action="store_true",
                    help="--store local: empty the page cache before every timed read "
                         "(needs root; skipped with a note otherwise)")
    ap.add_argument("--small-chunks", type=_positive, metavar="N",
                    help="small-chunks: number of 4 KiB chunks (default 65536 = 256 MiB; "
                         "--quick: 4096)")
    ap.add_argument("--arrays", type=_positive, metavar="N",
                    help="hierarchy: arrays in the group (default 1000; --quick: 100)")
    ap.add_argument("--seed", type=int, default=12345, help="data seed (default 12345)")
    ap.add_argument("--json", metavar="PATH", help="write all raw samples and the summary here")
    ap.add_argument("--markdown", metavar="PATH", help="also write the tables to this file")
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    ap.add_argument("--memory", action="store_true",
                    help="only measure the peak RSS of reading a whole sharded zstd array")
    ap.add_argument("--memory-side", type=_positive,
                    help="array side for --memory (default 16384 = 1 GiB; --quick: 4096)")
    ns = ap.parse_args(argv)
    store = ns.store or ("memory" if ns.workload == "throughput" else "local")
    if store != "local" and (ns.cold or ns.dir):
        ap.error("--cold and --dir need --store local")
    if ns.dir and not os.path.isdir(ns.dir):
        ap.error(f"--dir: {ns.dir!r} is not a directory")
    if ns.memory and (ns.workload != "throughput" or ns.store):
        ap.error("--memory is a measurement of its own: no --workload or --store with it")
    ns.memory_side = ns.memory_side or (4096 if ns.quick else 16384)
    mshard = min(MEMORY_SHARD, ns.memory_side)
    if ns.memory and (ns.memory_side % mshard or mshard % ns.chunk):
        ap.error(f"--memory-side ({ns.memory_side}) must be a multiple of {mshard} (the "
                 f"shard side) and {mshard} a multiple of --chunk ({ns.chunk})")
    size = ns.size or (1024 if ns.quick else 4096)
    if ns.shard % ns.chunk or size % ns.chunk:
        ap.error(f"--shard ({ns.shard}) and --size ({size}) must be multiples of "
                 f"--chunk ({ns.chunk})")
    params = Params(workload=ns.workload, store=store, base_dir=ns.dir, cold=ns.cold,
                    small_chunks=ns.small_chunks or (4096 if ns.quick else 65536),
                    arrays=ns.arrays or (100 if ns.quick else 1000),
                    size=size, chunk=ns.chunk, shard=min(ns.shard, size),
                    reps=ns.reps or (3 if ns.quick else 5),
                    warmup=ns.warmup if ns.warmup is not None else (0 if ns.quick else 1),
                    latency_iters=ns.latency_iters or (20 if ns.quick else 200), seed=ns.seed,
                    cases=ns.cases, systems=ns.systems, configs=ns.configs)
    return params, ns


# the module that describes, summarises and renders each workload
REPORTS = {"throughput": "zarrx.bench.report", "small-chunks": "zarrx.bench.small",
           "hierarchy": "zarrx.bench.hierarchy"}


def run_bench(params: Params, say: Callable[[str], None] = lambda s: None) -> dict:
    """Run, summarise and render; returns the JSON document (with ``markdown``)."""
    from zarrx.bench.runner import run

    report = importlib.import_module(REPORTS[params.workload])
    t0 = time.perf_counter()
    result = run(params, say, report.describe)
    result["elapsed_s"] = time.perf_counter() - t0
    result["summary"] = report.summarise(result)
    result["markdown"] = report.render(result, result["summary"])
    return result


def run_memory(ns: argparse.Namespace, say: Callable[[str], None] = lambda s: None) -> dict:
    """``--memory``: the read-memory measurement alone; returns the JSON document."""
    from zarrx.bench.memory import measure_read_memory, render_memory
    from zarrx.bench.runner import machine_info

    t0 = time.perf_counter()
    side = ns.memory_side
    mem = measure_read_memory(side=side, chunk=ns.chunk, shard=min(MEMORY_SHARD, side),
                              system=ns.systems, seed=ns.seed, say=say)
    return {"machine": machine_info(), "memory": mem, "markdown": render_memory(mem),
            "elapsed_s": time.perf_counter() - t0, "samples": [], "notes": mem["notes"]}


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``zarrx bench``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--remote" in args:
        from zarrx.bench.remote import main as remote_main
        return remote_main(args)
    params, ns = parse_args(args)

    def say(text: str) -> None:
        if not ns.quiet:
            print(text, file=sys.stderr, flush=True)

    result = run_memory(ns, say) if ns.memory else run_bench(params, say)
    print(result["markdown"], end="")
    if ns.markdown:
        with open(ns.markdown, "w", encoding="utf-8") as f:
            f.write(result["markdown"])
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        say(f"wrote {ns.json}")
    say(f"done in {result['elapsed_s']:.0f} s")
    if ns.memory:
        return 0 if result["memory"]["results"] else 1
    return 0 if result["samples"] else 1
