"""numcodecs ``delta``: first value, then differences of consecutive values (C order)."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToArrayCodec, config_field, native
from zarrx.errors import CodecError

__all__ = ["Delta", "match_dtype", "dtype_str", "_drop_none"]


def dtype_str(dt: np.dtype | None) -> str | None:
    return None if dt is None else dt.str


def _drop_none(cfg: dict[str, Any]) -> dict[str, Any]:
    """A configuration without unset (chunk-dependent) fields."""
    return {k: v for k, v in cfg.items() if v is not None}


def match_dtype(declared: np.dtype | None, actual: np.dtype, where: str, field: str = "dtype"
                ) -> np.dtype:
    """The codec's declared input dtype must be the one it receives (byte order aside)."""
    if declared is None:
        return actual
    if native(declared) != native(actual):
        raise CodecError(f"{config_field(where, field)}: the codec receives {actual.str} data, "
                         f"found {declared.str}")
    return native(actual)


def _may_lose(dt: np.dtype, astype: np.dtype) -> bool:
    """Whether casting ``dt``'s differences to ``astype`` can lose them: a narrower integer,
    or a float type, for integer data (integers of the same width or wider keep them, modulo
    the width, which decoding undoes); an integer type for float data."""
    if dt.kind in "iu":
        return astype.kind not in "iu" or astype.itemsize < dt.itemsize
    return dt.kind == "f" and astype.kind in "iu"


