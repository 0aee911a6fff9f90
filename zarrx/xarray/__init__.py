"""xarray and zarrx: ``engine="zarrx"`` to read, ``to_zarrx`` (and ``ds.zarrx.to_zarrx``) to
write, with xarray's Zarr encoding. See ``docs/guide/xarray.md``.

    import xarray as xr, zarrx.xarray
    ds = xr.open_dataset("data.zarr", engine="zarrx", chunks={})
    ds.zarrx.to_zarrx("copy.zarr", mode="w")
"""
from __future__ import annotations

from typing import Any

from zarrx.xarray.accessor import ZarrxAccessor
from zarrx.xarray.backend import ZarrxBackendArray, ZarrxBackendEntrypoint
from zarrx.xarray.writer import to_zarrx

__all__ = ["ZarrxBackendEntrypoint", "ZarrxBackendArray", "ZarrxAccessor", "to_zarrx",
           "open_dataset", "open_datatree"]


def open_dataset(store: Any, **kwargs: Any) -> Any:
    """``xr.open_dataset(store, engine=ZarrxBackendEntrypoint, **kwargs)``: works whether or not
    the ``zarrx`` entry point is registered (an installed zarrx registers it)."""
    import xarray as xr
    return xr.open_dataset(store, engine=ZarrxBackendEntrypoint, **kwargs)


def open_datatree(store: Any, **kwargs: Any) -> Any:
    """``xr.open_datatree(store, engine=ZarrxBackendEntrypoint, **kwargs)``."""
    import xarray as xr
    return xr.open_datatree(store, engine=ZarrxBackendEntrypoint, **kwargs)
