"""Objects a stopped delete left below a path where no node is, cleared before an array is
created there.

A delete removes the documents of the node and of every node below it first and the other
objects after them (see :func:`zarrx.metadata.nodes.delete_node`), so a delete stopped part
way (a killed process, a failing store) leaves chunks no node claims. An array created later at that path would read
them as its own; :func:`clear_leftovers` removes them first. Only what a deleted array leaves
is removed: chunk keys of any of the Zarr key encodings and a v2 ``.zattrs``. Below a path
holding anything else (a node's document, a file of some other program) nothing is touched,
and the new array is created beside it as zarr-python creates it.
"""
from __future__ import annotations

import re

from zarrx.errors import ConflictError
from zarrx.metadata.node_copy import NODE_KEYS
from zarrx.store.base import Store

__all__ = ["clear_leftovers"]

#: what a deleted array leaves, relative to its path: the chunk keys of the v3 default
#: encoding (``c``, ``c/0/1``, ``c.0.1``) and of the v2 one (``0``, ``0.1``, ``0/1``), and the
#: attributes of a v2 array
_LEFTOVER = re.compile(r"(?:c|c[./][0-9]+(?:[./][0-9]+)*|[0-9]+(?:[./][0-9]+)*|\.zattrs)\Z")


def clear_leftovers(store: Store, path: str) -> None:
    """Remove the objects a deleted array left stored below ``path`` (see the module), before
    an array is created there. On a store with conditional writes each object is removed only
    at the generation listed, so what a concurrent creator of the array writes meanwhile
    stays."""
    if not path:
        return
    below = path + "/"
    keys = sorted(store.list_prefix(below))
    if not keys or not all(_LEFTOVER.match(k[len(below):]) for k in keys):
        return
    if not store.supports_conditional_writes:
        store.delete_many(keys)
        return
    found = [(key, store.generation(key)) for key in keys]
    # a creator writes its document before its chunks: with no document yet, every version
    # read above is a leftover, and a chunk written later has another generation
    if any(store.exists(f"{path}/{name}") for name in NODE_KEYS):
        return
    for key, generation in found:
        if generation is not None:
            try:
                store.delete_if(key, generation)
            except ConflictError:
                pass                            # written meanwhile: not a leftover
