"""The three codec kinds and what every codec shares.

A codec object is an immutable configuration (what ``create_array`` takes and metadata holds):
as zarr-python's (frozen dataclasses), it refuses assignment once made, with
:class:`~zarrx.errors.FrozenMetadataError` (also the ``FrozenInstanceError`` zarr-python's
raise); its ``__init__`` (a registered codec's too) sets its attributes as it likes.
Its configuration is checked by the codec's one validator (:mod:`zarrx.metadata.codec_checks`),
whether it is built in Python or read from metadata. The plan binds it to the dtype and shape it
sees; those are passed to every call, so one codec object serves any number of arrays.

Array->array codecs (``ArrayToArrayCodec``) map a chunk to another array; array->bytes codecs
(``ArrayToBytesCodec``) serialise it; bytes->bytes codecs (``BytesToBytesCodec``) compress or
checksum the serialised bytes. Decoders never allocate from a size read out of the data without
bounding it by the size the plan expects.

Errors: a codec's chunk-time methods (``encode``, ``decode``, ``decode_into``) know nothing of
where the chunk is stored. Their CodecError messages start with the codec's name
(``"zstd: ..."``); chunk I/O adds the array, the stored key and the inner chunk as fields of the
same exception (:meth:`zarrx.errors.ZarrError.at`). Methods that read metadata (``from_spec``,
``resolve``) take ``where``, the place of the codec in the metadata document; its configuration
fields are named with :func:`config_field` (``<where>.configuration.<field>`` in a v3 codec
object, ``<where>.<field>`` in a v2 one, whose :class:`V2Place` says so).
"""
from __future__ import annotations

import json
from abc import ABCMeta
from collections.abc import Callable
from enum import Enum
from typing import Any, ClassVar, Sequence

import numpy as np

from zarrx.errors import CodecArgumentTypeError, CodecError
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_table import check_codec, codec_info, numcodecs_json
from zarrx.metadata.model import CodecSpec, DataType

__all__ = ["Codec", "ArrayToArrayCodec", "ArrayToBytesCodec", "BytesToBytesCodec",
           "spec_json", "as_numpy_dtype", "check_keys", "Buffer", "V2Place", "config_place",
           "config_field"]

Buffer = Any   # any C-contiguous object exporting the buffer protocol


def spec_json(spec: CodecSpec) -> str:
    """The codec as it reads in metadata, for error messages."""
    doc: dict[str, Any] = {"name": spec.name}
    if spec.configuration:
        doc["configuration"] = spec.configuration
    try:
        return json.dumps(doc, sort_keys=False, default=repr)
    except (TypeError, ValueError):  # pragma: no cover - configuration is JSON by construction
        return repr(doc)


class V2Place(str):
    """The place of a codec in a v2 ``.zarray`` (``a/.zarray filters[0]``): a numcodecs codec
    object, whose configuration fields sit beside its ``id``."""


def config_place(where: str) -> str:
    """Where the configuration fields of the codec at ``where`` sit: its ``configuration``
    member in a v3 codec object, the codec object itself in a v2 one (:class:`V2Place`)."""
    return where if isinstance(where, V2Place) else f"{where}.configuration"


def config_field(where: str, field: str) -> str:
    """How messages name configuration field ``field`` of the codec at ``where``."""
    return f"{config_place(where)}.{field}"


def as_numpy_dtype(dtype: DataType | np.dtype | str) -> np.dtype:
    if isinstance(dtype, DataType):
        return dtype.numpy
    return np.dtype(dtype)


def check_keys(config: dict, allowed: Sequence[str], where: str) -> None:
    """For codecs without a validator in the codec table (registered codecs)."""
    extra = sorted(set(config) - set(allowed))
    if extra:
        want = ", ".join(repr(a) for a in allowed) or "no fields"
        raise CodecError(f"{where}.{extra[0]}: unknown field; expected only {want}")


def native(dt: np.dtype) -> np.dtype:
    """``dt`` in native byte order (structured types included)."""
    return dt.newbyteorder("=") if dt.byteorder not in ("=", "|") else dt


