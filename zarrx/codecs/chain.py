"""A chunk's codec list checked and bound: the order (array->array*, exactly one array->bytes,
bytes->bytes*) checked, every codec built for the dtype and shape it will see, and (dtype,
shape) threaded through the array->array stages. :class:`~zarrx.codecs.plan.CodecPipeline`
makes its plan from what :func:`bind_chain` gives; :func:`complete_specs` gives a new array's
codec list back as metadata should hold it; :func:`stored_bound` is the most bytes
bytes->bytes codecs make of an input.

Errors name a codec's place in the metadata (``<array path> codecs[1].configuration``, ``/``
for the root array; a shard's inner codecs as ``<array path>
codecs[0].configuration.codecs[1]``, given by the caller; a v2 codec as its place in the
``.zarray`` read).
"""
from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np

from zarrx.codecs.base import (ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, Codec,
                               V2Place, as_numpy_dtype, native, spec_json)
from zarrx.codecs.registry import get_codec_class, lookup
from zarrx.errors import CodecError, MetadataError
from zarrx.metadata.model import CodecSpec, DataType
from zarrx.metadata.codec_table import unknown_codec

__all__ = ["bind_chain", "complete_specs", "stored_bound", "codec_place"]

#: What a bytes->bytes codec that declares no bound of its output (a registered codec that does
#: not override ``max_encoded_size``) is taken to add at most to an input of n bytes: n, plus this
UNDECLARED_OVERHEAD = 1 << 16


def stored_bound(codecs: Sequence[BytesToBytesCodec], n: int) -> int:
    """The most bytes ``codecs`` (bytes->bytes, in encode order) turn ``n`` bytes into: each
    codec's declared worst case, ``2 * n + UNDECLARED_OVERHEAD`` for one that declares none.
    Readers refuse a stored object longer than this before reading it whole."""
    for codec in codecs:
        bound = codec.max_encoded_size(n)
        n = 2 * n + UNDECLARED_OVERHEAD if bound is None else bound
    return n


def _name(key: str) -> str:
    """How resolve-time messages name the array: its path, ``/`` for the root."""
    return key or "/"


def _kind(cls: type) -> str:
    for base in (ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec):
        if issubclass(cls, base):
            return base.kind
    raise CodecError(f"codec class {cls.__name__} is not an array->array, array->bytes or "
                     f"bytes->bytes codec")


def _as_spec(c: Any, i: int, where: str) -> CodecSpec:
    if isinstance(c, CodecSpec):
        return c
    if isinstance(c, Codec):
        return c.to_spec()
    raise CodecError(f"{where} codecs[{i}]: expected a CodecSpec or codec object, found {c!r}")


def _check_order(specs: list[CodecSpec], classes: list[type], key: str,
                 names: Sequence[str] | None = None) -> None:
    """array->array*, exactly one array->bytes, bytes->bytes*; ``names`` (as messages name each
    codec: its place in a v3 document, or a :class:`V2Place` in a v2 one) takes the place of
    ``<key> codecs[i]``."""
    kinds = [_kind(c) for c in classes]
    seen_a2b: int | None = None

    def v2_id(j: int) -> str | None:
        """The numcodecs id of codec ``j`` when it comes from a v2 document."""
        if names is not None and isinstance(names[j], V2Place):
            return repr(specs[j].name.removeprefix("numcodecs."))
        return None

    def shown(j: int) -> str:          # codec ``j`` as the document holds it
        return v2_id(j) or spec_json(specs[j])

    def name(j: int) -> str:
        return v2_id(j) or repr(specs[j].name)

    for i in range(len(specs)):
        kind, where = kinds[i], names[i] if names is not None else f"{key} codecs[{i}]"
        if kind == "array->array" and seen_a2b is not None:
            raise MetadataError(f"{where}: expected a bytes->bytes codec after "
                                f"{name(seen_a2b)}, found array->array codec {shown(i)}")
        if kind == "array->bytes":
            if seen_a2b is not None:
                raise MetadataError(f"{where}: expected a bytes->bytes codec after "
                                    f"{name(seen_a2b)}, found a second array->bytes "
                                    f"codec {shown(i)}")
            seen_a2b = i
        if kind == "bytes->bytes" and seen_a2b is None:
            raise MetadataError(f"{where}: expected an array->array or array->bytes codec, "
                                f"found bytes->bytes codec {shown(i)} before any "
                                f"array->bytes codec")
    if seen_a2b is None:
        listed = json.dumps([json.loads(spec_json(s)) for s in specs])
        raise MetadataError(f"{key} codecs: expected exactly one array->bytes codec "
                            f"(e.g. bytes), found none in {listed}")


