"""``ds.zarrx``, ``da.zarrx`` and ``tree.zarrx``: the Dataset, DataArray and DataTree accessor
(registered when :mod:`zarrx.xarray` is imported)."""
from __future__ import annotations

from typing import Any

import xarray as xr

from zarrx.xarray.writer import to_zarrx

__all__ = ["ZarrxAccessor"]


@xr.register_dataset_accessor("zarrx")
@xr.register_dataarray_accessor("zarrx")
class ZarrxAccessor:
    """``ds.zarrx.to_zarrx(store, ...)`` (and ``da.zarrx.to_zarrx``, ``tree.zarrx.to_zarrx``),
    with the arguments of :func:`zarrx.xarray.to_zarrx`."""

    def __init__(self, ds: xr.Dataset | xr.DataArray) -> None:
        self._ds = ds

    def to_zarrx(self, store: Any, **kwargs: Any) -> Any:
        return to_zarrx(self._ds, store, **kwargs)


if hasattr(xr, "register_datatree_accessor"):      # (in xarray 2024.10 and later)
    xr.register_datatree_accessor("zarrx")(ZarrxAccessor)
