"""Codecs zarrx does not build in, run by numcodecs: ``pcodec``, ``zfpy`` and the plugins
other packages register with numcodecs (:mod:`zarrx.metadata.numcodecs_ids` says which ids
and of what kind).

Each chunk is handed to the numcodecs codec object that ``numcodecs.registry.get_codec``
makes from the configuration, in Python and holding the GIL (numcodecs' speed, not
zarrx's). What the codec hands back is checked before it is used: a decoded chunk must hold
the chunk's item count of its data type (an array->bytes codec) or its exact byte count (a
bytes->bytes codec), else a ``CodecError`` naming the codec (chunk I/O adds the array and
the stored key); an exception the codec raises becomes such a ``CodecError`` too. A
configuration the codec's constructor refuses is a ``MetadataError`` naming where it sits.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.codecs.base import ArrayToBytesCodec, BytesToBytesCodec, Codec, config_place
from zarrx.errors import CodecError, MetadataError, ZarrError
from zarrx.metadata._util import short
from zarrx.metadata.numcodecs_ids import REFUSED
from zarrx.metadata.model import CodecSpec

__all__ = ["NumcodecsArrayToBytes", "NumcodecsBytesToBytes"]

_U8 = np.dtype(np.uint8)


def _make(cid: str, conf: dict[str, Any], where: str) -> Any:
    """numcodecs' codec object for ``{"id": cid, **conf}``. An ``id`` in the configuration
    must be ``cid`` (as zarr-python checks): numcodecs makes the codec its ``id`` names, so
    another id would run a codec the codec's name does not say (``pickle`` included)."""
    from numcodecs.registry import get_codec
    if "id" in conf and conf["id"] != cid:
        raise MetadataError(f"{where}.id: numcodecs codec {cid!r} has the id {cid!r}, found "
                            f"{short(conf['id'])}")
    try:
        codec = get_codec({**conf, "id": cid})
    except (TypeError, ValueError) as exc:
        raise MetadataError(f"{where}: numcodecs codec {cid!r} refuses the configuration "
                            f"{short(conf)}: {type(exc).__name__}: {exc}") from exc
    made = getattr(codec, "codec_id", cid)
    if made in REFUSED:             # a plugin registered under another id making one
        raise MetadataError(f"{where}: numcodecs codec {cid!r} makes a {made!r} codec, which "
                            f"zarrx never runs: {REFUSED[made]}")
    return codec


