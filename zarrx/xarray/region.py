"""Writing into variables that already exist: where (``region=``, ``append_dim=``) and how (the
stored variable's own CF encoding, so appended times keep their units and calendar)."""
from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np

from zarrx.array import Array
from zarrx.errors import ArgumentError, ArgumentKeyError, ArgumentTypeError, ZarrError
from zarrx.group import Group
from zarrx.xarray.backend import ZarrxDataStore
from zarrx.xarray.cf_checks import FAILURES, check_units_length, culprit
from zarrx.xarray.time_values import check_times

__all__ = ["resolve_region", "existing_variable", "stored_sizes", "check_packed", "check_width"]

CF_KEYS = ("dtype", "_FillValue", "missing_value", "scale_factor", "add_offset", "units",
           "calendar", "_Encoding", "_Unsigned")


def _decoded(grp: Group, name: str, arr: Array | Group | None = None) -> Any:
    """The stored variable ``name`` decoded (``arr``: its array, when opened already)."""
    from xarray import conventions

    arr = grp[name] if arr is None else arr
    if not isinstance(arr, Array):
        raise ZarrError(f"to_zarrx: {name!r} in {grp.name!r} is a group, not a variable")
    raw = ZarrxDataStore(grp).open_variable(name, arr.metadata)
    check_units_length(name, raw.attrs)
    try:
        return conventions.decode_cf_variable(name, raw)
    except FAILURES as exc:
        raise culprit({name: raw}, {}, exc, grp.name) from exc


def stored_sizes(grp: Group, growing: str | None = None,
                 arrays: list | None = None) -> dict[str, int]:
    """The stored group's dimension lengths (``arrays``: its arrays, when listed already)."""
    return ZarrxDataStore(grp, arrays=arrays).get_dimensions(growing)


def resolve_region(ds: Any, grp: Group, region: Any, existing: Mapping[str, Array],
                   arrays: list | None = None) -> dict[str, slice]:
    """``region`` as ``{dim: slice(start, stop)}`` in the stored arrays, ``"auto"`` entries
    located through the dimension's index coordinate. ``existing``: the stored arrays by name;
    ``arrays``: the group's arrays (:func:`array_metas`), when listed already."""
    if region == "auto":
        region = {d: "auto" for d in ds.dims}
    if not isinstance(region, dict):
        raise ArgumentTypeError(f"to_zarrx: region: expected a dict of dimension -> slice or "
                                f"'auto', found {region!r}")
    sizes = stored_sizes(grp, arrays=arrays)
    out: dict[str, slice] = {}
    for dim, sel in region.items():
        if dim not in ds.dims:
            raise ArgumentError(f"to_zarrx: region names {dim!r}, which is not a dimension of the "
                                f"dataset (found {sorted(map(str, ds.dims))})")
        if str(dim) not in sizes:
            raise ArgumentError(f"to_zarrx: region names {dim!r}, which is not a dimension of the "
                                f"stored group {grp.name!r}")
        n = ds.sizes[dim]
        if isinstance(sel, str) and sel == "auto":
            sel = _locate(ds, grp, str(dim), existing)
        if not isinstance(sel, slice):     # a TypeError, as xarray raises
            raise ArgumentTypeError(f"to_zarrx: region[{dim!r}]: expected a slice or 'auto', "
                                    f"found {type(sel).__name__} {sel!r}")
        if sel.step not in (None, 1):
            raise ArgumentError(f"to_zarrx: region[{dim!r}]: expected a slice with step 1, "
                                f"found {sel!r}")
        if not all(b is None or hasattr(b, "__index__") for b in (sel.start, sel.stop)):
            raise ArgumentTypeError(f"to_zarrx: region[{dim!r}]: expected a slice of integer "
                                    f"positions (labels: region='auto'), found {sel!r}")
        start, stop, _ = sel.indices(sizes[str(dim)])
        stop = max(stop, start)         # (a slice ending before its start covers nothing)
        if stop - start != n:
            raise ArgumentError(f"to_zarrx: region[{dim!r}] = {sel!r} covers {stop - start}"
                                f" elements of the stored {sizes[str(dim)]}, but the dataset has "
                                f"{n} along {dim!r}")
        out[str(dim)] = slice(start, stop)
    return out


