"""zarrx.codecs._checksum: Fletcher-32 (HDF5's) and lookup3 against known values."""
from __future__ import annotations

import numpy as np
import pytest

from zarrx.codecs._checksum import fletcher32, jenkins_lookup3

# Bob Jenkins' own driver prints these for hashlittle of the 30-byte sentence
SENTENCE = b"Four score and seven years ago"


@pytest.mark.parametrize("data,initval,want", [
    (b"", 0, 0xDEADBEEF),
    (SENTENCE, 0, 0x17770551),
    (SENTENCE, 1, 0xCD628161),
])
def test_lookup3_vectors(data, initval, want) -> None:
    assert jenkins_lookup3(data, initval) == want


@pytest.mark.parametrize("data,want", [
    (b"", 0),
    (b"abcde", 0x4FF029C7),               # an odd last byte is the high byte of a word
    (b"abcdef", 0x50562A2D),
    (b"abcdefgh", 0xE1EB9195),
    (b"\xff" * 720, 0xFFFFFFFF),           # sums that fold to 0xffff stay 0xffff
    (b"\xff" * 721, 0xFF00FF00),
])
def test_fletcher32_vectors(data, want) -> None:
    assert fletcher32(data) == want


def test_any_contiguous_buffer() -> None:
    data = np.arange(1000, dtype="<u4")
    raw = data.tobytes()
    assert fletcher32(memoryview(data).cast("B")) == fletcher32(raw)
    assert jenkins_lookup3(np.frombuffer(raw, np.uint8), 3) == jenkins_lookup3(raw, 3)
    assert jenkins_lookup3(raw[1:], 3) == jenkins_lookup3(bytearray(raw[1:]), 3)
