"""The ``transpose`` codec: permute the dimensions of a chunk."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, config_field
from zarrx.errors import CodecError

__all__ = ["Transpose"]


class Transpose(ArrayToArrayCodec):
    """``transpose``: ``order`` is a permutation of the chunk's dimensions; axis ``i`` of the
    encoded array is axis ``order[i]`` of the chunk. ``"C"`` (identity) and ``"F"`` (reversed)
    are accepted as in early v3 drafts; bound to a chunk, they become the permutation."""

    name = "transpose"
    order: tuple[int, ...] | str

    def __init__(self, order: Sequence[int] | str = ()) -> None:
        self._configure(order=order)

    def configuration(self) -> dict[str, Any]:
        return {"order": self.order if isinstance(self.order, str) else list(self.order)}

    def bind(self, dtype: np.dtype, shape: tuple[int, ...]) -> "Transpose":
        return self if not isinstance(self.order, str) else Transpose(self.permutation(len(shape)))

    def permutation(self, ndim: int) -> tuple[int, ...]:
        if self.order == "C":
            return tuple(range(ndim))
        if self.order == "F":
            return tuple(range(ndim - 1, -1, -1))
        return self.order  # type: ignore[return-value]

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        perm = self.permutation(len(shape))
        if sorted(perm) != list(range(len(shape))):
            raise CodecError(f"{config_field(where, 'order')}: expected a permutation of "
                             f"0..{len(shape) - 1} for a {len(shape)}-d chunk, found {list(perm)}")
        return dtype, tuple(shape[i] for i in perm)

    def is_identity(self, dtype: np.dtype, shape: tuple[int, ...]) -> bool:
        return self.permutation(len(shape)) == tuple(range(len(shape)))

    def encode(self, arr: np.ndarray) -> np.ndarray:
        return arr.transpose(self.permutation(arr.ndim))      # a view; serialised in one pass

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        perm = self.permutation(arr.ndim)
        return arr.transpose(np.argsort(perm))

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack``, the chunk axis kept first (a view)."""
        perm = np.argsort(self.permutation(stack.ndim - 1))
        return stack.transpose([0, *(1 + perm)])
