"""The value conversion of the ``cast_value`` codec (zarr-extensions), exact for every
integer and floating-point type zarrx has.

The procedure, per item: the scalar map first (the first pair whose input equals the item, NaN
matching NaN), then the item's own value when the target type holds it exactly, then rounding
(to the target's neighbours of the item: ``nearest-even``, ``towards-zero``,
``towards-positive``, ``towards-negative``, ``nearest-away``) and, for a value past the
target's range, ``out_of_range`` (none: an error; ``clamp``: the extreme, or the infinity of a
type that has one; ``wrap``: modulo 2**N for integer targets). NaN passes between types that
have it; NaN or an infinity into a type without it is an error. Signed zero is kept.

Exactness: integers are never converted through a float64 they do not fit in (for int64 and
uint64 values beyond 2**53 the remainder from the nearest float64 is worked out in integers,
and a narrower float target rounds from the float64 rounded to odd); floats are compared with
the target's neighbours exactly (every supported float is a float64 value), using the table
of a type's values for types of at most 16 bits and ``nextafter`` for float32.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

__all__ = ["VType", "vtype", "cast_values", "CastFailure", "same_value", "PairMap"]

_F8 = np.dtype(np.float64)
_U64 = np.dtype(np.uint64)
_I64 = np.dtype(np.int64)
_BITS = {"int2": 2, "uint2": 2, "int4": 4, "uint4": 4}
_IEEE = (np.dtype(np.float16), np.dtype(np.float32))
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class CastFailure(Exception):
    """An item the procedure cannot convert: ``value`` (a Python number), ``why``."""

    def __init__(self, value: Any, why: str) -> None:
        super().__init__(why)
        self.value, self.why = value, why


@dataclass(frozen=True, eq=False)
class VType:
    """What the procedure needs of one data type."""

    dt: np.dtype
    name: str
    is_int: bool
    lo: int = 0                       # integers: the range
    hi: int = 0
    bits: int = 0
    has_nan: bool = False             # floats
    has_inf: bool = False
    signed_zero: bool = False
    table: np.ndarray | None = None   # the sorted finite values of a float of <= 16 bits
    fmax: float = 0.0                 # the largest and smallest finite values
    fmin: float = 0.0


@lru_cache(maxsize=None)
def vtype(dt: np.dtype, name: str) -> VType:
    dt = np.dtype(dt)
    if name.startswith(("int", "uint")):
        if name in _BITS:
            import ml_dtypes
            info: Any = ml_dtypes.iinfo(dt)
        else:
            info = np.iinfo(dt)
        return VType(dt, name, True, int(info.min), int(info.max),
                     _BITS.get(name, 8 * dt.itemsize))
    with np.errstate(all="ignore"):
        probe = np.array([np.nan, np.inf, -0.0]).astype(dt).astype(_F8)
        table = None
        if dt.itemsize <= 2:
            codes = np.arange(1 << (8 * dt.itemsize), dtype=_UINT[dt.itemsize]).view(dt)
            vals = codes.astype(_F8)
            table = np.unique(vals[np.isfinite(vals)])
            fmax, fmin = float(table[-1]), float(table[0])
        else:
            fi = np.finfo(dt)
            fmax, fmin = float(fi.max), float(fi.min)
    return VType(dt, name, False, has_nan=bool(np.isnan(probe[0])),
                 has_inf=bool(np.isinf(probe[1])), signed_zero=bool(np.signbit(probe[2])),
                 table=table, fmax=fmax, fmin=fmin)


def same_value(a: Any, b: Any, t: VType) -> bool:
    """Whether ``a`` and ``b``, values of ``t``, are the same number (NaN as NaN, -0.0
    apart from 0.0); integers compared as integers."""
    if t.is_int:
        return int(a) == int(b)
    fa, fb = float(a), float(b)
    if math.isnan(fa) or math.isnan(fb):
        return math.isnan(fa) and math.isnan(fb)
    return fa == fb and math.copysign(1.0, fa) == math.copysign(1.0, fb)


class PairMap(tuple):
    """Scalar-map pairs (source value, target value), as a tuple, with a sorted table of
    their keys built once (a long map is looked up by binary search, not pair by pair)."""

    def table(self, src: VType, key_dt: np.dtype, tgt: VType
              ) -> tuple[np.ndarray, np.ndarray, Any]:
        """(sorted keys other than NaN, their values, the value of the first NaN key)."""
        got = self.__dict__.get("_table")
        if got is None or got[0] != (key_dt, tgt.dt):
            keys = np.array([k for k, _ in self], dtype=src.dt).astype(key_dt)
            vals = np.array([v for _, v in self], dtype=tgt.dt)
            nan = np.isnan(keys) if key_dt.kind == "f" else np.zeros(keys.shape, bool)
            first_nan = vals[np.argmax(nan)] if nan.any() else None
            uniq, first = np.unique(keys[~nan], return_index=True)   # first occurrences
            got = self.__dict__["_table"] = ((key_dt, tgt.dt), uniq, vals[~nan][first],
                                             first_nan)
        return got[1], got[2], got[3]


def _looked_up(wide: np.ndarray, pairs: PairMap, src: VType, tgt: VType, out: np.ndarray
               ) -> np.ndarray:
    """The items of ``wide`` a key of ``pairs`` matches (their values set in ``out``)."""
    keys, vals, nan_value = pairs.table(src, wide.dtype, tgt)
    hit = np.zeros(wide.shape, bool)
    if keys.size:
        pos = np.minimum(np.searchsorted(keys, wide), keys.size - 1)
        hit = keys[pos] == wide
        out[hit] = vals[pos[hit]]
    if nan_value is not None:
        nan = np.isnan(wide)
        out[nan] = nan_value
        hit |= nan
    return hit


def cast_values(arr: np.ndarray, src: VType, tgt: VType, rounding: str,
                out_of_range: str | None, pairs: Sequence[tuple[Any, Any]] = ()
                ) -> np.ndarray:
    """``arr`` (of ``src``'s type) converted to ``tgt``'s; ``pairs``: the scalar map, as
    (source value, target value) numpy scalars. Raises :class:`CastFailure` (for the first
    item that cannot be converted). A large chunk goes by blocks of ``_BLOCK`` items, so the
    temporaries (up to about 120 bytes an item) stay a few MiB."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    if flat.size <= _BLOCK:
        return _cast_flat(flat, src, tgt, rounding, out_of_range, pairs).reshape(arr.shape)
    out = np.empty(flat.shape, dtype=tgt.dt)
    for i in range(0, flat.size, _BLOCK):
        out[i:i + _BLOCK] = _cast_flat(flat[i:i + _BLOCK], src, tgt, rounding, out_of_range,
                                       pairs)
    return out.reshape(arr.shape)


_BLOCK = 1 << 16


def _cast_flat(flat: np.ndarray, src: VType, tgt: VType, rounding: str,
               out_of_range: str | None, pairs: Sequence[tuple[Any, Any]]) -> np.ndarray:
    out = np.zeros(flat.shape, dtype=tgt.dt)
    todo = np.ones(flat.shape, dtype=bool)
    wide = flat if src.is_int and src.dt.itemsize == 8 else \
        flat.astype(_I64 if src.is_int else _F8, copy=False)
    mapped = False
    if isinstance(pairs, PairMap) and len(pairs) > 8:
        hit = _looked_up(wide, pairs, src, tgt, out)
        mapped = bool(hit.any())
        todo &= ~hit
        pairs = ()
    for key, value in pairs:
        k = np.asarray(key).astype(wide.dtype) if not src.is_int or src.dt.itemsize < 8 \
            else np.asarray(key, dtype=src.dt)
        hit = todo & (np.isnan(wide) if not src.is_int and np.isnan(k) else wide == k)
        if hit.any():
            out[hit] = value
            todo &= ~hit
            mapped = True
    if not mapped:                  # (the common case: no gather and scatter)
        return _convert(wide, src, tgt, rounding, out_of_range)
    first = int(np.argmax(todo))
    if todo[first]:                 # the mapped items stand in as an unmapped one
        got = _convert(np.where(todo, wide, wide[first]), src, tgt, rounding, out_of_range)
        np.copyto(out, got, where=todo)
    return out


def _convert(v: np.ndarray, src: VType, tgt: VType, rounding: str, oor: str | None
             ) -> np.ndarray:
    if src.is_int:
        if tgt.is_int:
            return _int_to_int(v, tgt, oor)
        if src.bits <= 32 or not ((v > 2**53) if v.dtype == _U64 else
                                  ((v > 2**53) | (v < -2**53))).any():
            return _float_to_float(v.astype(_F8), tgt, rounding, oor, fresh=True)
        big = (v > 2**53) if v.dtype == _U64 else ((v > 2**53) | (v < -2**53))
        x = v.astype(_F8)              # exact for the others
        if tgt.dt == _F8:
            x[big] = _ints_to_f64(v[big], rounding)
            return x
        # directed roundings compose; a nearest one is exact after rounding to odd in the
        # float64 grid, which has more than two bits beyond every narrower type's
        x[big] = _ints_to_f64(v[big], rounding if rounding.startswith("towards")
                              else "odd")
        return _float_to_float(x, tgt, rounding, oor)
    if tgt.is_int:                  # NaN and infinities fail the range test: the slow path
        with np.errstate(invalid="ignore"):
            r = _round(v, rounding)
            if r.size and r.min() >= float(tgt.lo) and r.max() < float(tgt.hi + 1):
                return r.astype(tgt.dt) if tgt.bits >= 8 else r.astype(_I64).astype(tgt.dt)
    elif np.isfinite(v).all():
        return _float_to_float(v, tgt, rounding, oor)
    out = np.empty(v.shape, tgt.dt)
    nan, inf = np.isnan(v), np.isinf(v)
    if nan.any():
        if tgt.is_int or not tgt.has_nan:
            raise CastFailure(math.nan, f"NaN has no value in {tgt.name}")
        out[nan] = np.nan
    if inf.any():
        first = float(v[inf][0])
        if tgt.is_int or not tgt.has_inf:
            raise CastFailure(first, f"{first} has no value in {tgt.name}")
        out[inf] = v[inf]
    fin = ~(nan | inf)
    if fin.any():
        x = v[fin]
        out[fin] = _float_to_int(x, tgt, rounding, oor) if tgt.is_int \
            else _float_to_float(x, tgt, rounding, oor)
    return out


# -- integer targets -----------------------------------------------------------------------
def _wrap(u: np.ndarray, tgt: VType) -> np.ndarray:
    """The residues modulo 2**64 ``u`` (uint64) as ``tgt`` values (modulo 2**bits)."""
    n = tgt.bits
    if n == 64:
        return (u.view(_I64) if tgt.lo < 0 else u).astype(tgt.dt)
    w = (u & np.uint64((1 << n) - 1)).astype(_I64)
    if tgt.lo < 0:
        w = np.where(w >= (1 << (n - 1)), w - (1 << n), w)
    return w.astype(tgt.dt)


def _out_of_range(v: np.ndarray, bad: np.ndarray, tgt: VType, oor: str | None,
                  residues: Any, clamped: Any) -> np.ndarray | None:
    """The out-of-range items ``bad`` of ``v`` per ``oor``; None when there are none."""
    if not bad.any():
        return None
    if oor is None:
        first = v[bad][0]
        shown = int(first) if tgt.is_int and v.dtype.kind in "iu" else _show(first)
        raise CastFailure(shown, f"{shown} is out of the range of {tgt.name} "
                                 f"[{_show(tgt.lo if tgt.is_int else tgt.fmin)}, "
                                 f"{_show(tgt.hi if tgt.is_int else tgt.fmax)}]")
    return residues() if oor == "wrap" else clamped()


def _show(x: Any) -> Any:
    if isinstance(x, (float, np.floating)) and float(x).is_integer() and abs(float(x)) < 2**63:
        return int(x)
    return x.item() if isinstance(x, np.generic) else x


def _int_to_int(v: np.ndarray, tgt: VType, oor: str | None) -> np.ndarray:
    if v.dtype == _U64:
        bad = v > np.uint64(tgt.hi)
    else:
        bad = v < tgt.lo if tgt.lo >= -2**63 else np.zeros(v.shape, bool)
        if tgt.hi < 2**63:
            bad |= v > tgt.hi
    out = np.empty(v.shape, tgt.dt)
    ok = ~bad
    out[ok] = v[ok].astype(tgt.dt)
    got = _out_of_range(v, bad, tgt, oor,
                        lambda: _wrap(v[bad].astype(_U64), tgt),
                        lambda: _clamped(v[bad] > 0, tgt))
    if got is not None:
        out[bad] = got
    return out


def _clamped(above: np.ndarray, tgt: VType) -> np.ndarray:
    """The integer type ``tgt``'s largest value where ``above``, else its smallest."""
    return np.where(above, np.array(tgt.hi, _U64 if tgt.hi >= 2**63 else _I64), tgt.lo
                    ).astype(tgt.dt)


def _round(x: np.ndarray, mode: str) -> np.ndarray:
    if mode == "nearest-even":
        return np.rint(x)
    if mode == "towards-zero":
        return np.trunc(x)
    if mode == "towards-positive":
        return np.ceil(x)
    if mode == "towards-negative":
        return np.floor(x)
    t = np.trunc(x)                           # nearest-away: x - trunc(x) is exact
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0)