def _locate(ds: Any, grp: Group, dim: str, existing: Mapping[str, Array]) -> slice:
    """Where the dataset's ``dim`` coordinate values sit in the stored coordinate."""
    if dim not in ds.indexes:
        return slice(0, ds.sizes[dim])
    if dim not in existing:
        raise ArgumentError(f"to_zarrx: region[{dim!r}] = 'auto' needs the coordinate {dim!r} in "
                            f"the stored group {grp.name!r}")
    import pandas as pd

    stored = pd.Index(np.asarray(_decoded(grp, dim, existing[dim]).values))
    want = ds.indexes[dim]
    if not stored.is_unique:        # (pandas cannot locate labels in it)
        twice = stored[stored.duplicated()][0]
        twice = twice.item() if isinstance(twice, np.generic) else twice
        raise ArgumentError(f"to_zarrx: region[{dim!r}] = 'auto': the stored coordinate "
                            f"{dim!r} holds the value {twice!r} more than once, so labels do "
                            f"not locate the region; give it as region={{{dim!r}: slice(...)}}")
    pos = stored.get_indexer(want)
    if len(pos) == 0:
        return slice(0, 0)
    if (pos < 0).any():     # a KeyError, as xarray raises
        missing = [v for v, p in zip(want, pos) if p < 0]
        raise ArgumentKeyError(f"to_zarrx: region[{dim!r}] = 'auto': {len(missing)} of the "
                               f"dataset's {dim!r} values are not in the stored coordinate "
                               f"(the first: {missing[0]!r})")
    if not np.array_equal(pos, np.arange(pos[0], pos[0] + len(pos))):
        raise ArgumentError(f"to_zarrx: region[{dim!r}] = 'auto': the dataset's {dim!r} values are "
                            f"not one contiguous, ordered run of the stored ones")
    return slice(int(pos[0]), int(pos[0]) + len(pos))


#: the kinds of values, by numpy kind: a stored variable of one kind takes values of its own kind
#: only (numbers also take booleans, complex numbers also take numbers); xarray's coders would
#: cast the others (a time into integers is stored as 0, 7 into booleans as True, 300 into text
#: of width 1 as "3"). Python objects are checked by their elements; text stored as
#: variable-length strings by the stored array's type.
KINDS = {"b": "booleans", "i": "numbers", "u": "numbers", "f": "numbers",
         "c": "complex numbers", "M": "times", "m": "time deltas", "U": "text", "T": "text",
         "S": "bytes"}
TAKES = {"numbers": ("booleans", "numbers"),
         "complex numbers": ("booleans", "numbers", "complex numbers")}


def _check_kind(var: Any, stored_var: Any, name: str) -> Any:
    """``var`` checked to hold values of the stored variable's kind (:data:`KINDS`); Python
    objects written into booleans, numbers, times or time deltas are checked to hold no text
    (as dask values are, block by block as the graph computes). Numbers whose ``units``
    attribute is the stored times' (read with ``decode_times=False``) are times encoded
    already, and taken."""
    stored = stored_var.dtype
    want, given = KINDS.get(stored.kind), KINDS.get(var.dtype.kind)
    if want in ("times", "time deltas") and given == "numbers" and \
            var.attrs.get("units") == stored_var.encoding.get("units") is not None:
        return var
    if want is None or stored.kind == "T":
        return var
    if given is None:
        if var.dtype.kind != "O" or want in ("text", "bytes"):
            return var      # (elements checked with the stored width, see _fixed_text)
        return _each_block(var, _no_text, stored, name)
    if given in TAKES.get(want, (want,)) or {want, given} == {"text", "bytes"}:
        return var          # (text and bytes: refused with the stored width, below)
    raise ArgumentTypeError(f"to_zarrx: variable {name!r}: the stored array holds "
                            f"{stored} values; cannot store values of dtype {var.dtype} "
                            f"({given} into {want})")


