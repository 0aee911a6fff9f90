"""The arrays the box read and box write tests use: raw chunks in a LocalStore at ``g/a``."""
from __future__ import annotations

import zarrx
from zarrx.store import LocalStore


def raw_array(path, shape, chunks, dtype="f4", fmt=3, sep="/", fill=7, **kw):
    enc = {"name": "default" if fmt == 3 else "v2", "separator": sep}
    return zarrx.create_array(LocalStore(path), name="g/a", shape=shape, chunks=chunks,
                              dtype=dtype, zarr_format=fmt, fill_value=fill, compressors=None,
                              chunk_key_encoding=enc, **kw)
