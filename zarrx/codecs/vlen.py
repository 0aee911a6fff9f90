"""``vlen-utf8`` and ``vlen-bytes``: variable-length items of an object chunk.

Wire format: uint32 LE item count, then for each item (C order) a uint32 LE byte length and
the bytes (UTF-8 for strings). Every length is checked against the bytes that remain.

The kernel (:mod:`zarrx.codecs._filters`) returns a status tuple (a tag and numbers) and
:meth:`_VLen._fail` words it; the pure-Python fallback returns the same tuples.
"""
from __future__ import annotations

import math
import struct
from typing import Any, ClassVar

import numpy as np

from zarrx.codecs.base import ArrayToBytesCodec, Buffer, as_u8
from zarrx.codecs.status import KernelStatus
from zarrx.errors import CodecError
from zarrx.metadata._util import short

__all__ = ["VLenUTF8", "VLenBytes"]

_U32 = struct.Struct("<I")
_MAX_ITEM = 2**32 - 1


def _kernel() -> Any:
    try:
        from zarrx.codecs import _filters
    except ImportError:  # pragma: no cover - the extension is always built with the package
        return None
    return _filters


class _VLen(ArrayToBytesCodec):
    utf8: ClassVar[bool] = True

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str) -> int | None:
        if dtype != np.dtype(object) and dtype.kind != "T":
            raise CodecError(f"{where}: {self.name} encodes variable-length (object) chunks, "
                             f"found data type {dtype}")
        return None

    def _item(self, v: Any, i: int) -> bytes:
        """The stored bytes of item ``i``. Text is stored as UTF-8, by either codec (a
        ``string`` array whose codec is ``vlen-bytes``); bytes as they are, by ``vlen-utf8``
        only when they are UTF-8 text (a ``bytes`` array whose codec is ``vlen-utf8``)."""
        if v is None:
            return b""
        if isinstance(v, str):
            try:
                return v.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise CodecError(f"{self.name}: item {i} cannot be encoded as UTF-8: "
                                 f"{exc.reason} (character {exc.start}, "
                                 f"U+{ord(v[exc.start]):04X})") from None
        if isinstance(v, (bytes, bytearray, memoryview, np.bytes_)):
            raw = bytes(v)
            if self.utf8:
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise CodecError(f"{self.name}: item {i} is bytes that are not UTF-8 text "
                                     f"({exc.reason} at byte {exc.start})") from None
            return raw
        want = "str" if self.utf8 else "bytes"
        raise CodecError(f"{self.name}: item {i} is {type(v).__name__} {short(v)}, "
                         f"expected {want}")

    def encode(self, arr: np.ndarray) -> Buffer:
        flat = arr.reshape(-1) if arr.flags.c_contiguous else np.ravel(arr, order="C")
        if flat.size > _MAX_ITEM:
            raise CodecError(f"{self.name}: {flat.size} items exceed the format's limit of "
                             f"{_MAX_ITEM}")
        items = [self._item(v, i) for i, v in enumerate(flat.tolist())]
        k = _kernel()
        if k is not None:
            try:
                return k.vlen_encode(items)
            except KernelStatus as st:
                raise CodecError(self._too_large(st.code, *st.values)) from None
        parts = [_U32.pack(len(items))]
        for i, b in enumerate(items):
            if len(b) > _MAX_ITEM:
                raise CodecError(self._too_large("item", i, len(b), _MAX_ITEM))
            parts.append(_U32.pack(len(b)))
            parts.append(b)
        return b"".join(parts)

    def decode(self, data: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """A new object array of ``shape``, made once the layout of ``data`` is known to hold
        its items: a chunk that does not costs no array of its item count (the count comes
        from metadata, and a few stored bytes could claim to fill 2**31 items)."""
        mv, count = as_u8(data), math.prod(shape)
        k = _kernel()
        status = k.vlen_check(mv, count) if k is not None else self._walk(mv, count)[0]
        if status is not None:
            self._fail(status, mv, count)
        out = np.empty(shape, dtype=object)
        self._fill(mv, out.reshape(-1))
        return out

    def decode_into(self, data: Buffer, out: np.ndarray) -> None:
        if out.dtype == np.dtype(object) and out.flags.c_contiguous:
            self._fill(as_u8(data), out.reshape(-1))
        else:
            np.copyto(out, self.decode(data, out.dtype, out.shape))

    def _fill(self, mv: memoryview, flat: np.ndarray) -> None:
        k = _kernel()
        status = k.vlen_decode(mv, flat, self.utf8) if k is not None else self._scan(mv, flat)
        if status is not None:
            self._fail(status, mv, flat.shape[0])

    @staticmethod
    def _walk(mv: memoryview, count: int) -> tuple[tuple | None, list[tuple[int, int]]]:
        """The kernel's layout check in Python: (status or None, each item's offset and
        length)."""
        n = mv.nbytes
        if n < 4:
            return ("header", n), []
        found = _U32.unpack_from(mv, 0)[0]
        if found != count:
            return ("count", found), []
        pos = 4
        spans = []
        for i in range(count):
            if n - pos < 4:
                return ("length", i, pos), []
            ln = _U32.unpack_from(mv, pos)[0]
            pos += 4
            if ln > n - pos:
                return ("item", i, pos, ln), []
            spans.append((pos, ln))
            pos += ln
        if pos != n:
            return ("trailing", pos), []
        return None, spans

    def _scan(self, mv: memoryview, flat: np.ndarray) -> tuple | None:
        """The kernel's work in Python (when the extension is unavailable): same statuses,
        the layout checked before any item is built."""
        status, spans = self._walk(mv, flat.shape[0])
        if status is not None:
            return status
        for i, (pos, ln) in enumerate(spans):
            raw = bytes(mv[pos:pos + ln])
            if self.utf8:
                try:
                    flat[i] = raw.decode("utf-8")
                except UnicodeDecodeError:
                    return ("utf8", i, pos, ln)
            else:
                flat[i] = raw
        return None

    def _too_large(self, what: str, *v: int) -> str:
        if what == "count":
            return f"{self.name}: {v[0]} items exceed the format's limit of {v[1]}"
        return f"{self.name}: item {v[0]} of {v[1]} bytes exceeds the format's limit of {v[2]}"

    def _fail(self, status: tuple, mv: memoryview, count: int) -> None:
        """Raise the CodecError of a decode status: the one place they are worded."""
        what, n = status[0], mv.nbytes
        p = f"{self.name}:"
        if what == "header":
            raise CodecError(f"{p} expected a 4-byte item count, found {n} bytes")
        if what == "count":
            raise CodecError(f"{p} header claims {status[1]} items, expected {count}")
        if what == "length":
            raise CodecError(f"{p} truncated: item {status[1]}'s length at byte {status[2]} "
                             f"overruns the {n}-byte chunk")
        if what == "item":
            raise CodecError(f"{p} item {status[1]} claims {status[3]} bytes at byte "
                             f"{status[2]}, but only {n - status[2]} remain")
        if what == "utf8":
            i, pos, ln = status[1:]
            raw = bytes(mv[pos:pos + ln])
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:       # its fields say where and why
                raise CodecError(f"{p} item {i} is not valid UTF-8: {exc.reason} (byte "
                                 f"0x{raw[exc.start]:02x} at offset {pos + exc.start} of the "
                                 f"chunk)") from None
        if what == "trailing":
            raise CodecError(f"{p} {n - status[1]} bytes of trailing data after {count} items")
        raise AssertionError(status)  # pragma: no cover


class VLenUTF8(_VLen):
    """``vlen-utf8``: variable-length strings (``None`` is stored as the empty string)."""

    name = "vlen-utf8"
    utf8 = True


class VLenBytes(_VLen):
    """``vlen-bytes``: variable-length byte strings (``None`` is stored as empty)."""

    name = "vlen-bytes"
    utf8 = False