def _float_to_int(x: np.ndarray, tgt: VType, rounding: str, oor: str | None) -> np.ndarray:
    r = _round(x, rounding)
    if not r.size or (r.min() >= float(tgt.lo) and r.max() < float(tgt.hi + 1)):
        return r.astype(tgt.dt) if tgt.bits >= 8 else \
            r.astype(_I64).astype(tgt.dt)         # in range, whole: exact
    bad = (r >= float(tgt.hi + 1)) | (r < float(tgt.lo))      # powers of two: exact
    out = np.empty(r.shape, tgt.dt)
    ok = ~bad
    out[ok] = r[ok].astype(_U64 if tgt.hi >= 2**63 else _I64).astype(tgt.dt)

    def residues() -> np.ndarray:
        m = np.fmod(r[bad], 2.0**64)
        a = np.floor(m / 2.0**32)
        b = m - a * 2.0**32
        u = (a.astype(_I64).astype(_U64) << np.uint64(32)) + b.astype(_U64)
        return _wrap(u, tgt)

    got = _out_of_range(x, bad, tgt, oor, residues,
                        lambda: _clamped(r[bad] > 0, tgt))
    if got is not None:
        out[bad] = got
    return out


# -- float targets -------------------------------------------------------------------------
def _neighbours(x: np.ndarray, tgt: VType) -> tuple[np.ndarray, np.ndarray]:
    """The target values just below and above each ``x`` (float64, finite); -inf / inf past
    the finite range."""
    if tgt.table is not None:
        t = tgt.table
        i = np.searchsorted(t, x, side="left")
        up = np.where(i < t.size, t[np.minimum(i, t.size - 1)], np.inf)
        exact = up == x
        j = np.where(exact, i, i - 1)
        low = np.where(j >= 0, t[np.maximum(j, 0)], -np.inf)
        return low, up
    with np.errstate(over="ignore"):
        c = x.astype(tgt.dt)
        c64 = c.astype(_F8)
        ninf, pinf = np.array(-np.inf, tgt.dt), np.array(np.inf, tgt.dt)
        low = np.where(c64 <= x, c64, np.nextafter(c, ninf).astype(_F8))
        up = np.where(c64 >= x, c64, np.nextafter(c, pinf).astype(_F8))
    return low, up