def _no_text(block: Any, stored: np.dtype, name: str) -> Any:
    flat = np.asarray(block, dtype=object).reshape(-1).tolist()
    bad = next((v for v in flat if isinstance(v, (str, bytes))), None)
    if bad is not None:
        raise ArgumentTypeError(f"to_zarrx: variable {name!r}: the stored array holds "
                                f"{stored} values; cannot store {type(bad).__name__} {bad!r}")
    return block


def _fixed_text(var: Any, stored: np.dtype, name: str) -> Any:
    """``var``'s strings (Python objects or ``StringDType``; ``stored`` of kind "U") or bytes
    ("S") as fixed-width values of the ``stored`` width, missing values (None, NaN) as empty
    ones; strings too long for it (xarray's coders would cut them) and other values are
    refused. Values held in memory are checked now; dask-backed values block by block as the
    graph computes (one block in memory at a time per task; blocks written before a refused one
    stay written)."""
    if not _is_lazy(var):
        return var.copy(data=_fixed_block(var.values, stored, name))
    fixed = var.data.map_blocks(_fixed_block, stored, name, dtype=stored,
                                meta=np.empty((0,) * var.ndim, stored))
    return var.copy(deep=False, data=fixed)


def _fixed_block(block: Any, stored: np.dtype, name: str) -> np.ndarray:
    kind = stored.kind
    element = str if kind == "U" else bytes
    values = np.asarray(block, dtype=object)
    flat = values.reshape(-1).tolist()
    missing = [v is None or (isinstance(v, float) and v != v) for v in flat]
    bad = next((v for v, m in zip(flat, missing) if not m and not isinstance(v, element)), None)
    if bad is not None:
        raise ArgumentTypeError(f"to_zarrx: variable {name!r}: the stored array holds "
                                f"{element.__name__} values; cannot store {type(bad).__name__} "
                                f"{bad!r}")
    fixed = np.array([element() if m else v for v, m in zip(flat, missing)] or [element()],
                     dtype=kind)
    if fixed.dtype.itemsize > stored.itemsize:
        width = stored.itemsize // (4 if kind == "U" else 1)
        long = next(v for v in flat if isinstance(v, element) and len(v) > width)
        unit = "characters" if kind == "U" else "bytes"
        raise ArgumentError(f"to_zarrx: variable {name!r}: {long!r} is longer than the "
                            f"{width} {unit} of the stored {stored}: fixed-width strings "
                            f"would be cut")
    return fixed[:len(flat)].reshape(values.shape).astype(stored)


def _cut(name: str, given: np.dtype, stored: np.dtype) -> ArgumentError:
    return ArgumentError(f"to_zarrx: variable {name!r} has dtype {given}, but the stored one "
                         f"has {stored}: fixed-width strings would be cut")


def existing_variable(grp: Group, name: str, var: Any, append_dim: Hashable | None,
                      slices: dict, arr: Array | None = None) -> Any:
    """``var`` made ready to write into the stored variable ``name`` (``arr``: its array, when
    opened already): same dimension order, the stored CF encoding (units, calendar, dtype,
    fill value, scale), matching sizes."""
    stored = _decoded(grp, name, arr)
    if set(var.dims) != set(stored.dims):
        raise ArgumentError(f"to_zarrx: variable {name!r} has dimensions {var.dims}, but the "
                            f"stored one has {stored.dims}")
    if var.dims != stored.dims:
        var = var.transpose(*stored.dims)
    var = _check_kind(var, stored, name)
    if var.dtype.kind in "OT" and stored.dtype.kind in "SU":
        var = _fixed_text(var, stored.dtype, name)
    if var.dtype.kind in "SU" and stored.dtype.kind in "SU":
        if var.dtype.kind != stored.dtype.kind:
            raise ArgumentTypeError(f"to_zarrx: variable {name!r} has dtype {var.dtype}, but "
                                    f"the stored one has {stored.dtype}: expected "
                                    f"{'bytes' if stored.dtype.kind == 'S' else 'text'}")
        if var.dtype.itemsize > stored.dtype.itemsize:     # (shorter ones fit)
            raise _cut(name, var.dtype, stored.dtype)
    for dim, n_new, n_old in zip(var.dims, var.shape, stored.shape):
        if dim == append_dim or str(dim) in slices:
            continue
        if n_new != n_old:
            raise ArgumentError(f"to_zarrx: variable {name!r} has {n_new} elements along "
                                f"{dim!r}, but the stored one has {n_old}; use append_dim= to "
                                f"grow it or region= to write part of it")
    var = var.copy(deep=False)
    # (a StringDType "dtype" marks how the strings were read, not a conversion to make)
    var.encoding = {k: v for k, v in stored.encoding.items() if k in CF_KEYS
                    and not (k == "dtype" and np.dtype(v).kind == "T")}
    return check_times(check_packed(var, name), name)


