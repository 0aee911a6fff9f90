"""zarr-python's ``zarr.codecs.numcodecs`` names: numcodecs codecs as Zarr v3 codecs.

``LZMA(filters=[...])``, ``Delta(dtype="int32")`` and the others take numcodecs' keyword
arguments and make the zarrx codec that reading ``{"name": "numcodecs.lzma", "configuration":
{...}}`` makes: it is written back under that name, as zarr-python writes it, and is checked
as a stored configuration is: a wrong value is a ``CodecError`` naming the field, an unknown
or missing keyword or a value of the wrong type a ``CodecArgumentTypeError`` (also a ``TypeError``, as
zarr-python raises when it first uses the codec). ``PCodec`` and ``ZFPY`` are run by numcodecs
itself (:mod:`zarrx.codecs.numcodecs_plugin`): their keywords are checked by numcodecs' codec.
"""
from __future__ import annotations

from typing import Any

from zarrx.codecs.base import Codec
from zarrx.codecs.numcodecs_plugin import NumcodecsArrayToBytes, NumcodecsBytesToBytes
from zarrx.codecs.registry import get_codec_class
from zarrx.errors import CodecArgumentTypeError, CodecError, MetadataError
from zarrx.metadata._util import Loc
from zarrx.metadata.codec_table import check_codec

#: class name (zarr-python's) -> numcodecs id
IDS = {"BZ2": "bz2", "CRC32": "crc32", "CRC32C": "crc32c", "LZ4": "lz4", "LZMA": "lzma",
       "Adler32": "adler32", "AsType": "astype", "BitRound": "bitround", "Blosc": "blosc",
       "Delta": "delta", "FixedScaleOffset": "fixedscaleoffset", "Fletcher32": "fletcher32",
       "GZip": "gzip", "JenkinsLookup3": "jenkins_lookup3", "PackBits": "packbits",
       "Quantize": "quantize", "Shuffle": "shuffle", "Zlib": "zlib", "Zstd": "zstd",
       # run by numcodecs itself (zarrx.codecs.numcodecs_plugin)
       "PCodec": "pcodec", "ZFPY": "zfpy"}

__all__ = sorted(IDS)


def _maker(cls_name: str, codec_id: str) -> Any:
    name = f"numcodecs.{codec_id}"

    def make(**codec_config: Any) -> Codec:
        if "id" in codec_config:
            given = codec_config.pop("id")
            if given != codec_id:
                raise CodecError(
                    f"zarrx.codecs.numcodecs.{cls_name}: id: expected {codec_id!r} or "
                    f"nothing, found {given!r}")
        where = Loc(f"zarrx.codecs.numcodecs.{cls_name}", error=CodecError,
                    type_error=CodecArgumentTypeError)
        values = check_codec(name, codec_config, where)
        cls = get_codec_class(name)
        if issubclass(cls, (NumcodecsArrayToBytes, NumcodecsBytesToBytes)):
            try:
                return cls(codec_id, codec_config, where=str(where))
            except MetadataError as exc:     # numcodecs' constructor refused the arguments
                kind = CodecArgumentTypeError if isinstance(exc.__cause__, TypeError) \
                    else CodecError
                raise kind(str(exc)) from exc.__cause__
        obj = cls(**values) if values is not None else cls.from_config(codec_config, str(where))
        if obj.name != name:
            object.__setattr__(obj, "_as", name)      # written back as numcodecs.<id>
        return obj

    make.__name__ = make.__qualname__ = cls_name
    make.__module__ = __name__
    make.__doc__ = (f"The ``{name}`` codec from numcodecs' keyword arguments (``{codec_id}``'s "
                    f"configuration), written under that name.")
    return make


for _cls, _id in IDS.items():
    globals()[_cls] = _maker(_cls, _id)
del _cls, _id