def _lsb(v: np.ndarray, tgt: VType) -> np.ndarray:
    bits = v.astype(tgt.dt).view(_UINT[tgt.dt.itemsize])
    return (bits & 1).astype(bool)


def _float_to_float(x: np.ndarray, tgt: VType, rounding: str, oor: str | None,
                    fresh: bool = False) -> np.ndarray:
    """``x`` (float64, finite) rounded to ``tgt``; ``fresh``: ``x`` may be returned."""
    if tgt.dt == _F8:
        return x if fresh else x.copy()
    if rounding == "nearest-even" and tgt.dt in _IEEE:
        with np.errstate(over="ignore"):      # numpy rounds to nearest-even exactly
            c = x.astype(tgt.dt)
        if not np.isinf(c).any():
            return c
    low, up = _neighbours(x, tgt)
    exact = (low == x) | (up == x)
    out = np.empty(x.shape, tgt.dt)
    out[exact] = x[exact].astype(tgt.dt)          # signed zero as it is
    inexact = ~exact
    if not inexact.any():
        return out
    x, low, up = x[inexact], low[inexact], up[inexact]
    step = _top_step(tgt)
    low_h = np.where(np.isinf(low), tgt.fmin - step[0], low)
    up_h = np.where(np.isinf(up), tgt.fmax + step[1], up)
    if rounding == "towards-negative":
        pick_up = np.zeros(x.shape, bool)
    elif rounding == "towards-positive":
        pick_up = np.ones(x.shape, bool)
    elif rounding == "towards-zero":
        pick_up = x < 0
    else:
        mid = (low_h + up_h) / 2                  # exact: neighbours of <= 24-bit significands
        pick_up = x > mid
        tie = x == mid
        if tie.any():
            if rounding == "nearest-away":
                pick_up = np.where(tie, x > 0, pick_up)
            else:
                odd_low = np.where(np.isinf(low), ~_lsb(np.where(np.isinf(up), 0, up), tgt),
                                   _lsb(np.where(np.isinf(low), 0, low), tgt))
                pick_up = np.where(tie, odd_low, pick_up)
    val = np.where(pick_up, up, low)
    bad = np.isinf(val)
    ok = ~bad
    res = np.empty(x.shape, tgt.dt)
    fine = val[ok]
    if tgt.signed_zero:
        fine = np.where(fine == 0, np.copysign(0.0, x[ok]), fine)
    res[ok] = fine.astype(tgt.dt)
    big = np.array(np.inf if tgt.has_inf else tgt.fmax)
    got = _out_of_range(x, bad, tgt, oor, lambda: None,
                        lambda: np.where(val[bad] > 0, big, -big if tgt.has_inf or tgt.fmin < 0
                                         else tgt.fmin).astype(tgt.dt))
    if got is not None:
        res[bad] = got
    out[inexact] = res
    return out


