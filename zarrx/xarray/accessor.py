"""``ds.zarrx``: the Dataset accessor (registered when :mod:`zarrx.xarray` is imported)."""
from __future__ import annotations

from typing import Any

import xarray as xr

from zarrx.xarray.writer import to_zarrx

__all__ = ["ZarrxAccessor"]


@xr.register_dataset_accessor("zarrx")
class ZarrxAccessor:
    """``ds.zarrx.to_zarrx(store, ...)``, with the arguments of :func:`zarrx.xarray.to_zarrx`."""

    def __init__(self, ds: xr.Dataset) -> None:
        self._ds = ds

    def to_zarrx(self, store: Any, **kwargs: Any) -> Any:
        return to_zarrx(self._ds, store, **kwargs)
