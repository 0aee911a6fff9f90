"""Fuzz Zarr v3 metadata: the input as a ``zarr.json`` document.

It parses or raises a ZarrError, and what parses serialises and parses back to the same
metadata. A document that parses is then opened through a MemoryStore: a small array is read,
written back and reread, and a group lists its members.
"""
from __future__ import annotations

from _common import exercise_node, expected, fuzz, instrumented

with instrumented(__name__ == "__main__"):
    from zarrx.metadata import parse_v3, serialize_v3
    from zarrx.store import MemoryStore


def test_one_input(data: bytes) -> None:
    with expected():
        meta = parse_v3(data, "zarr.json")
        again = parse_v3(serialize_v3(meta), "zarr.json")
        assert again == meta, (meta, again)
        exercise_node(MemoryStore({"zarr.json": data}))


if __name__ == "__main__":
    fuzz(test_one_input)
