"""Times and time deltas stored as integers (xarray's CF encoding: ``units`` such as "seconds
since 2000-01-01", an integer ``dtype``) checked to be stored exactly: in range of the integer
type, in the units the attributes name, NaT only where a ``_FillValue`` stands for it.
xarray's coders store them wrapped (2100 in int32 seconds since 2000 reads back as 1963), in
finer units than an appended-to variable's attributes name, or NaT as 0."""
from __future__ import annotations

from typing import Any

import numpy as np

from zarrx.errors import ArgumentError, ArgumentTypeError, MissingDependencyError, ZarrError

__all__ = ["check_times", "check_encoded_times", "cf_refused"]


def check_times(var: Any, name: str, whose: str = "the stored variable's") -> Any:
    """``var`` with its times (or time deltas) checked to be stored exactly by the integers
    and in the units of its encoding (``whose``: the stored variable's, as
    :func:`~zarrx.xarray.region.existing_variable` sets it): xarray's coders would encode
    them in finer units the stored attributes do not name (2000-01-03T00:00:00.5 in "seconds
    since 2000-01-01" read back as 2005), or let them wrap (2100 in int32 seconds since 2000
    read back as 1963). Checked now, or block by block for dask values (as numbers are)."""
    enc = var.encoding
    if var.dtype.kind not in "mM" or "units" not in enc:
        return var
    try:
        dtype = np.dtype(enc.get("dtype", "i8"))
    except TypeError:                   # (a dtype xarray's coders refuse, naming it)
        return var
    if dtype.kind not in "iu":
        return var
    if not _lazy(var.data):
        _check_time_block(var.values, enc, dtype, name, whose)
        return var
    if var.dtype.kind == "M" and not {"units", "calendar"} & set(var.attrs):
        # encoded here, block by block as values in memory are: xarray's lazy encoding refuses
        # a block of only NaT ("Times can't be serialized faithfully") unless its units are
        # as fine as the reference date's offset from 1970-01-01
        import xarray as xr

        encoded = var.data.map_blocks(_encode_time_block, enc, dtype, name, whose,
                                      dtype=np.int64, meta=np.empty((0,) * var.ndim, np.int64))
        attrs = {**var.attrs, "units": enc["units"],
                 "calendar": enc.get("calendar") or "proleptic_gregorian"}
        rest = {k: v for k, v in enc.items() if k not in ("units", "calendar")}
        return xr.Variable(var.dims, encoded, attrs, rest)
    checked = var.data.map_blocks(_check_time_block, enc, dtype, name, whose, dtype=var.dtype,
                                  meta=np.empty((0,) * var.ndim, var.dtype))
    return var.copy(deep=False, data=checked)


