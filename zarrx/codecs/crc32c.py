"""The ``crc32c`` codec: append a CRC-32C (Castagnoli) of the bytes, little endian."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import many_args
from zarrx.codecs.checksum import Checksum32
from zarrx.metadata.model import CodecSpec

__all__ = ["Crc32c"]


class Crc32c(Checksum32):
    """``crc32c``: 4 bytes of checksum after the data; decoding verifies and strips them."""

    name = "crc32c"
    label = "crc32c"

    def __init__(self, location: str = "end") -> None:
        self._configure("numcodecs.crc32c", location=location)   # numcodecs CRC32C(location)

    def configuration(self) -> dict:
        return {} if self.location == "end" else {"location": self.location}

    def to_spec(self) -> CodecSpec:
        """``crc32c``; ``numcodecs.crc32c`` for a checksum at the start (v3 has none there)."""
        name = "numcodecs.crc32c" if self.location == "start" else self._as or self.name
        return CodecSpec(name, self.configuration())

    def _sum(self, data: memoryview) -> int:
        from zarrx.codecs._crc32c import crc32c
        return crc32c(data)

    def encode_many(self, bufs: Any, skip: Any = None) -> list[bytes | None]:
        """:meth:`encode` of each buffer (the rows of a 2-D uint8 array, or a sequence of
        buffers, None for none), None for those ``skip`` marks: every checksum summed in one
        kernel call (:func:`~zarrx.codecs._crc32c.crc32c_many`) and the results cut from one
        buffer, with no Python call per buffer."""
        from zarrx.codecs._crc32c import crc32c_many
        bufs, skip = many_args(self.name, bufs, skip)
        k = len(bufs)
        flags = [False] * k if skip is None else skip.tolist()
        if isinstance(bufs, np.ndarray) and bufs.ndim == 2:
            n = bufs.shape[1]
            src = bufs.reshape(-1)
            lengths = np.full(k, n, dtype=np.int64)
        else:
            items = [None if s else b for b, s in zip(bufs, flags)]
            flags = [b is None for b in items]
            held = [b for b in items if b is not None]
            joined = b"".join(held)
            src = np.frombuffer(joined, dtype=np.uint8)
            lengths = np.zeros(k, dtype=np.int64)
            sizes = np.fromiter(map(len, held), dtype=np.int64, count=len(held))
            if int(sizes.sum()) != len(joined):        # buffers of items wider than a byte
                sizes = np.array([memoryview(b).nbytes for b in held], dtype=np.int64)
            lengths[~np.array(flags, dtype=bool)] = sizes
        starts = np.cumsum(lengths) - lengths
        sums = np.zeros(k, dtype=np.uint32)
        crc32c_many(src, starts, lengths, sums)
        tails = sums.astype("<u4").tobytes()
        data = src.tobytes()
        if self.location == "end":
            return [None if s else data[a:a + n] + tails[4 * i:4 * i + 4]
                    for i, (s, a, n) in enumerate(zip(flags, starts.tolist(),
                                                      lengths.tolist()))]
        return [None if s else tails[4 * i:4 * i + 4] + data[a:a + n]
                for i, (s, a, n) in enumerate(zip(flags, starts.tolist(), lengths.tolist()))]

    def verify_many(self, src: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                    expected: int | None) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`decode` of many chunks of ``src`` (uint8) at once: chunk ``i`` is
        ``src[starts[i]:starts[i] + lengths[i]]`` (start -1: none). The starts and lengths of
        the verified data without its checksum, or None when any chunk is too short, not
        ``expected`` + 4 bytes or fails its checksum (:meth:`decode` of it says which and
        why)."""
        from zarrx.codecs._crc32c import crc32c_many
        present = starts >= 0
        ln = lengths[present]
        if ln.size and (int(ln.min()) < 4 or (expected is not None
                                              and bool(np.any(ln != expected + 4)))):
            return None
        at_end = self.location == "end"
        body = starts if at_end else np.where(present, starts + 4, starts)
        body_len = np.where(present, lengths - 4, lengths)
        sums = np.zeros(len(starts), dtype=np.uint32)
        crc32c_many(src, body, body_len, sums)
        where: Any = (starts + body_len if at_end else starts)[present]
        stored = src[where[:, None] + np.arange(4)].view("<u4").reshape(-1)
        if bool(np.any(stored != sums[present])):
            return None
        return body, body_len
