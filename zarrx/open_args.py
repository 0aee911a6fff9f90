"""The modes and keyword arguments the open and create functions of :mod:`zarrx.api` take,
the errors for others, and the defaults and settings an existing array is opened with."""
from __future__ import annotations

import inspect
from typing import Any

from zarrx.creation import config_mapping, config_order, create_array, flag_arg
from zarrx.errors import ArgumentError, ArgumentTypeError, unexpected_keyword
from zarrx.metadata.model import ArrayMeta

__all__ = ["MODES", "check_mode", "check_keywords"]

MODES = ("r", "r+", "a", "w", "w-")

# what create_array takes besides the store, and the older spellings of create (open and
# open_array create arrays with create, as zarr-python does)
_ARRAY_KW = (frozenset(inspect.signature(create_array).parameters)   # mode says overwrite
             - {"store", "_mode", "_found", "name", "overwrite"}
             | {"chunk_shape", "codecs", "dimension_separator"})
_OPEN_KW = _ARRAY_KW | {"attributes", "use_consolidated", "storage_options"}
# the keywords open, open_array, open_consolidated name (for the closest to a misspelt one)
_NAMED = frozenset({"mode", "path", "zarr_format", "zarr_version"})


def check_mode(mode: str, what: str) -> None:
    """Refuse a ``mode`` that is none of :data:`MODES`, naming the function called."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ArgumentError(f"{what}: mode: expected one of {', '.join(MODES)}, found {mode!r}")


def check_keywords(what: str, kwargs: dict, allowed: frozenset | set) -> None:
    """An ``ArgumentTypeError`` (a ``TypeError``, as Python raises) for the first keyword
    argument of ``kwargs`` that ``what`` does not take."""
    for key in kwargs:
        if key not in allowed:
            if key == "overwrite":
                raise ArgumentTypeError(f"{what}() got an unexpected keyword argument {key!r} "
                                        f"(mode='w' replaces the node there)")
            raise unexpected_keyword(what, key, allowed | _NAMED)


def _write_empty_chunks(kwargs: dict, what: str) -> bool | None:
    """The ``write_empty_chunks`` an existing array is opened with: the keyword, else that of
    ``config=`` (zarr-python's per-array configuration)."""
    value = kwargs.get("write_empty_chunks")
    config = config_mapping(kwargs.get("config"), what)
    if value is None and config:
        value = config.get("write_empty_chunks")
    return None if value is None else flag_arg(value, what, "write_empty_chunks")


def _memory_order(kwargs: dict, meta: ArrayMeta, what: str) -> str | None:
    """The read layout an existing Zarr v3 array is opened with: the ``order`` of
    ``config=`` (a Zarr v2 array keeps the order it stores)."""
    order = config_order(kwargs.get("config"), what)
    return order if meta.zarr_format == 3 else None


def _default_mode(store: Any, mode: str | None) -> str:
    """zarr-python's default: ``r`` for a read-only store (a zarrx or zarr-python store
    object), else ``a``."""
    if mode is None:
        return "r" if getattr(store, "read_only", None) is True else "a"
    return mode