def casts_alike(arr: np.ndarray, to: np.dtype) -> bool:
    """Whether numpy's cast of ``arr`` to ``to`` gives each item the value it gives that item
    cast alone, wherever it lies in an array: casts between integers (modulo the width), from
    integers or bools, between floats, complex to complex and anything to bool; and floats to
    integers when every value is finite and truncates into ``to``'s range (others are undefined
    in C: numpy's vector loop and its scalar loop for the last items may give different
    bytes). Other casts (to or from dates, complex to real) are not vouched for."""
    src, dst = arr.dtype.kind, to.kind
    if src in "biu" and dst in "biufc" or dst == "b" or src == dst == "c" \
            or src == "f" and dst in "fc":
        return True
    if src != "f" or dst not in "iu":
        return False
    if not arr.size:
        return True
    bits = 8 * to.itemsize - (dst == "i")
    lo, hi = float(arr.min()), float(arr.max())     # NaN when any item is
    return lo >= (-2.0 ** bits if dst == "i" else 0.0) and hi < 2.0 ** bits


# -- codec kinds -------------------------------------------------------------------------------

#: the key of a codec object's ``__dict__`` while it is made (its ``__init__`` runs)
_BUILDING = "_zarrx_building"


class _Immutable(ABCMeta):
    """The type of codec classes: an object of one takes attributes while it is made (in its
    ``__init__``, whatever defines it: a dataclass's too), and refuses them afterwards
    (:meth:`Codec.__setattr__`). Copies and unpickling set the state without assigning.

    An ``ABCMeta``, so that a codec class may also derive from an abstract class (``abc.ABC``,
    ``numcodecs.abc.Codec``: a type must be the metaclasses of all its bases); ``isinstance``
    and ``issubclass`` against a codec class stay ``type``'s own (no ``register``): codec
    classes are checked on every chunk's path."""

    __instancecheck__ = type.__instancecheck__
    __subclasscheck__ = type.__subclasscheck__

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        obj = cls.__new__(cls, *args, **kwargs)
        if isinstance(obj, cls):
            held = obj.__dict__
            held[_BUILDING] = True
            try:
                obj.__init__(*args, **kwargs)
            finally:
                held.pop(_BUILDING, None)
        return obj

    @property
    def __signature__(cls) -> Any:
        """The class's signature as ``inspect`` (``help``, editors) shows it: its ``__init__``'s,
        without ``self``, never this ``__call__``'s ``(*args, **kwargs)``."""
        import inspect
        sig = inspect.signature(cls.__init__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])