def _check_lossless(flat: np.ndarray, enc: np.ndarray) -> None:
    """Refuse differences that do not decode back to ``flat``: numcodecs casts them, and the
    chunk would decode to other values without a word."""
    dec = np.empty(flat.shape, dtype=flat.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        np.cumsum(enc, out=dec)
    same = (dec == flat) | (np.isnan(flat) & np.isnan(dec) if flat.dtype.kind == "f" else False)
    if not same.all():
        i = int(np.argmin(same))            # the differences before item i decode back
        what = f"the first value, {flat[0].item()!r}," if i == 0 else \
            (f"the difference between items {i - 1} and {i}, "
             f"{flat[i].item() - flat[i - 1].item()!r},")
        raise CodecError(f"numcodecs.delta: {what} is not held exactly by astype "
                         f"{enc.dtype.str} (data type {flat.dtype.str}): the chunk would decode "
                         f"to other values; use a wider astype")


class Delta(ArrayToArrayCodec):
    """numcodecs ``delta``: ``dtype`` (the type the chunk's bytes are read as; None: the
    chunk's), ``astype`` (the stored type of the differences; None: ``dtype``, and left out of
    the v3 configuration as zarr-python leaves it out; the v2 one, as numcodecs writes it,
    names it).

    A ``dtype`` other than the chunk's (GDAL's ``DELTA_DTYPE``, or the component type it
    declares for complex data) is what numcodecs does with it: the chunk's bytes, in ``dtype``'s
    byte order, are read as a flat run of ``dtype`` items, and decoding gives those bytes back."""

    name = "numcodecs.delta"
    dtype: np.dtype | None
    astype: np.dtype | None

    def __init__(self, dtype: Any = None, astype: Any = None) -> None:
        self._configure(dtype=dtype, astype=astype)

    def bind(self, dtype: np.dtype, shape: tuple[int, ...]) -> "Delta":
        return self if self.dtype is not None else Delta(dtype, self.astype)

    def configuration(self) -> dict[str, Any]:
        return _drop_none({"dtype": dtype_str(self.dtype),
                           "astype": dtype_str(self.astype)})

    def _views(self, dtype: np.dtype) -> bool:
        """Whether the chunk's bytes are read as another type (``dtype``: the chunk's)."""
        return self.dtype is not None and native(self.dtype) != native(dtype)

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        dt = native(self.dtype) if self.dtype is not None else dtype
        if self._views(dtype):
            if dtype.hasobject:
                raise CodecError(f"{config_field(where, 'dtype')}: delta reads the bytes of a "
                                 f"chunk as this type, {self.dtype.str}; expected a chunk of "
                                 f"fixed-size items, found one of Python objects (shape "
                                 f"{shape}, type {dtype})")
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            if nbytes % dt.itemsize:
                raise CodecError(f"{config_field(where, 'dtype')}: delta reads the bytes of a "
                                 f"chunk as this type; expected a type whose item size divides "
                                 f"a chunk's bytes ({nbytes} bytes of shape {shape} and type "
                                 f"{dtype}), found {self.dtype.str}")
            shape = (nbytes // dt.itemsize,)
        if dt.kind not in "iufc" and dt.kind != "m":
            raise CodecError(f"{where}: delta needs a numeric data type, found {dt}")
        astype = native(self.astype) if self.astype is not None else dt
        if astype.kind not in ("m" if dt.kind == "m" else "biufc"):
            want = "a timedelta" if dt.kind == "m" else "a numeric"
            raise CodecError(f"{where}: delta needs {want} astype for the differences of "
                             f"{dt}, found {astype}")
        return astype, shape

    def _order(self) -> str:
        """The byte order numcodecs reads the chunk's bytes in: ``dtype``'s."""
        assert self.dtype is not None
        return self.dtype.byteorder if self.dtype.byteorder in "<>" else "="

    def encode(self, arr: np.ndarray) -> np.ndarray:
        views = self._views(arr.dtype)
        if views:
            order = self._order()
            raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder(order)).reshape(-1)
            if raw.nbytes % self.dtype.itemsize:            # what resolve refuses
                raise CodecError(f"{self.name}: expected a chunk whose bytes are a whole "
                                 f"number of {self.dtype.str} items, found {raw.nbytes} bytes")
            flat = raw.view(self.dtype.newbyteorder(order)).astype(native(self.dtype))
        else:
            flat = arr.reshape(-1)
        astype = native(self.astype) if self.astype is not None else native(flat.dtype)
        enc = np.empty(flat.shape, dtype=astype)
        if flat.size:
            with np.errstate(invalid="ignore", over="ignore"):
                enc[:1] = flat[:1]                    # a cast as the differences' (no raise)
                enc[1:] = np.diff(flat)
            if _may_lose(flat.dtype, astype):
                _check_lossless(flat, enc)
        return enc if views else enc.reshape(arr.shape)

    def encode_stack(self, chunks: np.ndarray) -> np.ndarray:
        """:meth:`encode` of each of ``chunks`` (the chunk axis first), all at once: the same
        items; NotImplemented when the chunks' bytes are read as another type."""
        if self._views(chunks.dtype):
            return NotImplemented
        flat = chunks.reshape(len(chunks), -1)
        astype = native(self.astype) if self.astype is not None else native(flat.dtype)
        enc = np.empty(flat.shape, dtype=astype)
        if flat.size:
            with np.errstate(invalid="ignore", over="ignore"):
                enc[:, :1] = flat[:, :1]
                enc[:, 1:] = np.diff(flat, axis=1)
            if _may_lose(flat.dtype, astype):
                for row, diffs in zip(flat, enc):
                    _check_lossless(row, diffs)
        return enc.reshape(chunks.shape)

    def decode_stack(self, stack: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]
                     ) -> np.ndarray:
        """:meth:`decode` of each of ``stack`` (the chunk axis first), all at once: each row
        summed alone, in the same type. NotImplemented when the chunks' bytes are read as
        another type, or the sums are cast from differences of another kind (floats summed
        into integers)."""
        if self._views(dtype) or stack.dtype != dtype \
                and not (stack.dtype.kind in "iu" and dtype.kind in "iu"):
            return NotImplemented
        k = len(stack)
        dec = np.empty((k, stack.size // k if k else 0), dtype=dtype)
        if dec.size:
            np.cumsum(stack.reshape(k, -1), axis=1, out=dec)
        return dec.reshape(k, *shape)

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        views = self._views(dtype)
        dec = np.empty(arr.size, dtype=native(self.dtype) if views else dtype)
        if arr.size:
            np.cumsum(arr.reshape(-1), out=dec)
        if views:
            order = self._order()
            want = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            if dec.nbytes != want:                          # what resolve refuses
                raise CodecError(f"{self.name}: expected {want} bytes of {dtype} for a chunk "
                                 f"of shape {shape}, found {dec.nbytes}")
            dec = dec.astype(self.dtype.newbyteorder(order)).view(dtype.newbyteorder(order))
            dec = dec.astype(dtype)
        return dec.reshape(shape)
