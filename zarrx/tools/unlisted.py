"""The stored objects of a node on a store that cannot list its keys (a web server without
directory listings), for the tools that walk every object (``ls``, ``check``, ``copy``).

Without a listing, what is stored is found from the metadata: a node's own documents, the
nodes below a group from its consolidated metadata, and an array's chunks (or shards) from its
chunk grid, each key asked for (a HEAD each, all of a batch at once on a remote store). A group
without consolidated metadata names no nodes below it: that is an error saying what is
needed. Objects that no metadata names (orphans, leftovers of a shrink) are not found.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

from zarrx import layout
from zarrx.array import Array
from zarrx.errors import ListingUnsupportedError, ZarrError
from zarrx.group import Group
from zarrx.metadata.nodes import V2_KEYS, V3_KEY, join
from zarrx.store import Store

__all__ = ["node_keys", "node_documents", "grid_objects", "unlisted_group", "MAX_PROBES",
           "UNLISTED_NOTE"]

#: the most keys of an array's grid asked for one by one
MAX_PROBES = 1_000_000
_BATCH = 4096
#: what a report says of keys found without a listing
UNLISTED_NOTE = ("the store offers no listing: its objects were found from the metadata (the "
                 "arrays' chunk grids), so objects no metadata names were not looked for")


def node_keys(store: Store, path: str, node: Array | Group, what: str
              ) -> tuple[list[str], bool]:
    """Every key of the node at ``path`` and below it, sorted, and whether they were listed
    (False: found from the metadata, the store offering no listing). ``what`` names the
    command for messages."""
    prefix = f"{path}/" if path else ""
    try:
        return sorted(store.list_prefix(prefix)), True
    except ListingUnsupportedError:
        pass
    return sorted(_found_keys(store, node, what)), False


def grid_objects(array: Array, what: str) -> Iterator[tuple[tuple[int, ...], str, int]]:
    """``(grid coordinates, key, size)`` of each stored object (chunk, or shard) of ``array``
    found by asking for every key of its grid, in C order."""
    grid = array._shard_grid_shape
    n = math.prod(grid)
    if n > MAX_PROBES:
        raise ZarrError(f"{what}: {array.store!r} offers no listing, and the array "
                        f"{array.name} has {n} stored objects in its grid {grid}: more than "
                        f"the {MAX_PROBES} asked for one by one; read it through a store that "
                        f"lists its keys")
    source = layout.chunk_source(array.store, array.path, array.metadata).objects
    coords = itertools.product(*(range(g) for g in grid))
    while batch := list(itertools.islice(coords, _BATCH)):
        keys = [source.key(c) for c in batch]
        for c, key, size in zip(batch, keys, array.store.getsize_many(keys)):
            if size is not None:
                yield c, key, size


def unlisted_group(group: Group, what: str) -> ListingUnsupportedError:
    """The error for a group whose members cannot be found: its store offers no listing and
    it has no consolidated metadata."""
    return ListingUnsupportedError(
        f"{what}: {group.store!r} offers no listing, and the group {group.name} has no "
        f"consolidated metadata to name the nodes below it: consolidate it where it is "
        f"written (zarrx consolidate, zarrx.consolidate_metadata), or {what} its arrays by "
        f"their paths")


def node_documents(store: Store, path: str, zarr_format: int | None = None) -> list[str]:
    """The metadata documents stored for the node at ``path`` (of ``zarr_format``, or of
    either), each asked for."""
    names = [V3_KEY] if zarr_format == 3 else [*V2_KEYS, ".zmetadata"] if zarr_format == 2 \
        else [V3_KEY, *V2_KEYS, ".zmetadata"]
    keys = [join(path, n) for n in names]
    return [k for k, size in zip(keys, store.getsize_many(keys)) if size is not None]


def _found_keys(store: Store, node: Array | Group, what: str) -> Iterator[str]:
    if isinstance(node, Array):
        yield from node_documents(store, node.path, node.metadata.zarr_format)
        yield from (key for _, key, _ in grid_objects(node, what))
        return
    if node.metadata.consolidated is None:
        raise unlisted_group(node, what)
    yield from node_documents(store, node.path, node.metadata.zarr_format)
    for _, member in node.members(max_depth=None):
        yield from node_documents(store, member.path, member.metadata.zarr_format)
        if isinstance(member, Array):
            yield from (key for _, key, _ in grid_objects(member, what))
