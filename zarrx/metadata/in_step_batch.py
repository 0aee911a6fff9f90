"""Changes to the documents of several nodes that keep the consolidated metadata listing them
in step once for all of them, not once per node: :func:`in_step_together`.

Each change of a node's document lists the node as pending in every consolidated document
listing it, writes the node, then writes its entry (see ``zarrx.metadata.nodes._in_step``):
two writes of each such document per node. Inside :func:`in_step_together` the nodes named
are listed as pending once before the changes and their entries written once after them; a
reader of the consolidated metadata reads them from the store meanwhile, as it does while
one node changes."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from zarrx.metadata.in_step_held import holding
from zarrx.metadata.nodes import _in_step
from zarrx.store.base import Store

__all__ = ["in_step_together"]


def in_step_together(store: Store, paths: Sequence[str], zarr_format: int,
                     change: Callable[[], Any]) -> Any:
    """``change()``, which changes the documents of (some of) the nodes at ``paths`` (none the
    store's root), with each consolidated document of ``zarr_format`` listing them edited
    twice in all: the nodes listed as pending before, their entries as stored written after
    (also when ``change`` fails with a ZarrError)."""
    return _in_step(store, list(paths), zarr_format, lambda: holding(store, paths, change))
