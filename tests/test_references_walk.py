"""Reading HDF5 and netCDF-4 files through kerchunk references (fsspec's ``reference://``):
every value against h5py, netCDF4 and zarr-python on the same references, the byte ranges a
region read fetches, and the errors of broken reference sets."""
from __future__ import annotations

import base64
import json
import warnings

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError

from reference_files import make_hdf5, make_netcdf, references

fsspec = pytest.importorskip("fsspec")
pytest.importorskip("kerchunk", reason="kerchunk is not installed (pip install kerchunk)")
h5py = pytest.importorskip("h5py", reason="h5py is not installed (pip install h5py)")
netCDF4 = pytest.importorskip("netCDF4", reason="netCDF4 is not installed (pip install netCDF4)")
zarr = pytest.importorskip("zarr")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("refs")
    nc = [make_netcdf(root / f"f{i}.nc", i * 4) for i in range(3)]
    h5 = make_hdf5(root / "plain.h5")
    return root, nc, h5


def _arrays(g, prefix=""):
    for name, a in g.arrays():
        yield prefix + name, a
    for name, sub in g.groups():
        yield from _arrays(sub, prefix + name + "/")


def _h5_values(f, path):
    v = f[path][()]
    if f[path].dtype.kind == "O":
        v = np.array([x.decode() for x in np.ravel(v)], dtype=object).reshape(np.shape(v))
    return v


@pytest.mark.parametrize("inline", [0, 100], ids=["ranges", "inline"])
@pytest.mark.parametrize("which", ["netcdf", "hdf5"])
def test_every_array_reads_as_h5py_and_zarr_python_read_it(files, tmp_path, which, inline):
    """Chunked (gzip + shuffle) and contiguous data, fill values, chunks left out of the
    references (the fill value), strings, groups; some chunks held inline."""
    root, nc, h5 = files
    src = nc[0] if which == "netcdf" else h5
    fo = references(src, tmp_path / "refs.json", inline)
    so = {"fo": fo, "remote_protocol": "file"}
    g = zarrx.open_group("reference://", mode="r", storage_options=so)
    zg = zarr.open_group("reference://", mode="r", storage_options=so, zarr_format=2)
    mapped = zarrx.open_group(fsspec.get_mapper("reference://", **so), mode="r")
    seen = []
    with h5py.File(src) as f:
        for path, a in _arrays(g):
            got = a[...]
            nan = got.dtype.kind == "f"
            assert np.array_equal(got, _h5_values(f, path), equal_nan=nan), path
            assert np.array_equal(got, zg[path][...], equal_nan=nan), path
            assert np.array_equal(mapped[path][...], got, equal_nan=nan), path
            seen.append(path)
    want = {"temp", "contig", "time", "sub/w"} if which == "netcdf" else \
        {"big", "chunked", "sparse", "empty", "strs", "vstr", "grp/deep/v", "scalar"}
    assert want <= set(seen)


def _open(engine, fo, **kw):
    import xarray as xr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xr.open_dataset("reference://", engine=engine, backend_kwargs={
            "storage_options": {"fo": fo, "remote_protocol": "file"}, "consolidated": False},
            **kw)


@pytest.mark.parametrize("chunks", [None, {}, {"time": 2}], ids=["numpy", "dask", "time2"])
def test_combined_references_open_in_xarray_as_with_its_zarr_engine(files, tmp_path, chunks):
    """MultiZarrToZarr along time; scale_factor/add_offset, _FillValue, an unlimited dimension:
    engine "zarrx" gives what engine "zarr" gives, and what netCDF4 reads from the files."""
    pytest.importorskip("xarray")
    from kerchunk.combine import MultiZarrToZarr
    root, nc, _ = files
    singles = [references(p, tmp_path / f"{i}.json", 100) for i, p in enumerate(nc)]
    combined = MultiZarrToZarr(singles, concat_dims=["time"],
                               identical_dims=["y", "x", "contig", "nofill"]).translate()
    fo = str(tmp_path / "combined.json")
    with open(fo, "w") as out:
        json.dump(combined, out)
    a, b = _open("zarrx", fo, chunks=chunks), _open("zarr", fo, chunks=chunks)
    assert sorted(a.variables) == sorted(b.variables)
    for name in b.variables:
        x, y = a[name], b[name]
        assert x.dims == y.dims and x.dtype == y.dtype and x.attrs == y.attrs, name
        assert np.array_equal(x.values, y.values, equal_nan=x.dtype.kind == "f"), name
    assert a.temp.encoding["scale_factor"] == 0.01 and np.isnan(a.temp.values[0, 0, 0])
    import xarray as xr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n = xr.open_mfdataset(nc, engine="netcdf4", combine="by_coords")
    with n:
        for name in ("temp", "time", "y", "x"):
            assert np.array_equal(a[name].values, n[name].values, equal_nan=True), name


