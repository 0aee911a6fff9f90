"""``to_zarrx`` and engine "zarrx" against ``to_zarr`` and engine "zarr" (the oracle) on what
xarray users do beyond writing and reading a Dataset: a variable named ``None``, writing a
DataArray, ``load_async``, an encoding xarray refuses for text stored as bytes,
``write_empty_chunks`` on stored arrays, and an empty region.
"""
from __future__ import annotations

import asyncio
import re
import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

from xarray_checks import WRITERS, read  # noqa: E402


def layout(path):
    """The group's attributes and its arrays' names, shapes and values, read by zarr-python."""
    grp = zarr.open_group(path, mode="r")
    return dict(grp.attrs), {name: (a.shape, a[...].tolist()) for name, a in grp.arrays()}


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_variable_named_none_is_stored_as_xarray_stores_it(tmp_path, fmt):
    ds = xr.Dataset({None: (("x", "y"), np.arange(6).reshape(3, 2))})
    zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt)
    ds.to_zarr(tmp_path / "x.zarr", zarr_format=fmt)
    assert layout(tmp_path / "z.zarr") == layout(tmp_path / "x.zarr")
    for path in ("z.zarr", "x.zarr"):
        for engine in ("zarr", "zarrx"):
            xr.testing.assert_identical(read(tmp_path / path, engine), ds)
    # and it is appended to under that name
    zx.to_zarrx(ds, tmp_path / "z.zarr", append_dim="x")
    assert read(tmp_path / "z.zarr", "zarrx")[None].values.tolist() == \
        np.concatenate([ds[None].values] * 2).tolist()


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("name", [None, "temp", "x"])
def test_a_dataarray_is_written_as_to_zarr_writes_it(tmp_path, fmt, name):
    """Unnamed, named, and named like its dimension (stored under xarray's generic name)."""
    da = xr.DataArray(np.arange(4.0), dims="x", coords={"x": [10, 20, 30, 40]}, name=name,
                      attrs={"units": "K"})
    zx.to_zarrx(da, tmp_path / "z.zarr", zarr_format=fmt)
    da.to_zarr(tmp_path / "x.zarr", zarr_format=fmt)
    assert layout(tmp_path / "z.zarr") == layout(tmp_path / "x.zarr")
    for engine in ("zarr", ZarrxBackendEntrypoint):
        back = xr.open_dataarray(tmp_path / "z.zarr", engine=engine).load()
        xr.testing.assert_identical(back, da)
    # the accessor takes DataArrays too, with every argument of to_zarrx
    more = da.assign_coords(x=[50, 60, 70, 80])
    more.zarrx.to_zarrx(tmp_path / "z.zarr", append_dim="x")
    back = xr.open_dataarray(tmp_path / "z.zarr", engine=ZarrxBackendEntrypoint).load()
    xr.testing.assert_identical(back, xr.concat([da, more], "x"))


def test_what_to_zarrx_writes_is_a_dataset_or_a_dataarray(tmp_path):
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            "to_zarrx: expected an xarray.Dataset, DataArray or DataTree, found Variable")):
        zx.to_zarrx(xr.Variable("x", [1.0]), tmp_path / "z.zarr")
    assert not (tmp_path / "z.zarr").exists()


@pytest.mark.parametrize("fmt", [2, 3])
def test_load_async_reads_what_load_reads(tmp_path, fmt):
    ds = xr.Dataset({"a": (("x", "y"), np.arange(20.0).reshape(4, 5)),
                     "s": ("x", np.array(["p", "q", "r", "s"], dtype=object))},
                    coords={"x": [1, 2, 3, 4]})
    zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt)
    lazy = xr.open_dataset(tmp_path / "z.zarr", engine=ZarrxBackendEntrypoint)

    async def load_all():
        picked = lazy.a.isel(x=xr.DataArray([0, 2], dims="p"), y=xr.DataArray([1, 3], dims="p"))
        return await asyncio.gather(lazy.load_async(), lazy.a.isel(x=[0, 3]).load_async(),
                                    picked.load_async())

    whole, outer, points = asyncio.run(load_all())
    xr.testing.assert_identical(whole, lazy.load())
    xr.testing.assert_identical(outer, ds.a.isel(x=[0, 3]))
    assert points.values.tolist() == [1.0, 13.0]


