"""The ``bytes`` codec: a fixed-size chunk as its raw bytes, in C order, in a given byte order."""
from __future__ import annotations

import sys
from functools import lru_cache
from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToBytesCodec, Buffer, config_field
from zarrx.errors import CodecError

__all__ = ["Bytes"]

_NATIVE = sys.byteorder   # "little" on every platform zarrx is built for, but do not assume


def _needs_endian(dt: np.dtype) -> bool:
    """Whether the byte order matters for ``dt`` (multi-byte scalars, or fields of them)."""
    if dt.fields:
        return any(_needs_endian(f[0]) for f in dt.fields.values())
    if dt.subdtype is not None:
        return _needs_endian(dt.subdtype[0])
    if dt.kind == "V":
        return _scalar_void(dt) and dt.itemsize > 1
    return dt.itemsize > 1 and dt.kind not in "Sb"


def _orders(dt: np.dtype) -> set[str]:
    """The byte orders ('<', '>') of the multi-byte scalars of ``dt``, at any depth."""
    if dt.fields:
        return set().union(*(_orders(f[0]) for f in dt.fields.values()))
    if dt.subdtype is not None:
        return _orders(dt.subdtype[0])
    if not _needs_endian(dt) or _scalar_void(dt):
        return set()
    return {"<" if dt.byteorder == "<" or (dt.byteorder == "=" and _NATIVE == "little")
            else ">"}


def _own_orders(dt: np.dtype) -> bool:
    """A structured type whose fields differ in byte order: it is stored as it is."""
    return dt.fields is not None and len(_orders(dt)) > 1


def _scalar_void(dt: np.dtype) -> bool:
    """A numeric type numpy files under ``V`` (ml_dtypes' ``bfloat16`` and its kin), as opposed
    to raw bytes (``np.void``): it has a byte order, but ``newbyteorder`` cannot express it."""
    return dt.kind == "V" and dt.fields is None and dt.subdtype is None and dt.type is not np.void


def _generic_time(dt: np.dtype) -> bool:
    """A unit-less ``datetime64`` / ``timedelta64``: numpy casts between its byte orders
    without swapping the bytes, so they are swapped through an integer view."""
    return dt.kind in "Mm" and np.datetime_data(dt)[0] == "generic"


class Bytes(ArrayToBytesCodec):
    """``bytes``: serialise a fixed-size chunk; ``endian`` is ``"little"``, ``"big"`` or None
    (only for data types without a byte order)."""

    name = "bytes"
    endian: str | None

    def __init__(self, endian: str | None = "little") -> None:
        self._configure(endian=endian)

    def configuration(self) -> dict[str, Any]:
        return {} if self.endian is None else {"endian": self.endian}

    def _endian(self, dtype: np.dtype) -> str | None:
        """The stored byte order; a structured type without one is little endian (zarr-python
        3 writes a bare ``bytes`` codec for structured types, in little-endian order), unless
        its fields have byte orders of their own (a Zarr v2 type such as
        ``[["a", "<i4"], ["b", ">f8"]]``, held in memory as stored): None, stored as it is."""
        if self.endian is None and dtype.fields is not None:
            return None if _own_orders(dtype) else "little"
        return self.endian

    def stored_dtype(self, dtype: np.dtype) -> np.dtype:
        """``dtype`` with the stored byte order."""
        endian = self._endian(dtype)
        if not _needs_endian(dtype) or endian is None:
            return dtype
        return dtype.newbyteorder("<" if endian == "little" else ">")

    def swaps(self, dtype: np.dtype) -> bool:
        """True when stored bytes differ from native ones (a byte swap is needed)."""
        endian = self._endian(dtype)
        return _needs_endian(dtype) and endian is not None and endian != _NATIVE

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str) -> int | None:
        if dtype.hasobject:
            raise CodecError(f"{where}: the bytes codec cannot encode the variable-length data "
                             f"type {dtype}; use vlen-utf8 or vlen-bytes")
        if self._endian(dtype) is None and _needs_endian(dtype) and not _own_orders(dtype):
            raise CodecError(f"{config_field(where, 'endian')}: required for data type {dtype} "
                             f"(expected 'little' or 'big'), found none")
        return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize

    def _swaps_as_uint(self, dtype: np.dtype) -> bool:
        """A byte order to change on a type ``newbyteorder`` cannot describe, or numpy does not
        cast: swap the bytes of an unsigned integer view instead."""
        return (_scalar_void(dtype) or _generic_time(dtype)) and self.swaps(dtype)

    def encode(self, arr: np.ndarray) -> Buffer:
        as_uint, stored = _encoding(self.endian, arr.dtype)
        if as_uint:
            bits = np.ascontiguousarray(arr).view(f"u{arr.dtype.itemsize}")
            return memoryview(bits.byteswap().reshape(-1).view(np.uint8))
        if stored is not None or not arr.flags.c_contiguous:
            arr = arr.astype(stored or arr.dtype, order="C")  # swap and/or reorder in one pass
        return memoryview(arr.reshape(-1).view(np.uint8))

    def decode(self, data: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        stored = self.stored_dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        size = memoryview(data).nbytes
        if size != n:
            raise CodecError(f"expected {n} bytes for a chunk of shape {shape} and data type "
                             f"{dtype}, found {size}")
        count = int(np.prod(shape, dtype=np.int64))
        if self._swaps_as_uint(dtype):
            bits = np.frombuffer(data, dtype=f"u{dtype.itemsize}", count=count)
            return bits.byteswap().view(dtype).reshape(shape)
        return np.frombuffer(data, dtype=stored, count=count).reshape(shape)

    def decode_into(self, data: Buffer, out: np.ndarray) -> None:
        src = self.decode(data, out.dtype, out.shape)
        np.copyto(out, src, casting="unsafe")   # a plain copy, or a copy with the swap


@lru_cache(maxsize=256)
def _encoding(endian: str | None, dtype: np.dtype) -> tuple[bool, np.dtype | None]:
    """How a ``bytes`` codec of ``endian`` encodes chunks of ``dtype``, worked out once per
    byte order and data type rather than per chunk: whether through a byte-swapped unsigned
    integer view, else the stored type when it differs from ``dtype`` (None: the bytes as they
    are)."""
    codec = Bytes(endian)
    stored = codec.stored_dtype(dtype)
    return codec._swaps_as_uint(dtype), None if stored == dtype else stored
