"""numcodecs' object codecs of Zarr v2 arrays of Python objects (``dtype: "|O"``):
``vlen-array``, ``json2`` and ``msgpack2``.

- ``vlen-array``: the ``vlen-bytes`` layout (uint32 LE item count, then each item's uint32 LE
  byte length and bytes), each item a one-dimensional array of the codec's ``dtype``.
- ``json2`` / ``msgpack2``: one JSON text / MessagePack document holding the chunk as nested
  lists (``ndarray.tolist()``), followed by the chunk's dtype string (``"|O"``) and shape.

Missing items and ``None`` are stored as numcodecs stores them (an empty array; ``null``).

Parsing a document makes a Python object of each of its values (tens of bytes each, for as
little as one stored byte), so before parsing, its values are counted in one pass
(:mod:`zarrx.codecs._documents`) and a document holding more than its chunk's items, their
nesting, its dtype and shape, plus ``EXTRA_VALUES`` inside items (objects that are lists or
dicts) is refused: decoding costs memory bounded by the chunk's item count, not by how
far a small stored chunk expands.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from zarrx.codecs import _documents
from zarrx.codecs.base import ArrayToBytesCodec, Buffer, as_u8
from zarrx.codecs.vlen import _VLen
from zarrx.errors import CodecError, MissingDependencyError

__all__ = ["VLenArray", "JSON", "MsgPack", "EXTRA_VALUES"]

#: values a document may hold inside its items (items that are lists or dicts), beyond one per
#: item and those of its nesting, dtype and shape: about 1 GiB of Python objects
EXTRA_VALUES = 1 << 24


class VLenArray(_VLen):
    """numcodecs ``vlen-array``: one-dimensional arrays of ``dtype`` of any length."""

    name = "numcodecs.vlen-array"
    utf8 = False
    dtype: np.dtype

    def __init__(self, dtype: Any) -> None:
        self._configure(dtype=dtype)

    def configuration(self) -> dict[str, Any]:
        return {"dtype": self.dtype.str}

    def _item(self, v: Any, i: int) -> bytes:
        if v is None:
            return b""
        try:
            arr = np.ascontiguousarray(v, dtype=self.dtype)
        except (TypeError, ValueError, OverflowError) as exc:
            raise CodecError(f"{self.name}: item {i} ({type(v).__name__}) cannot be converted "
                             f"to {self.dtype.str}: {exc}") from None
        if arr.ndim != 1:
            raise CodecError(f"{self.name}: item {i} has {arr.ndim} dimensions, expected a "
                             f"one-dimensional array")
        return arr.tobytes()

    def _fill(self, mv: memoryview, flat: np.ndarray) -> None:
        super()._fill(mv, flat)
        size, native = self.dtype.itemsize, self.dtype.newbyteorder("=")
        for i, raw in enumerate(flat.tolist()):
            if len(raw) % size:
                raise CodecError(f"{self.name}: item {i} holds {len(raw)} bytes, not a "
                                 f"multiple of the {size}-byte {self.dtype.str}")
            flat[i] = np.frombuffer(raw, dtype=self.dtype).astype(native)


class _Document(ArrayToBytesCodec):
    """A chunk stored as one document of nested lists, its dtype string and its shape."""

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str) -> int | None:
        if dtype != np.dtype(object):
            raise CodecError(f"{where}: {self.name} encodes object chunks, found data type "
                             f"{dtype}")
        return None

    def _dumps(self, items: list[Any]) -> bytes:
        raise NotImplementedError

    def _loads(self, data: bytes) -> Any:
        raise NotImplementedError

    def _values(self, data: bytes) -> int | None:
        """An upper bound of the values parsing ``data`` makes; None when it cannot be
        counted (parsing then says why)."""
        raise NotImplementedError

    def _check_values(self, data: bytes, shape: tuple[int, ...]) -> None:
        """Refuse a document holding more values than a chunk of ``shape`` can use."""
        items = containers = 1
        for s in shape[:-1]:
            items *= s
            containers += items
        items *= shape[-1] if shape else 1
        own = items + containers + 2 + len(shape)     # + dtype, the shape list and its sizes
        found = self._values(data)
        if found is None:
            return
        if found < items:           # each item is a value: refused before it is parsed
            raise CodecError(f"{self.name}: the chunk's document holds at most {found} "
                             f"values, fewer than the {items} items of a chunk of shape "
                             f"{shape}")
        if found > own + EXTRA_VALUES:
            raise CodecError(f"{self.name}: the chunk's document holds {found} values, more "
                             f"than the {own + EXTRA_VALUES} a chunk of shape {shape} may "
                             f"hold ({own} for its {items} items, their nesting, dtype and "
                             f"shape, and {EXTRA_VALUES} inside items): refused before "
                             f"parsing it")

    def encode(self, arr: np.ndarray) -> Buffer:
        items = np.atleast_1d(arr).tolist()
        items.extend(["|O", list(arr.shape)])
        return self._dumps(items)

    def decode(self, data: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        raw = bytes(as_u8(data))
        self._check_values(raw, shape)      # before an array of the chunk's item count
        out = np.empty(shape, dtype=object)
        self._decode(raw, out)
        return out

    def decode_into(self, data: Buffer, out: np.ndarray) -> None:
        raw = bytes(as_u8(data))
        self._check_values(raw, out.shape)
        self._decode(raw, out)

    def _decode(self, raw: bytes, out: np.ndarray) -> None:
        doc = self._loads(raw)
        shape = list(out.shape)
        if not isinstance(doc, list) or len(doc) < 2:
            raise CodecError(f"{self.name}: expected a list of the items, the dtype and the "
                             f"shape, found {_kind(doc)}")
        if doc[-2] not in ("|O", b"|O") or doc[-1] != shape:     # bytes: msgpack2's raw
            raise CodecError(f"{self.name}: expected dtype '|O' and shape {shape}, found "
                             f"{_short(doc[-2])} and {_short(doc[-1])}")
        items = doc[:-2]
        if not shape:
            if len(items) != 1:
                raise CodecError(f"{self.name}: expected 1 item for a 0-d chunk, found "
                                 f"{len(items)}")
            out[()] = items[0]
            return
        flat: list[Any] = []
        _leaves(items, shape, 0, flat, self.name)
        values = np.empty(len(flat), dtype=object)
        values[:] = flat
        out[...] = values.reshape(out.shape)


def _leaves(node: list[Any], shape: list[int], axis: int, out: list[Any], name: str) -> None:
    """The items of nested lists of ``shape``, in C order, into ``out``."""
    if len(node) != shape[axis]:
        raise CodecError(f"{name}: expected {shape[axis]} items along axis {axis}, found "
                         f"{len(node)}")
    if axis == len(shape) - 1:
        out.extend(node)
        return
    for sub in node:
        if not isinstance(sub, list):
            raise CodecError(f"{name}: expected a list along axis {axis + 1}, found "
                             f"{_kind(sub)}")
        _leaves(sub, shape, axis + 1, out, name)


def _kind(value: Any) -> str:
    return f"{type(value).__name__} {_short(value)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class JSON(_Document):
    """numcodecs ``json2``: the chunk as JSON text (``encoding``; the ``json.dumps`` options
    ``skipkeys``, ``ensure_ascii``, ``check_circular``, ``allow_nan``, ``sort_keys``,
    ``indent``, ``separators``; ``json.loads``'s ``strict``)."""

    name = "numcodecs.json2"

    def __init__(self, encoding: str = "utf-8", skipkeys: bool = False,
                 ensure_ascii: bool = True, check_circular: bool = True,
                 allow_nan: bool = True, sort_keys: bool = True, indent: int | None = None,
                 separators: Any = None, strict: bool = True) -> None:
        self._configure(encoding=encoding, skipkeys=skipkeys, ensure_ascii=ensure_ascii,
                        check_circular=check_circular, allow_nan=allow_nan,
                        sort_keys=sort_keys, indent=indent, separators=separators,
                        strict=strict)

    def configuration(self) -> dict[str, Any]:
        return {"encoding": self.encoding, "skipkeys": self.skipkeys,
                "ensure_ascii": self.ensure_ascii, "check_circular": self.check_circular,
                "allow_nan": self.allow_nan, "sort_keys": self.sort_keys,
                "indent": self.indent, "separators": list(self.separators),
                "strict": self.strict}

    def _dumps(self, items: list[Any]) -> bytes:
        try:
            text = json.dumps(items, skipkeys=self.skipkeys, ensure_ascii=self.ensure_ascii,
                              check_circular=self.check_circular, allow_nan=self.allow_nan,
                              sort_keys=self.sort_keys, indent=self.indent,
                              separators=tuple(self.separators))
            return text.encode(self.encoding)
        except (TypeError, ValueError, RecursionError) as exc:
            raise CodecError(f"{self.name}: the chunk cannot be written as JSON: {exc}") from None

    def _loads(self, data: bytes) -> Any:
        try:
            return json.loads(data.decode(self.encoding), strict=self.strict)
        except UnicodeDecodeError as exc:
            raise CodecError(f"{self.name}: the chunk is not {self.encoding} text: "
                             f"{exc.reason} at byte {exc.start}") from None
        except json.JSONDecodeError as exc:
            raise CodecError(f"{self.name}: the chunk is not JSON: {exc.msg} at character "
                             f"{exc.pos}") from None
        except ValueError as exc:          # a number past Python's conversion limits
            raise CodecError(f"{self.name}: the chunk's JSON cannot be read: {exc}") from None
        except RecursionError:
            raise CodecError(f"{self.name}: the chunk's JSON nests too deeply") from None

    def _values(self, data: bytes) -> int | None:
        if self.encoding.lower().replace("_", "-") not in ("utf-8", "utf8", "ascii"):
            try:        # the brackets counted are ASCII: count them in UTF-8
                data = data.decode(self.encoding).encode("utf-8", "surrogatepass")
            except (UnicodeError, LookupError):
                return None                   # not text: parsing says so
        return _documents.json_values(data)


class MsgPack(_Document):
    """numcodecs ``msgpack2``: the chunk as one MessagePack document (``use_single_float``,
    ``use_bin_type``, ``raw``); needs the ``msgpack`` package."""

    name = "numcodecs.msgpack2"

    def __init__(self, use_single_float: bool = False, use_bin_type: bool = True,
                 raw: bool = False) -> None:
        self._configure(use_single_float=use_single_float, use_bin_type=use_bin_type, raw=raw)
        try:
            import msgpack
        except ImportError:
            raise MissingDependencyError(f"{self.name}: reading or writing this codec needs "
                                         f"the msgpack package (pip install msgpack)") from None
        self._msgpack = msgpack

    def configuration(self) -> dict[str, Any]:
        return {"use_single_float": self.use_single_float, "use_bin_type": self.use_bin_type,
                "raw": self.raw}

    def _dumps(self, items: list[Any]) -> bytes:
        try:
            return self._msgpack.packb(items, use_bin_type=self.use_bin_type,
                                       use_single_float=self.use_single_float)
        except (TypeError, ValueError, OverflowError) as exc:
            raise CodecError(f"{self.name}: the chunk cannot be written as MessagePack: "
                             f"{exc}") from None

    def _loads(self, data: bytes) -> Any:
        try:
            return self._msgpack.unpackb(data, raw=self.raw)
        except self._msgpack.StackError:
            raise CodecError(f"{self.name}: the chunk's MessagePack nests too deeply") from None
        except (ValueError, TypeError, self._msgpack.UnpackException) as exc:
            raise CodecError(f"{self.name}: the chunk is not MessagePack: {exc}") from None

    def _values(self, data: bytes) -> int | None:
        return _documents.msgpack_values(data)
