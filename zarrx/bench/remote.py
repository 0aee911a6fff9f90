"""``zarrx bench --remote``: remote I/O against a local S3 server behind a slow link.

    zarrx bench --remote                       # 256 MiB float32, 20 ms per request, 32 MiB/s
    zarrx bench --remote --mib 64 --latency-ms 20 --bandwidth-mib 32 --systems zarrx-obstore

An S3 server (moto, in its own process) sits behind a proxy (its own process too) that delays
every request by ``--latency-ms`` and streams every request body and every response at
``--bandwidth-mib`` MiB/s (a per-connection cap each way, like an object store's per-request
throughput). Each system writes a raw
float32 array (sharded and unsharded) into a fresh prefix and reads it back; the proxy counts
the requests and bytes. The ideal time of a run with R requests moving V bytes, for a client
keeping C requests in flight, is ceil(R / C) × latency + V / (min(R, C) × bandwidth).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["main", "SYSTEMS"]

MiB = 1 << 20
SYSTEMS = ("zarrx-obstore", "zarrx-fsspec", "zarr-obstore", "zarr-fsspec", "tensorstore")
LAYOUTS = ("unsharded", "sharded")
ADMIN = "/__zarrx_proxy__/"
IN_MEMORY = 1 << 30      # the server keeps objects up to this size in memory


class Env:
    """The S3 server, the proxy in front of it, and the bucket."""

    def __init__(self, latency: float, bandwidth: float, sliced_ranges: bool = True) -> None:
        from zarrx.bench.servers import S3_KEYS, create_bucket, start_moto

        self.keys = S3_KEYS
        self.moto = start_moto(in_memory=IN_MEMORY, sliced_ranges=sliced_ranges)
        self.bucket = "zarrx-bench"
        create_bucket(self.moto.url, self.bucket)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "zarrx.bench.proxy", self.moto.url, "--latency",
             str(latency), "--bandwidth", str(bandwidth)], stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.endpoint = self.proc.stdout.readline().strip()
        if not self.endpoint.startswith("http"):
            self.close()
            raise RuntimeError("the latency proxy did not start")

    def admin(self, what: str, body: dict | None = None) -> dict:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.endpoint + ADMIN + what, data=data,
                                     method="GET" if body is None and what == "stats"
                                     else "POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    def clear(self) -> None:
        """Drop every object (the server holds them in memory), keeping the bucket."""
        from zarrx.bench.servers import reset_moto
        reset_moto(self.moto.url, self.bucket)

    def obstore_options(self) -> dict:
        return {"endpoint": self.endpoint, **self.keys}

    def fsspec_options(self) -> dict:
        return {"endpoint_url": self.endpoint, "key": self.keys["access_key_id"],
                "secret": self.keys["secret_access_key"],
                "client_kwargs": {"region_name": self.keys["region"]}}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.moto.stop()


def geometry(mib: int) -> dict:
    side = int(math.sqrt(mib * MiB / 4))
    side -= side % 16
    return {"side": side, "chunk": side // 8, "shard": side // 2, "inner": side // 16}


# -- the systems: write(url, data, layout), read(url) -> ndarray -------------------------------
def _zarrx(env: Env, backend: str, ns: argparse.Namespace) -> tuple[Callable, Callable]:
    import zarrx
    from zarrx.store.remote import FsspecStore, ObjectStore

    def store(url: str, read_only: bool) -> Any:
        if backend == "obstore":
            return ObjectStore(url, storage_options=env.obstore_options(), read_only=read_only,
                               in_flight=ns.in_flight)
        return FsspecStore(url, storage_options=env.fsspec_options(), read_only=read_only,
                           in_flight=ns.in_flight)

    def write(url: str, data: np.ndarray, layout: str, g: dict) -> None:
        kw = ({"chunks": (g["inner"],) * 2, "shards": (g["shard"],) * 2}
              if layout == "sharded" else {"chunks": (g["chunk"],) * 2})
        with zarrx.config.set(threads=ns.threads):
            z = zarrx.create_array(store(url, False), shape=data.shape, dtype=data.dtype,
                                   compressors=None, **kw)
            z[...] = data

    def read(url: str) -> np.ndarray:
        with zarrx.config.set(threads=ns.threads):
            return zarrx.open_array(store(url, True), mode="r")[...]

    return write, read


def _zarr(env: Env, backend: str, ns: argparse.Namespace) -> tuple[Callable, Callable]:
    import zarr

    def store(url: str, read_only: bool) -> Any:
        if backend == "fsspec":
            return zarr.storage.FsspecStore.from_url(url, storage_options=env.fsspec_options(),
                                                     read_only=read_only)
        from obstore.store import S3Store
        bucket, prefix = url[len("s3://"):].split("/", 1)
        k = env.keys
        native = S3Store(bucket, prefix=prefix, endpoint=env.endpoint, region=k["region"],
                         access_key_id=k["access_key_id"],
                         secret_access_key=k["secret_access_key"],
                         client_options={"allow_http": True})
        return zarr.storage.ObjectStore(native, read_only=read_only)

    def write(url: str, data: np.ndarray, layout: str, g: dict) -> None:
        kw = ({"chunks": (g["inner"],) * 2, "shards": (g["shard"],) * 2}
              if layout == "sharded" else {"chunks": (g["chunk"],) * 2})
        a = zarr.create_array(store(url, False), shape=data.shape, dtype=data.dtype,
                              compressors=None, **kw)
        a[...] = data

    def read(url: str) -> np.ndarray:
        return zarr.open_array(store(url, True), mode="r")[...]

    return write, read


def _tensorstore(env: Env, ns: argparse.Namespace) -> tuple[Callable, Callable]:
    import tensorstore as ts

    os.environ.setdefault("AWS_ACCESS_KEY_ID", env.keys["access_key_id"])
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", env.keys["secret_access_key"])

    def kvstore(url: str) -> dict:
        bucket, prefix = url[len("s3://"):].split("/", 1)
        return {"driver": "s3", "bucket": bucket, "path": prefix + "/",
                "endpoint": env.endpoint, "aws_region": env.keys["region"]}

    def write(url: str, data: np.ndarray, layout: str, g: dict) -> None:
        if layout == "sharded":
            grid, codecs = [g["shard"]] * 2, [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": [g["inner"]] * 2, "codecs": [{"name": "bytes"}],
                "index_codecs": [{"name": "bytes"}, {"name": "crc32c"}]}}]
        else:
            grid, codecs = [g["chunk"]] * 2, [{"name": "bytes"}]
        spec = {"driver": "zarr3", "kvstore": kvstore(url), "create": True,
                "metadata": {"shape": list(data.shape), "data_type": "float32",
                             "chunk_grid": {"name": "regular",
                                            "configuration": {"chunk_shape": grid}},
                             "codecs": codecs}}
        t = ts.open(spec).result()
        t[...].write(data).result()

    def read(url: str) -> np.ndarray:
        return ts.open({"driver": "zarr3", "kvstore": kvstore(url)}).result().read().result()

    return write, read


def make_system(name: str, env: Env, ns: argparse.Namespace) -> tuple[Callable, Callable]:
    if name.startswith("zarrx-"):
        return _zarrx(env, name.split("-", 1)[1], ns)
    if name.startswith("zarr-"):
        return _zarr(env, name.split("-", 1)[1], ns)
    return _tensorstore(env, ns)


# -- measuring ------------------------------------------------------------------------------
def ideal(requests: int, nbytes: int, ns: argparse.Namespace) -> float:
    c = max(1, min(requests, ns.in_flight))
    return (math.ceil(requests / ns.in_flight) * ns.latency_ms / 1000
            + nbytes / (c * ns.bandwidth_mib * MiB))


def measure(env: Env, fn: Callable[[], Any], ns: argparse.Namespace) -> tuple[dict, Any]:
    env.admin("reset", {})
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    st = env.admin("stats")
    moved = st["bytes_in"] + st["bytes_out"]
    row = {"wall_s": wall, "requests": st["requests"], "by_method": st["by_method"],
           "bytes": moved, "max_in_flight": st["max_in_flight"],
           "ideal_s": ideal(st["requests"], moved, ns)}
    return row, out


def single_object(env: Env, ns: argparse.Namespace, say: Callable[[str], None]) -> dict:
    """A 64 MiB object: one plain GET against zarrx's parallel parts."""
    import obstore
    from obstore.store import S3Store

    from zarrx.store.remote import ObjectStore

    data = os.urandom(64 * MiB)
    url = f"s3://{env.bucket}/single-{time.time_ns()}"
    zs = ObjectStore(url, storage_options=env.obstore_options(), in_flight=ns.in_flight)
    zs.set("big", data)
    k = env.keys
    native = S3Store(env.bucket, prefix=url.split("/", 3)[3], endpoint=env.endpoint,
                     region=k["region"], access_key_id=k["access_key_id"],
                     secret_access_key=k["secret_access_key"],
                     client_options={"allow_http": True, "timeout": "600s"})
    one, got = measure(env, lambda: bytes(obstore.get(native, "big").bytes()), ns)
    assert got == data
    par, got = measure(env, lambda: zs.get("big"), ns)
    assert got == data
    say(f"  64 MiB object: one GET {one['wall_s']:.2f} s, zarrx parts {par['wall_s']:.2f} s")
    return {"single_get": one, "zarrx_parts": par, "speedup": one["wall_s"] / par["wall_s"]}