def test_a_region_reads_only_the_byte_range_of_its_chunk(files, tmp_path, monkeypatch):
    from fsspec.implementations.local import LocalFileSystem
    _, _, h5 = files
    fo = references(h5, tmp_path / "refs.json", 0)
    refs = json.load(open(fo))["refs"]
    reads = []
    stock = LocalFileSystem.cat_file

    def cat_file(self, path, start=None, end=None, **kw):
        reads.append((path, start, end))
        return stock(self, path, start, end, **kw)

    monkeypatch.setattr(LocalFileSystem, "cat_file", cat_file)
    a = zarrx.open_array("reference://", path="big", mode="r",
                         storage_options={"fo": fo, "remote_protocol": "file"})
    assert reads == []                 # the metadata is held inline
    with h5py.File(h5) as f:
        assert np.array_equal(a[60:70, 120:130], f["big"][60:70, 120:130])
    _, offset, length = refs["big/1.1"]
    assert reads == [(str(h5), offset, offset + length)]


def test_generated_references_are_read_not_taken_for_missing_chunks(files, tmp_path):
    """A version 1 set's ``gen`` entries, which fsspec drops unless told to expand them: the
    chunks they name read as the fill value before."""
    _, _, h5 = files
    doc = json.load(open(references(h5, tmp_path / "refs.json", 0)))
    url, offset, length = doc["refs"].pop("contig/0")
    doc["gen"] = [{"key": "contig/{{i}}", "url": url, "offset": str(offset),
                   "length": str(length), "dimensions": {"i": {"stop": 1}}}]
    fo = tmp_path / "gen.json"
    fo.write_text(json.dumps(doc))
    for given in (doc, str(fo)):
        a = zarrx.open_array("reference://", path="contig", mode="r",
                             storage_options={"fo": given, "remote_protocol": "file"})
        assert a[:].tolist() == list(range(20))
    with pytest.raises(StoreError, match="has 'gen' entries, which fsspec expands only with "
                                         r"simple_templates=False"):
        zarrx.open_group("reference://", mode="r", storage_options={
            "fo": doc, "remote_protocol": "file", "simple_templates": True})


def test_dask_reads_references_on_threads_and_processes(files, tmp_path):
    pytest.importorskip("dask")
    import zarrx.dask
    _, _, h5 = files
    fo = references(h5, tmp_path / "refs.json", 100)
    a = zarrx.open_array("reference://", path="big", mode="r",
                         storage_options={"fo": fo, "remote_protocol": "file"})
    d = zarrx.dask.from_zarr(a)
    with h5py.File(h5) as f:
        want = f["big"][()]
    for scheduler in ("threads", "processes"):
        assert np.array_equal(d.compute(scheduler=scheduler), want), scheduler


def test_references_held_in_parquet_files_read(files, tmp_path):
    """fsspec's LazyReferenceMapper keeps a ``.zmetadata`` with its ``record_size`` (and no
    zarr_consolidated_format): a MetadataError ("unknown field") before."""
    pytest.importorskip("fastparquet", reason="fastparquet is not installed")
    from kerchunk.df import refs_to_dataframe
    _, _, h5 = files
    refs_to_dataframe(references(h5, tmp_path / "refs.json", 100), str(tmp_path / "refs.parq"),
                      record_size=4)
    so = {"fo": str(tmp_path / "refs.parq"), "remote_protocol": "file"}
    g = zarrx.open_group("reference://", mode="r", storage_options=so)
    with h5py.File(h5) as f:
        for path in ("big", "chunked", "sparse", "vstr", "grp/deep/v", "scalar"):
            got = g[path][...]
            assert np.array_equal(got, _h5_values(f, path)), path


def _unclipped_parts(self, path, start=None, end=None):
    """fsspec's reference filesystem before 2026.9: the range asked for is added to the part's
    offset as it is, reaching past the part (into the next chunks) when asked past its end."""
    part = self.references.get(self._strip_protocol(path))
    if part is None:
        raise FileNotFoundError(path)
    if isinstance(part, str):
        part = part.encode()
    if isinstance(part, bytes):
        return (base64.b64decode(part[7:]) if part.startswith(b"base64:") else part), None, None
    if len(part) == 1:
        return part[0], start, end
    url, offset, size = part
    first = offset if start is None else offset + start if start >= 0 else offset + size + start
    last = offset + size if end is None else offset + end if end >= 0 else offset + size + end
    return url, first, last


def test_compressed_chunks_read_with_a_filesystem_that_reads_past_a_part(files, tmp_path,
                                                                        monkeypatch):
    """A chunk is read up to the bound of its encoded size: fsspec before 2026.9 then sent the
    bytes of the next chunks too, and every gzip chunk failed ("the server sent 45641 bytes
    for bytes 0-45640 of a 37761-byte object"). The range asked for is kept within the
    part."""
    from fsspec.implementations.reference import ReferenceFileSystem
    monkeypatch.setattr(ReferenceFileSystem, "_cat_common", _unclipped_parts)
    _, _, h5 = files
    so = {"fo": references(h5, tmp_path / "refs.json", 0), "remote_protocol": "file"}
    with h5py.File(h5) as f:
        for path in ("big", "chunked", "contig"):
            a = zarrx.open_array("reference://", path=path, mode="r", storage_options=so)
            assert np.array_equal(a[...], f[path][()]), path
        a = zarrx.open_array("reference://", path="big", mode="r", storage_options=so)
        assert np.array_equal(a[60:70, 120:130], f["big"][60:70, 120:130])
