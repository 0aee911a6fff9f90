"""Turn ``create_array``'s codec arguments (``filters``, ``serializer``, ``compressors``,
``shards``) into the metadata's codec list.

Each argument takes codec objects (``zarrx.codecs.Zstd(level=3)``), v3 dicts
(``{"name": "zstd", "configuration": {...}}``) or numcodecs-style v2 dicts
(``{"id": "zstd", "level": 3}``); ``"auto"`` picks zarr-python 3's defaults (zstd level 0, the
``bytes`` serializer, or ``vlen-utf8`` / ``vlen-bytes`` for variable-length types).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zarrx.errors import ZarrError
from zarrx.metadata.model import CodecSpec

__all__ = ["build_codecs", "to_spec", "variable_kind"]

_SHUFFLE_V2 = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}


def variable_kind(dtype: Any) -> str | None:
    """``"string"``/``"bytes"`` for variable-length user dtypes, else None."""
    if dtype in (str, "str", "string") or type(dtype).__name__ == "StringDType" or \
            (isinstance(dtype, np.dtype) and dtype.kind == "T"):
        return "string"
    if dtype in (bytes, "bytes"):
        return "bytes"
    if dtype in (object, "O", "|O") or (isinstance(dtype, np.dtype) and dtype.kind == "O"):
        return "string"
    return None


def to_spec(obj: Any, zarr_format: int, where: str) -> CodecSpec:
    """A codec object or dict as a CodecSpec for metadata of ``zarr_format``."""
    if isinstance(obj, CodecSpec):
        spec = obj
    elif hasattr(obj, "to_spec"):
        spec = obj.to_spec()
    elif isinstance(obj, Mapping) and "name" in obj:
        conf = obj.get("configuration", {})
        if not isinstance(conf, Mapping):
            raise ZarrError(f"{where}: configuration must be an object, found {conf!r}")
        spec = CodecSpec(str(obj["name"]), dict(conf),
                         must_understand=bool(obj.get("must_understand", True)))
    elif isinstance(obj, Mapping) and "id" in obj:
        conf = {k: v for k, v in obj.items() if k != "id"}
        spec = CodecSpec(str(obj["id"]), conf, v2=True)
    elif hasattr(obj, "get_config") and callable(obj.get_config):     # a numcodecs codec
        conf = dict(obj.get_config())
        spec = CodecSpec(str(conf.pop("id")), conf, v2=True)
    else:
        raise ZarrError(f"{where}: expected a codec object or codec dict, found {obj!r}")
    return _v2(spec) if zarr_format == 2 else _v3(spec)


def _v3(spec: CodecSpec) -> CodecSpec:
    if not spec.v2:
        return spec
    if spec.name in ("zstd", "gzip") and set(spec.configuration) <= {"level", "checksum"}:
        return CodecSpec(spec.name, dict(spec.configuration))
    if spec.name in ("vlen-utf8", "vlen-bytes"):
        return CodecSpec(spec.name, {})
    return CodecSpec(f"numcodecs.{spec.name}", dict(spec.configuration))


def _v2(spec: CodecSpec) -> CodecSpec:
    if spec.v2:
        return spec
    name, conf = spec.name, dict(spec.configuration)
    if name.startswith("numcodecs."):
        return CodecSpec(name[len("numcodecs."):], conf, v2=True)
    if name == "blosc":
        shuffle = conf.get("shuffle", "shuffle")
        conf = {"cname": conf.get("cname", "lz4"), "clevel": conf.get("clevel", 5),
                "shuffle": _SHUFFLE_V2.get(shuffle, shuffle) if isinstance(shuffle, str) else shuffle,
                "blocksize": conf.get("blocksize", 0)}
    if name == "zstd":   # numcodecs omits a false checksum; tensorstore refuses the extra member
        conf = {"level": conf.get("level", 0)}
        if spec.configuration.get("checksum"):
            conf["checksum"] = True
    if name == "gzip":
        conf = {"level": conf.get("level", 1)}
    return CodecSpec(name, conf, v2=True)


def _listify(arg: Any) -> list:
    if arg is None:
        return []
    if isinstance(arg, (Mapping, CodecSpec)) or hasattr(arg, "to_spec") or hasattr(arg, "get_config"):
        return [arg]
    if isinstance(arg, Sequence) and not isinstance(arg, (str, bytes)):
        return list(arg)
    return [arg]


def build_codecs(*, dtype: Any, shape: tuple[int, ...], chunks: Any, shards: Any, filters: Any,
                 serializer: Any, compressors: Any, zarr_format: int,
                 order: str = "C") -> tuple[list[CodecSpec], Any]:
    """``(codecs, grid_chunks)``: the codec list for the metadata and the chunk grid's shape
    (the shard shape when ``shards`` is given). For v2, the list holds the filters, then the
    compressor (at most one); the metadata layer lowers the rest."""
    vk = variable_kind(dtype)
    flt = [] if isinstance(filters, str) and filters == "auto" else \
        [to_spec(f, zarr_format, f"filters[{i}]") for i, f in enumerate(_listify(filters))]
    if isinstance(compressors, str) and compressors == "auto":
        comp = [CodecSpec("zstd", {"level": 0, "checksum": False}) if zarr_format == 3
                else CodecSpec("zstd", {"level": 0}, v2=True)]
    else:
        comp = [to_spec(c, zarr_format, f"compressors[{i}]") for i, c in enumerate(_listify(compressors))]
    if zarr_format == 2:
        if shards is not None:
            raise ZarrError("create_array: shards= needs zarr_format=3 (Zarr v2 has no sharding)")
        if len(comp) > 1:
            raise ZarrError(f"create_array: Zarr v2 takes at most one compressor, found {len(comp)}")
        if vk is not None and not any(f.name in ("vlen-utf8", "vlen-bytes") for f in flt):
            flt.append(CodecSpec("vlen-utf8" if vk == "string" else "vlen-bytes", {}, v2=True))
        if not (isinstance(serializer, str) and serializer == "auto"):
            ser = to_spec(serializer, 2, "serializer")
            if ser.name in ("vlen-utf8", "vlen-bytes"):
                flt = [f for f in flt if f.name not in ("vlen-utf8", "vlen-bytes")] + [ser]
        return flt + comp, chunks
    if isinstance(serializer, str) and serializer == "auto":
        if vk == "string":
            ser = CodecSpec("vlen-utf8", {})
        elif vk == "bytes":
            ser = CodecSpec("vlen-bytes", {})
        elif np.dtype(dtype).itemsize <= 1 and np.dtype(dtype).kind not in "V":
            ser = CodecSpec("bytes", {})
        else:
            ser = CodecSpec("bytes", {"endian": "little"})
    else:
        ser = to_spec(serializer, 3, "serializer")
    inner = [*flt, ser, *comp]
    if shards is None:
        return inner, chunks
    if isinstance(shards, Mapping):
        shard_shape = tuple(shards["shape"])
        index_location = shards.get("index_location", "end")
    else:
        shard_shape, index_location = tuple(shards), "end"
    if len(shard_shape) != len(shape) or len(chunks) != len(shape):
        raise ZarrError(f"create_array: shards {shard_shape} and chunks {tuple(chunks)} must have "
                        f"one entry per dimension of shape {shape}")
    for ax, (s, c) in enumerate(zip(shard_shape, chunks)):
        if c <= 0 or s <= 0 or s % c:
            raise ZarrError(f"create_array: shards[{ax}]={s} must be a positive multiple of "
                            f"chunks[{ax}]={c}")
    sharding = CodecSpec("sharding_indexed", {
        "chunk_shape": list(chunks),
        "codecs": [_dict(s) for s in inner],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                         {"name": "crc32c"}],
        "index_location": index_location,
    })
    return [sharding], shard_shape


def _dict(spec: CodecSpec) -> dict:
    d: dict[str, Any] = {"name": spec.name}
    if spec.configuration:
        d["configuration"] = dict(spec.configuration)
    return d
