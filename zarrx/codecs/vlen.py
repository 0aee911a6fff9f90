"""``vlen-utf8`` and ``vlen-bytes``: variable-length items of an object chunk.

Wire format: uint32 LE item count, then for each item (C order) a uint32 LE byte length and
the bytes (UTF-8 for strings). Every length is checked against the bytes that remain.
"""
from __future__ import annotations

import struct
from typing import Any, ClassVar

import numpy as np

from zarrx.codecs.base import ArrayToBytesCodec, Buffer, as_u8
from zarrx.errors import CodecError

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
        if v is None:
            return b""
        if self.utf8:
            if isinstance(v, str):
                try:
                    return v.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise CodecError(f"{self.name}: item {i} cannot be encoded as UTF-8 "
                                     f"({exc})") from None
            raise CodecError(f"{self.name}: item {i} is {type(v).__name__} {v!r}, expected str")
        if isinstance(v, (bytes, bytearray, memoryview)):
            return bytes(v)
        if isinstance(v, np.bytes_):
            return bytes(v)
        raise CodecError(f"{self.name}: item {i} is {type(v).__name__} {v!r}, expected bytes")

    def encode(self, arr: np.ndarray) -> Buffer:
        flat = arr.reshape(-1) if arr.flags.c_contiguous else np.ravel(arr, order="C")
        if flat.size > _MAX_ITEM:
            raise CodecError(f"{self.name}: {flat.size} items exceed the format's limit of "
                             f"{_MAX_ITEM}")
        items = [self._item(v, i) for i, v in enumerate(flat.tolist())]
        k = _kernel()
        if k is not None:
            return k.vlen_encode(items)
        parts = [_U32.pack(len(items))]
        for i, b in enumerate(items):
            if len(b) > _MAX_ITEM:
                raise CodecError(f"{self.name}: item {i} of {len(b)} bytes exceeds the "
                                 f"format's limit of {_MAX_ITEM}")
            parts.append(_U32.pack(len(b)))
            parts.append(b)
        return b"".join(parts)

    def decode(self, data: Buffer, dtype: np.dtype, shape: tuple[int, ...],
               where: str) -> np.ndarray:
        out = np.empty(shape, dtype=object)
        self._fill(as_u8(data), out.reshape(-1), where)
        return out

    def decode_into(self, data: Buffer, out: np.ndarray, where: str) -> None:
        if out.dtype == np.dtype(object) and out.flags.c_contiguous:
            self._fill(as_u8(data), out.reshape(-1), where)
        else:
            np.copyto(out, self.decode(data, out.dtype, out.shape, where))

    def _fill(self, mv: memoryview, flat: np.ndarray, where: str) -> None:
        k = _kernel()
        if k is not None:
            status = k.vlen_decode(mv, flat, self.utf8)
            if status is not None:
                self._fail(status, mv.nbytes, flat.shape[0], where)
            return
        n, count = mv.nbytes, flat.shape[0]
        if n < 4:
            self._fail(("header", n), n, count, where)
        found = _U32.unpack_from(mv, 0)[0]
        if found != count:
            self._fail(("count", found), n, count, where)
        pos = 4
        for i in range(count):
            if n - pos < 4:
                self._fail(("length", i, pos), n, count, where)
            ln = _U32.unpack_from(mv, pos)[0]
            pos += 4
            if ln > n - pos:
                self._fail(("item", i, pos, ln), n, count, where)
            raw = bytes(mv[pos:pos + ln])
            pos += ln
            if self.utf8:
                try:
                    flat[i] = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    self._fail(("utf8", i, str(exc)), n, count, where)
            else:
                flat[i] = raw
        if pos != n:
            self._fail(("trailing", pos), n, count, where)

    def _fail(self, status: tuple, n: int, count: int, where: str) -> None:
        what = status[0]
        p = f"{where}: {self.name}:"
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
            raise CodecError(f"{p} item {status[1]} is not valid UTF-8 ({status[2]})")
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
