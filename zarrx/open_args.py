"""The modes and keyword arguments the open and create functions of :mod:`zarrx.api` take,
and the errors for others."""
from __future__ import annotations

import inspect

from zarrx.creation import create_array
from zarrx.errors import ArgumentError, ArgumentTypeError, unexpected_keyword

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
