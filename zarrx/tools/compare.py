"""How ``convert --verify`` compares a source with its destination: fill values bit for bit,
blocks value by value (floats bit for bit, a NaN equal to any NaN), and what it says of a block
that differs."""
from __future__ import annotations

import numpy as np

from zarrx.chunk_io import fill_scalar
from zarrx.metadata import fill_json, nodes, same_fill
from zarrx.metadata.model import ArrayMeta

__all__ = ["same_fill_of", "same_values", "mismatch", "fill_mismatch"]


def same_fill_of(a: ArrayMeta, b: ArrayMeta) -> bool:
    """Whether a cell never stored reads as the same bits in ``a`` and ``b`` (a NaN's payload
    and the sign of zero count): their fill values, a Zarr v2 ``null`` read as zarrx reads it
    (zeros, ``""``, NaT...), as Zarr v3, which has no ``null``, writes it."""
    return a.data_type.numpy == b.data_type.numpy and \
        same_fill(fill_scalar(a), fill_scalar(b), a.data_type)


def _same_items(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Item by item, whether two float or complex blocks of one item size hold the same
    values: each number bit for bit (-0.0 differs from 0.0), a NaN equal to any NaN (a chunk
    of NaNs is not stored under a NaN fill value, whatever their payloads)."""
    def parts(x: np.ndarray) -> np.ndarray:
        x = x.astype(x.dtype.newbyteorder("="), copy=False)
        return np.stack([x.real, x.imag], axis=-1) if x.dtype.kind == "c" else x[..., None]
    pa, pb = parts(a), parts(b)
    unit = np.dtype(f"u{pa.dtype.itemsize}")
    same = (pa.view(unit) == pb.view(unit)) | (np.isnan(pa) & np.isnan(pb))
    return same.all(axis=-1)


def _ml_float(dt: np.dtype) -> bool:
    """An ml_dtypes float type (``bfloat16``, ``float8_*``...; numpy files most of them under
    kind "V", where ``==`` takes a NaN for no value)."""
    return dt.type.__module__.startswith("ml_dtypes") and "float" in dt.name


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Item by item, whether two blocks of one shape hold the same values: floats (ml_dtypes'
    too) bit for bit but a NaN equal to any NaN (-0.0 differs from 0.0), NaT equal to NaT."""
    if a.dtype.kind in "fc" and b.dtype.kind == a.dtype.kind and \
            a.dtype.itemsize == b.dtype.itemsize or _ml_float(a.dtype) and a.dtype == b.dtype:
        return _same_items(a, b)
    if a.dtype.hasobject or b.dtype.hasobject:
        return np.vectorize(lambda x, y: x == y or (x != x and y != y), otypes=[bool])(a, b)
    if a.dtype.kind in "fcmM" and b.dtype.kind in "fcmM":       # NaN and NaT equal themselves
        return (a == b) | (np.isnan(a) & np.isnan(b))
    return np.asarray(a == b)


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two blocks hold the same values (see :func:`_same`; structured ones field by
    field)."""
    if a.shape != b.shape:
        return False
    if a.dtype.fields is not None and a.dtype == b.dtype and not a.dtype.hasobject:
        return all(same_values(a[f], b[f]) for f in a.dtype.names)
    return bool(_same(a, b).all())


def mismatch(path: str, sel: tuple[slice, ...], a: np.ndarray, b: np.ndarray) -> str:
    where = ", ".join(f"{s.start}:{s.stop}" for s in sel)
    if a.shape != b.shape:
        return f"{path}[{where}]: shapes differ: source {a.shape}, destination {b.shape}"
    bad = np.argwhere(~_same(a, b))
    first = tuple(int(i) + s.start for i, s in zip(bad[0], sel)) if len(bad) else ()
    at = tuple(int(i) for i in bad[0]) if len(bad) else ()
    return (f"{path}[{where}]: {len(bad)} values differ; first at {first}: source "
            f"{a[at]!r}, destination {b[at]!r}")


def fill_mismatch(store: object, path: str, want: ArrayMeta, where: str) -> str | None:
    """How the fill value the array document stored at ``path`` reads as differs from that of
    ``want``, bit for bit (a cell never stored reads as it: a Zarr v2 ``null`` as zarrx reads
    it, the fill value Zarr v3 writes for it), naming ``where``; None when they are the same."""
    meta = nodes.load_node(store, path, consolidated=False)
    if not isinstance(meta, ArrayMeta):
        return f"{where}: no array document was read back"
    if same_fill_of(want, meta):
        return None
    dt = meta.data_type
    return (f"{where}: fill values differ: expected "
            f"{fill_json(want.fill_value, dt, want.zarr_format)!r}, the destination reads "
            f"{fill_json(meta.fill_value, dt, meta.zarr_format)!r}")