def _encode_time_block(block: np.ndarray, enc: dict, dtype: np.dtype, name: str,
                       whose: str) -> np.ndarray:
    """A block of times checked (:func:`_check_time_block`), then encoded in ``enc``'s units
    as xarray's coders encode times in memory (NaT as the least int64, which its mask coder
    turns into the ``_FillValue``)."""
    import warnings

    from xarray.coding.times import encode_cf_datetime

    _check_time_block(block, enc, dtype, name, whose)
    values = np.asarray(block)
    if np.isnat(values).all():      # (no unit or calendar applies; xarray's coders refuse
        # some: "standard" compares the earliest time, none, with the Gregorian reform)
        return np.full(values.shape, np.iinfo(np.int64).min, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        num, _, _ = encode_cf_datetime(values, enc["units"], enc.get("calendar"), dtype)
    return np.asarray(num, dtype=np.int64)


def _check_time_block(block: np.ndarray, enc: dict, dtype: np.dtype, name: str,
                      whose: str) -> np.ndarray:
    import warnings

    from xarray.coding.times import encode_cf_datetime, encode_cf_timedelta

    values = np.asarray(block)
    units = enc["units"]
    missing = np.isnat(values)
    present = values[~missing]          # (NaT needs no unit: it is encoded apart)
    where = f"to_zarrx: variable {name!r}"
    if present.size:
        try:
            with warnings.catch_warnings():     # (the units it would change to: refused below)
                warnings.simplefilter("ignore")
                if values.dtype.kind == "M":
                    num, used, _ = encode_cf_datetime(present, units, enc.get("calendar"),
                                                      dtype)
                else:
                    num, used = encode_cf_timedelta(present, units, dtype)
        except (TypeError, AttributeError, ValueError, LookupError, OverflowError) as exc:
            # refused as the eager encoding of the variable names it (dask values would raise
            # xarray's own error as the graph computes)
            raise cf_refused(where, exc) from exc
        if _unit(used) != _unit(units):     # (the units and reference date may be respelled)
            raise ArgumentError(f"{where}: its values cannot be stored exactly as {dtype} "
                                f"{units!r}, {whose} units (they would need {used!r})")
    else:
        num = np.zeros(0, dtype)
    fill = enc.get("_FillValue", enc.get("missing_value"))
    _check_range(np.asarray(num), np.zeros(np.shape(num), bool),
                 bool(missing.any()) and fill is None, dtype, units, name)
    return block


def cf_refused(where: str, exc: Exception) -> ZarrError:
    """The error for what xarray's CF coders refused with ``exc`` (``where``: the variable):
    an ArgumentTypeError for a TypeError or AttributeError (a calendar of 5), else an
    ArgumentError (KeyError: time units it cannot parse; LookupError: an unknown
    ``_Encoding``; OverflowError: a ``_FillValue`` the stored type cannot hold, -9 for
    uint16). Times pandas cannot count from the reference date (out of its range) are encoded
    with cftime: without it, xarray's coders fail on its missing module (an AttributeError),
    a MissingDependencyError naming it."""
    said = f"{where}: xarray's CF encoding refused it ({type(exc).__name__}: {exc})"
    if isinstance(exc, AttributeError) and "'NoneType'" in str(exc) \
            and ("num2date" in str(exc) or "date2num" in str(exc)):
        return MissingDependencyError(f"{said}; times too far from the reference date to count "
                                      f"in nanoseconds are encoded with the cftime package, "
                                      f"which is not installed")
    error = ArgumentTypeError if isinstance(exc, (TypeError, AttributeError)) else ArgumentError
    return error(said)


def check_encoded_times(var: Any, encoded: Any, name: str) -> None:
    """ArgumentError naming the variable when ``encoded`` (``var``'s times held in memory,
    CF-encoded for a new array) does not hold them: xarray's coders cast them to the integer
    type asked for (wrapping them) and NaT to 0 without a ``_FillValue``. They are checked
    from ``var``'s times in the units the coders chose. (Dask values are checked block by
    block by :func:`check_times` before they are encoded.)"""
    dtype = np.dtype(encoded.dtype)
    units = encoded.attrs.get("units")
    if var.dtype.kind not in "mM" or dtype.kind not in "iu" or _lazy(var.data) \
            or not isinstance(units, str):
        return
    enc = {k: encoded.attrs[k] for k in ("units", "calendar", "_FillValue", "missing_value")
           if encoded.attrs.get(k) is not None}
    _check_time_block(var.values, enc, dtype, name, "its encoding's")


def _check_range(num: np.ndarray, missing: np.ndarray, nat_unfilled: bool, dtype: np.dtype,
                 units: Any, name: str) -> None:
    """ArgumentError naming the variable when NaT has no _FillValue (``nat_unfilled``) or an
    encoded value (``num`` where not ``missing``) is out of the range of ``dtype``."""
    where = f"to_zarrx: variable {name!r}"
    if nat_unfilled and dtype != np.dtype("i8"):
        raise ArgumentError(f"{where}: NaT cannot be stored in the stored {dtype} values, "
                            f"which have no _FillValue")
    num = np.asarray(num)[~missing]
    info = np.iinfo(dtype)
    if num.size and (num.min() < info.min or num.max() > info.max):
        bad = (num.min() if num.min() < info.min else num.max()).item()
        raise ArgumentError(f"{where}: a value encoded as {bad!r} {units!r} does not fit the "
                            f"stored {dtype} values ({info.min} to {info.max})")


def _unit(units: str) -> str:
    """The time unit of CF ``units`` as xarray's coders spell it either way: "days since
    2000-01-01", "Day since 2000-1-1" -> "day"."""
    words = units.split()
    return words[0].lower().rstrip("s") if words else ""


def _lazy(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "dask"
