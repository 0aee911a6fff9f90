"""Stored bytes that cannot decode to the size their chunk's metadata declares are refused
before a buffer of that size is allocated: a 16 GiB chunk of which a hostile or damaged object
of a few bytes is stored (a blosc or lz4 header stating another size, zstd frames declaring
another content size or none, a deflate stream too short to inflate that far, raw items or a
checksum of another length) is refused with the codec's message, naming the stored key, under
an address-space limit far below 16 GiB: on reads, on a write into the chunk (which reads it
first) and on the inner chunks of a shard."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

import zarrx

ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
BIG = 1 << 34                       # a 16 GiB chunk of uint8

LE = {"name": "bytes", "configuration": {"endian": "little"}}
ZSTD = {"name": "zstd", "configuration": {"level": 1, "checksum": False}}
BLOSC3 = {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                             "shuffle": "noshuffle", "typesize": 1,
                                             "blocksize": 0}}


def _blosc(nbytes: int, cbytes: int = 32) -> bytes:
    """A blosc 1 buffer of ``cbytes`` bytes whose header claims ``nbytes`` decoded bytes."""
    return bytes([2, 1, 0x01, 1]) + struct.pack("<III", nbytes, 0, cbytes) + bytes(cbytes - 16)


def _zstd(content_size: int | None) -> bytes:
    """A zstd frame of one raw 10-byte block, declaring ``content_size`` (8 bytes) or none."""
    magic = struct.pack("<I", 0xFD2FB528)
    header = bytes([0x00, 0x58]) if content_size is None else \
        bytes([0xE0]) + struct.pack("<Q", content_size)
    return magic + header + ((10 << 3) | 1).to_bytes(3, "little") + bytes(10)


def _v3(codecs: list, chunk: bytes, shape: tuple = (BIG,), key: str = "c/0") -> dict:
    doc = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "uint8",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}
    return {"zarr.json": json.dumps(doc), key: chunk.hex()}


def _v2(compressor: dict, chunk: bytes) -> dict:
    doc = {"zarr_format": 2, "shape": [BIG], "chunks": [BIG], "dtype": "|u1",
           "fill_value": 0, "order": "C", "filters": None, "compressor": compressor}
    return {".zarray": json.dumps(doc), "0": chunk.hex()}


def _shard(inner_codecs: list, inner: bytes) -> dict:
    """A shard of two inner chunks of 16 GiB, the first stored as ``inner``."""
    index = struct.pack("<QQ", 0, len(inner)) + struct.pack("<QQ", 2**64 - 1, 2**64 - 1)
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [BIG], "codecs": inner_codecs, "index_codecs": [LE],
        "index_location": "end"}}]
    return _v3(codecs, inner + index, shape=(2 * BIG,))


GZIP = zlib.compressobj(1, zlib.DEFLATED, 31)
GZIPPED = GZIP.compress(bytes(1000)) + GZIP.flush()

# name -> (stored objects, the message after "array '/' chunk '<key>': ")
CASES = {
    "blosc": (_v3([LE, BLOSC3], _blosc(1000)),
              "blosc header claims 1000 decoded bytes, expected 17179869184"),
    "blosc-v2": (_v2({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 0,
                      "blocksize": 0}, _blosc(1000)),
                 "blosc header claims 1000 decoded bytes, expected 17179869184"),
    "zstd-content-size": (_v3([LE, ZSTD], _zstd(10)),
                          "zstd: frame decodes to 10 bytes, expected 17179869184"),
    "zstd-no-content-size": (_v3([LE, ZSTD], _zstd(None)),
                             "zstd: 19 bytes of input cannot decode to 17179869184 bytes "
                             "(zstd expands at most 32768-fold: 622592 bytes)"),
    "gzip": (_v3([LE, {"name": "gzip", "configuration": {"level": 1}}], GZIPPED),
             f"gzip: {len(GZIPPED)} bytes of input cannot decode to 17179869184 bytes (gzip "
             f"expands at most 1032-fold: {len(GZIPPED) * 1032} bytes)"),
    "zlib-v2": (_v2({"id": "zlib", "level": 1}, zlib.compress(bytes(1000))),
                "zlib: 17 bytes of input cannot decode to 17179869184 bytes (zlib expands at "
                "most 1032-fold: 17544 bytes)"),
    "lz4-v2": (_v2({"id": "lz4", "acceleration": 1}, struct.pack("<I", 1000) + bytes(12)),
               "lz4 header claims 1000 decoded bytes, expected 17179869184"),
    "raw": (_v3([LE], bytes(100)), "expected 17179869184 bytes for a chunk of shape "
                                   "(17179869184,) and data type uint8, found 100"),
    "raw-transposed": (_v3([{"name": "transpose", "configuration": {"order": [1, 0]}}, LE],
                           bytes(100), shape=(1 << 17, 1 << 17), key="c/0/0"),
                       "expected 17179869184 bytes for a chunk of shape (131072, 131072) and "
                       "data type uint8, found 100"),
    "crc32c": (_v3([LE, {"name": "crc32c"}], bytes(100)),
               "crc32c: expected 17179869188 bytes (17179869184 + 4 checksum), found 100"),
    "crc32c-zstd": (_v3([LE, ZSTD, {"name": "crc32c"}], _zstd(10) + bytes(4)),
                    "zstd: frame decodes to 10 bytes, expected 17179869184"),
}
SHARDED = {
    "shard-blosc": (_shard([LE, BLOSC3], _blosc(1000)),
                    "blosc header claims 1000 decoded bytes, expected 17179869184"),
    "shard-zstd": (_shard([LE, ZSTD], _zstd(None)),
                   "zstd: 19 bytes of input cannot decode to 17179869184 bytes (zstd expands at "
                   "most 32768-fold: 622592 bytes)"),
}

CHILD = textwrap.dedent("""
    import json, resource, sys
    import zarrx
    from zarrx.store import MemoryStore

    cases = json.load(sys.stdin)
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))
    for name, objects in cases.items():
        stored = {k: v.encode() if k.endswith(("zarr.json", ".zarray")) else bytes.fromhex(v)
                  for k, v in objects.items()}
        a = zarrx.open_array(MemoryStore(stored), mode="r+")
        for how, op in [("read", lambda: a[(5,) * a.ndim]),
                        ("read-many", lambda: a[(slice(2, 7),) * a.ndim]),
                        ("write", lambda: a.__setitem__((5,) * a.ndim, 1))]:
            try:
                op()
                print(name, how, "no error")
            except zarrx.ZarrError as exc:
                print(name, how, type(exc).__name__, exc)
            except BaseException as exc:
                print(name, how, "not a ZarrError:", type(exc).__name__, exc)
