"""zarrx.codecs._crc32c: CRC-32C vectors, both backends, agreement with the crc32c package.

The portable table implementation runs in a child interpreter with ZARRX_CRC32C_BACKEND=table
(the backend is chosen once per process); every input the tests use is checksummed there in one
go, and the "table" backend below looks the results up.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.codecs import _crc32c

crc32c_pkg = pytest.importorskip("crc32c")

# RFC 3720 (iSCSI) appendix B.4 vectors, plus the common check value.
VECTORS = {
    "32x00": (bytes(32), 0x8A9136AA),
    "32xFF": (b"\xff" * 32, 0x62A8AB43),
    "ascending": (bytes(range(32)), 0x46DD794E),
    "descending": (bytes(range(31, -1, -1)), 0x113FDB5C),
    "123456789": (b"123456789", 0xE3069283),
    "empty": (b"", 0),
}


LENGTHS = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 255, 256, 767, 768, 769, 1000, 3 * 8192 - 1,
           3 * 8192, 3 * 8192 + 1, 3 * 8192 + 3 * 256 + 13, 100_003, (1 << 20) + 3]
SPLITS = [0, 1, 5, 8, 100, 24576, 50_000]


def _running_buf() -> bytes:
    return np.random.default_rng(7).bytes(50_000)


def _inputs() -> list[tuple[bytes, int]]:
    """Every (buffer, start value) the parametrised tests checksum."""
    out = [(buf, 0) for buf, _ in VECTORS.values()]
    for length in LENGTHS:
        raw = np.random.default_rng(length).bytes(length + 8)
        out += [(raw[o:o + length], 0) for o in range(8)]
    buf = _running_buf()
    out.append((buf, 0))
    for split in SPLITS:
        out += [(buf[:split], 0), (buf[split:], crc32c_pkg.crc32c(buf[:split]))]
    return out


def _key(buf: bytes, value: int) -> tuple[str, int]:
    return hashlib.sha256(buf).hexdigest(), value


CHILD = """
import json, sys
from zarrx.codecs import _crc32c
cases = json.load(sys.stdin)
json.dump([_crc32c.backend(), [_crc32c.crc32c(bytes.fromhex(h), v) for h, v in cases]], sys.stdout)
"""


@pytest.fixture(scope="module")
def table_results() -> dict[tuple[str, int], int]:
    cases = _inputs()
    env = {**os.environ, "ZARRX_CRC32C_BACKEND": "table",
           "PYTHONPATH": os.pathsep.join([str(Path(zarrx.__file__).parent.parent),
                                          os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=120,
                          input=json.dumps([[b.hex(), v] for b, v in cases]))
    assert proc.returncode == 0, proc.stderr
    backend, crcs = json.loads(proc.stdout)
    assert backend == "table"
    return {_key(b, v): c for (b, v), c in zip(cases, crcs)}


@pytest.fixture(params=["dispatch", "table"])
def crc(request, table_results):
    """CRC-32C by the backend this CPU dispatches to, or by the portable tables."""
    if request.param == "dispatch":
        return _crc32c.crc32c
    return lambda buf, value=0: table_results[_key(bytes(buf), value)]


@pytest.mark.parametrize("name", VECTORS)
def test_known_vectors(crc, name: str) -> None:
    buf, want = VECTORS[name]
    assert crc(buf) == want


def test_backend_name() -> None:
    assert _crc32c.backend() in ("sse4.2", "table")


@pytest.mark.parametrize("offset", range(8), ids=lambda o: f"off{o}")
@pytest.mark.parametrize("length", LENGTHS, ids=lambda n: f"{n}B")
def test_matches_crc32c_package(crc, offset: int, length: int) -> None:
    raw = np.random.default_rng(length).bytes(length + 8)
    view = memoryview(raw)[offset:offset + length]      # misaligned start
    assert crc(view) == crc32c_pkg.crc32c(bytes(view))


@pytest.mark.parametrize("split", SPLITS, ids=lambda s: f"at{s}")
def test_running_value(crc, split: int) -> None:
    buf = _running_buf()
    assert crc(buf[split:], crc32c_pkg.crc32c(buf[:split])) == crc(buf) == crc32c_pkg.crc32c(buf)
    assert crc(buf[:split]) == crc32c_pkg.crc32c(buf[:split])
    assert _crc32c.crc32c(buf[split:], _crc32c.crc32c(buf[:split])) == crc(buf)


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "uint8", "float64"])
def test_buffer_kinds(kind: str) -> None:
    arr = np.linspace(0, 1, 1001)
    raw = arr.tobytes()
    obj = {"bytes": raw, "bytearray": bytearray(raw), "memoryview": memoryview(raw),
           "uint8": np.frombuffer(raw, np.uint8),
           "float64": arr.view(np.uint8).reshape(-1)}[kind]
    assert _crc32c.crc32c(obj) == crc32c_pkg.crc32c(raw)


def test_value_bounds() -> None:
    assert _crc32c.crc32c(b"a", 0xFFFFFFFF) == crc32c_pkg.crc32c(b"a", 0xFFFFFFFF)
    with pytest.raises(OverflowError):
        _crc32c.crc32c(b"a", -1)
