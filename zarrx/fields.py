"""Field selections of structured arrays: ``z["x"]``, ``z["x", 1:3]``, ``z[["x", "y"]]`` and
the ``fields=`` argument of the selection methods, as in numpy and zarr-python.

A field selection reads whole records and then takes the fields (a write reads the records,
sets the fields and writes the records back), so it costs what reading the records costs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.errors import IndexingError, IndexingValueError
from zarrx.metadata._util import few_names

__all__ = ["pop_fields", "check_fields", "take_fields"]

Fields = str | list[str] | tuple[str, ...]


def pop_fields(selection: Any) -> tuple[Fields | None, Any]:
    """``(fields, the rest of the selection)``: a field name or a list of field names alone, or
    field names among the items of a tuple (zarr-python's rule)."""
    if isinstance(selection, str):
        return selection, Ellipsis
    if isinstance(selection, list) and selection and all(isinstance(s, str) for s in selection):
        return list(selection), Ellipsis
    if not isinstance(selection, tuple):
        return None, selection
    names = [s for s in selection if isinstance(s, str)]
    if not names:
        return None, selection
    rest = tuple(s for s in selection if not isinstance(s, str))
    return (names[0] if len(names) == 1 else names), \
        (rest[0] if len(rest) == 1 else rest if rest else Ellipsis)


def check_fields(fields: Fields, dtype: np.dtype, where: str) -> list[str] | str:
    """``fields`` checked against the structured ``dtype`` (an IndexingError naming what is
    wrong: no fields at all, or an unknown name)."""
    if dtype.names is None:
        raise IndexingError(f"{where}: fields {fields!r} selected, but the array's data type "
                            f"{dtype} has no fields")
    names = [fields] if isinstance(fields, str) else \
        list(fields) if isinstance(fields, (list, tuple)) else []
    if not names or not all(isinstance(n, str) for n in names):
        raise IndexingError(f"{where}: fields: expected a field name or a list of field names, "
                            f"found {fields!r}")
    if len(set(names)) < len(names):    # numpy's ValueError there
        seen: set[str] = set()
        twice = sorted({n for n in names if n in seen or seen.add(n)})
        raise IndexingValueError(f"{where}: fields: expected each field once, found "
                                 f"{few_names(twice, 'names')} more than once")
    known = set(dtype.names)
    for n in names:
        if n not in known:
            raise IndexingError(f"{where}: no field {n!r}; the fields are "
                                f"{few_names(dtype.names)}")
    return fields if isinstance(fields, str) else names


def take_fields(records: Any, fields: Fields) -> Any:
    """The fields of ``records`` (an array or one record) as a new array (or scalar); several
    fields keep their order and are packed."""
    if isinstance(fields, str):
        out = records[fields]
        return out.copy() if isinstance(out, np.ndarray) else out
    sub = np.asarray(records)[list(fields)]
    packed = np.empty(sub.shape, dtype=[(n, sub.dtype.fields[n][0]) for n in fields])
    for n in fields:
        packed[n] = sub[n]
    return packed if isinstance(records, np.ndarray) else packed[()]
