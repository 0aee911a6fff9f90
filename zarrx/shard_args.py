"""The sharding part of ``create_array``'s codec arguments: a ``sharding_indexed``
serializer taken apart into the arguments ``shards=`` takes, an inner sharding codec
(nested sharding), and transposes given as ``filters=`` before a sharding serializer, which
zarr-python 3 writes before the sharding codec (it then sees the transposed shard).
"""
from __future__ import annotations

from typing import Any

from zarrx.codec_inputs import WHERE, Arg, as_codec
from zarrx.codec_inputs import int_tuple as _int_tuple
from zarrx.codec_inputs import is_auto as _auto
from zarrx.codec_inputs import kind_of as _kind
from zarrx.codec_inputs import listify as _listify
from zarrx.codecs.base import Codec
from zarrx.errors import ArgumentError, ArgumentTypeError
from zarrx.metadata._util import short
from zarrx.metadata.codec_table import A2B
from zarrx.metadata.codecs import ELEMENTWISE, codec_json, permutation
from zarrx.metadata.model import CodecSpec

__all__ = ["transposed_shards", "nested_shards", "unshard"]


def transposed_shards(dtype: Any, shape: tuple[int, ...], chunks: Any, shards: Any,
                       flt: list, ser: Any, compressors: Any, order: str,
                       at: str, build: Any) -> tuple[dict[str, Any], Any]:
    """``filters=`` of transposes with a sharding ``serializer``: the codecs zarr-python 3
    writes for them, the transposes then the sharding codec, which sees the shard (the grid's
    ``chunks``) as they leave it."""
    before = [f.to_spec() if isinstance(f, Codec) else f for f in flt]
    others = [f.name for f in before if f.name != "transpose" and f.name not in ELEMENTWISE]
    if others:
        raise ArgumentError(f"{WHERE} filters: only transposes and codecs mapping each value "
                            f"alone ({', '.join(ELEMENTWISE)}) may come before a sharding "
                            f"serializer (byte ranges into a shard must map onto stored "
                            f"bytes), found {', '.join(map(repr, others))}; put the other "
                            f"filters in the sharding codec's codecs=")
    grid = _int_tuple(chunks, len(shape))
    if grid is None or len(grid) != len(shape):
        raise ArgumentTypeError(f"{WHERE}: chunks: with a sharding serializer, the shard shape "
                                f"(one int per axis of shape {shape}), found {short(chunks)}")
    seen, perms = grid, []
    for i, f in enumerate(before):
        if f.name in ELEMENTWISE:          # value by value: the sharding codec sees its output
            perms.append(f)
            if f.name == "cast_value":
                dtype = f.configuration["data_type"]
            continue
        perm = permutation(f.configuration["order"], len(seen))
        if sorted(perm) != list(range(len(seen))):
            raise ArgumentError(f"{WHERE} filters[{i}].configuration.order: expected a "
                                f"permutation of {len(seen)} dimensions, found {list(perm)}")
        seen = tuple(seen[o] for o in perm)
        perms.append(CodecSpec("transpose", {"order": [int(o) for o in perm]}))
    inner, _ = build(dtype=dtype, shape=seen, chunks=seen, shards=shards, filters="auto",
                     serializer=ser, compressors=compressors, zarr_format=3, order=order, at=at)
    return {"codecs": [*perms, *inner["codecs"]]}, grid


def nested_shards(dtype: Any, chunks: Any, shards: Any, flt: list, ser: Any, comp: list,
                  index_codecs: list, order: str, at: str, build: Any) -> tuple[dict[str, Any], Any]:
    """Nested sharding: the inner ``sharding_indexed`` serializer (in the outer one's codecs,
    at ``at``, after transposes only) built as ``create_array`` builds one for chunks of the
    outer shard's inner chunk shape as those transposes leave it, then wrapped in the outer."""
    before = [f.to_spec() if isinstance(f, Codec) else f for f in flt]
    if comp or any(f.name != "transpose" for f in before):
        raise ArgumentError(f"{WHERE} {at}.configuration.codecs: an inner sharding codec may "
                            f"follow transposes only (found {len(flt)} array->array codecs "
                            f"({', '.join(f.name for f in before)}) and {len(comp)} "
                            f"bytes->bytes codecs beside it)")
    outer = tuple(shards["shape"])
    for ax, (s, c) in enumerate(zip(outer, chunks)):
        if c > 0 and s % c:     # as build_codecs checks a sharding codec that is not nested
            raise ArgumentError(f"{WHERE} {at}.configuration.chunk_shape[{ax}]: expected a "
                                f"divisor of the shard size {s} along axis {ax} (shard shape "
                                f"{outer}), found {c}")
    seen = tuple(chunks)
    for i, f in enumerate(before):
        perm = permutation(f.configuration["order"], len(seen))
        if sorted(perm) != list(range(len(seen))):
            raise ArgumentError(f"{WHERE} {at}.configuration.codecs[{i}].configuration.order: "
                                f"expected a permutation of {len(seen)} dimensions, found "
                                f"{list(perm)}")
        seen = tuple(seen[o] for o in perm)
    inner, _ = build(dtype=dtype, shape=seen, chunks=seen, shards=None, filters="auto",
                     serializer=ser, compressors="auto", zarr_format=3, order=order,
                     at=f"{at}.configuration.codecs[{len(flt)}]")
    sharding = CodecSpec("sharding_indexed", {
        "chunk_shape": list(chunks),
        "codecs": [codec_json(s) for s in (*before, *inner["codecs"])],
        "index_codecs": index_codecs,
        "index_location": shards["index_location"],
    })
    return {"codecs": [sharding]}, tuple(shards["shape"])


def unshard(sharding: Any, chunks: Any, shards: Any, flt: list, compressors: Any,
            zarr_format: int, at: str) -> tuple[Any, Any, list, Arg, list, list]:
    """A ``sharding_indexed`` serializer (named ``at`` in messages) as the arguments
    ``shards=`` takes: ``(inner chunks, shard shape, filters, serializer, compressors, index
    codecs)`` from its configuration."""
    where = f"{WHERE} {at}"
    if zarr_format != 3:
        raise ArgumentError(f"{where}: sharding needs zarr_format=3 (Zarr v2 has no sharding)")
    if shards is not None:
        raise ArgumentError(f"{where}: pass shards= or a sharding serializer, not both")
    if flt:
        raise ArgumentError(f"{where}: with a sharding serializer, put the array->array "
                            f"codecs in its codecs=, not in filters=")
    if not _auto(compressors) and _listify(compressors):
        raise ArgumentError(f"{where}: a shard cannot be compressed as a whole (byte ranges "
                            f"into it must map onto stored bytes); put the compressors in the "
                            f"sharding codec's codecs=")
    conf = sharding.configuration()
    inner = [as_codec(c, f"{at}.configuration.codecs[{i}]")
             for i, c in enumerate(conf["codecs"])]
    kinds = [_kind(c) for c in inner]
    if A2B not in kinds:
        raise ArgumentError(f"{where}.configuration.codecs: expected exactly one array->bytes "
                            f"codec (such as 'bytes'), found none in {inner!r}")
    k = kinds.index(A2B)
    index = [codec_json(c.to_spec() if isinstance(c, Codec) else c)
             for c in (as_codec(c, f"{at}.configuration.index_codecs[{i}]")
                       for i, c in enumerate(conf["index_codecs"]))]
    shard_shape = {"shape": tuple(chunks), "index_location": conf["index_location"]}
    return (tuple(conf["chunk_shape"]), shard_shape, inner[:k], inner[k], inner[k + 1:], index)
