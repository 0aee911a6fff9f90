"""Fuzz codec chains: the input decoded through one of ``PIPELINES``.

The first byte picks the pipeline and the rest is an encoded chunk. Decoding into a chunk and
decoding into a new array each succeed or raise a ZarrError, and never allocate much past the
chunk (or the variable-length limit). What decodes encodes again and decodes to the same chunk.
"""
from __future__ import annotations

import functools

from _common import expected, fuzz, instrumented

with instrumented(__name__ == "__main__"):
    import numpy as np

    from zarrx.codecs.plan import CodecPipeline
    from zarrx.metadata.model import CodecSpec as S

LE = S("bytes", {"endian": "little"})
ZSTD = S("zstd", {"level": 1, "checksum": False})
F8 = ("<f8", (64,))
VLEN = ("O", (5,))
VARIABLE_LIMIT = 1 << 20


def blosc(cname: str, shuffle: str) -> S:
    return S("blosc", {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": 8,
                       "blocksize": 0})


#: name: (codecs, (dtype, chunk shape)); the index of a name is the input's first byte
PIPELINES = {
    "bytes": ([LE], F8),
    "zstd": ([LE, ZSTD], F8),
    "zstd-checksum": ([LE, S("zstd", {"level": 1, "checksum": True})], F8),
    "gzip": ([LE, S("gzip", {"level": 1})], F8),
    "zlib": ([LE, S("numcodecs.zlib", {"level": 1})], F8),
    "blosc-lz4-shuffle": ([LE, blosc("lz4", "shuffle")], F8),
    "blosc-zstd-bitshuffle": ([LE, blosc("zstd", "bitshuffle")], F8),
    "blosc-blosclz-noshuffle": ([LE, blosc("blosclz", "noshuffle")], F8),
    "blosc-zlib-shuffle": ([LE, blosc("zlib", "shuffle")], F8),
    "lz4": ([LE, S("numcodecs.lz4", {"acceleration": 1})], F8),
    "crc32c": ([LE, S("crc32c")], F8),
    "shuffle-zstd": ([LE, S("numcodecs.shuffle", {"elementsize": 8}), ZSTD], F8),
    "zstd-crc32c": ([LE, ZSTD, S("crc32c")], F8),
    "bz2": ([LE, S("numcodecs.bz2", {"level": 1})], F8),
    "lzma": ([LE, S("numcodecs.lzma", {"format": 1, "check": -1, "preset": None,
                                       "filters": None})], F8),
    "transpose-big-gzip": ([S("transpose", {"order": [1, 0]}), S("bytes", {"endian": "big"}),
                            S("gzip", {"level": 1})], ("<i2", (8, 8))),
    "vlen-utf8": ([S("vlen-utf8")], VLEN),
    "vlen-bytes": ([S("vlen-bytes")], VLEN),
    "vlen-bytes-zstd": ([S("vlen-bytes"), ZSTD], VLEN),
}
NAMES = list(PIPELINES)


@functools.lru_cache(maxsize=None)
def pipeline(name: str) -> CodecPipeline:
    codecs, (dtype, shape) = PIPELINES[name]
    return CodecPipeline.resolve(codecs, dtype, shape, key="a", variable_limit=VARIABLE_LIMIT)


def _same(x: np.ndarray, y: np.ndarray) -> bool:
    if x.dtype.hasobject:
        return x.shape == y.shape and x.tolist() == y.tolist()
    return x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()


def test_one_input(data: bytes) -> None:
    if not data:
        return
    p = pipeline(NAMES[data[0] % len(NAMES)])
    blob = data[1:]
    with expected():
        out = np.empty(p.chunk_shape, dtype=p.dtype)
        p.decode(blob, out, key="a/c/0")
    with expected():
        chunk = p.decode_new(memoryview(blob), key="a/c/0")
        assert chunk.shape == p.chunk_shape, chunk.shape
        assert _same(p.decode_new(p.encode(chunk)), chunk)


if __name__ == "__main__":
    fuzz(test_one_input)
