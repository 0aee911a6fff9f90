"""The indexers engine "zarrx" hands to xarray's indexing adapter, made safe for it."""
from __future__ import annotations

from xarray.core import indexing

__all__ = ["empty_slices_forward"]


def empty_slices_forward(key: indexing.ExplicitIndexer,
                         shape: tuple[int, ...]) -> indexing.ExplicitIndexer:
    """``key`` with each slice of negative step that selects nothing (``1:3:-1``) as ``0:0``:
    xarray splits such a slice into one of positive step and a reversal, which raises an
    IndexError for an empty one."""
    parts = key.tuple
    empty = [isinstance(k, slice) and (k.step or 1) < 0 and not len(range(*k.indices(n)))
             for k, n in zip(parts, shape)]
    if not any(empty):
        return key
    return type(key)(tuple(slice(0, 0) if e else k for k, e in zip(parts, empty)))