def check_packed(var: Any, name: str) -> Any:
    """``var`` with its numbers checked to fit the integers its encoding stores them as (a
    stored variable's, or a new one's ``dtype``) once packed by its ``scale_factor`` /
    ``add_offset`` (xarray's coders cast them: 70000 would wrap to 4464 in int16), NaN needing
    a ``_FillValue`` (or ``missing_value``) to stand for it (it would become 0). Values held
    in memory are checked now; dask-backed values block by block as the graph computes, each
    before the coders cast it (blocks written before a refused one stay written)."""
    enc = var.encoding
    try:
        dtype = np.dtype(enc.get("dtype", var.dtype))
    except TypeError:                   # (a dtype xarray's coders refuse, naming it)
        return var
    if var.dtype.kind == "c" and dtype.kind in "biuf":
        raise ArgumentTypeError(f"to_zarrx: encoding of {name!r}: dtype {dtype}: cannot hold "
                                f"complex numbers (xarray's coders would drop their imaginary "
                                f"parts)")
    if dtype.kind == "b" and var.dtype.kind in "iuf":
        return _each_block(var, _bool_block, name)
    if dtype.kind not in "iu" or var.dtype.kind not in "biuf" or (
            dtype == var.dtype and "scale_factor" not in enc and "add_offset" not in enc
            and "_Unsigned" not in enc):
        return var
    if not all(_real(enc[k]) for k in ("scale_factor", "add_offset") if k in enc):
        return var      # (xarray's coders refuse it, and write_plan names the variable)
    dtype = _unsigned_view(enc, dtype)
    if not _is_lazy(var):
        _check_numbers(var.values, var.dtype, enc, dtype, name)
        return var
    checked = var.data.map_blocks(_checked_block, var.dtype, enc, dtype, name,
                                  dtype=var.dtype, meta=np.empty((0,) * var.ndim, var.dtype))
    return var.copy(deep=False, data=checked)


def _bool_block(block: Any, name: str) -> Any:
    """``block`` when its numbers are all 0 or 1, which the encoding's ``dtype`` bool holds
    (xarray's coders cast any other, NaN too, to True)."""
    values = np.asarray(block)
    bad = values[(values != 0) & (values != 1)]
    if bad.size:
        raise ArgumentError(f"to_zarrx: variable {name!r}: {bad.reshape(-1)[0].item()!r} does "
                            f"not fit the booleans of the dtype its encoding names (0 or 1); "
                            f"it would be stored as True")
    return block


def _unsigned_view(enc: dict, dtype: np.dtype) -> np.dtype:
    """The integers the stored ``dtype`` reads back as under the encoding's ``_Unsigned``:
    ``"true"`` reads signed integers as the unsigned ones of their size, ``"false"`` unsigned
    ones as signed, when a ``_FillValue`` (or ``missing_value``) is given, as xarray's coders
    apply it only then (casting the values to ``dtype`` with wrap-around)."""
    flag = enc.get("_Unsigned")
    if enc.get("_FillValue", enc.get("missing_value")) is None:
        return dtype
    if flag == "true" and dtype.kind == "i":
        return np.dtype(f"u{dtype.itemsize}")
    if flag == "false" and dtype.kind == "u":
        return np.dtype(f"i{dtype.itemsize}")
    return dtype