@lru_cache(maxsize=None)
def _top_step_cached(dt: np.dtype, name: str) -> tuple[float, float]:
    t = vtype(dt, name)
    if t.table is not None and t.table.size > 1:
        return float(t.table[1] - t.table[0]), float(t.table[-1] - t.table[-2])
    m = np.array(t.fmax, dt)
    s = float(m.astype(_F8) - np.nextafter(m, np.array(0, dt)).astype(_F8))
    return s, s


def _top_step(tgt: VType) -> tuple[float, float]:
    """The spacing of the values at the bottom and the top of the finite range: where a value
    past it rounds to the nearest extreme or out of range."""
    return _top_step_cached(tgt.dt, tgt.name)


def _ints_to_f64(v: np.ndarray, mode: str) -> np.ndarray:
    """int64 or uint64 values ``v`` (beyond 2**53) rounded to float64 by ``mode`` (or
    ``"odd"``: an inexact value to the neighbour whose last bit is 1), exactly: the remainder
    ``v - m`` of the hardware's nearest ``m`` is worked out in integers."""
    m = v.astype(_F8)
    if v.dtype == _U64:
        top = m >= 2.0**64                          # m == 2**64: v - m = (v - 2**63) - 2**63
        mi = np.where(top, 0.0, m).astype(_U64)
        half = np.uint64(2**63)
        r = np.where(top, (v - half) - half, v - mi).view(_I64)
    else:
        top = m >= 2.0**63
        mi = np.where(top, 0.0, m).astype(_I64)
        half = np.int64(2**62)
        r = np.where(top, (v - half) - half, v - mi)
    with np.errstate(over="ignore"):
        up_n = np.nextafter(m, np.inf)
        down_n = np.nextafter(m, -np.inf)
    low = np.where(r > 0, m, down_n)
    up = np.where(r > 0, up_n, m)
    d_low = np.where(r > 0, r, (m - down_n).astype(_I64) + r)     # v - low
    d_up = np.where(r > 0, (up_n - m).astype(_I64) - r, -r)       # up - v
    odd_low = (low.view(_U64) & np.uint64(1)).astype(bool)
    if mode == "towards-negative":
        pick_up = np.zeros(v.shape, bool)
    elif mode == "towards-positive":
        pick_up = np.ones(v.shape, bool)
    elif mode == "towards-zero":
        pick_up = m < 0
    elif mode == "odd":
        pick_up = odd_low == False                                  # noqa: E712
    else:
        tie_up = (m > 0) if mode == "nearest-away" else odd_low
        pick_up = np.where(d_low == d_up, tie_up, d_up < d_low)
    return np.where(r == 0, m, np.where(pick_up, up, low))