def codec_place(key: str, i: int, where: Sequence[str] | None) -> str:
    """How messages name codec ``i``: ``where[i]`` (its place in the v2 document read), else
    ``<array path> codecs[i]``."""
    if where is not None and i < len(where):
        return V2Place(where[i])
    return f"{_name(key)} codecs[{i}]"


def bind_chain(codecs: Sequence[CodecSpec | Codec], dtype: DataType | np.dtype | str,
               chunk_shape: Sequence[int], key: str, where: Sequence[str] | None = None,
               names: Sequence[str] | None = None
               ) -> list[tuple[Codec, np.dtype, tuple[int, ...]]]:
    """Every codec built and bound to the chunk it sees, with the (dtype, shape) it receives
    on encode, in order; nothing is elided. The array->bytes codec's entry is followed by the
    bytes->bytes codecs, each bound to the item type it serialises. ``names`` (as messages
    name each codec) takes the place of ``where``."""
    name = _name(key)
    dt = native(as_numpy_dtype(dtype))        # chunks in memory are native byte order
    shape = tuple(int(s) for s in chunk_shape)
    specs = [_as_spec(c, i, name) for i, c in enumerate(codecs)]
    given = {i: c for i, c in enumerate(codecs) if isinstance(c, Codec)}
    classes = []
    for i, spec in enumerate(specs):
        if spec.name == "sharding_indexed" and i not in given:
            raise MetadataError(f"{name} codecs[{i}]: sharding_indexed must be lowered into "
                                f"shard levels before a chunk plan is built (use "
                                f"ArrayMeta.chunk_codecs), found {spec_json(spec)}")
        if i not in given and where is not None and lookup(spec.name) is None \
                and spec.name.startswith("numcodecs."):         # a v2 filter or compressor
            raise unknown_codec(spec.name[len("numcodecs."):],
                                f"{codec_place(key, i, where)}.id: ", numcodecs=True)
        if i not in given and names is not None and lookup(spec.name) is None:
            raise unknown_codec(spec.name, f"{names[i]}: ")    # its place names the array
        classes.append(type(given[i]) if i in given else get_codec_class(spec.name, key=name))
    _check_order(specs, classes, name, names if names is not None or where is None else
                 [codec_place(key, i, where) for i in range(len(specs))])
    out: list[tuple[Codec, np.dtype, tuple[int, ...]]] = []
    a2b_dtype = dt
    for i, spec in enumerate(specs):
        at = names[i] if names is not None else codec_place(key, i, where)
        codec = given.get(i) or classes[i].from_spec(spec, dt, shape, where=at)
        if isinstance(codec, ArrayToArrayCodec):
            codec = codec.bind(dt, shape)
            out.append((codec, dt, shape))
            out_dt, out_shape = codec.resolve(dt, shape, at)
            dt, shape = out_dt, tuple(out_shape)
        elif isinstance(codec, ArrayToBytesCodec):
            out.append((codec, dt, shape))
            a2b_dtype = dt
        else:
            assert isinstance(codec, BytesToBytesCodec)
            out.append((codec.bind(a2b_dtype), a2b_dtype, shape))
    return out


def complete_specs(codecs: Sequence[CodecSpec | Codec], dtype: DataType | np.dtype | str,
                   chunk_shape: Sequence[int], *, key: str = "",
                   names: Sequence[str] | None = None) -> tuple[CodecSpec, ...]:
    """The codec list as metadata should hold it: every codec checked against the chunks it
    will see (unknown codecs, bad configurations and misplaced codecs raise) and written with
    every field its specification asks for, defaults and chunk-dependent fields filled in
    (blosc ``typesize``, a filter's ``dtype``...). Messages name codec ``i`` as ``names[i]``
    (``create_array filters[0]``, say) when given, else as ``<key> codecs[i]``."""
    out = []
    bound = bind_chain(codecs, dtype, chunk_shape, key, names=names)
    for (codec, dt, shape), orig in zip(bound, codecs):
        spec = codec.to_spec()
        mu = orig.must_understand if isinstance(orig, CodecSpec) else True
        out.append(spec if mu else CodecSpec(spec.name, spec.configuration, must_understand=False))
        if isinstance(codec, ArrayToBytesCodec):
            i = len(out) - 1
            codec.resolve(dt, shape,
                          names[i] if names is not None else f"{_name(key)} codecs[{i}]")
    return tuple(out)
