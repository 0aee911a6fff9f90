"""Which nodes' consolidated entries an enclosing
:func:`~zarrx.metadata.in_step_batch.in_step_together` keeps in step (then a change of one of
them leaves the consolidated documents alone): per context, so per thread."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from zarrx.store.base import Store

__all__ = ["held", "holding"]

#: (id of the store, path) of the nodes held
_HELD: ContextVar[frozenset] = ContextVar("zarrx_in_step_held", default=frozenset())


def held(store: Store, paths: Sequence[str]) -> bool:
    """Whether the entries of every node at ``paths`` of ``store`` are held."""
    now = _HELD.get()
    return bool(now) and all((id(store), p) in now for p in paths)


def holding(store: Store, paths: Sequence[str], change: Callable[[], Any]) -> Any:
    """``change()``, with the nodes at ``paths`` of ``store`` held."""
    token = _HELD.set(_HELD.get() | {(id(store), p) for p in paths})
    try:
        return change()
    finally:
        _HELD.reset(token)
