"""The CF attributes of the variables a read decodes, checked before xarray decodes them: a
malformed one (``scale_factor: [1, 2]``, ``add_offset: "x"``, time ``units`` that do not
parse, an unknown ``calendar``, a ``missing_value`` that is no number) is a
:class:`~zarrx.errors.MetadataError` naming the variable, the attribute, what was found and
what was expected, raised when the dataset is opened. xarray would raise its own errors
(``ValueError``, ``TypeError``, numpy's ``UFuncTypeError``), some of them only when the values
are loaded. Only the attributes the read decodes are checked: ``decode_cf=False`` (and
``mask_and_scale=False``, ``decode_times=False``) read the raw values whatever they hold.

Each variable is then decoded by xarray as a one-element array of its type with its
attributes; what still fails there is a MetadataError naming the variable and quoting xarray."""
from __future__ import annotations

import importlib.util
import warnings
from typing import Any

import numpy as np
try:                                    # (older xarray keeps it in coding.variables)
    from xarray.coding.common import _ElementwiseFunctionArray
except ImportError:
    from xarray.coding.variables import _ElementwiseFunctionArray

from zarrx.errors import ArgumentError, MetadataError, ZarrError
from zarrx.metadata._util import short

__all__ = ["check_variables", "check_units_length", "checked_dataset", "culprit",
           "guard_times", "FAILURES", "MAX_UNITS"]

_REAL = (int, float, np.integer, np.floating)
_NON_FINITE = ("NaN", "nan", "Infinity", "-Infinity", "inf", "-inf")
#: the longest time units decoded (``days since 1850-01-01T00:00:00.000000+00:00`` is 43)
MAX_UNITS = 256
_CF_ATTRS = ("scale_factor", "add_offset", "_FillValue", "missing_value", "_Unsigned",
             "units", "calendar", "_Encoding", "dtype")


def _real(value: Any) -> bool:
    return isinstance(value, _REAL) and not isinstance(value, (bool, np.bool_))


def _one(value: Any) -> Any:
    """A one-element list as its element (netCDF attributes are vectors)."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _bad(name: str, attr: str, want: str, found: Any) -> MetadataError:
    return MetadataError(f"variable {name!r}: attribute {attr}: expected {want}, found "
                         f"{short(found, 80)}")


def check_variables(variables: Any, decode: dict[str, Any]) -> None:
    """Check the CF attributes of ``variables`` (name -> Variable) that xarray decodes with
    the read's arguments ``decode`` (``mask_and_scale``, ``decode_times``, ...)."""
    for name, var in variables.items():
        _check(str(name), var, decode)


def _check(name: str, var: Any, decode: dict[str, Any]) -> None:
    attrs, kind = var.attrs, var.dtype.kind
    if decode.get("mask_and_scale", True):
        for attr in ("scale_factor", "add_offset"):
            if attr in attrs and attrs[attr] is not None and not _real(_one(attrs[attr])):
                raise _bad(name, attr, "a number (or a list of one number)", attrs[attr])
        if kind in "iufc":
            for attr in ("_FillValue", "missing_value"):
                value = attrs.get(attr)
                items = value if attr == "missing_value" and isinstance(value, list) else \
                    [_one(value)]
                if value is not None and not all(
                        _real(v) or isinstance(v, (complex, np.complexfloating)) or
                        (kind in "fc" and isinstance(v, str) and v in _NON_FINITE)
                        for v in items):
                    raise _bad(name, attr, f"a number, a value of its type {var.dtype}",
                               value)
    if decode.get("decode_times", True):
        check_units_length(name, attrs)
    calendar = attrs.get("calendar")
    if decode.get("decode_times", True) and calendar is not None and \
            not isinstance(calendar, str):
        raise _bad(name, "calendar", "a calendar's name (standard, noleap, 360_day, ...)",
                   calendar)
    if kind == "S" and "_Encoding" in attrs and decode.get("concat_characters", True):
        import codecs
        enc = attrs["_Encoding"]
        try:
            ok = isinstance(enc, str) and codecs.lookup(enc) is not None
        except LookupError:
            ok = False
        if not ok:
            raise _bad(name, "_Encoding", "the name of a text encoding (utf-8)", enc)
    _sample(name, var, decode)