class _Numcodecs(Codec):
    """What both kinds share: the numcodecs codec, made once, and its configuration."""

    def __init__(self, codec_id: str, configuration: dict[str, Any] | None = None, *,
                 where: str = "") -> None:
        self.name = f"numcodecs.{codec_id}"
        self._config = dict(configuration or {})
        self._codec = _make(codec_id, self._config,
                            where or f"zarrx.codecs.numcodecs_plugin {codec_id}")

    @classmethod
    def from_spec(cls, spec: CodecSpec, dtype: Any = None, shape: Any = (), *,
                  where: str = "codec") -> "Codec":
        return cls(spec.name[len("numcodecs."):], dict(spec.configuration or {}),
                   where=config_place(where))

    def configuration(self) -> dict[str, Any]:
        return dict(self._config)

    def __reduce__(self) -> tuple:
        return type(self), (self.name[len("numcodecs."):], self._config)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name[len('numcodecs.'):]!r}, {self._config!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Codec):
            return NotImplemented
        return type(other) is type(self) and other.name == self.name \
            and other.configuration() == self._config

    def __hash__(self) -> int:
        return hash((self.name, repr(sorted(self._config.items()))))

    def _call(self, op: str, arg: Any) -> Any:
        try:
            return getattr(self._codec, op)(arg)
        except (ZarrError, KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:   # whatever the plugin raises: the codec failed (a
            # panic in a Rust codec, pyo3's PanicException, is a BaseException)
            raise CodecError(f"{self.name}: numcodecs {op} failed: {type(exc).__name__}: "
                             f"{exc}") from exc

    def _array(self, out: Any, op: str) -> np.ndarray:
        """What ``op`` returned as a C-contiguous array; CodecError for anything else."""
        if not isinstance(out, np.ndarray):
            try:
                out = np.frombuffer(memoryview(out).cast("B"), dtype=_U8)
            except (TypeError, ValueError):
                raise CodecError(f"{self.name}: numcodecs {op} returned "
                                 f"{type(out).__name__}; expected an array or a buffer"
                                 ) from None
        if out.dtype.hasobject:
            raise CodecError(f"{self.name}: numcodecs {op} returned an array of Python "
                             f"objects; expected numbers or bytes")
        return np.ascontiguousarray(out)

    def _bytes(self, out: Any, op: str) -> bytes:
        arr = self._array(out, op)
        return arr.tobytes()


class NumcodecsArrayToBytes(_Numcodecs, ArrayToBytesCodec):
    """An array->bytes codec run by numcodecs (``pcodec``, ``zfpy``): it encodes the chunk
    as an array of its shape and (native) data type, as zarr-python hands it over."""

    def resolve(self, dtype: np.dtype, shape: tuple[int, ...], where: str) -> int | None:
        if dtype.hasobject or dtype.fields is not None:
            raise MetadataError(f"{where}: numcodecs codec {self.codec_id!r} encodes arrays "
                                f"of numbers; found data type {dtype}")
        return None                     # the encoded size depends on the values

    def encode(self, arr: np.ndarray) -> bytes:
        if self.name == "numcodecs.zfpy":      # zfp trusts its configuration
            from zarrx.codecs.zfp_stream import check_rate
            check_rate(self.name, self._config, arr.dtype, arr.ndim)
        return self._bytes(self._call("encode", np.ascontiguousarray(arr)), "encode")

    def decode(self, data: Any, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        if self.name == "numcodecs.zfpy":      # the zfp library trusts its input
            from zarrx.codecs.zfp_stream import checked_stream
            data = checked_stream(self.name, data, dtype, shape)
        elif self.name == "numcodecs.pcodec":
            into = _pcodec_into(self.name, data, dtype, shape)
            if into is not None:
                return into
        out = self._array(self._call("decode", bytes(data)), "decode")
        n = int(np.prod(shape, dtype=np.int64))
        if out.dtype.newbyteorder("=") == dtype.newbyteorder("=") and out.size == n:
            if out.ndim > 1 and out.shape != tuple(shape):
                raise CodecError(f"{self.name}: numcodecs decode returned an array of shape "
                                 f"{out.shape}; expected the chunk's shape {tuple(shape)}")
            return out.reshape(shape)
        if out.dtype.kind in "uiV" and out.dtype.itemsize == 1 and out.ndim == 1 \
                and out.nbytes == n * dtype.itemsize:
            return out.view(dtype).reshape(shape)       # the chunk's bytes (Zarr v2's view)
        raise CodecError(f"{self.name}: numcodecs decode returned {out.size} items of "
                         f"{out.dtype} (shape {out.shape}); expected {n} items of {dtype} "
                         f"(a chunk of shape {tuple(shape)})")


def _pcodec_into(name: str, data: Any, dtype: np.dtype, shape: tuple[int, ...]
                 ) -> np.ndarray | None:
    """A pcodec chunk decoded into an array of the chunk's size (pcodec's
    ``simple_decompress_into``, which numcodecs' ``PCodec.decode(out=...)`` calls): a
    stream's header can claim millions of values more than the chunk holds, which
    ``simple_decompress`` would allocate. CodecError when the stream holds another count;
    None for a data type pcodec's function does not take (the codec decodes it then)."""
    try:
        from pcodec import standalone
    except ImportError:
        return None
    out = np.empty(int(np.prod(shape, dtype=np.int64)), dtype=dtype.newbyteorder("="))
    try:
        progress = standalone.simple_decompress_into(bytes(data), out)
    except TypeError:
        return None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:        # pcodec's errors, and a panic (a BaseException)
        raise CodecError(f"{name}: numcodecs decode failed: {type(exc).__name__}: "
                         f"{exc}") from exc
    if progress.n_processed != out.size or not progress.finished:
        more = "more" if not progress.finished else f"{progress.n_processed}"
        raise CodecError(f"{name}: numcodecs decode returned {more} items of {out.dtype}; "
                         f"expected {out.size} (a chunk of shape {tuple(shape)})")
    return out.reshape(shape)


class NumcodecsBytesToBytes(_Numcodecs, BytesToBytesCodec):
    """A bytes->bytes codec run by numcodecs: it encodes the serialised chunk as a flat
    array of bytes, as zarr-python's ``numcodecs.*`` bytes->bytes codecs hand it over."""

    def encode(self, data: Any) -> bytes:
        src = np.frombuffer(memoryview(data).cast("B"), dtype=_U8)
        return self._bytes(self._call("encode", src), "encode")

    def decode(self, data: Any, expected: int | None, limit: int) -> Any:
        out = self._array(self._call("decode", bytes(data)), "decode")
        got = out.nbytes
        if expected is not None and got != expected:
            raise CodecError(f"{self.name}: numcodecs decode returned {got} bytes, expected "
                             f"{expected}")
        if expected is None and got > limit:
            raise CodecError(f"{self.name}: numcodecs decode returned {got} bytes, more than "
                             f"the limit of {limit}")
        return out.reshape(-1).view(_U8)
