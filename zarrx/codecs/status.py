"""How the codec kernels report failure: a status code and the numbers involved.

A kernel (``zarrx.codecs._zstd``, ``_zlib``, ``_blosc``, ``_lz4``) never writes a message. When
it cannot do its work it raises :class:`KernelStatus` with one of its exported codes and the
numbers (sizes, offsets, library return codes) that explain it; the codec module that called it
turns that into a :class:`~zarrx.errors.CodecError` in its one message function, and nothing
else ever sees a ``KernelStatus``. Codes 1..15 are shared by every kernel (``_common.pxd``:
allocation, the expansion bound, a negative size) and are worded here, once.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from zarrx.errors import CodecError

__all__ = ["KernelStatus", "common_message", "call"]

R = TypeVar("R")


class KernelStatus(Exception):
    """``KernelStatus(code, *values)``: a kernel's failure, as a code and numbers (internal)."""

    @property
    def code(self) -> int:
        return self.args[0]

    @property
    def values(self) -> tuple:
        return self.args[1:]


def common_message(kernel: Any, st: KernelStatus, codec: str, encoded: str) -> str | None:
    """The message for one of the codes every kernel shares (``kernel`` exports them), or None.
    ``codec`` names the format in the message and ``encoded`` its encoded unit ("the compressed
    frame")."""
    c, v = st.code, st.values
    if c == kernel.NOMEM_ENCODED:
        return f"{codec}: cannot allocate {v[0]} bytes for {encoded}"
    if c == kernel.NOMEM_DECODED:
        return f"{codec}: cannot allocate {v[0]} bytes for the decoded data"
    if c == kernel.SHRINK:
        return f"{codec}: cannot shrink the output to {v[0]} bytes"
    if c == kernel.RATIO:
        n, m, ratio = v
        return (f"{codec}: {n} bytes of input cannot decode to {m} bytes ({codec} expands at "
                f"most {ratio}-fold: {n * ratio} bytes)")
    if c == kernel.NEGATIVE_SIZE:
        return f"{codec}: expected decoded size must be >= 0, found {v[0]}"
    return None


def call(word: Callable[[KernelStatus], str], fn: Callable[..., R], *args: Any) -> R:
    """``fn(*args)``, a kernel function; a :class:`KernelStatus` it raises becomes a
    :class:`~zarrx.errors.CodecError` with the message ``word(status)`` (the codec module's one
    message function)."""
    try:
        return fn(*args)
    except KernelStatus as st:
        raise CodecError(word(st)) from None
