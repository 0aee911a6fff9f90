"""Zip archives built byte by byte (``build``), so each can tell exactly the lie a test is about:
bad names, wrong CRC-32s, sizes that do not match, a central directory that points entries at
each other, a deflate stream that inflates to 1 GiB. The fuzz corpus (fuzz/make_corpus.py) is
made from them too."""
from __future__ import annotations

import struct
import zlib


_LOCAL = struct.Struct("<4s5H3I2H")
_CENTRAL = struct.Struct("<4s6H3I5H2I")
_END = struct.Struct("<4s4H2IH")
UNIX = 3 << 8 | 20      # version made by: on Unix (where a backslash is part of a name), zip 2.0


def entry(name, data, *, method=0, usize=None, crc=None, **lies):
    """One entry: ``data`` is stored as is (already deflated for ``method=8``); ``lies`` may
    override ``cd_name``, ``cd_offset``, ``cd_usize`` and ``cd_csize`` in the central directory."""
    return dict(name=name.encode() if isinstance(name, str) else name, data=data, method=method,
                usize=len(data) if usize is None else usize,
                crc=zlib.crc32(data) if crc is None else crc, **lies)


def build(path, entries):
    out, central = bytearray(), bytearray()
    for e in entries:
        offset = len(out)
        out += _LOCAL.pack(b"PK\x03\x04", 20, 0, e["method"], 0, 0x21, e["crc"], len(e["data"]),
                           e["usize"], len(e["name"]), 0) + e["name"] + e["data"]
        name = e.get("cd_name", e["name"])
        central += _CENTRAL.pack(b"PK\x01\x02", UNIX, 20, 0, e["method"], 0, 0x21, e["crc"],
                                 e.get("cd_csize", len(e["data"])), e.get("cd_usize", e["usize"]),
                                 len(name), 0, 0, 0, 0, 0, e.get("cd_offset", offset)) + name
    out += central + _END.pack(b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central),
                               len(out), 0)
    path.write_bytes(bytes(out))
    return path


def deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


GROUP = b'{"zarr_format": 3, "node_type": "group"}'


BAD_NAMES = {
    b"../evil": "found a '..' segment; keys may not step outside their directory",
    b"/etc/passwd": "found a leading '/'; keys are relative to the store root",
    b"a\\b": "found a backslash; '/' is the only separator",
    b"x\x00zarr.json": "found a NUL character",
    b"c//0": "found an empty segment ('//' or a trailing '/')",
}
