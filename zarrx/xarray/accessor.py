"""``ds.zarrx`` and ``da.zarrx``: the Dataset and DataArray accessor (registered when
:mod:`zarrx.xarray` is imported)."""
from __future__ import annotations

from typing import Any

import xarray as xr

from zarrx.xarray.writer import to_zarrx

__all__ = ["ZarrxAccessor"]


@xr.register_dataset_accessor("zarrx")
@xr.register_dataarray_accessor("zarrx")
class ZarrxAccessor:
    """``ds.zarrx.to_zarrx(store, ...)`` (and ``da.zarrx.to_zarrx``), with the arguments of
    :func:`zarrx.xarray.to_zarrx`."""

    def __init__(self, ds: xr.Dataset | xr.DataArray) -> None:
        self._ds = ds

    def to_zarrx(self, store: Any, **kwargs: Any) -> Any:
        return to_zarrx(self._ds, store, **kwargs)
