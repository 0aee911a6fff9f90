"""Fixtures for the codec tests: cached payloads, byte flips, a GIL-release probe."""
from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

@functools.lru_cache(maxsize=None)
def payload(pattern: str, size: int) -> bytes:
    """Deterministic test bytes: all zeros, incompressible random, or a float64 ramp."""
    if pattern == "zeros":
        return bytes(size)
    if pattern == "random":
        return np.random.default_rng(size).bytes(size)
    if pattern == "ramp":
        ramp = np.linspace(0.0, 1000.0, size // 8 + 1, dtype="<f8")
        return ramp.tobytes()[:size]
    raise AssertionError(pattern)


@pytest.fixture
def data() -> Callable[[str, int], bytes]:
    return payload


def _flip(buf: bytes, pos: int, mask: int = 0xFF) -> bytes:
    b = bytearray(buf)
    b[pos] ^= mask
    return bytes(b)


@pytest.fixture
def flip() -> Callable[..., bytes]:
    """``flip(buf, pos, mask=0xFF)``: a copy of ``buf`` with one byte XORed."""
    return _flip


def _progress_during(call: Callable[[], None], attempts: int = 30) -> bool:
    """True when another Python thread ran while ``call`` was inside C code.

    With a huge switch interval, the calling thread never hands the GIL over on its own, so a
    counter thread can only advance while ``call`` has released the GIL (or blocks). The call
    is retried a few times so a descheduled counter thread cannot fail the check.
    """
    counter = [0]
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0.0002)     # leaves the GIL free, so the caller always gets it back

    old = sys.getswitchinterval()
    worker = threading.Thread(target=count, daemon=True)
    worker.start()
    try:
        while counter[0] == 0:
            time.sleep(0.001)
        sys.setswitchinterval(1000.0)
        for _ in range(attempts):
            before = counter[0]
            call()
            if counter[0] > before:
                return True
            time.sleep(0.001)      # let the counter thread get scheduled before retrying
        return False
    finally:
        sys.setswitchinterval(old)
        stop.set()
        worker.join()


@pytest.fixture
def progress_during() -> Callable[..., bool]:
    return _progress_during


@pytest.fixture(scope="session")
def zstd_cli() -> str:
    exe = "/usr/bin/zstd" if os.path.exists("/usr/bin/zstd") else None
    if exe is None:
        import shutil
        exe = shutil.which("zstd")
    if exe is None:
        pytest.skip("the zstd command-line tool is not installed")
    return exe
