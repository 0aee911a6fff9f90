"""Zarr written by netCDF-C (``ncgen`` in NCZarr and pure Zarr modes) read by zarrx, and Zarr v2
written by zarrx read by netCDF-C (``ncdump``).

The datasets come from the CDL files in tests/data/netcdf/: as committed there (written by
netCDF-C 4.9.0, see its README.md) and, when ``ncgen`` is installed (Debian: netcdf-bin), as
this machine's netCDF-C writes them now. What only some versions of netCDF-C write (where the
dimension names are, how char variables are declared) is tested on the committed files only.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import zarrx

xr = pytest.importorskip("xarray")
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

DATA = Path(__file__).resolve().parent / "data" / "netcdf"
NCGEN = shutil.which("ncgen")
NCDUMP = shutil.which("ncdump")
needs_ncgen = pytest.mark.skipif(NCGEN is None, reason="ncgen not installed (Debian: netcdf-bin)")
needs_ncdump = pytest.mark.skipif(NCDUMP is None,
                                  reason="ncdump not installed (Debian: netcdf-bin)")

# sample.cdl's variables: path -> (dtype, values as ncdump prints them, the fill value where the
# CDL has "_")
SAMPLE = {
    "vs": ("int16", np.arange(1, 13).reshape(3, 4)),
    "vus": ("uint16", [0, 65535, 2]),
    "vi": ("int32", [[1, 2, 3], [4, -999, 6]]),
    "vui": ("uint32", [0, 4294967295, 3]),
    "vi64": ("int64", [-9223372036854775807, 0, 2]),
    "vui64": ("uint64", [0, 18446744073709551615, 3]),
    "vf": ("float32", np.r_[np.arange(23.0), -1.0].reshape(2, 3, 4)),
    "vd": ("float64", [1.5, -2.5, 1e300]),
    "lat": ("float64", [10.0, 20.0, 30.0]),
    "sub/x": ("float32", [1.0, 2.0]),
    "sub/y": ("int32", [7, 8, 9]),
    "sub/deeper/z": ("float64", [-1.0, 1.0]),
}
ROOT_ATTRS = {"title": "netCDF-C sample", "a_short": -300, "a_ushort": 60000, "a_int": -70000,
              "a_uint": 4000000000, "a_int64": -9000000000000,
              "a_uint64": 18000000000000000000, "a_float": [1.5, 2.5], "a_double": 3.25}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """sample.cdl as this machine's ``ncgen`` writes it: ``mode -> path``."""
    if NCGEN is None:
        pytest.skip("ncgen not installed (Debian: netcdf-bin)")
    out = tmp_path_factory.mktemp("ncgen")
    for mode in ("nczarr", "zarr"):
        subprocess.run([NCGEN, "-4", "-o", f"file://{out / f'sample.{mode}'}#mode={mode},file",
                        str(DATA / "sample.cdl")], check=True, capture_output=True)
    return {mode: out / f"sample.{mode}" for mode in ("nczarr", "zarr")}


@pytest.fixture(params=["corpus", pytest.param("ncgen", marks=needs_ncgen)])
def sample(request):
    """``mode -> path`` of sample.cdl written by netCDF-C: committed, or written now."""
    if request.param == "corpus":
        return {mode: DATA / f"sample.{mode}" for mode in ("nczarr", "zarr")}
    return request.getfixturevalue("written")


@pytest.mark.parametrize("mode", ["nczarr", "zarr"])
def test_every_variable_reads_as_ncgen_wrote_it(sample, mode):
    root = zarrx.open_group(str(sample[mode]), mode="r")
    assert sorted(name for name, _ in root.groups()) == ["sub"]
    assert sorted(name for name, _ in root["sub"].groups()) == ["deeper"]
    for path, (dtype, values) in SAMPLE.items():
        arr = root[path]
        assert arr.dtype == np.dtype(dtype), path
        np.testing.assert_array_equal(arr[...], np.asarray(values, dtype=dtype), err_msg=path)
    assert {k: root.attrs[k] for k in ROOT_ATTRS} == ROOT_ATTRS
    assert root["vi"].attrs["units"] == "m" and root["vi"].attrs["_FillValue"] == -999
    assert root["vi"].fill_value == -999
    assert root["sub/x"].attrs["long_name"] == "sub x"


def _open(path, engine, group=None):
    if engine == "zarr":
        return xr.open_dataset(path, engine="zarr", group=group, consolidated=False).load()
    return xr.open_dataset(path, engine=ZarrxBackendEntrypoint, group=group).load()


@pytest.mark.parametrize("mode,group", [("nczarr", None), ("nczarr", "sub"),
                                        ("nczarr", "sub/deeper"), ("zarr", None)])
def test_xarray_reads_netcdf_groups_as_engine_zarr_does(mode, group):
    path = DATA / f"sample.{mode}"
    ours = _open(path, "zarrx", group)
    xr.testing.assert_identical(ours, _open(path, "zarr", group))
    assert not [k for k in ours.attrs if k.lower().startswith("_nc")]