""")


def _run(cases: dict) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(cases), env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


needs_limit = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc"),
    pytest.mark.skipif(ASAN, reason="AddressSanitizer reserves more address space than the "
                       "limit allows")]


@needs_limit[0]
@needs_limit[1]
def test_a_chunk_that_cannot_decode_to_its_declared_size_is_refused_before_allocating():
    got = _run({name: objects for name, (objects, _) in CASES.items()})
    want = []
    for name, (objects, message) in CASES.items():
        key = "0" if ".zarray" in objects else next(k for k in objects if k != "zarr.json")
        for how in ("read", "read-many", "write"):
            want.append(f"{name} {how} CodecError array '/' chunk '{key}': {message}")
    assert got == want


@needs_limit[0]
@needs_limit[1]
def test_an_inner_chunk_that_cannot_decode_to_its_declared_size_is_refused_before_allocating():
    got = _run({name: objects for name, (objects, _) in SHARDED.items()})
    want = [f"{name} {how} CodecError array '/' shard 'c/0' inner chunk 'c/0': {message}"
            for name, (_, message) in SHARDED.items() for how in ("read", "read-many", "write")]
    assert got == want


WINDOW_CHILD = textwrap.dedent("""
    import json, resource, struct, sys
    import zarrx
    from zarrx.store import MemoryStore

    doc = {"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "uint8",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
           "codecs": [{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 1}}]}
    # no content size, a window of 2**27 bytes (the most zarrx streams), one raw block "abc"
    frame = bytes.fromhex("28b52ffd") + bytes([0x00, 17 << 3, (3 << 3) | 1, 0, 0]) + b"abc"
    a = zarrx.open_array(MemoryStore({"zarr.json": json.dumps(doc).encode(), "c/0": frame}),
                         mode="r")
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (64 << 20), resource.RLIM_INFINITY))
    print(bytes(a[...]))
