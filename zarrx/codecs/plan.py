"""CodecPipeline: a chunk's codec list resolved once into a frozen, executable plan.

``CodecPipeline.resolve`` takes the codecs checked and bound by :mod:`zarrx.codecs.chain`
(order array->array*, exactly one array->bytes, bytes->bytes*; every codec built for the dtype
and shape it will see, (dtype, shape) threaded through the array->array stages), elides no-op
stages (identity transpose; native-endian ``bytes`` costs nothing) and works out the exact
size each bytes->bytes decoder must produce. After that, per-chunk work is only
``decode``/``encode``.

``decode(data, out)`` writes into the caller's C-contiguous buffer. When the chain is
``bytes`` (+ checksums) (+ one compressor), the compressor decompresses straight into ``out``
(``direct``), and a non-native byte order is fixed by an in-place swap. Otherwise the stages run
into scratch buffers and the last step (byte swap and/or transposition included) is a single
copy into ``out``.

``complete_specs`` (:mod:`zarrx.codecs.chain`, re-exported here) binds a new array's codec
list the same way and gives it back as metadata should hold it: checked against the chunks it
will see, every chunk-dependent field filled in.

Errors: resolving names its place in the metadata (``<array path> codecs[1].configuration``,
``/`` for the root array; a shard's inner codecs as ``<array path>
codecs[0].configuration.codecs[1]``, given by the caller). Decoding and encoding know nothing
of where a chunk is stored: their CodecErrors carry no location unless the caller passes the
chunk's ``key`` (then it is set as the error's ``key`` field); chunk I/O sets the array, key
and inner chunk itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from zarrx._gather import gather_bytes, gather_into, gather_many
from zarrx.codecs.base import (ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec,
                               as_numpy_dtype, as_u8, native)
from zarrx.codecs.chain import bind_chain, codec_place, complete_specs, stored_bound
from zarrx.errors import CodecError, ZarrError
from zarrx.metadata.dtypes import value_bits_row
from zarrx.metadata.model import CodecSpec, DataType

__all__ = ["CodecPipeline", "CHECK_FIRST_BYTES", "MAX_VARIABLE_CHUNK", "complete_specs",
           "stored_bound"]

#: Largest decoded size accepted for a chunk whose size depends on its values (vlen strings)
MAX_VARIABLE_CHUNK = 1 << 30
#: Chunks of at least this many bytes decoded have their stored bytes checked against that size
#: before a buffer of it is allocated (:mod:`zarrx.codecs.plan_check`)
CHECK_FIRST_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class _ArrayStage:
    codec: ArrayToArrayCodec
    dtype: np.dtype               # what the codec receives on encode (and returns on decode)
    shape: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _BytesStage:
    codec: BytesToBytesCodec
    size: int | None              # exact input size on encode (= output size on decode)
    bound: int | None             # an upper bound of it


@dataclass(frozen=True, slots=True, eq=False)
class CodecPipeline:
    """The executable plan of one array's chunk codecs; see the module docstring."""

    dtype: np.dtype                       # the chunk's in-memory (native) dtype
    chunk_shape: tuple[int, ...]
    nbytes: int                           # decoded chunk size in memory (0 for object chunks)
    direct: bool                          # decode writes straight into ``out``, no scratch
    max_encoded_size: int | None          # bound of ``len(encode(chunk))``, None if unbounded
    #: the most bytes a stored chunk may hold: ``max_encoded_size``, or (chunks whose size
    #: depends on their values, codecs that declare no bound) :func:`stored_bound` over
    #: ``variable_limit``; a longer stored object is refused unread
    stored_limit: int
    key: str
    a2a: tuple[_ArrayStage, ...]
    a2b: ArrayToBytesCodec
    a2b_dtype: np.dtype
    a2b_shape: tuple[int, ...]
    b2b: tuple[_BytesStage, ...]
    swap: bool                            # direct path: byte-swap ``out`` in place after decode
    variable_limit: int = MAX_VARIABLE_CHUNK
    raw: bool = False                     # see ``_is_raw``
    #: for a type holding values narrower than their byte (``int4``, or a structured type
    #: with such fields), one item's mask of the bits holding values (see ``value_bits_row``):
    #: decoding clears the others, which writers may set (tensorstore sign-extends) and
    #: readers ignore
    mask: np.ndarray | None = None
    #: the size of the items the ``bytes`` codec serialises (None for another array->bytes codec)
    serialised: int | None = None

    @classmethod
    def resolve(cls, codecs: Sequence[CodecSpec | Codec], dtype: DataType | np.dtype | str,
                chunk_shape: Sequence[int], *, key: str = "",
                variable_limit: int = MAX_VARIABLE_CHUNK,
                where: Sequence[str] | None = None,
                names: Sequence[str] | None = None) -> "CodecPipeline":
        """Build the plan for chunks of ``chunk_shape`` and ``dtype``; ``key`` (the array path)
        locates errors, or ``where`` (each codec's place in the v2 ``.zarray`` read, such as
        ``a/.zarray filters[0]``, where a codec's configuration fields sit beside its ``id``),
        or ``names`` (each codec's place in a v3 document, such as
        ``a codecs[0].configuration.codecs[1]`` for the inner chunks of a shard).
        ``variable_limit`` bounds the decoded size of stages whose size depends on the values
        (variable-length chunks)."""
        base = native(as_numpy_dtype(dtype))      # chunks in memory are native byte order
        chunk = tuple(int(s) for s in chunk_shape)
        a2a: list[_ArrayStage] = []
        b2b: list[_BytesStage] = []
        a2b: ArrayToBytesCodec | None = None
        a2b_dtype, a2b_shape = base, chunk
        size: int | None = None
        bound: int | None = None
        serialised: int | None = None
        for i, (codec, dt, shape) in enumerate(bind_chain(codecs, base, chunk, key, where,
                                                          names)):
            at = names[i] if names is not None else codec_place(key, i, where)
            if isinstance(codec, ArrayToArrayCodec):
                if not codec.is_identity(dt, shape):
                    a2a.append(_ArrayStage(codec, dt, shape))
            elif isinstance(codec, ArrayToBytesCodec):
                a2b, a2b_dtype, a2b_shape = codec, dt, shape
                size = bound = serialised = codec.resolve(dt, shape, at)
            else:
                assert isinstance(codec, BytesToBytesCodec)
                b2b.append(_BytesStage(codec, size, bound))
                size, bound = codec.encoded_size(size), codec.max_encoded_size(bound)
        assert a2b is not None
        from zarrx.codecs.bytes_ import Bytes
        is_bytes = isinstance(a2b, Bytes)
        direct = (not a2a and is_bytes and all(s.codec.view_only for s in b2b[1:])
                  and (not b2b or b2b[0].codec.direct_into or b2b[0].codec.view_only))
        nbytes = 0 if base.hasobject else int(np.prod(chunk, dtype=np.int64)) * base.itemsize
        stored = stored_bound([s.codec for s in b2b],
                              variable_limit if serialised is None else serialised)
        plan = cls(dtype=base, chunk_shape=chunk, nbytes=nbytes, stored_limit=stored,
                   direct=direct, max_encoded_size=bound, key=key, a2a=tuple(a2a), a2b=a2b,
                   a2b_dtype=a2b_dtype, a2b_shape=a2b_shape, b2b=tuple(b2b),
                   swap=is_bytes and a2b.swaps(a2b_dtype),  # type: ignore[attr-defined]
                   variable_limit=variable_limit, mask=value_bits_row(base),
                   serialised=serialised if is_bytes else None)
        object.__setattr__(plan, "raw", plan._is_raw())
        return plan

    # -- introspection ---------------------------------------------------------------------
    @property
    def codecs(self) -> tuple[Codec, ...]:
        """The codecs that run, in encode order (elided no-ops left out)."""
        return (*(s.codec for s in self.a2a), self.a2b, *(s.codec for s in self.b2b))

    def __repr__(self) -> str:
        chain = " -> ".join(repr(c) for c in self.codecs)
        return (f"CodecPipeline({chain}; {self.dtype} {self.chunk_shape}"
                f"{', direct' if self.direct else ''})")

    # -- decode ----------------------------------------------------------------------------
    def _check_out(self, out: np.ndarray) -> None:
        if not isinstance(out, np.ndarray) or out.shape != self.chunk_shape \
                or out.dtype != self.dtype:
            got = (f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray)
                   else type(out).__name__)
            raise CodecError(f"decode target must be a {self.dtype} array of shape "
                             f"{self.chunk_shape}, found {got}")
        if not out.flags.c_contiguous or not out.flags.writeable:
            raise CodecError("decode target must be a writable C-contiguous array")

    def decode(self, data: Any, out: np.ndarray, *, key: str = "") -> None:
        """Decode one stored chunk into ``out`` (C-contiguous, ``chunk_shape``, ``dtype``);
        ``key``, when given, is set as the ``key`` of any error."""
        try:
            self._check_out(out)
            buf = as_u8(data)
            if self.direct:
                self._decode_direct(buf, out)
            else:
                for st in reversed(self.b2b):
                    buf = st.codec.decode(buf, st.size, self._limit(st))
                if not self.a2a:
                    self.a2b.decode_into(buf, out)
                else:
                    found = memoryview(buf).nbytes
                    if self.serialised is not None and found != self.serialised:
                        raise self.wrong_size(found)   # named by the chunk's own shape
                    arr = self.a2b.decode(buf, self.a2b_dtype, self.a2b_shape)
                    for st in reversed(self.a2a):
                        arr = st.codec.decode(arr, st.dtype, st.shape)
                    np.copyto(out, arr, casting="unsafe")   # swap and/or transposition at once
            if self.mask is not None and out.size:
                items = out.reshape(-1).view(np.uint8).reshape(-1, self.mask.size)
                np.bitwise_and(items, self.mask, out=items)
        except ZarrError as exc:
            exc.at(key=key or None)
            raise

    def _decode_direct(self, buf: memoryview, out: np.ndarray) -> None:
        for st in reversed(self.b2b[1:]):           # checksums: verify, strip (views)
            buf = st.codec.decode(buf, st.size, self._limit(st))
        dst = out.reshape(-1).view(np.uint8)
        if self.b2b and not self.b2b[0].codec.view_only:
            self.b2b[0].codec.decode_into(buf, dst)
        else:
            if self.b2b:
                st = self.b2b[0]
                buf = as_u8(st.codec.decode(buf, st.size, self._limit(st)))
            if buf.nbytes != self.nbytes:
                raise self.wrong_size(buf.nbytes)
            dst[:] = np.frombuffer(buf, dtype=np.uint8)
        if self.swap:
            out.byteswap(inplace=True)

    def _is_raw(self) -> bool:
        """The stored bytes are the chunk's native C-order bytes (after verifying and stripping
        checksums): readers may view them in place and writers may gather straight into them."""
        return self.direct and not self.swap and all(s.codec.view_only for s in self.b2b) \
            and not self.dtype.hasobject and self.mask is None

    def wrong_size(self, found: int) -> CodecError:
        """The error for decoded (raw: stored) bytes of ``found`` bytes, not the chunk's; with
        array->array codecs before ``bytes``, for its serialised bytes."""
        if self.a2a:
            from zarrx.codecs.plan_check import wrong_serialised
            return wrong_serialised(self, found)
        return CodecError(f"expected {self.nbytes} bytes for a chunk of shape "
                          f"{self.chunk_shape} and data type {self.dtype}, found {found}")

    def view(self, data: Any, *, key: str = "") -> np.ndarray:
        """A read-only array over a raw plan's stored bytes (checksums verified), no copy;
        ``key``, when given, is set as the ``key`` of any error."""
        try:
            buf = as_u8(data)
            for st in reversed(self.b2b):
                buf = st.codec.decode(buf, st.size, self._limit(st))
            if buf.nbytes != self.nbytes:
                raise self.wrong_size(buf.nbytes)
        except ZarrError as exc:
            exc.at(key=key or None)
            raise
        return np.frombuffer(buf, dtype=self.dtype).reshape(self.chunk_shape)

    @property
    def gather_size(self) -> int | None:
        """For a raw plan whose encoding a single gather produces (``bytes``, optionally a
        trailing ``crc32c``): the encoded size, fixed for every chunk. Else None."""
        if not self.raw:
            return None
        if not self.b2b:
            return self.nbytes
        if self.gather_crc32c():
            return self.nbytes + 4
        return None

    def gather_crc32c(self) -> bool:
        """Whether the gathered encoding ends with a ``crc32c`` (see :attr:`gather_size`)."""
        return len(self.b2b) == 1 and self.b2b[0].codec.name == "crc32c" \
            and self.b2b[0].codec.location == "end"     # type: ignore[attr-defined]

    def encode_into(self, chunk: np.ndarray, dst: Any, *, fill: bytes | None = None) -> bool:
        """Encode ``chunk`` (any strides) straight into ``dst`` (``gather_size`` writable
        bytes); True when ``fill`` is given and the chunk is nothing but that item."""
        return gather_into(chunk, dst, self.gather_crc32c(), fill)

    def encode_many(self, chunks: list[np.ndarray], dsts: list[Any], *,
                    fill: bytes | None = None) -> list[bool]:
        """:meth:`encode_into` for each pair, every gather in one GIL-free section."""
        return gather_many(chunks, dsts, self.gather_crc32c(), fill)

    def encode_gathered(self, chunk: np.ndarray, *, fill: bytes | None = None) -> bytes | None:
        """``encode(chunk)`` for a raw plan, gathering ``chunk`` (any strides) straight into the
        stored bytes: one copy in all. With ``fill`` (one item's bytes), None when the chunk is
        nothing but that item (it need not be stored)."""
        if self.gather_crc32c():
            return gather_bytes(chunk, True, fill)          # data and checksum in one pass
        buf: Any = gather_bytes(chunk, False, fill)
        if buf is None:
            return None
        for st in self.b2b:
            buf = st.codec.encode(buf)
        return buf if type(buf) is bytes else bytes(buf)

    def _limit(self, st: _BytesStage) -> int:
        return st.bound if st.bound is not None else self.variable_limit

    def decode_new(self, data: Any, key: str = "") -> np.ndarray:
        """Decode one stored chunk into a new array (``key``: as for :meth:`decode`). A chunk
        of objects is made by its codec once the stored bytes are known to hold its items,
        never before: its item count comes from metadata."""
        if self.dtype.hasobject:
            try:
                buf = as_u8(data)
                for st in reversed(self.b2b):
                    buf = st.codec.decode(buf, st.size, self._limit(st))
                arr = self.a2b.decode(buf, self.a2b_dtype, self.a2b_shape)
                for ast in reversed(self.a2a):
                    arr = ast.codec.decode(arr, ast.dtype, ast.shape)
            except ZarrError as exc:
                exc.at(key=key or None)
                raise
            assert arr.shape == self.chunk_shape and arr.dtype == self.dtype
            return arr
        if self.nbytes >= CHECK_FIRST_BYTES:       # before the chunk's buffer is allocated
            from zarrx.codecs.plan_check import check_stored
            check_stored(self, data, key)
        try:
            out = np.empty(self.chunk_shape, dtype=self.dtype)
        except MemoryError:
            raise CodecError(f"cannot allocate {self.nbytes} bytes for a chunk of shape "
                             f"{self.chunk_shape} and data type {self.dtype}"
                             ).at(key=key or None) from None
        self.decode(data, out, key=key)
        return out

    # -- encode ----------------------------------------------------------------------------
    def encode(self, chunk: np.ndarray, *, key: str = "") -> bytes:
        """Encode one chunk (``chunk_shape``, any memory layout) into the bytes to store;
        ``key``, when given, is set as the ``key`` of any error."""
        try:
            chunk = np.asarray(chunk)
            if chunk.shape != self.chunk_shape:
                raise CodecError(f"expected a chunk of shape {self.chunk_shape}, found "
                                 f"{chunk.shape}")
            for st in self.b2b:                          # refuse before doing any work
                lim = st.codec.max_input
                if lim is not None and st.size is not None and st.size > lim:
                    raise CodecError(f"{st.codec.name}: a chunk of {st.size} bytes exceeds the "
                                     f"codec's limit of {lim} bytes; use smaller chunks or "
                                     f"another compressor")
            arr = chunk if chunk.dtype == self.dtype else chunk.astype(self.dtype)
            for ast in self.a2a:
                arr = ast.codec.encode(arr)
            buf = self.a2b.encode(arr)
            if self.a2b_dtype.hasobject and len(buf) > self.variable_limit:
                raise CodecError(f"{self.a2b.name}: the chunk's items take {len(buf)} bytes "
                                 f"serialised, more than the {self.variable_limit} bytes a "
                                 f"reader decodes for a chunk of variable-length items: use "
                                 f"smaller chunks")
            for st in self.b2b:
                buf = st.codec.encode(buf)
        except ZarrError as exc:
            exc.at(key=key or None)
            raise
        return buf if type(buf) is bytes else bytes(buf)

