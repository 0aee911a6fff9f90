"""What the xarray parity tests share: writing a Dataset with engine zarr or zarrx, and reading
it back with either."""
from __future__ import annotations

import xarray as xr
import zarr

import zarrx.xarray as zx
from zarrx.xarray import ZarrxBackendEntrypoint

WRITERS = {"zarr": lambda ds, path, **kw: ds.to_zarr(path, **kw),
           "zarrx": lambda ds, path, **kw: zx.to_zarrx(ds, path, **kw)}


def read(path, engine, **kw):
    """The Dataset at ``path`` read with ``engine`` ("zarr" or "zarrx"), loaded."""
    if engine == "zarr":
        return xr.open_zarr(path, **kw).load()
    return xr.open_dataset(path, engine=ZarrxBackendEntrypoint, **kw).load()


def stored(path):
    """Shape and values of every array of the group at ``path``, read by zarr-python."""
    return {name: (a.shape, a[...].tolist()) for name, a in zarr.open_group(path).arrays()}