def check_width(var: Any, name: str) -> Any:
    """A new variable's strings (or bytes) checked to fit the fixed width of the text (or
    bytes) ``dtype`` its encoding names, which xarray's coders cast them to, cutting longer
    ones ("abc" as "ab" in "U2"). Not ``"S1"``, text stored as characters, nor bytes
    holding text in an ``_Encoding`` (sized by its encoded length). Values held in memory are
    checked now, dask values block by block as the graph computes (as numbers are)."""
    enc = var.encoding
    dtype = enc.get("dtype")
    try:
        want = np.dtype(dtype) if dtype is not None else None
    except TypeError:                   # (a dtype xarray's coders refuse, naming it)
        return var
    if want is None or want.kind not in "SU" or not want.itemsize or \
            (want.kind == "S" and ("_Encoding" in enc or want.itemsize == 1)):
        return var
    return _each_block(var, _width_block, want, name)


def _width_block(block: Any, want: np.dtype, name: str) -> Any:
    width, unit = (want.itemsize // 4, "characters") if want.kind == "U" else \
        (want.itemsize, "bytes")
    values = np.asarray(block)
    if values.dtype.kind in "SU":       # (numpy's width says how long they can be)
        if values.dtype.itemsize // (4 if values.dtype.kind == "U" else 1) <= width:
            return block
        values = values[np.char.str_len(values) > width]
    for value in values.reshape(-1).tolist():
        if isinstance(value, (str, bytes)) and len(value) > width:
            raise ArgumentError(f"to_zarrx: variable {name!r}: {value!r} is longer than the "
                                f"{width} {unit} of {want}, the dtype its encoding names; it "
                                f"would be cut")
    return block


def _real(value: Any) -> bool:
    """Whether ``value`` is one number (a netCDF-style list of one included)."""
    try:
        return np.asarray(value, dtype="f8").size == 1
    except (TypeError, ValueError):
        return False


def _checked_block(block: np.ndarray, given: np.dtype, enc: dict, dtype: np.dtype,
                   name: str) -> np.ndarray:
    _check_numbers(block, given, enc, dtype, name)
    return block


def _check_numbers(data: Any, given: np.dtype, enc: dict, dtype: np.dtype, name: str) -> None:
    """An ArgumentError naming the variable, the first value out of range and the stored type
    when ``data`` (of dtype ``given``) does not fit the integer ``dtype`` once packed."""
    packed = "scale_factor" in enc or "add_offset" in enc
    values = np.asarray(data, dtype="f8" if given.kind == "f" or packed else None)
    if values.dtype.kind == "f":
        missing = np.isnan(values)
        if missing.any() and enc.get("_FillValue", enc.get("missing_value")) is None:
            raise ArgumentError(f"to_zarrx: variable {name!r}: NaN cannot be stored in the "
                                f"stored {dtype} values, which have no _FillValue")
        values = values[~missing]
        offset, scale = (np.asarray(enc.get(k, d), dtype="f8").item()
                         for k, d in (("add_offset", 0.0), ("scale_factor", 1.0)))
        values = np.around((values - offset) / scale)
    if not values.size:
        return
    info = np.iinfo(dtype)
    low, high = values.min(), values.max()
    if low < info.min or high > info.max or not np.isfinite([low, high]).all():
        bad = (low if low < info.min or not np.isfinite(low) else high).item()
        what = f"a value packed by scale_factor/add_offset to {bad!r}" if packed else repr(bad)
        raise ArgumentError(f"to_zarrx: variable {name!r}: {what} does not fit the stored "
                            f"{dtype} values ({info.min} to {info.max})")


def _is_lazy(var: Any) -> bool:
    return type(var.data).__module__.split(".")[0] == "dask"


def _each_block(var: Any, check: Any, *args: Any) -> Any:
    """``var``, with ``check(values, *args)`` run over its values now, or over each dask block
    as it is computed (the check raises, or returns the block)."""
    if not _is_lazy(var):
        check(var.values, *args)
        return var
    checked = var.data.map_blocks(check, *args, dtype=var.dtype,
                                  meta=np.empty((0,) * var.ndim, var.dtype))
    return var.copy(deep=False, data=checked)
