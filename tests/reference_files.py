"""HDF5 and netCDF-4 files for the kerchunk reference tests (h5py, netCDF4), and their
references (kerchunk's SingleHdf5ToZarr). Importing this module imports none of them."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np


def make_netcdf(path: Path, t0: int, nt: int = 4) -> Path:
    """A netCDF-4 file: an unlimited time dimension, a packed (scale_factor, add_offset)
    int16 variable compressed with gzip and shuffle with a _FillValue and one masked value, a
    contiguous variable, and a group."""
    import netCDF4
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("time", None)
        ds.createDimension("y", 6)
        ds.createDimension("x", 8)
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t[:] = np.arange(t0, t0 + nt)
        ds.createVariable("y", "f4", ("y",), contiguous=True)[:] = np.linspace(0, 1, 6)
        ds.createVariable("x", "f4", ("x",))[:] = np.arange(8)
        v = ds.createVariable("temp", "i2", ("time", "y", "x"), zlib=True, complevel=4,
                              shuffle=True, chunksizes=(1, 3, 4), fill_value=-999)
        v.scale_factor, v.add_offset, v.units = 0.01, 273.15, "K"
        v[:] = (np.arange(nt * 48).reshape(nt, 6, 8) + t0 * 48) * 0.01 + 273.15
        v[0, 0, 0] = np.ma.masked
        ds.createVariable("contig", "f8", ("y", "x"), contiguous=True)[:] = \
            np.arange(48).reshape(6, 8) * 1.5
        ds.createVariable("nofill", "u1", ("y",))[:] = np.arange(6)
        g = ds.createGroup("sub")
        g.createDimension("n", 5)
        g.createVariable("w", "f4", ("n",), zlib=True,
                         fill_value=np.float32(np.nan))[:] = [1, 2, np.nan, 4, 5]
        ds.title = "test"
    return path


def make_hdf5(path: Path) -> Path:
    """An HDF5 file: gzip + shuffle chunks, contiguous big-endian data, a scalar, fixed and
    variable-length strings, a sparse dataset (chunks never written), an empty one, a larger
    array of 12 chunks, nested groups."""
    import h5py
    with h5py.File(path, "w") as f:
        f.create_dataset("chunked", data=np.arange(100, dtype="f4").reshape(10, 10),
                         chunks=(4, 4), compression="gzip", shuffle=True, fillvalue=-1)
        f.create_dataset("contig", data=np.arange(20, dtype=">i4"))
        f.create_dataset("scalar", data=3.5)
        f.create_dataset("strs", data=np.array([b"ab", b"cde", b"f"], dtype="S3"))
        f.create_dataset("vstr", data=["alpha", "beta", "gamma"], dtype=h5py.string_dtype())
        f.create_dataset("sparse", shape=(10,), dtype="f8", chunks=(2,), fillvalue=7.0)
        f["sparse"][4:6] = [1, 2]
        f.create_dataset("empty", shape=(4,), dtype="i4", fillvalue=5)
        f.create_dataset("big", data=np.random.default_rng(0).random((200, 300)),
                         chunks=(50, 100), compression="gzip")
        f.create_group("grp/deep").create_dataset(
            "v", data=np.arange(6, dtype="u2").reshape(2, 3))
        f.attrs["name"] = "plain"
    return path


def references(src: Path, out: Path, inline: int) -> str:
    """kerchunk's references to ``src`` (chunks up to ``inline`` bytes held inline), written
    to ``out`` as JSON; the path of ``out``."""
    from kerchunk.hdf import SingleHdf5ToZarr
    with open(src, "rb") as f:
        refs = SingleHdf5ToZarr(f, str(src), inline_threshold=inline).translate()
    out.write_text(json.dumps(refs))
    return str(out)
