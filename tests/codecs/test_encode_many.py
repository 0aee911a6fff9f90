"""Encoding many gathered chunks at once (``encode_many``, ``plan_many.encode_rows``) stores
the bytes encoding each chunk on its own stores."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.codecs.plan import CodecPipeline
from zarrx.codecs.plan_many import encode_rows, encodes_rows
from zarrx.errors import CodecError

CODECS = {
    "zstd": [zarrx.codecs.Zstd(level=3)],
    "zstd-checksum": [zarrx.codecs.Zstd(level=-5, checksum=True)],
    "blosc": [zarrx.codecs.Blosc()],
    "gzip": [zarrx.codecs.Gzip(level=1)],
    "crc32c": [zarrx.codecs.Crc32c()],
    "zstd-crc32c": [zarrx.codecs.Zstd(), zarrx.codecs.Crc32c()],
    "raw": [],
}


def _plan(codecs: list) -> CodecPipeline:
    specs = [zarrx.codecs.Bytes().to_spec(), *(c.to_spec() for c in codecs)]
    return CodecPipeline.resolve(specs, "<f4", (4, 8))


@pytest.mark.parametrize("codecs", CODECS.values(), ids=list(CODECS))
def test_rows_encode_as_each_chunk_does(codecs):
    plan = _plan(codecs)
    assert encodes_rows(plan)
    chunks = np.random.default_rng(3).standard_normal((9, 4, 8)).astype("<f4")
    chunks[4] = 0
    rows = chunks.reshape(9, -1).view(np.uint8).copy()
    skip = np.zeros(9, dtype=bool)
    skip[[2, 7]] = True
    got = encode_rows(plan, rows, False, skip)
    want = [None if s else plan.encode(c) for c, s in zip(chunks, skip)]
    assert got == want


def test_rows_with_their_checksum_gathered_are_stored_as_they_are():
    plan = _plan([zarrx.codecs.Crc32c()])
    chunks = np.arange(3 * 32, dtype="<f4").reshape(3, 4, 8)
    rows = np.stack([np.frombuffer(plan.encode(c), np.uint8) for c in chunks])
    assert encode_rows(plan, rows, True, np.zeros(3, bool)) == [plan.encode(c) for c in chunks]


def test_zstd_many_refuses_a_level_as_encode_does():
    """A level the library refuses (the constructor checks it first: set past it here) is the
    same CodecError from the batch kernel as from the one-chunk one."""
    bad = zarrx.codecs.Zstd.__new__(zarrx.codecs.Zstd)
    bad.__dict__.update(level=10**6, checksum=False)
    rows = np.zeros((2, 16), np.uint8)
    with pytest.raises(CodecError) as one:
        bad.encode(rows[0])
    with pytest.raises(CodecError) as many:
        bad.encode_many(rows)
    assert str(many.value) == str(one.value)


def test_plans_that_do_not_start_from_the_chunk_bytes_are_not_encoded_as_rows():
    big = CodecPipeline.resolve([zarrx.codecs.Bytes(endian="big").to_spec()], "<f4", (4,))
    shuffled = CodecPipeline.resolve([zarrx.codecs.Transpose(order=(1, 0)).to_spec(),
                                      zarrx.codecs.Bytes().to_spec()], "<f4", (2, 2))
    assert not encodes_rows(big) and not encodes_rows(shuffled)


@pytest.mark.parametrize("location", ["end", "start"])
def test_crc32c_encodes_many_buffers_as_each_alone(location):
    """Rows of an array, or a sequence of buffers of any length (None for none, as a
    compressor before it hands them on), with and without flags to skip."""
    codec = zarrx.codecs.Crc32c(location)
    rows = np.random.default_rng(4).integers(0, 256, (6, 37), dtype=np.uint8)
    skip = np.array([0, 1, 0, 0, 1, 0], bool)
    assert codec.encode_many(rows, skip) == [None if s else bytes(codec.encode(r))
                                             for r, s in zip(rows, skip)]
    bufs = [b"abc", None, b"", bytes(range(200)), np.arange(5, dtype="<i4")]
    assert codec.encode_many(bufs) == [None if b is None else bytes(codec.encode(b))
                                       for b in bufs]
    assert codec.encode_many(bufs, np.array([1, 0, 0, 0, 0], bool))[0] is None
