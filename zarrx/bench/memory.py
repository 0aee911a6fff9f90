"""Peak memory of reading a whole sharded zstd array: ``zarrx bench --memory``.

The target: reading a region of N bytes peaks at no more than N + 64 MiB of resident memory.
``measure_read_memory`` writes a side×side float32 array (sharded, inner chunks zstd level 1)
into a LocalStore in a temporary folder, one shard row at a time, then reads it whole in a
fresh ``python -m zarrx.bench.memory`` process per system, so the RSS is not polluted by the
write. The child measures:

- ``before``: VmRSS once the array is open, just before ``z[...]``;
- ``peak``: the larger of the VmRSS samples a watcher thread takes every ~2 ms and the kernel's
  high-water mark VmHWM (reset just before the read through ``/proc/self/clear_refs`` where
  the kernel allows it; a sampling thread can miss spikes while C code holds the GIL);
- ``overhead = peak - before - output``: the memory the read needed beyond its own result.

Linux only (``/proc/self/status``).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from zarrx.bench.workload import MIB, wave_rows
from zarrx.errors import ZarrError

__all__ = ["MEMORY_SYSTEMS", "TARGET_OVERHEAD_MIB", "measure_read_memory", "render_memory"]

MEMORY_SYSTEMS = ("zarrx", "zarr", "tensorstore")
TARGET_OVERHEAD_MIB = 64.0
SAMPLE_S = 0.002
CHILD_TIMEOUT_S = 1800.0
_LABELS = {"zarrx": "zarrx", "zarr": "zarr-python", "tensorstore": "tensorstore"}


# --- data and writing (parent) -------------------------------------------------------------

def make_rows(side: int, start: int, stop: int, seed: int = 12345) -> np.ndarray:
    """Rows ``start:stop`` of a side×side float32 field: the waves of ``make_data`` plus
    gaussian noise, quantised to 1/1024. The noise depends on ``(seed, start)`` only, so a
    block row can be rebuilt on its own."""
    return wave_rows(side, start, stop, np.random.default_rng([seed, start]))


def _check_sizes(side: int, chunk: int, shard: int) -> None:
    for name, value in (("side", side), ("chunk", chunk), ("shard", shard)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ZarrError(f"measure_read_memory: {name} expected a positive int, "
                             f"found {value!r}")
    if shard % chunk or side % shard:
        raise ZarrError(f"measure_read_memory: expected chunk ({chunk}) to divide shard "
                         f"({shard}) and shard to divide side ({side})")


def write_array(path: str, side: int, chunk: int, shard: int, seed: int = 12345) -> int:
    """Write the array at ``path`` (a LocalStore folder), one shard row at a time; returns the
    stored bytes (sum of the file sizes)."""
    import zarrx
    from zarrx.codecs import Zstd
    from zarrx.store import LocalStore

    z = zarrx.create_array(LocalStore(path), shape=(side, side), dtype="float32",
                           chunks=(chunk, chunk), shards=(shard, shard),
                           compressors=Zstd(level=1), fill_value=0, zarr_format=3)
    for start in range(0, side, shard):
        z[start:start + shard, :] = make_rows(side, start, start + shard, seed)
    stored = 0
    for root, _, files in os.walk(path):
        stored += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return stored


# --- the child: open, read whole, watch RSS --------------------------------------------------

def _status_kib(field: str) -> int:
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith(field.encode() + b":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status: no {field} line")


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _open_reader(system: str, path: str, threads: int) -> Callable[[], np.ndarray]:
    """Configure ``system`` for ``threads`` threads, open the array; returns the read call."""
    if system == "zarrx":
        import zarrx
        zarrx.config.set(threads=threads)
        z = zarrx.open_array(path, mode="r")
        return lambda: z[...]
    if system == "zarr":
        import zarr
        zarr.config.set({"threading.max_workers": threads})
        za = zarr.open_array(path, mode="r")
        return lambda: za[...]
    if system == "tensorstore":
        import tensorstore as ts
        ctx = ts.Context({"data_copy_concurrency": {"limit": threads},
                          "file_io_concurrency": {"limit": threads}})
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}},
                    open=True, read=True, context=ctx).result()
        return lambda: t.read().result()
    raise ZarrError(f"memory child: system expected one of {MEMORY_SYSTEMS}, found {system!r}")


def _version(system: str) -> str:
    from importlib import metadata
    try:
        return metadata.version(system)
    except metadata.PackageNotFoundError:
        return str(getattr(sys.modules.get(system), "__version__", "unknown"))


def child_measure(system: str, path: str, threads: int, side: int, shard: int,
                  seed: int) -> dict[str, Any]:
    """Run in the fresh process: read the whole array once and report RSS in bytes."""
    read = _open_reader(system, path, threads)
    before = _status_kib("VmRSS") * 1024
    hwm_reset = _reset_hwm()
    peak = [before]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _status_kib("VmRSS") * 1024)
            time.sleep(SAMPLE_S)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    t0 = time.perf_counter()
    out = read()
    read_s = time.perf_counter() - t0
    stop.set()
    watcher.join()
    sampled = peak[0]
    hwm = _status_kib("VmHWM") * 1024 if hwm_reset else 0
    out = np.asarray(out)
    verified = (out.shape == (side, side) and out.dtype == np.float32
                and np.array_equal(out[:shard], make_rows(side, 0, shard, seed)))
    return {"ok": True, "version": _version(system), "threads": threads,
            "output_bytes": int(out.nbytes), "before_bytes": before,
            "peak_bytes": max(sampled, hwm), "sampled_peak_bytes": sampled,
            "hwm_bytes": hwm, "hwm_reset": hwm_reset, "read_s": read_s, "verified": verified}


def _child_main(argv: list[str]) -> int:
    req = json.loads(argv[0])
    try:
        reply = child_measure(**req)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a note
        reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(reply), flush=True)
    return 0


# --- the parent -----------------------------------------------------------------------------

def _importable(system: str) -> str | None:
    import importlib.util
    if importlib.util.find_spec(system) is None:
        return f"{system} is not installed"
    return None


def _run_child(req: dict) -> dict:
    from zarrx.bench.runner import _child_env
    try:
        proc = subprocess.run([sys.executable, "-m", "zarrx.bench.memory", json.dumps(req)],
                              capture_output=True, text=True, env=_child_env(), check=False,
                              timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"no reply within {CHILD_TIMEOUT_S:.0f} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode or not lines:
        return {"ok": False, "error": f"exit status {proc.returncode}: {proc.stderr[-1500:]}"}
    return json.loads(lines[-1])


def measure_read_memory(side: int = 16384, chunk: int = 256, shard: int = 2048,
                        threads: int | None = None,
                        system: str | Sequence[str] = "zarrx",
                        tmpdir: str | None = None, seed: int = 12345,
                        say: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Peak RSS of reading a whole side×side float32 sharded zstd array, per system.

    ``system`` is one name of ``MEMORY_SYSTEMS`` or a sequence of them; a system that cannot
    be imported is skipped with a note. ``threads`` defaults to zarrx's default thread count
    and is applied to every system. Returns ``{"side", "chunk", "shard", "threads",
    "output_bytes", "stored_bytes", "results": {system: {...}}, "notes"}``; each result holds
    ``output_bytes``, ``before_bytes``, ``peak_bytes`` and ``overhead_mib``.
    """
    _check_sizes(side, chunk, shard)
    names = (system,) if isinstance(system, str) else tuple(system)
    bad = [n for n in names if n not in MEMORY_SYSTEMS]
    if bad or not names:
        raise ZarrError(f"measure_read_memory: system expected names of {MEMORY_SYSTEMS}, "
                         f"found {system!r}")
    if threads is None:
        import zarrx
        threads = int(zarrx.config.get("threads"))
    result: dict[str, Any] = {"side": side, "chunk": chunk, "shard": shard, "threads": threads,
                              "output_bytes": side * side * 4, "stored_bytes": 0,
                              "results": {}, "notes": []}
    folder = tempfile.mkdtemp(prefix="zarrx-memory-", dir=tmpdir)
    try:
        path = os.path.join(folder, "array.zarr")
        t0 = time.perf_counter()
        result["stored_bytes"] = write_array(path, side, chunk, shard, seed)
        say(f"memory: wrote {side}x{side} float32 ({result['stored_bytes'] / MIB:.0f} MiB "
            f"stored) in {time.perf_counter() - t0:.1f} s")
        for name in names:
            why = _importable(name)
            reply = ({"ok": False, "error": why} if why else
                     _run_child({"system": name, "path": path, "threads": threads,
                                 "side": side, "shard": shard, "seed": seed}))
            if not reply.get("ok"):
                note = f"memory: {name} skipped: {reply.get('error')}"
                result["notes"].append(note)
                say(note)
                continue
            reply.pop("ok")
            reply["overhead_mib"] = (reply["peak_bytes"] - reply["before_bytes"]
                                     - reply["output_bytes"]) / MIB
            if not reply["verified"]:
                result["notes"].append(f"memory: {name}: read-back mismatch")
            result["results"][name] = reply
            say(f"memory: {name} peak {reply['peak_bytes'] / MIB:.0f} MiB, overhead "
                f"{reply['overhead_mib']:.1f} MiB, read {reply['read_s']:.1f} s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return result


def render_memory(mem: dict[str, Any]) -> str:
    """The markdown table of a ``measure_read_memory`` result."""
    side, shard, chunk = mem["side"], mem["shard"], mem["chunk"]
    title = (f"### Memory: whole read of {side}×{side} float32, shards {shard}², chunks "
             f"{chunk}², zstd 1, {mem['threads']} threads "
             f"(target: overhead ≤ {TARGET_OVERHEAD_MIB:.0f} MiB)")
    header = ("| system | output MiB | RSS before MiB | peak RSS MiB | overhead MiB "
              "| overhead/output |")
    lines = [title, "", header, "|---|---:|---:|---:|---:|---:|"]
    for name, r in mem["results"].items():
        out = r["output_bytes"] / MIB
        lines.append(f"| {_LABELS[name]} | {out:,.1f} | {r['before_bytes'] / MIB:,.0f} | "
                     f"{r['peak_bytes'] / MIB:,.0f} | {r['overhead_mib']:,.1f} | "
                     f"{r['overhead_mib'] / out:.3f} |")
    lines.append("")
    lines += [f"- {n}" for n in mem["notes"]]
    if mem["notes"]:
        lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1:]))
