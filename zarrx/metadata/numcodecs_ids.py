"""numcodecs ids zarrx does not build in, run through numcodecs itself.

A codec named ``numcodecs.<id>`` (a Zarr v2 ``compressor`` or filter ``{"id": <id>, ...}``,
a Zarr v3 ``{"name": "numcodecs.<id>", ...}``) whose id no row of the codec table has is
taken when numcodecs' registry knows the id (``numcodecs.registry``: the codecs numcodecs
registers, and the plugins of other packages under the ``numcodecs.codecs`` entry point):
its class is :mod:`zarrx.codecs.numcodecs_plugin`'s, which hands each chunk to numcodecs.

The kind: zarr-python's ``zarr.codecs.numcodecs`` makes ``pcodec`` and ``zfpy`` array->bytes
codecs (they encode the chunk's numbers, and zfp its shape too); every other id is a
bytes->bytes codec, numcodecs' own model of a codec (a buffer in, a buffer out).

Refused whatever numcodecs says: ids whose decoding runs code the stored bytes choose
(``pickle``).
"""
from __future__ import annotations

__all__ = ["KINDS", "PACKAGES", "REFUSED", "known", "kind"]

#: ids whose kind is not bytes->bytes (zarr-python's ``zarr.codecs.numcodecs`` classes)
KINDS = {"pcodec": "array->bytes", "zfpy": "array->bytes"}
#: ids numcodecs registers only when a package imports: the package to install
PACKAGES = {"pcodec": "pcodec", "zfpy": "zfpy"}
#: ids never run, and why
REFUSED = {"pickle": "decoding it runs code the stored bytes choose"}


def _registry():                      # numcodecs.registry, or None when it does not import
    try:
        from numcodecs import registry
    except Exception:                 # not installed, or broken (a plugin failing to import)
        return None
    return registry


def known(cid: str) -> bool:
    """Whether numcodecs' registry has a codec of id ``cid`` (not one of :data:`REFUSED`)."""
    if cid in REFUSED:
        return False
    reg = _registry()
    if reg is None:
        return False
    return cid in reg.codec_registry or cid in reg.entries


def kind(cid: str) -> str:
    """The kind of codec ``numcodecs.<cid>`` (see the module docstring)."""
    return KINDS.get(cid, "bytes->bytes")
