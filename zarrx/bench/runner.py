"""The parent side of a benchmark run: start one worker per system and configuration,
interleave the systems within every repetition, and collect the raw samples.

The throughput workload asks for one case at a time (and for ceilings and latencies); the
other workloads ask every worker for one ``measure`` per repetition. Local stores live in one
directory per run, removed at the end.
"""
from __future__ import annotations

import dataclasses
import json
import os
import platform
import select
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from zarrx.bench.local import bench_root, cold_problem
from zarrx.bench.workload import MIB, Params

__all__ = ["WorkerProc", "WorkerError", "run", "machine_info", "library_versions"]

TIMEOUT_S = 1800.0


class WorkerError(RuntimeError):
    """A worker died, timed out or could not start."""


def _child_env() -> dict[str, str]:
    import zarrx
    root = os.path.dirname(os.path.dirname(os.path.abspath(zarrx.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


class WorkerProc:
    """A ``python -m zarrx.bench.worker`` subprocess and its JSON-lines channel."""

    def __init__(self, system: str, config: str) -> None:
        self.system, self.config = system, config
        self._err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zarrx.bench.worker", system, config],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True,
            bufsize=1, env=_child_env())

    def send(self, req: dict) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise WorkerError(self._died()) from exc

    def receive(self, timeout: float = TIMEOUT_S) -> dict:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.kill()
            raise WorkerError(f"{self.system}/{self.config}: no reply within {timeout:.0f} s")
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(self._died())
        return json.loads(line)

    def request(self, req: dict, timeout: float = TIMEOUT_S) -> dict:
        self.send(req)
        return self.receive(timeout)

    def _died(self) -> str:
        self.proc.wait(timeout=10)
        self._err.seek(0)
        tail = self._err.read()[-2000:]
        return f"{self.system}/{self.config}: worker exited ({self.proc.returncode}):\n{tail}"

    def stderr_tail(self, n: int = 2000) -> str:
        self._err.seek(0)
        return self._err.read()[-n:]

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.request({"op": "quit"}, timeout=30)
            except (WorkerError, OSError, ValueError):
                pass
        self.kill()
        self._err.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, Any]:
    """CPU, Python and library versions of the parent process."""
    import numpy as np

    return {"cpu": _cpu_model(), "cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__}


def library_versions() -> dict[str, str]:
    """Versions of the C libraries zarrx links (asked in a worker, never in the parent)."""
    info: dict[str, str] = {}
    for name, mod in (("libzstd", "zarrx.codecs._zstd"), ("blosc", "zarrx.codecs._blosc"),
                      ("zlib", "zarrx.codecs._zlib"), ("crc32c", "zarrx.codecs._crc32c")):
        try:
            m = __import__(mod, fromlist=["version"])
            if hasattr(m, "version"):
                info[name] = m.version()
            if hasattr(m, "backend"):
                info[f"{name}_backend"] = m.backend()
        except Exception:  # noqa: BLE001 - versions are informative only
            pass
    return info


Progress = Callable[[str], None]


def _start(names: list[str], config: str, params: Params, result: dict,
           say: Progress) -> dict[str, WorkerProc]:
    procs = {n: WorkerProc(n, config) for n in names}
    for w in procs.values():
        w.send({"op": "init", "params": params.to_json()})
    live: dict[str, WorkerProc] = {}
    for n, w in procs.items():
        try:
            reply = w.receive(600)
        except WorkerError as exc:
            reply = {"ok": False, "error": str(exc)}
        if reply.get("ok"):
            live[n] = w
            if n != "ceilings":
                result["systems"].setdefault(n, {"available": True})["version"] = reply["version"]
            else:
                result["machine"].update(reply.get("libraries", {}))
        else:
            note = f"{n} skipped ({config}): {reply.get('error')}"
            result["notes"].append(note)
            say(note)
            if n != "ceilings":
                result["systems"].setdefault(n, {"available": False, "error": reply.get("error")})
            w.close()
    return live


def _ask(w: WorkerProc, req: dict, result: dict, say: Progress) -> dict | None:
    try:
        reply = w.request(req)
    except WorkerError as exc:
        reply = {"ok": False, "error": str(exc)}
    if not reply.get("ok"):
        note = f"{w.system} ({w.config}) {req.get('op')} {req.get('case', '')}: {reply.get('error')}"
        result["notes"].append(note)
        say(note)
        return None
    return reply


def _order(systems: list[str], rep: int) -> list[str]:
    """The systems in the order of repetition ``rep``: rotated by one every repetition, so
    no system is always first (or always right after another one)."""
    k = rep % max(len(systems), 1)
    return systems[k:] + systems[:k]


def run(params: Params, say: Progress = lambda s: None,
        describe: Callable[[dict], str] | None = None) -> dict[str, Any]:
    """Run the whole benchmark; returns everything measured (see ``report.summarise`` and the
    other workloads' ``summarise``). ``describe`` turns one reply of a ``measure`` request
    into a few words of progress."""
    result: dict[str, Any] = {"machine": machine_info(), "params": params.to_json(),
                              "systems": {}, "samples": [], "ceilings": [], "latency": [],
                              "notes": []}
    if params.cold and (problem := cold_problem()) is not None:
        note = f"--cold ignored ({problem}): every read found the data in the page cache"
        result["notes"].append(note)
        say(note)
        params = dataclasses.replace(params, cold=False)
    if params.store != "local":
        _run(params, result, say, describe)
        return result
    with bench_root(params.base_dir) as root:
        _run(dataclasses.replace(params, root=root), result, say, describe)
    return result


def _run(params: Params, result: dict[str, Any], say: Progress,
         describe: Callable[[dict], str] | None) -> None:
    result["params"] = params.to_json()
    if params.workload == "throughput":
        _run_throughput(params, result, say)
    else:
        _run_measure(params, result, say, describe or (lambda r: "ok"))


def _run_measure(params: Params, result: dict[str, Any], say: Progress,
                 describe: Callable[[dict], str]) -> None:
    """Every repetition asks each system in turn for one measurement of the workload."""
    for config in params.configs:
        procs = _start(list(params.systems), config, params, result, say)
        systems = [n for n in params.systems if n in procs]
        try:
            for warm in range(params.warmup):       # untimed: the samples are dropped
                for n in _order(systems, warm):
                    _ask(procs[n], {"op": "measure"}, result, say)
                say(f"[{config}] warm-up {warm + 1}/{params.warmup} {params.workload}")
            for rep in range(params.reps):
                line = []
                for n in _order(systems, rep):
                    r = _ask(procs[n], {"op": "measure"}, result, say)
                    if r is None:
                        continue
                    if not r.get("verified", True):
                        result["notes"].append(f"{n} ({config}) {params.workload}: "
                                               "read-back mismatch")
                    r.pop("ok", None)
                    result["samples"].append({"config": config, "rep": rep, "system": n, **r})
                    line.append(f"{n} {describe(r)}")
                say(f"[{config}] rep {rep + 1}/{params.reps} {params.workload}: "
                    + " | ".join(line))
        finally:
            for w in procs.values():
                w.close()


def _run_throughput(params: Params, result: dict[str, Any], say: Progress) -> None:
    """The cases (and the ceilings once per repetition), then the latencies."""
    ceilings_done = False
    for config in params.configs:
        names = list(params.systems) + ([] if ceilings_done else ["ceilings"])
        procs = _start(names, config, params, result, say)
        ceil = procs.pop("ceilings", None)
        systems = [n for n in params.systems if n in procs]
        try:
            for rep in range(params.reps):
                for case in params.cases:
                    line = []
                    for n in _order(systems, rep):
                        r = _ask(procs[n], {"op": "case", "case": case}, result, say)
                        if r is None:
                            continue
                        if not r["verified"]:
                            result["notes"].append(f"{n} ({config}) {case}: read-back mismatch")
                        result["samples"].append({"config": config, "rep": rep, "case": case,
                                                  "system": n, **{k: r[k] for k in (
                                                      "write_s", "read_s", "write_cpu_s",
                                                      "read_cpu_s", "stored", "raw",
                                                      "verified") if k in r}})
                        mib = r["raw"] / MIB
                        line.append(f"{n} w {mib / r['write_s']:.0f} r {mib / r['read_s']:.0f}")
                    say(f"[{config}] rep {rep + 1}/{params.reps} {case:<15} " + " | ".join(line))
                if ceil is not None:
                    r = _ask(ceil, {"op": "ceilings"}, result, say)
                    if r is not None:
                        result["ceilings"].append({"rep": rep, **r["ceilings"]})
            for rep in range(params.reps):
                for n in _order(systems, rep):
                    r = _ask(procs[n], {"op": "latency", "iters": params.latency_iters},
                             result, say)
                    if r is not None:
                        result["latency"].append({"config": config, "rep": rep, "system": n,
                                                  "ops": r["latency"]})
                say(f"[{config}] latency rep {rep + 1}/{params.reps}")
        finally:
            for w in list(procs.values()) + ([ceil] if ceil is not None else []):
                w.close()
        ceilings_done = ceilings_done or ceil is not None
