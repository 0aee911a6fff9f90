"""Fuzz consolidated metadata: the input as a v2 ``.zmetadata`` and as a v3 group ``zarr.json``
(whose ``consolidated_metadata`` is inline).

The document parses or raises a ZarrError, and a parsed ``.zmetadata`` serialises and parses
back to the same nodes. A document that parses is then opened as a consolidated group, which
lists all its members, and reads, writes and rereads its small arrays.
"""
from __future__ import annotations

from _common import exercise_array, expected, fuzz, instrumented

with instrumented(__name__ == "__main__"):
    import zarrx
    from zarrx.metadata import parse_v3, parse_zmetadata, serialize_zmetadata
    from zarrx.store import MemoryStore

ZGROUP = b'{"zarr_format": 2}'
MAX_ARRAYS = 8          # arrays read and written per input (all are listed)


def _open(store: MemoryStore, fmt: int) -> None:
    with expected(), zarrx.config.set(threads=1, write_empty_chunks=True):
        g = zarrx.open_consolidated(store, mode="r+", zarr_format=fmt)
        arrays = (m for _, m in g.members(max_depth=None) if isinstance(m, zarrx.Array))
        for member, _ in zip(arrays, range(MAX_ARRAYS)):
            exercise_array(member)
        g.tree()


def test_one_input(data: bytes) -> None:
    with expected():
        nodes = parse_zmetadata(data, ".zmetadata")
        again = parse_zmetadata(serialize_zmetadata(nodes), ".zmetadata")
        assert again == nodes, (nodes, again)
        _open(MemoryStore({".zgroup": ZGROUP, ".zmetadata": data}), 2)
    with expected():
        parse_v3(data, "zarr.json")
        _open(MemoryStore({"zarr.json": data}), 3)


if __name__ == "__main__":
    fuzz(test_one_input)