class Codec(metaclass=_Immutable):
    """Base of all codecs. Subclasses set ``name`` (the v3 name written by ``to_spec``)."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    #: the spec name the codec was read under, when not ``name`` (``numcodecs.gzip``...)
    _as: str | None = None

    def __setattr__(self, field: str, value: Any) -> None:
        if _BUILDING in self.__dict__:          # being made
            object.__setattr__(self, field, value)
        else:
            _refused(self, f"cannot assign to field {field!r}")

    def __delattr__(self, field: str) -> None:
        if _BUILDING in self.__dict__:
            object.__delattr__(self, field)
        else:
            _refused(self, f"cannot delete field {field!r}")

    def _configure(self, name: str | None = None, **kwargs: Any) -> None:
        """Check the keyword arguments of ``__init__`` with the validator of ``name`` (default:
        the codec's own) and keep the parsed values as attributes. None means "not given"; a
        member of an enumeration (zarr-python's ``BloscShuffle.shuffle``) is its value."""
        kwargs = {k: v.value if isinstance(v, Enum) else v for k, v in kwargs.items()}
        conf = {k: v for k, v in kwargs.items() if v is not None}
        where = Loc(f"zarrx.codecs.{type(self).__name__}", error=CodecError,
                    type_error=CodecArgumentTypeError)
        values = check_codec(name or self.name, conf, where)
        for k, v in (kwargs if values is None else values).items():
            object.__setattr__(self, k, v)

    @classmethod
    def from_config(cls, config: dict, where: str) -> "Codec":
        """Build from a metadata configuration, for codecs the codec table does not check
        (registered codecs override this); ``where`` locates it for error messages."""
        check_keys(config, (), where)
        return cls()

    @classmethod
    def from_spec(cls, spec: CodecSpec, dtype: Any = None, shape: Sequence[int] = (),
                  *, where: str = "codec") -> "Codec":
        """Build from a codec spec, its configuration checked by the codec's validator."""
        config = dict(spec.configuration or {})
        key, sep, path = where.rpartition(" ")        # "<array> codecs[<i>]"
        loc = Loc(key, path, error=CodecError) if sep else Loc(where, error=CodecError)
        values = check_codec(spec.name, config,
                             loc if isinstance(where, V2Place) else loc / "configuration")
        obj = cls(**values) if values is not None else \
            cls.from_config(config, config_place(where))
        if spec.name != obj.name:
            object.__setattr__(obj, "_as", spec.name)
        return obj

    def configuration(self) -> dict[str, Any]:
        return {}

    def to_spec(self) -> CodecSpec:
        """The metadata form, under the name the codec was read with (``name`` for codecs built
        in Python)."""
        return CodecSpec(name=self._as or self.name, configuration=self.configuration())

    def to_dict(self) -> dict[str, Any]:
        """The codec as metadata holds it, ``{"name": ..., "configuration": {...}}`` (zarr-python's
        ``Codec.to_dict``)."""
        from zarrx.metadata.codecs import codec_json
        from zarrx.metadata.frozen import thaw_json
        return thaw_json(codec_json(self.to_spec()))     # (a new dict, the caller's to change)

    @property
    def codec_id(self) -> str:
        """The numcodecs id (``"zstd"``, ``"blosc"``, ...): zarr-python hands out numcodecs
        codecs for Zarr v2 arrays. No such attribute for a codec Zarr v2 has no form of
        (``bytes``, sharding), so ``hasattr(codec, "codec_id")`` tells numcodecs-like codecs."""
        name = self._as or self.name
        if name.startswith("numcodecs."):
            return name[len("numcodecs."):]
        info = codec_info(name)
        if info is None or info.numcodecs_id is None:
            raise AttributeError(f"{type(self).__name__} codec {name!r} has no numcodecs id "
                                 f"(Zarr v2 has no form of it)")
        return info.numcodecs_id

    @property
    def get_config(self) -> Callable[[], dict[str, Any]]:
        """numcodecs' ``Codec.get_config()``: the numcodecs form, ``{"id": ..., ...}``, as a
        Zarr v2 ``.zarray`` holds it. Like ``codec_id``, no such attribute for a codec Zarr v2
        has no form of (so a numcodecs codec compares unequal to it, rather than failing)."""
        self.codec_id                   # noqa: B018 - AttributeError when there is none
        return self._numcodecs_config

    def _numcodecs_config(self) -> dict[str, Any]:
        return numcodecs_json(self.to_spec(), Loc(f"zarrx.codecs.{type(self).__name__}",
                                                  error=CodecError))

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.configuration().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Codec):
            return NotImplemented       # a numcodecs codec compares get_config() with ours
        return type(other) is type(self) and other.configuration() == self.configuration()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(sorted(self.configuration().items()))))


def _refused(codec: Codec, what: str) -> None:
    from zarrx.errors import FrozenMetadataError
    name = type(codec).__name__
    raise FrozenMetadataError(f"{what} of {name}: a codec object is immutable, as "
                              f"zarr-python's: make another ({name}(...) with the arguments "
                              f"to change)")


