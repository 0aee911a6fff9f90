"""The three codec kinds and the configuration parsing helpers they share.

A codec object is an immutable configuration (what ``create_array`` takes and metadata holds).
The plan binds it to the dtype and shape it sees; those are passed to every call, so one codec
object serves any number of arrays.

Array->array codecs (``ArrayToArrayCodec``) map a chunk to another array; array->bytes codecs
(``ArrayToBytesCodec``) serialise it; bytes->bytes codecs (``BytesToBytesCodec``) compress or
checksum the serialised bytes. Decoders never allocate from a size read out of the data without
bounding it by the size the plan expects.
"""
from __future__ import annotations

import json
from typing import Any, ClassVar, Sequence

import numpy as np

from zarrx.errors import CodecError
from zarrx.metadata.model import CodecSpec, DataType

__all__ = ["Codec", "ArrayToArrayCodec", "ArrayToBytesCodec", "BytesToBytesCodec",
           "spec_json", "as_numpy_dtype", "cfg_int", "cfg_choice", "cfg_bool", "cfg_dtype",
           "cfg_number", "check_keys", "Buffer"]

Buffer = Any   # any C-contiguous object exporting the buffer protocol


def spec_json(spec: CodecSpec) -> str:
    """The codec as it reads in metadata, for error messages."""
    if spec.v2:
        doc: dict[str, Any] = {"id": spec.name, **spec.configuration}
    else:
        doc = {"name": spec.name}
        if spec.configuration:
            doc["configuration"] = spec.configuration
    try:
        return json.dumps(doc, sort_keys=False, default=repr)
    except (TypeError, ValueError):  # pragma: no cover - configuration is JSON by construction
        return repr(doc)


def as_numpy_dtype(dtype: DataType | np.dtype | str) -> np.dtype:
    if isinstance(dtype, DataType):
        return dtype.numpy
    return np.dtype(dtype)


# -- configuration helpers: each returns the parsed value or raises CodecError(where...) --------

_MISSING = object()


def _field(config: dict, name: str, where: str, default: Any) -> Any:
    value = config.get(name, default)
    if value is _MISSING:
        raise CodecError(f"{where}.{name}: required field is missing")
    return value


def cfg_int(config: dict, name: str, where: str, default: Any = _MISSING, *,
            lo: int | None = None, hi: int | None = None, allow_none: bool = False) -> Any:
    value = _field(config, name, where, default)
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise CodecError(f"{where}.{name}: expected an integer, found {value!r}")
    value = int(value)
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
        raise CodecError(f"{where}.{name}: expected an integer in {rng}, found {value!r}")
    return value


def cfg_number(config: dict, name: str, where: str, default: Any = _MISSING) -> float | int:
    value = _field(config, name, where, default)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise CodecError(f"{where}.{name}: expected a number, found {value!r}")
    return value


def cfg_bool(config: dict, name: str, where: str, default: Any = _MISSING) -> bool:
    value = _field(config, name, where, default)
    if not isinstance(value, bool):
        raise CodecError(f"{where}.{name}: expected true or false, found {value!r}")
    return value


def cfg_choice(config: dict, name: str, where: str, choices: Sequence[Any],
               default: Any = _MISSING) -> Any:
    value = _field(config, name, where, default)
    if isinstance(value, bool) or value not in choices:
        want = " or ".join(repr(c) for c in choices)
        raise CodecError(f"{where}.{name}: expected {want}, found {value!r}")
    return value


def cfg_dtype(config: dict, name: str, where: str, default: Any = _MISSING) -> np.dtype:
    value = config.get(name)
    if value is None:                      # absent or null: the default (e.g. the chunk's type)
        if default is _MISSING:
            raise CodecError(f"{where}.{name}: required field is missing")
        return default
    if isinstance(value, np.dtype):
        return value
    try:
        dt = np.dtype(value)
    except (TypeError, ValueError) as exc:
        raise CodecError(f"{where}.{name}: expected a numpy dtype string, found {value!r}") from exc
    if dt.hasobject:
        raise CodecError(f"{where}.{name}: object dtypes are not supported here, found {value!r}")
    return dt


def check_keys(config: dict, allowed: Sequence[str], where: str) -> None:
    extra = sorted(set(config) - set(allowed))
    if extra:
        want = ", ".join(repr(a) for a in allowed) or "no fields"
        raise CodecError(f"{where}: unknown configuration field {extra[0]!r} (expected {want})")


def native(dt: np.dtype) -> np.dtype:
    """``dt`` in native byte order (structured types included)."""
    return dt.newbyteorder("=") if dt.byteorder not in ("=", "|") else dt


# -- codec kinds -------------------------------------------------------------------------------