def test_nczarr_dimensions_without_array_dimensions_come_from_dimrefs():
    # netCDF-C 4.9.0 leaves _ARRAY_DIMENSIONS out for a variable of a subgroup whose dimension
    # is defined in that subgroup; .zarray's _NCZARR_ARRAY names it by its full name "/sub/n"
    path = DATA / "sample.nczarr"
    assert "_ARRAY_DIMENSIONS" not in zarrx.open_array(str(path / "sub" / "x"), mode="r").attrs
    ds = _open(path, "zarrx", "sub")
    assert ds["x"].dims == ("n",) and ds["y"].dims == ("lat",)
    assert dict(ds.sizes) == {"n": 2, "lat": 3}
    assert ds["x"].attrs == {"long_name": "sub x"}
    np.testing.assert_array_equal(ds["y"].values, [7, 8, 9])


def test_the_lower_case_nczarr_field_of_later_netcdf_c_names_dimensions_too(tmp_path):
    # netCDF-C 4.9.1 and later write the field as "_nczarr_array"
    path = tmp_path / "lower.zarr"
    shutil.copytree(DATA / "sample.nczarr", path)
    zarray = path / "sub" / "x" / ".zarray"
    zarray.write_text(zarray.read_text().replace("_NCZARR_ARRAY", "_nczarr_array"))
    ds = _open(path, "zarrx", "sub")
    assert ds["x"].dims == ("n",) and dict(ds.sizes) == {"n": 2, "lat": 3}


@pytest.mark.parametrize("kw", [{"zarr_format": 3}, {"zarr_format": 2}])
def test_converting_nczarr_keeps_the_dimension_names_its_zarray_holds(tmp_path, kw):
    # the converted copy has no _NCZARR_ARRAY field: the names go where its format keeps them
    out = tmp_path / "converted.zarr"
    zarrx.convert(str(DATA / "sample.nczarr"), str(out), **kw)
    x = zarrx.open_group(str(out), mode="r")["sub/x"]
    if kw["zarr_format"] == 3:
        assert x.metadata.dimension_names == ("n",)
    else:
        assert x.attrs["_ARRAY_DIMENSIONS"] == ["n"]
    ds = _open(out, "zarrx", "sub")
    assert ds["x"].dims == ("n",) and ds["y"].dims == ("lat",)
    np.testing.assert_array_equal(ds["x"].values, [1.0, 2.0])


def test_pure_zarr_subgroup_variables_without_dimensions_are_refused_by_name():
    # in pure Zarr mode netCDF-C 4.9.0 writes no dimension names for them at all: as engine
    # "zarr", engine "zarrx" cannot make them variables
    with pytest.raises(zarrx.MetadataError) as info:
        _open(DATA / "sample.zarr", "zarrx", "sub")
    assert str(info.value) == ("/sub/x: expected the attribute _ARRAY_DIMENSIONS to list the 1 "
                               "dimension names, found None")


@pytest.mark.parametrize("mode,source", [
    ("nczarr", "the attribute _ARRAY_DIMENSIONS"), ("zarr", "the attribute _ARRAY_DIMENSIONS"),
    ("noxarray", "the .zarray field _NCZARR_ARRAY.dimrefs")])
def test_a_netcdf_scalar_stored_with_one_element_is_refused_naming_where_its_dims_came_from(
        mode, source):
    # netCDF-C stores a scalar variable as an array of shape [1] naming no dimension
    path = DATA / f"scalar.{mode}"
    arr = zarrx.open_group(str(path), mode="r")["answer"]
    assert arr.shape == (1,) and arr[...].tolist() == [42]
    with pytest.raises(zarrx.MetadataError) as info:
        _open(path, "zarrx")
    assert str(info.value) == f"/answer: expected {source} to list the 1 dimension names, found []"


@pytest.mark.parametrize("mode", ["nczarr", "zarr"])
def test_char_variables_of_netcdf_c_4_9_0_are_a_codec_error_naming_the_chunk(mode):
    # netCDF-C 4.9.0 declares char variables "<U1" (4 bytes an element) but stores one byte an
    # element: the chunk is too short for its declared type
    arr = zarrx.open_group(str(DATA / f"chars.{mode}"), mode="r")["c"]
    with pytest.raises(zarrx.CodecError) as info:
        arr[...]
    assert str(info.value) == ("array 'c' chunk 'c/0.0': expected 24 bytes for a chunk of shape "
                               "(2, 3) and data type <U1, found 6")


@needs_ncdump
@pytest.mark.parametrize("dtype", ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"])
@pytest.mark.parametrize("separator", [".", "/"])
def test_ncdump_reads_the_zarr_v2_zarrx_writes(tmp_path, dtype, separator):
    path = tmp_path / "w.zarr"
    root = zarrx.open_group(str(path), mode="w", zarr_format=2)
    root.attrs["title"] = "from zarrx"
    grp = root.create_group("g")
    arr = grp.create_array("v", shape=(3, 4), chunks=(2, 3), dtype=dtype, fill_value=9,
                           compressors=None,
                           chunk_key_encoding={"name": "v2", "separator": separator})
    arr.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
    arr[:2, :] = np.arange(8).reshape(2, 4)         # the last row stays unwritten: fill value
    dump = subprocess.run([NCDUMP, f"file://{path}#mode=zarr,file"], check=True,
                          capture_output=True, text=True).stdout
    assert ':title = "from zarrx"' in dump
    values = re.search(r"\bv =\s*(.*?)\s*;", dump, re.S).group(1)
    assert [float(v) for v in values.replace("\n", " ").split(",")] == \
        [*range(8), 9, 9, 9, 9]
