"""numcodecs ``packbits``: booleans packed 8 per byte, after a byte counting the padding bits."""
from __future__ import annotations

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec
from zarrx.errors import CodecError

__all__ = ["PackBits"]


class PackBits(ArrayToArrayCodec):
    """numcodecs ``packbits``: a bool chunk of n values becomes ``1 + ceil(n / 8)`` uint8:
    the number of padding bits in the last byte, then the bits, most significant first."""

    name = "numcodecs.packbits"

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        if dtype != np.dtype(bool):
            raise CodecError(f"{where}: packbits needs a bool data type, found {dtype}")
        n = int(np.prod(shape, dtype=np.int64))
        return np.dtype(np.uint8), (1 + (n + 7) // 8,)

    def encode(self, arr: np.ndarray) -> np.ndarray:
        flat = arr.reshape(-1)
        enc = np.empty(1 + (flat.size + 7) // 8, dtype=np.uint8)
        enc[0] = (8 - flat.size % 8) % 8
        enc[1:] = np.packbits(flat)
        return enc

    def encode_stack(self, chunks: np.ndarray) -> np.ndarray:
        """:meth:`encode` of each of ``chunks`` (the chunk axis first), all at once, as the
        rows of a ``(k, 1 + ceil(n / 8))`` array: the header depends on a chunk's size alone,
        the same for every chunk, and each row's bits are packed (and padded) alone."""
        flat = chunks.reshape(len(chunks), -1)
        n = flat.shape[1]
        enc = np.empty((len(chunks), 1 + (n + 7) // 8), dtype=np.uint8)
        enc[:, 0] = (8 - n % 8) % 8
        enc[:, 1:] = np.packbits(flat, axis=1)
        return enc

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        n = int(np.prod(shape, dtype=np.int64))
        pad = int(arr[0])
        if pad != (8 - n % 8) % 8:
            raise CodecError(f"packbits: header says {pad} padding bits, expected "
                             f"{(8 - n % 8) % 8} for {n} values")
        bits = np.unpackbits(np.ascontiguousarray(arr[1:], dtype=np.uint8), count=n)
        return bits.view(bool).reshape(shape)

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack`` (the chunk axis first), all at once, each row
        unpacked alone; NotImplemented when a header is not the one expected (decoding the
        chunk alone words that)."""
        n = int(np.prod(shape, dtype=np.int64))
        rows = stack.reshape(len(stack), stack[0].size if len(stack) else 1 + -(-n // 8))
        if (rows[:, 0] != (8 - n % 8) % 8).any():
            return NotImplemented
        bits = np.unpackbits(np.ascontiguousarray(rows[:, 1:], dtype=np.uint8), axis=1, count=n)
        return bits.view(bool).reshape(len(stack), *shape)