def check_units_length(name: str, attrs: Any) -> None:
    """Time units longer than :data:`MAX_UNITS` are a MetadataError: their date is parsed
    by dateutil in time quadratic in its length (a megabyte of digits took minutes)."""
    units = attrs.get("units")
    if isinstance(units, str) and len(units) > MAX_UNITS and " since " in units:
        raise _bad(name, "units", f"CF time units ('<unit> since <date>') of at most "
                   f"{MAX_UNITS} characters", f"{units[:60]}... ({len(units)} characters)")


def _sample(name: str, var: Any, decode: dict[str, Any]) -> None:
    """Decode a one-element array of ``var``'s type with its attributes as xarray decodes the
    variable: what fails there fails for its attributes."""
    if var.dtype.kind not in "biufcSUmM":
        return
    from xarray import Variable
    from xarray.conventions import decode_cf_variable
    sample = Variable(var.dims, np.zeros((1,) * var.ndim, var.dtype), dict(var.attrs),
                      dict(var.encoding))
    # (times decoded from zeros would say nothing of the stored ones: see culprit())
    flags = {k: decode[k] for k in ("concat_characters", "mask_and_scale") if k in decode}
    flags.update(decode_times=False, decode_timedelta=False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.asarray(decode_cf_variable(name, sample, **flags).values)
    except (ValueError, TypeError, OverflowError, LookupError, ArithmeticError,
            AttributeError, KeyError, IndexError) as exc:
        shown = {k: var.attrs[k] for k in _CF_ATTRS if k in var.attrs}
        raise MetadataError(f"variable {name!r}: xarray cannot decode it with its attributes "
                            f"{short(shown, 200)} ({_said(exc)})") from exc


def _said(failure: BaseException) -> str:
    """What xarray said: its error's type and first line."""
    text = str(failure).splitlines()[0] if str(failure) else ""
    return f"xarray: {type(failure).__name__}: {short(text, 200)}"


#: what xarray's decoding raises for what a store holds (ImportError: times only cftime
#: represents, without cftime)
FAILURES = (ValueError, TypeError, OverflowError, LookupError, ArithmeticError,
            AttributeError, IndexError, ImportError)


def culprit(variables: Any, decode: dict[str, Any], exc: BaseException,
            where: str) -> ZarrError:
    """The MetadataError for ``exc``, which xarray raised decoding ``variables`` (at ``where``,
    a group): the first variable whose decoding fails alone is named, with the time attribute
    at fault (``calendar`` when it decodes without it, else ``units``; an ArgumentError for
    ``use_cftime=True`` without cftime)."""
    from xarray.conventions import decode_cf_variable
    flags = {k: decode[k] for k in ("concat_characters", "mask_and_scale", "decode_times",
                                    "use_cftime", "decode_timedelta") if k in decode}

    def fails(name: str, var: Any) -> BaseException | None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                decoded = decode_cf_variable(name, var, **flags)
                if var.dims == (name,):     # an index: decoded when the dataset opens
                    decoded.load()
        except FAILURES as failure:
            return failure
        return None

    for name, var in variables.items():
        failure = fails(str(name), var)
        if failure is None:
            continue
        attrs = var.attrs
        if isinstance(attrs.get("units"), str) and " since " in attrs["units"]:
            if flags.get("use_cftime") is True and importlib.util.find_spec("cftime") is None:
                # (the argument, not the stored units or calendar)
                return ArgumentError(
                    f"variable {name!r}: use_cftime=True decodes its times (units "
                    f"{short(attrs['units'], 80)}) with cftime, which is not installed "
                    f"(install cftime, or leave use_cftime out) ({_said(failure)})")
            cal = attrs.get("calendar")
            plain = var.copy(deep=False)
            plain.attrs = {k: v for k, v in attrs.items() if k != "calendar"}
            if cal is not None and fails(str(name), plain) is None:
                known = _known_calendar(cal)
                if known == "needs cftime":
                    return MetadataError(
                        f"variable {name!r}: attribute calendar: expected a calendar xarray "
                        f"decodes without cftime (standard, gregorian, proleptic_gregorian), "
                        f"found {short(cal, 80)}, which needs cftime (not installed; or read "
                        f"with decode_times=False) ({_said(failure)})")
                if known:
                    return _Times(str(name), attrs["units"], cal).error(failure)
                return MetadataError(
                    f"variable {name!r}: attribute calendar: expected a CF calendar xarray "
                    f"decodes (standard, proleptic_gregorian, noleap, 365_day, 360_day, "
                    f"julian, all_leap, 366_day), found {short(cal, 80)} ({_said(failure)})")
            return MetadataError(
                f"variable {name!r}: attribute units: expected CF time units ('<unit> since "
                f"<date>', days since 2000-01-01) by which xarray decodes the values stored, "
                f"found {short(attrs['units'], 80)} ({_said(failure)})")
        shown = {k: attrs[k] for k in _CF_ATTRS if k in attrs}
        return MetadataError(f"variable {name!r}: xarray cannot decode it with its attributes "
                             f"{short(shown, 200)} ({_said(failure)})")
    return MetadataError(f"{where}: xarray cannot decode the dataset ({_said(exc)})")


_CFTIME_ONLY = ("noleap", "365_day", "360_day", "julian", "all_leap", "366_day")


def _known_calendar(calendar: Any) -> str | bool:
    """Whether ``calendar`` is a CF calendar xarray knows: True, or "needs cftime" for one
    only cftime decodes while it is not installed; False for another name."""
    if not isinstance(calendar, str):
        return False
    cal = calendar.lower()
    if cal in ("standard", "gregorian", "proleptic_gregorian"):
        return True
    if cal not in _CFTIME_ONLY:
        return False
    return True if importlib.util.find_spec("cftime") is not None else "needs cftime"


class _Times:
    """The element function of :func:`guard_times` (none: the values as decoded), and the
    error naming the variable whose stored times xarray cannot decode."""

    def __init__(self, name: str, units: Any, calendar: Any) -> None:
        self.name, self.units, self.calendar = name, units, calendar

    def __call__(self, values: Any) -> Any:
        return values

    def error(self, failure: BaseException) -> MetadataError:
        cal = "" if self.calendar is None else f" and calendar {short(self.calendar, 40)}"
        return MetadataError(f"variable {self.name!r}: its stored values are no times xarray "
                             f"decodes by its units {short(self.units, 80)}{cal} "
                             f"({_said(failure)})")


class _Guarded(_ElementwiseFunctionArray):
    """A lazily decoded variable whose decoding errors are ``func.error(...)``."""

    def get_duck_array(self) -> Any:
        try:
            return self.array.get_duck_array()
        except ZarrError:       # (the store's: a chunk that does not decode, named by it)
            raise
        except FAILURES as failure:
            raise self.func.error(failure) from failure

    async def async_get_duck_array(self) -> Any:
        try:
            return await self.array.async_get_duck_array()
        except ZarrError:
            raise
        except FAILURES as failure:
            raise self.func.error(failure) from failure


def guard_times(ds: Any) -> None:
    """Make what xarray cannot decode of the stored times of ``ds``'s lazily decoded variables
    (a value beyond ``datetime64[ns]`` without cftime), found as they load, a MetadataError
    naming the variable; their attributes were checked when the dataset opened."""
    for name, var in ds.variables.items():
        units = var.encoding.get("units")
        if var.dtype.kind in "mMO" and units is not None and \
                not isinstance(var._data, np.ndarray):
            var._data = _Guarded(var._data, _Times(str(name), units,
                                                  var.encoding.get("calendar")), var.dtype)


def checked_dataset(store: Any, **decode: Any) -> Any:
    """The Dataset of ``store`` (a :class:`~zarrx.xarray.backend.ZarrxDataStore`) decoded with
    ``decode``, its CF attributes checked first."""
    from xarray.backends import StoreBackendEntrypoint
    dropped = decode.get("drop_variables")
    dropped = {dropped} if isinstance(dropped, str) else set(dropped or ())
    variables = {k: v for k, v in store.get_variables().items() if k not in dropped}
    if decode.get("mask_and_scale", True):
        for name, problem in store.fill_problems.items():
            if name in variables:           # an unreadable _FillValue, which would mask
                raise problem
    check_variables(variables, decode)
    try:
        ds = StoreBackendEntrypoint().open_dataset(store, **decode)
        for name in ds.dims:                # decoded now, as xarray indexes them next
            if name in ds.variables and ds.variables[name].ndim == 1:
                ds.variables[name].load()
        guard_times(ds)
        return ds
    except FAILURES as exc:
        if isinstance(exc, ZarrError):
            raise
        raise culprit(variables, decode, exc, store.group.name) from exc