""")


@needs_limit[0]
@needs_limit[1]
def test_a_small_zstd_chunk_declaring_a_large_window_costs_no_window():
    """A 14-byte frame without a content size for a 3-byte chunk, declaring a 128 MiB window:
    decoded into the chunk in one pass (before: libzstd streamed it through a 128 MiB window
    buffer, and under the limit the chunk was refused as corrupt, "Allocation error")."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", WINDOW_CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "b'abc'\n"


def _gzip_with_extra(raw: bytes, extra: int) -> bytes:
    """A gzip member of ``raw`` whose header carries an optional extra field of ``extra``
    bytes (RFC 1952 FEXTRA: valid, and up to 65,535 bytes)."""
    field = b"zx" + struct.pack("<H", extra - 4) + bytes(extra - 4)
    body = zlib.compressobj(1, zlib.DEFLATED, -15)
    return (b"\x1f\x8b\x08\x04" + bytes(6) + struct.pack("<H", extra) + field
            + body.compress(raw) + body.flush() + struct.pack("<II", zlib.crc32(raw), len(raw)))


@pytest.mark.parametrize("store_kind", ["memory", "local"])
@pytest.mark.parametrize("read", ["whole", "points", "into a strided out"])
def test_small_gzip_chunks_with_long_headers_read_in_bounded_memory(read, store_kind,
                                                                    tmp_path) -> None:
    """Many small chunks (16 bytes decoded) stored as gzip members with a 64 KiB extra field each
    read back (they are valid) holding at most 32 MiB of their stored bytes at a time (a slab
    of the batched reads, a window of the general path), not 2,048 of them at once (134 MB)."""
    import tracemalloc

    import numpy as np
    from zarrx.codecs import Gzip
    from zarrx.store import LocalStore, MemoryStore

    n = 2048
    store = MemoryStore() if store_kind == "memory" else LocalStore(str(tmp_path))
    a = zarrx.create_array(store, shape=(4 * n,), chunks=(4,), dtype="<i4",
                           compressors=[Gzip(level=1)])
    blob = _gzip_with_extra(np.arange(4, dtype="<i4").tobytes(), 65535)
    head = blob.index(bytes(4096))                  # where the zero bytes of the field start
    for i in range(n):
        if store_kind == "memory":
            store.set(f"c/{i}", blob)               # one bytes object: the store costs nothing
        else:                                       # sparse files: the field is a hole
            (tmp_path / "c").mkdir(exist_ok=True)
            with open(tmp_path / "c" / str(i), "wb") as f:
                f.write(blob[:head])
                f.seek(65536)
                f.write(blob[65536:])
    want = np.tile(np.arange(4, dtype="<i4"), n)
    with zarrx.config.set(threads=1):
        tracemalloc.start()
        try:
            if read == "whole":
                got = a[...]
            elif read == "points":
                got, want = a.vindex[np.arange(0, 4 * n, 3)], want[::3]
            else:
                got = np.lib.stride_tricks.as_strided(np.zeros(8 * n, dtype="<i4"),
                                                      shape=(4 * n,), strides=(8,))
                a.get_basic_selection(slice(None), out=got)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert np.array_equal(got, want)
    assert n * len(blob) > 128 << 20
    assert peak < 80 << 20, peak >> 20             # 32 MiB stored at a time, and a copy