class Codec:
    """Base of all codecs. Subclasses set ``name`` (the v3 name written by ``to_spec``)."""

    name: ClassVar[str] = ""
    #: the numcodecs id (how v2 metadata names the codec), or None when v2 has no such codec
    codec_id: ClassVar[str | None] = None
    kind: ClassVar[str] = ""
    #: True when the codec came from a numcodecs id (v2) or a ``numcodecs.<id>`` name
    _as: tuple[str, bool] | None = None

    @classmethod
    def from_config(cls, config: dict, where: str, *, dtype: np.dtype, v2: bool) -> "Codec":
        """Build from a metadata configuration; ``where`` locates it for error messages."""
        check_keys(config, (), where)
        return cls()

    @classmethod
    def from_spec(cls, spec: CodecSpec, dtype: DataType | np.dtype | str, shape: Sequence[int],
                  *, where: str = "codec") -> "Codec":
        config = dict(spec.configuration or {})
        if spec.v2 or spec.name.startswith("numcodecs."):
            config.pop("id", None)
        obj = cls.from_config(config, f"{where}.configuration", dtype=as_numpy_dtype(dtype),
                              v2=spec.v2)
        object.__setattr__(obj, "_as", (spec.name, spec.v2))
        return obj

    def configuration(self) -> dict[str, Any]:
        return {}

    def to_spec(self, *, v2: bool | None = None) -> CodecSpec:
        """The metadata form. ``v2=None`` keeps the form the codec was read in (v3 for codecs
        built in Python); ``v2=True`` names it by its numcodecs id."""
        if v2 is None:
            name, v2 = self._as if self._as is not None else (self.name, False)
        elif v2:
            if self.codec_id is None:
                raise CodecError(f"the {self.name} codec has no Zarr v2 (numcodecs) form")
            name = self.codec_id
        else:
            name = self.name
        return CodecSpec(name=name, configuration=self.configuration(), v2=v2)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.configuration().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.configuration() == self.configuration()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(sorted(self.configuration().items()))))


class ArrayToArrayCodec(Codec):
    kind = "array->array"

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        """The (dtype, shape) this codec produces from ``(dtype, shape)``; raises if unusable."""
        return dtype, shape

    def is_identity(self, dtype: np.dtype, shape: tuple[int, ...]) -> bool:
        return False

    def encode(self, arr: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...],
               where: str) -> np.ndarray:
        """Undo ``encode``: ``arr`` is the encoded array; return one of ``dtype``/``shape``."""
        raise NotImplementedError


class ArrayToBytesCodec(Codec):
    kind = "array->bytes"

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str) -> int | None:
        """The exact encoded size in bytes, or None when it depends on the values."""
        raise NotImplementedError

    def encode(self, arr: np.ndarray) -> Buffer:
        raise NotImplementedError

    def decode(self, data: Buffer, dtype: np.dtype, shape: tuple[int, ...],
               where: str) -> np.ndarray:
        """An array of ``shape`` whose values are ``dtype`` (byte order may differ; may be a
        read-only view of ``data``)."""
        raise NotImplementedError

    def decode_into(self, data: Buffer, out: np.ndarray, where: str) -> None:
        np.copyto(out, self.decode(data, out.dtype, out.shape, where), casting="unsafe")


class BytesToBytesCodec(Codec):
    kind = "bytes->bytes"
    #: ``decode_into`` writes its output straight into the destination without scratch
    direct_into: ClassVar[bool] = False
    #: ``decode`` returns a view of its input (checksums); such stages cost no copy
    view_only: ClassVar[bool] = False
    #: the largest input ``encode`` accepts, or None
    max_input: ClassVar[int | None] = None

    def bind(self, dtype: np.dtype) -> "BytesToBytesCodec":
        """This codec with defaults taken from the item type of the serialised chunk
        (blosc typesize, shuffle element size); ``self`` when there is nothing to fill in."""
        return self

    def encoded_size(self, n: int | None) -> int | None:
        """Exact encoded size for an input of ``n`` bytes, when it does not depend on values."""
        return None

    def max_encoded_size(self, n: int | None) -> int | None:
        """An upper bound of the encoded size for an input of ``n`` bytes."""
        return self.encoded_size(n)

    def encode(self, data: Buffer) -> Buffer:
        raise NotImplementedError

    def decode(self, data: Buffer, expected: int | None, limit: int, where: str) -> Buffer:
        """Decode ``data``; the output must be exactly ``expected`` bytes when that is known,
        else at most ``limit`` bytes. Raise CodecError (mentioning ``where``) otherwise."""
        raise NotImplementedError

    def decode_into(self, data: Buffer, dst: np.ndarray, where: str) -> None:
        """Decode into the writable uint8 buffer ``dst`` whose length is the exact size."""
        out = self.decode(data, dst.shape[0], dst.shape[0], where)
        dst[:] = np.frombuffer(out, dtype=np.uint8)


def as_u8(data: Buffer) -> memoryview:
    """A flat unsigned-byte view of a C-contiguous buffer (no copy)."""
    mv = data if isinstance(data, memoryview) else memoryview(data)
    if mv.format == "B" and mv.ndim == 1:
        return mv
    if not mv.c_contiguous:
        raise CodecError(f"expected a C-contiguous buffer, found a strided {type(data).__name__}")
    return mv.cast("B") if mv.ndim <= 1 or mv.nbytes else memoryview(b"")


def check_size(where: str, codec: str, got: int, expected: int | None, limit: int) -> None:
    """Refuse a decoded size ``got`` (e.g. read from a header) that is not the expected one."""
    if expected is not None:
        if got != expected:
            raise CodecError(f"{where}: {codec} header claims {got} decoded bytes, "
                             f"expected {expected}")
    elif got > limit:
        raise CodecError(f"{where}: {codec} header claims {got} decoded bytes, "
                         f"more than the limit of {limit}")
