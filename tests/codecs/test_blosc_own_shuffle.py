"""Byte-shuffled 4-byte items are shuffled by zarrx (csrc/zx_shuffle.c, AVX2) and compressed by
blosc unshuffled: the stored buffers must be exactly those blosc makes when it shuffles."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.codecs import _blosc

CNAMES = [c for c in ("lz4", "lz4hc", "blosclz", "zstd", "zlib", "snappy") if _blosc.built(c)]
# under 128 bytes (stored as is), odd lengths (bytes past the last item), one block of 256 KiB,
# several blocks with a shorter last one, and blocks of 1 MiB
SIZES = [0, 3, 127, 128, 129, 1001, 32767, 32768, 65539, 262144, 262147, 700_001]
FAST = ("lz4", "blosclz")                       # every level; the slower codecs at 1, 5 and 9
BLOCKSIZES = [0, 1, 100, 4096, 65537, 300_000]


def _cpu_has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def _data(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "random":                       # nothing to compress: stored as it is
        return rng.integers(0, 256, n, dtype=np.uint8)
    if kind == "zeros":
        return np.zeros(n, np.uint8)
    items = np.round(rng.standard_normal(n // 4 + 1).astype(np.float32) * 64) / 64
    if kind == "ramp":
        items = np.arange(n // 4 + 1, dtype=np.float32) * np.float32(0.25)
    return np.ascontiguousarray(items.view(np.uint8)[:n])


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/cpuinfo")
def test_backend_follows_the_cpu() -> None:
    assert _blosc.shuffle_backend() == ("avx2" if _cpu_has_avx2() else "blosc")


@pytest.mark.parametrize("kind", ["floats", "ramp", "zeros", "random"])
@pytest.mark.parametrize("cname", CNAMES)
def test_same_bytes_as_blosc_shuffling(cname: str, kind: str) -> None:
    rng = np.random.default_rng(len(cname) * 10 + len(kind))
    for n in SIZES:
        src = _data(kind, n, rng)
        for clevel in range(10) if cname in FAST else (1, 5, 9):
            for bs in BLOCKSIZES if clevel == 5 else [0]:
                own = _blosc.compress(src, 4, clevel, 1, cname, bs)
                theirs = _blosc.compress(src, 4, clevel, 1, cname, bs, own_shuffle=False)
                assert own == theirs, f"{cname} {kind} n={n} clevel={clevel} blocksize={bs}"
        out = np.empty(n, np.uint8)
        _blosc.decompress_into(own, out)
        assert np.array_equal(out, src)


def test_other_item_sizes_and_shuffles_are_left_to_blosc() -> None:
    src = np.arange(50_000, dtype=np.float64).view(np.uint8)
    for typesize, shuffle in [(8, 1), (2, 1), (4, 0), (4, 2), (1, 1)]:
        own = _blosc.compress(src, typesize, 5, shuffle, "lz4")
        assert own == _blosc.compress(src, typesize, 5, shuffle, "lz4", own_shuffle=False)


CHILD = """
import sys
import numpy as np
from zarrx.codecs import _blosc
src = np.round(np.random.default_rng(7).standard_normal(300_000).astype(np.float32) * 64) / 64
print(_blosc.shuffle_backend())
print(_blosc.compress(src.view(np.uint8), 4, 5, 1, "lz4").hex())
"""


def test_environment_leaves_the_shuffle_to_blosc() -> None:
    env = {**os.environ, "ZARRX_SHUFFLE": "blosc",
           "PYTHONPATH": os.pathsep.join([str(Path(zarrx.__file__).parent.parent),
                                          os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    backend, blob = proc.stdout.split()
    assert backend == "blosc"
    src = np.round(np.random.default_rng(7).standard_normal(300_000).astype(np.float32) * 64) / 64
    assert bytes.fromhex(blob) == _blosc.compress(src.view(np.uint8), 4, 5, 1, "lz4")


def test_float32_array_reads_back_in_zarr_python(tmp_path: Path) -> None:
    zarr = pytest.importorskip("zarr")
    data = np.round(np.random.default_rng(3).standard_normal((300, 500)).astype(np.float32)
                    * 64) / 64
    z = zarrx.create_array(zarrx.store.LocalStore(tmp_path / "a.zarr"), shape=data.shape,
                           dtype="float32", chunks=(128, 256), fill_value=0,
                           compressors=zarrx.codecs.Blosc(cname="lz4", clevel=5,
                                                          shuffle="shuffle"))
    z[...] = data
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "a.zarr"), mode="r")[...], data)


needs_avx2 = pytest.mark.skipif(_blosc.shuffle_backend() != "avx2",
                                reason="rows are compressed as read only with AVX2")


@needs_avx2
def test_rows_compressed_as_read_are_the_gathered_bytes() -> None:
    rng = np.random.default_rng(5)
    big = np.round(rng.standard_normal((700, 900)).astype(np.float32) * 64) / 64
    zero = np.zeros(4, np.uint8)
    done = 0
    for k in range(300):
        h, w = int(rng.integers(1, 300)), int(rng.integers(1, 400))
        i, j = int(rng.integers(0, 700 - h + 1)), int(rng.integers(0, 900 - w + 1))
        view = [big, np.zeros_like(big), big[::-1]][k % 3][i:i + h, j:j + w]
        cname, clevel = CNAMES[k % len(CNAMES)], int(rng.integers(0, 10))
        bs = [0, 0, 4096, 10**6][k % 4]
        got = _blosc.compress_rows(view.view(np.uint8), zero if k % 2 else None, clevel, cname,
                                   bs)
        flat = np.ascontiguousarray(view).reshape(-1).view(np.uint8)
        case = f"{k}: {h}x{w} {cname} clevel={clevel} blocksize={bs}"
        if got is NotImplemented:
            continue
        done += 1
        if got is None:
            assert k % 2 and not flat.any(), case
        else:
            assert got == _blosc.compress(flat, 4, clevel, 1, cname, bs, own_shuffle=False), case
    assert done > 100


@needs_avx2
@pytest.mark.parametrize("write_empty", [False, True])
def test_array_writes_compress_rows_as_read_with_the_same_stored_bytes(write_empty, monkeypatch):
    import zarrx.chunk_write as chunk_write
    from zarrx.codecs import Blosc
    from zarrx.store import MemoryStore

    data = np.round(np.random.default_rng(3).standard_normal((300, 520)).astype(np.float32)
                    * 64) / 64
    data[:128, :128] = 0                        # a chunk all fill

    def write() -> dict[str, bytes]:
        store = MemoryStore()
        z = zarrx.create_array(store, shape=data.shape, dtype="float32", chunks=(128, 128),
                               fill_value=0, compressors=Blosc(cname="lz4", shuffle="shuffle"),
                               config={"write_empty_chunks": write_empty})
        z[...] = data
        np.testing.assert_array_equal(z[...], data)
        return {k: bytes(store.get(k)) for k in store.list_prefix("")}

    used = []
    rows = Blosc.encode_rows
    monkeypatch.setattr(Blosc, "encode_rows",
                        lambda self, c, f: used.append(1) or rows(self, c, f))
    by_rows = write()
    assert len(used) == 8                       # the 2 x 4 chunks wholly inside the array
    assert ("c/0/0" in by_rows) == write_empty
    monkeypatch.setattr(chunk_write, "_by_rows", lambda plan: False)
    assert write() == by_rows