@pytest.mark.parametrize("values", [
    np.array(["ab", "cdef", np.nan], dtype=object),
    np.array(["ab", "cd"]),
])
def test_a_fill_value_for_text_stored_as_bytes_is_refused_as_by_xarray(tmp_path, values):
    ds = xr.Dataset({"s": ("t", values, {}, {"dtype": "S1", "_FillValue": b"X"})})
    with pytest.raises(NotImplementedError, match="_FillValue"):
        ds.to_zarr(tmp_path / "x.zarr")
    # the class xarray's writer raises, so that the same except clause takes both
    with pytest.raises(NotImplementedError) as info:
        zx.to_zarrx(ds, tmp_path / "z.zarr")
    assert isinstance(info.value, zarrx.ArgumentError)
    assert str(info.value) == ("to_zarrx: variable 's': a _FillValue cannot be given for text "
                               "stored as bytes (encoding dtype 'S1'), as xarray refuses it "
                               "(found _FillValue b'X')")
    assert not (tmp_path / "z.zarr").exists()


def chunk_files(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")
                  if p.is_file() and p.name not in (".zarray", ".zattrs", "zarr.json"))


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("write_empty", [True, False])
def test_write_empty_chunks_applies_to_appends_and_regions(tmp_path, fmt, lazy, write_empty):
    """It is a setting of the write (stored nowhere), so it also applies to arrays that are
    already stored, as with xarray's writer."""
    values = np.array([[np.nan, np.nan], [1.0, np.nan]])[None]
    ds = xr.Dataset({"v": (("z", "y", "x"), values)})
    if lazy:
        ds = ds.chunk(1)
    enc = None if lazy else {"v": {"chunks": (1, 1, 1)}}
    files = {}
    for name, write in WRITERS.items():
        path = tmp_path / f"{name}.zarr"
        write(ds, path, zarr_format=fmt, encoding=enc, write_empty_chunks=write_empty)
        write(ds, path, append_dim="z", write_empty_chunks=write_empty)
        write(ds * 2, path, region={"z": slice(0, 1)}, write_empty_chunks=write_empty)
        files[name] = chunk_files(path / "v")
        back = read(path, "zarrx")
        np.testing.assert_array_equal(back.v.values,
                                      np.concatenate([values * 2, values]))
    assert files["zarrx"] == files["zarr"]
    assert len(files["zarrx"]) == (8 if write_empty else 2)


@pytest.mark.parametrize("fmt", [2, 3])
def test_an_empty_region_writes_every_variable_whole(tmp_path, fmt):
    ds = xr.Dataset({"s": 0, "v": ("t", [1.0, 2.0])}, coords={"t": [5, 6]})
    new = (ds + 1).assign_coords(t=[7, 8])
    for name, write in WRITERS.items():
        path = tmp_path / f"{name}.zarr"
        write(ds, path, zarr_format=fmt)
        write(new, path, region={}, mode="r+")
        for engine in ("zarr", "zarrx"):
            # (the index coordinate is not written: the stored one stays)
            xr.testing.assert_identical(read(path, engine), (ds + 1))


@pytest.mark.parametrize("fmt", [2, 3])
def test_lazy_values_of_dtype_object_warn_that_they_are_computed(tmp_path, fmt):
    """As xarray's writer warns: they are computed to find their type, not written lazily."""
    pytest.importorskip("dask")
    from xarray.coding.common import SerializationWarning
    ds = xr.Dataset({"s": ("y", np.array(["foo", "bar"], dtype=object))}).chunk()
    with pytest.warns(SerializationWarning, match="dask array with dtype=object"):
        ds.to_zarr(tmp_path / "x.zarr", zarr_format=fmt)
    with pytest.warns(SerializationWarning) as caught:
        zx.to_zarrx(ds, tmp_path / "z.zarr", zarr_format=fmt)
    ours = [w for w in caught if w.category is SerializationWarning]
    assert [str(w.message) for w in ours] == [
        "to_zarrx: variable 's' holds a dask array with dtype=object: it is computed now, to "
        "find the type its values are stored as; cast it with astype() to keep it lazy"]
    assert ours[0].filename == __file__         # it points at the call of to_zarrx
    xr.testing.assert_identical(read(tmp_path / "z.zarr", "zarrx"), ds.load())
    # values of a known type are not computed early: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", SerializationWarning)
        zx.to_zarrx(ds.astype(str), tmp_path / "u.zarr", zarr_format=fmt)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kw", [{}, {"region": {"x": slice(1, 3)}}])
