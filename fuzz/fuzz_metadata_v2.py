"""Fuzz Zarr v2 metadata: the input as a ``.zarray``, ``.zgroup`` and ``.zattrs`` document.

Each document parses or raises a ZarrError, and what parses serialises and parses back to the
same metadata. A document that parses is then opened through a MemoryStore: a small array is
read, written back and reread, and a group (with itself as ``.zattrs``) lists its members.
"""
from __future__ import annotations

import json

from _common import exercise_node, expected, fuzz, instrumented

with instrumented(__name__ == "__main__"):
    from zarrx.metadata import parse_array_v2, parse_group_v2, serialize_v2
    from zarrx.store import MemoryStore

ZARRAY = json.dumps({"zarr_format": 2, "shape": [6, 5], "chunks": [4, 3], "dtype": "<i4",
                     "compressor": None, "fill_value": 0, "order": "C",
                     "filters": None}).encode()
ZGROUP = b'{"zarr_format": 2}'


def _parses(doc: bytes, attrs: bytes | None, parse: object, key: str) -> bool:
    with expected():
        meta = parse(doc, attrs, key)
        docs = serialize_v2(meta)
        again = parse(docs[key], docs.get(".zattrs"), key)
        assert again == meta, (meta, again)
        return True
    return False


def test_one_input(data: bytes) -> None:
    if _parses(data, None, parse_array_v2, ".zarray"):
        exercise_node(MemoryStore({".zarray": data}))
    if _parses(data, None, parse_group_v2, ".zgroup"):
        exercise_node(MemoryStore({".zgroup": data, ".zattrs": data, "a/.zgroup": ZGROUP}))
    _parses(ZARRAY, data, parse_array_v2, ".zarray")


if __name__ == "__main__":
    fuzz(test_one_input)