def warm_up(env: Env, systems: dict, g: dict) -> None:
    """One small untimed write and read per system and layout: imports, clients and the
    server's first requests of each kind are paid for before anything is timed, so that no
    system pays them for the others by coming first."""
    side = max(64, g["side"] // 256 * 16)
    small = {"side": side, "chunk": side // 2, "shard": side, "inner": side // 4}
    data = np.arange(side * side, dtype="f4").reshape(side, side)
    for name, (write, read) in systems.items():
        for layout in LAYOUTS:
            url = f"s3://{env.bucket}/warm-{name}-{layout}-{time.time_ns()}"
            write(url, data, layout, small)
            if not np.array_equal(read(url), data):
                raise AssertionError(f"{name} {layout}: the warm-up read back other data")


def run(ns: argparse.Namespace, say: Callable[[str], None]) -> dict:
    g = geometry(ns.mib)
    data = np.random.default_rng(ns.seed).random((g["side"], g["side"]), dtype="f4")
    env = Env(ns.latency_ms / 1000, ns.bandwidth_mib * MiB, sliced_ranges=not ns.stock_server)
    rows: list[dict] = []
    try:
        say(f"S3 server {env.moto.url}, proxy {env.endpoint}: {ns.latency_ms} ms/request, "
            f"{ns.bandwidth_mib} MiB/s per connection each way; array {g['side']}² float32 "
            f"({data.nbytes // MiB} MiB)")
        systems = {}
        for name in ([] if ns.only_single else ns.systems):
            try:
                systems[name] = make_system(name, env, ns)
            except ImportError as exc:
                say(f"  skip {name}: {exc}")
        warm_up(env, systems, g)
        names = list(systems)
        for rep in range(0 if ns.only_single else ns.reps):
            for layout in ns.layouts:
                k = rep % max(1, len(names))     # each repetition starts with the next system
                for name in names[k:] + names[:k]:
                    write, read = systems[name]
                    url = f"s3://{env.bucket}/{name}-{layout}-{rep}-{time.time_ns()}"
                    w, _ = measure(env, lambda: write(url, data, layout, g), ns)
                    r, back = measure(env, lambda: read(url), ns)
                    if not np.array_equal(back, data):
                        raise AssertionError(f"{name} {layout}: read back other data")
                    env.clear()
                    for op, row in (("write", w), ("read", r)):
                        rows.append({"system": name, "layout": layout, "op": op, "rep": rep,
                                     **row})
                        say(f"  {name:14} {layout:9} {op:5} {row['wall_s']:6.2f} s "
                            f"{row['requests']:5} req {row['bytes'] / MiB:7.1f} MiB "
                            f"ideal {row['ideal_s']:.2f} s")
        single = single_object(env, ns, say) if not ns.skip_single else None
    finally:
        env.close()
    return {"params": {k: v for k, v in vars(ns).items() if k not in ("json", "markdown")},
            "geometry": g, "rows": rows, "single_object": single}


def render(result: dict) -> str:
    p = result["params"]
    lines = [f"Remote: {p['mib']} MiB float32, raw; {p['latency_ms']} ms per request, "
             f"{p['bandwidth_mib']} MiB/s per connection each way; ideal for "
             f"{p['in_flight']} requests "
             "in flight; S3 server: moto, "
             f"{'as it is' if p.get('stock_server') else 'ranged GETs sliced'}. "
             "Median over repetitions.", "",
             "| layout | op | system | wall s | requests | MiB moved | ideal s | wall/ideal "
             "| zarrx-obstore speedup |", "|---|---|---|---|---|---|---|---|---|"]
    med: dict[tuple, dict] = {}
    for layout in p["layouts"]:
        for op in ("write", "read"):
            for name in p["systems"]:
                rs = [r for r in result["rows"] if (r["layout"], r["op"], r["system"]) ==
                      (layout, op, name)]
                if rs:
                    rs.sort(key=lambda r: r["wall_s"])
                    med[(layout, op, name)] = rs[len(rs) // 2]
    for (layout, op, name), r in med.items():
        ref = med.get((layout, op, "zarrx-obstore"))
        speed = f"{r['wall_s'] / ref['wall_s']:.2f}×" if ref else "–"
        lines.append(f"| {layout} | {op} | {name} | {r['wall_s']:.2f} | {r['requests']} | "
                     f"{r['bytes'] / MiB:.0f} | {r['ideal_s']:.2f} | "
                     f"{r['wall_s'] / r['ideal_s']:.1f} | {speed} |")
    s = result.get("single_object")
    if s:
        lines += ["", f"One 64 MiB object: a single GET took {s['single_get']['wall_s']:.2f} s, "
                  f"zarrx's parallel parts {s['zarrx_parts']['wall_s']:.2f} s "
                  f"({s['zarrx_parts']['requests']} requests): {s['speedup']:.1f}× faster."]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="zarrx bench --remote", description=__doc__.split("\n\n")[0])
    ap.add_argument("--remote", action="store_true")
    ap.add_argument("--mib", type=int, default=256, help="array size in MiB (default 256)")
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--bandwidth-mib", type=float, default=32.0,
                    help="MiB/s per connection, for request bodies and responses alike "
                         "(default 32)")
    ap.add_argument("--in-flight", type=int, default=64)
    ap.add_argument("--threads", type=int, default=64,
                    help="zarrx.config threads for zarrx's runs (default 64: a read fetches "
                         "4 chunks per thread at a time)")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    ap.add_argument("--stock-server", action="store_true",
                    help="run moto as it is: every ranged GET copies the whole object")
    ap.add_argument("--skip-single", action="store_true", help="skip the 64 MiB object test")
    ap.add_argument("--only-single", action="store_true", help="only the 64 MiB object test")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--markdown", metavar="PATH")
    ap.add_argument("--quiet", action="store_true")
    ns = ap.parse_args(argv)
    ns.systems = [s for s in ns.systems.split(",") if s]
    ns.layouts = [s for s in ns.layouts.split(",") if s]
    bad = [s for s in ns.systems if s not in SYSTEMS] + [x for x in ns.layouts
                                                         if x not in LAYOUTS]
    if bad:
        ap.error(f"unknown systems/layouts: {', '.join(bad)}")
    return ns


def main(argv: list[str]) -> int:
    ns = parse_args(argv)

    def say(text: str) -> None:
        if not ns.quiet:
            print(text, file=sys.stderr, flush=True)

    result = run(ns, say)
    md = render(result)
    print(md, end="")
    if ns.markdown:
        with open(ns.markdown, "w", encoding="utf-8") as f:
            f.write(md)
    if ns.json:
        with open(ns.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
    return 0 if result["rows"] or result["single_object"] else 1
