"""zarrx.codecs._crc32c: CRC-32C vectors, both backends, agreement with the crc32c package."""
from __future__ import annotations

import numpy as np
import pytest

from zarrx.codecs import _crc32c

crc32c_pkg = pytest.importorskip("crc32c")

BACKENDS = {"dispatch": _crc32c.crc32c, "portable": _crc32c.crc32c_portable}

# RFC 3720 (iSCSI) appendix B.4 vectors, plus the common check value.
VECTORS = {
    "32x00": (bytes(32), 0x8A9136AA),
    "32xFF": (b"\xff" * 32, 0x62A8AB43),
    "ascending": (bytes(range(32)), 0x46DD794E),
    "descending": (bytes(range(31, -1, -1)), 0x113FDB5C),
    "123456789": (b"123456789", 0xE3069283),
    "empty": (b"", 0),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", VECTORS)
def test_known_vectors(backend: str, name: str) -> None:
    buf, want = VECTORS[name]
    assert BACKENDS[backend](buf) == want


def test_backend_name() -> None:
    assert _crc32c.backend() in ("sse4.2", "table")


LENGTHS = [0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 255, 256, 767, 768, 769, 1000, 3 * 8192 - 1,
           3 * 8192, 3 * 8192 + 1, 3 * 8192 + 3 * 256 + 13, 100_003, (1 << 20) + 3]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("offset", range(8), ids=lambda o: f"off{o}")
@pytest.mark.parametrize("length", LENGTHS, ids=lambda n: f"{n}B")
def test_matches_crc32c_package(backend: str, offset: int, length: int) -> None:
    raw = np.random.default_rng(length).bytes(length + 8)
    view = memoryview(raw)[offset:offset + length]      # misaligned start
    assert BACKENDS[backend](view) == crc32c_pkg.crc32c(bytes(view))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("split", [0, 1, 5, 8, 100, 24576, 50_000], ids=lambda s: f"at{s}")
def test_running_value(backend: str, split: int) -> None:
    buf = np.random.default_rng(7).bytes(50_000)
    fn = BACKENDS[backend]
    assert fn(buf[split:], fn(buf[:split])) == fn(buf) == crc32c_pkg.crc32c(buf)
    assert fn(buf[split:], crc32c_pkg.crc32c(buf[:split])) == fn(buf)


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