def test_mode_a_minus_without_append_dim_writes_as_mode_a(tmp_path, fmt, kw):
    ds = xr.Dataset({"u": ("x", np.arange(5))})
    new = ds.isel(x=slice(1, 3)) + 10 if kw else ds + 10
    got = {}
    for name, write in WRITERS.items():
        path = tmp_path / f"{name}.zarr"
        write(ds, path, zarr_format=fmt)
        write(new, path, mode="a-", **kw)
        got[name] = read(path, "zarrx").u.values.tolist()
    assert got["zarrx"] == got["zarr"] == ([0, 11, 12, 3, 4] if kw else list(range(10, 15)))


@pytest.mark.parametrize("enc, error, oracle, message", [
    ({"x": None}, zarrx.ArgumentTypeError, TypeError,
     "to_zarrx: encoding of 'x': expected a dict, found NoneType None"),
    ({"x": "foo"}, zarrx.ArgumentTypeError, ValueError,
     "to_zarrx: encoding of 'x': expected a dict, found str 'foo'"),
    ({"nope": {}}, zarrx.ArgumentKeyError, KeyError,
     "to_zarrx: encoding names 'nope', which is not a variable"),
    # (xarray's writer fails there with an AttributeError from inside)
    ("x", zarrx.ArgumentTypeError, AttributeError,
     "to_zarrx: encoding: expected a dict of variable name -> dict, found str 'x'"),
])
def test_a_malformed_encoding_is_refused_naming_it(tmp_path, enc, error, oracle, message):
    ds = xr.Dataset({"x": ("y", np.arange(3.0))})
    with pytest.raises(oracle):
        ds.to_zarr(tmp_path / "x.zarr", encoding=enc)
    with pytest.raises(error) as info:
        zx.to_zarrx(ds, tmp_path / "z.zarr", encoding=enc)
    assert oracle is AttributeError or isinstance(info.value, oracle)
    assert str(info.value) == message
    assert not (tmp_path / "z.zarr").exists()


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("given", [{}, (), [], (7,), None])
@pytest.mark.parametrize("lazy", [False, True])
def test_empty_chunks_or_chunks_of_another_rank_in_encoding_are_as_none(tmp_path, fmt, given,
                                                                        lazy):
    """As xarray takes them: the dask blocks (or zarrx's own choice) give the chunks."""
    pytest.importorskip("dask")
    ds = xr.Dataset({"v": (("x", "y"), np.ones((40, 30)))})
    if lazy:
        ds = ds.chunk({"x": 10, "y": 15})
    ds.v.encoding["chunks"] = given
    for name, write in WRITERS.items():
        write(ds, tmp_path / f"{name}.zarr", zarr_format=fmt)
    stored = {name: zarr.open_array(tmp_path / f"{name}.zarr" / "v").chunks
              for name in WRITERS}
    if lazy:
        assert stored["zarrx"] == stored["zarr"] == (10, 15)
    xr.testing.assert_identical(read(tmp_path / "zarrx.zarr", "zarrx"), ds.load())



@pytest.mark.parametrize("where, write_error", [("path", TypeError), ("store", ValueError)])
@pytest.mark.parametrize("engine", ["zarr", "zarrx"])
def test_storage_options_for_a_local_path_or_a_store_are_refused_as_by_xarray(
        tmp_path, where, write_error, engine):
    """engine "zarr" refuses them with a TypeError (a ValueError when writing to a store
    object); zarrx raised a StoreError, an OSError, which neither ``except`` caught."""
    path = tmp_path / "z.zarr"
    ds = xr.Dataset({"v": ("x", np.arange(3.0))})
    WRITERS[engine](ds, path)
    target = path if where == "path" else zarr.storage.LocalStore(str(path))
    options = {"anon": True}
    with pytest.raises(write_error) as info:
        WRITERS[engine](ds + 1, target, mode="w", storage_options=options)
    if engine == "zarrx":
        assert isinstance(info.value, zarrx.StoreError)
    with pytest.raises(TypeError) as info:
        read(target, engine, storage_options=options)
    if engine == "zarrx":
        assert isinstance(info.value, zarrx.StoreError)
    xr.testing.assert_identical(read(path, engine), ds)        # nothing was changed