class ArrayToArrayCodec(Codec):
    kind = "array->array"

    def bind(self, dtype: np.dtype, shape: tuple[int, ...]) -> "ArrayToArrayCodec":
        """This codec with the fields that depend on the chunk it sees filled in (a filter's
        ``dtype``, a transpose's ``"F"``); ``self`` when there is nothing to fill in."""
        return self

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str
                ) -> tuple[np.dtype, tuple[int, ...]]:
        """The (dtype, shape) this codec produces from ``(dtype, shape)``; raises if unusable."""
        return dtype, shape

    def is_identity(self, dtype: np.dtype, shape: tuple[int, ...]) -> bool:
        return False

    def encode(self, arr: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def decode(self, arr: np.ndarray, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """Undo ``encode``: ``arr`` is the encoded array; return one of ``dtype``/``shape``."""
        raise NotImplementedError


class ArrayToBytesCodec(Codec):
    kind = "array->bytes"

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str) -> int | None:
        """The exact encoded size in bytes, or None when it depends on the values."""
        raise NotImplementedError

    def encode(self, arr: np.ndarray) -> Buffer:
        raise NotImplementedError

    def decode(self, data: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """An array of ``shape`` whose values are ``dtype`` (byte order may differ; may be a
        read-only view of ``data``)."""
        raise NotImplementedError

    def decode_into(self, data: Buffer, out: np.ndarray) -> None:
        np.copyto(out, self.decode(data, out.dtype, out.shape), casting="unsafe")


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

    def encode_many(self, bufs: Any, skip: Any = None) -> list[bytes | None]:
        """``encode`` of each buffer of ``bufs`` (a sequence, or the rows of a 2-D uint8 array)
        as ``bytes``, None for a None buffer and for those ``skip`` (a bool array) marks.
        Codecs with a batch kernel encode them all in one call."""
        bufs, skip = many_args(self.name, bufs, skip)
        return [None if s or b is None else bytes(self.encode(b))
                for b, s in zip(bufs, _flags(bufs, skip))]

    def decode(self, data: Buffer, expected: int | None, limit: int) -> Buffer:
        """Decode ``data``; the output must be exactly ``expected`` bytes when that is known,
        else at most ``limit`` bytes. Raise CodecError (``"<codec>: ..."``) otherwise."""
        raise NotImplementedError

    def check_stored(self, data: memoryview, expected: int | None) -> memoryview | None:
        """What can be told of ``data`` decoding to exactly ``expected`` bytes without decoding
        it or allocating anything (a header's sizes, the largest expansion the format allows):
        raises CodecError as ``decode`` would. Returns the bytes the next codec decodes when
        decoding them is only a view (checksums: stripped, not verified), else None.
        ``expected`` is None (not known) only for ``view_only`` codecs."""
        return None

    def decode_into(self, data: Buffer, dst: np.ndarray) -> None:
        """Decode into the writable C-contiguous buffer ``dst`` (its bytes: see
        :func:`out_u8`) whose length is the exact size."""
        dst = out_u8(self.name.rpartition(".")[2], dst)
        out = self.decode(data, dst.shape[0], dst.shape[0])
        dst[:] = np.frombuffer(out, dtype=np.uint8)


def _flags(bufs: Any, skip: np.ndarray | None) -> list:
    """``skip`` (checked by :func:`many_args`) as a list, all False when None."""
    return [False] * len(bufs) if skip is None else skip.tolist()


def rows_by_kernel(bufs: np.ndarray, skip: np.ndarray | None, kernel: Callable[..., bytes],
                   args: tuple, message: Callable[[Any], str]) -> list[bytes | None]:
    """``kernel(row, *args)`` of each row of ``bufs`` that ``skip`` does not mark (both
    checked by :func:`many_args`), None for the others: the ``encode_many`` of a codec whose
    kernel takes one buffer; a ``KernelStatus`` raised becomes ``CodecError(message(it))``."""
    from zarrx.codecs.status import KernelStatus     # kernels' status: loaded with them
    try:
        return [None if s else kernel(b, *args) for b, s in zip(bufs, _flags(bufs, skip))]
    except KernelStatus as st:
        raise CodecError(message(st)) from None


def spans_by_kernel(src: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                    rows: np.ndarray, kernel: Callable[..., Any], args: tuple = ()
                    ) -> tuple[int, None] | None:
    """``kernel(src[s:s + n], rows[i], *args)`` for chunk ``i`` at start ``s`` (-1: none)
    and length ``n``: the ``decode_many`` of a codec whose kernel decodes one buffer into
    another. None when every chunk decodes, else ``(i, None)`` for the first that does not
    (its ``decode_into`` says why)."""
    from zarrx.codecs.status import KernelStatus     # kernels' status: loaded with them
    i = 0
    try:
        for i, s, n in zip(range(len(starts)), starts.tolist(), lengths.tolist()):
            if s >= 0:
                kernel(src[s:s + n], rows[i], *args)
    except KernelStatus:
        return i, None
    return None


def many_args(name: str, bufs: Any, skip: Any) -> tuple[Any, np.ndarray | None]:
    """The arguments of ``encode_many`` checked: a 2-D array's rows become C-contiguous
    unsigned bytes (its C-order bytes, copied if its layout or dtype is another), ``skip``
    (None, or flags) a 1-d bool array of one flag per buffer. Raises CodecError otherwise."""
    codec = name.rpartition(".")[2]
    if isinstance(bufs, np.ndarray) and bufs.ndim == 2 \
            and (bufs.dtype != np.uint8 or not bufs.flags.c_contiguous):
        if bufs.dtype.hasobject:
            raise CodecError(f"{codec}: encode_many: rows of {bufs.dtype} items hold Python "
                             f"objects; expected rows of bytes")
        bufs = np.ascontiguousarray(bufs).view(np.uint8)
    if skip is None:
        return bufs, None
    try:
        flags = np.ascontiguousarray(skip, dtype=bool)
    except (TypeError, ValueError) as exc:
        raise CodecError(f"{codec}: encode_many: skip: expected one flag per buffer, found "
                         f"{type(skip).__name__}") from exc
    if flags.shape != (len(bufs),):
        raise CodecError(f"{codec}: encode_many: skip holds {flags.size} flags (shape "
                         f"{flags.shape}) for {len(bufs)} buffers; expected one per buffer")
    return bufs, flags


def as_u8(data: Buffer) -> memoryview:
    """A flat unsigned-byte view of a C-contiguous buffer (no copy)."""
    mv = data if isinstance(data, memoryview) else memoryview(data)
    if mv.format == "B" and mv.ndim == 1:
        return mv
    if not mv.c_contiguous:
        raise CodecError(f"expected a C-contiguous buffer, found a strided {type(data).__name__}")
    return mv.cast("B") if mv.ndim <= 1 or mv.nbytes else memoryview(b"")


_U8 = np.dtype(np.uint8)


def out_u8(codec: str, dst: Any) -> Any:
    """The bytes of ``dst``, where ``decode_into`` writes, as a flat writable uint8 array (a
    view, no copy); a CodecError naming ``codec`` when ``dst`` is not a writable C-contiguous
    buffer, which the kernels would refuse with a bare ValueError or BufferError."""
    if type(dst) is np.ndarray and dst.dtype is _U8 and dst.ndim == 1 \
            and dst.flags.c_contiguous and dst.flags.writeable:
        return dst                                  # as the codec pipeline hands it over
    try:
        mv = memoryview(dst)
    except TypeError:
        raise CodecError(f"{codec}: expected a writable buffer for the decoded data, found "
                         f"{type(dst).__name__}") from None
    if mv.readonly or not mv.c_contiguous:
        raise CodecError(f"{codec}: expected a writable C-contiguous buffer for the decoded "
                         f"data, found a {'read-only' if mv.readonly else 'strided'} "
                         f"{type(dst).__name__}")
    if isinstance(dst, np.ndarray):
        return dst.reshape(-1).view(np.uint8)       # a view: dst is C-contiguous
    return np.frombuffer(dst, dtype=np.uint8)       # writable, as dst is


def check_size(codec: str, got: int, expected: int | None, limit: int) -> None:
    """Refuse a decoded size ``got`` (e.g. read from a header) that is not the expected one."""
    if expected is not None:
        if got != expected:
            raise CodecError(f"{codec} header claims {got} decoded bytes, expected {expected}")
    elif got > limit:
        raise CodecError(f"{codec} header claims {got} decoded bytes, more than the limit of "
                         f"{limit}")
