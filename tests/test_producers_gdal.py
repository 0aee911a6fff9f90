"""Zarr written by GDAL's Zarr driver read by zarrx, and Zarr v2 written by zarrx read by GDAL.

tests/data/gdal/ holds stores GDAL 3.6.2 wrote with gdal_translate and gdalmdimtranslate, each
with what ``gdalmdiminfo -detailed`` reported about it (see its README.md); zarrx must read the
same types, shapes, chunks, fill values, dimension names, attributes and values, as zarr-python
does. When the GDAL tools (Debian: gdal-bin) are installed the stores are also written and
reported now, and GDAL reads back what zarrx writes.
"""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.codecs import _blosc

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

DATA = Path(__file__).resolve().parent / "data" / "gdal"
_spec = importlib.util.spec_from_file_location("gdal_corpus", DATA / "make_corpus.py")
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

TOOLS = ("gdal_translate", "gdalmdimtranslate", "gdalmdiminfo")
HAVE_GDAL = all(shutil.which(t) for t in TOOLS)
HAVE_NCGEN = shutil.which("ncgen") is not None
NO_GDAL = "GDAL tools not installed (Debian: gdal-bin)"
needs_gdal = pytest.mark.skipif(not HAVE_GDAL, reason=NO_GDAL)
# the stores gdalmdiminfo reports on; quirks.zarr holds what numcodecs does not take
REPORTED = ["raster", "compress", "quirks", "mdim", "mdim_delta", "strings", "unicode"]
GDAL_TYPES = {"Byte": "u1", "Int16": "i2", "UInt16": "u2", "Int32": "i4", "UInt32": "u4",
              "Int64": "i8", "UInt64": "u8", "Float32": "f4", "Float64": "f8",
              "CFloat32": "c8", "CFloat64": "c16"}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The corpus as this machine's GDAL writes it, each store beside its gdalmdiminfo
    report."""
    if not HAVE_GDAL:
        pytest.skip(NO_GDAL)
    out = tmp_path_factory.mktemp("gdal")
    for name in corpus.NAMES:
        if name in ("strings", "unicode") and not HAVE_NCGEN:
            continue
        corpus.write(name, out)
    return out


@pytest.fixture(params=["corpus", pytest.param("gdal", marks=needs_gdal)])
def source(request):
    """The directory of the corpus: as committed, or written now."""
    return DATA if request.param == "corpus" else request.getfixturevalue("written")


def _store(source, name):
    if not (source / f"{name}.zarr").exists():
        pytest.skip("ncgen not installed (Debian: netcdf-bin)")
    return source / f"{name}.zarr"


def _report_values(values, dtype):
    """gdalmdiminfo's values (complex numbers as {"real", "imag"}, NaN as "NaN") as an array."""
    def item(v):
        if isinstance(v, list):
            return [item(x) for x in v]
        if isinstance(v, dict):
            return complex(item(v["real"]), item(v["imag"]))
        return float(v) if isinstance(v, str) and dtype.kind in "fc" else v
    return np.array(item(values), dtype=dtype)


def _expected_attributes(report):
    """The attributes GDAL reports, under the names they are stored with: GDAL reports CF's
    ``units``, ``add_offset``, ``scale_factor`` and its own ``_CRS`` as the array's unit,
    offset, scale and srs."""
    def value(attr):
        v = attr["value"]
        if attr["datatype"].startswith("Float"):      # NaN and infinities are reported as text
            return [float(x) for x in v] if isinstance(v, list) else float(v)
        return v
    out = {k: value(v) for k, v in report.get("attributes", {}).items()}
    for field, attr in (("unit", "units"), ("offset", "add_offset"), ("scale", "scale_factor")):
        if field in report:
            out[attr] = report[field]
    return out


def _same(attrs, expected):
    """Equal attributes, NaN equal to NaN (both as JSON, which spells NaN one way)."""
    return json.dumps(attrs, sort_keys=True) == json.dumps(expected, sort_keys=True)


def _check_array(arr, oracle, report, where):
    dtype = np.dtype(GDAL_TYPES[report["datatype"]]) if report["datatype"] != "String" \
        else arr.dtype
    assert arr.dtype.kind in "SU" or arr.dtype == dtype, where
    assert arr.shape == tuple(report["dimension_size"]), where
    assert arr.chunks == tuple(report["block_size"]), where
    nodata = report.get("nodata_value")
    if nodata is None:
        assert arr.fill_value is None, where
    else:
        np.testing.assert_array_equal(arr.fill_value, _report_values(nodata, dtype), where)
    attrs = dict(arr.attrs)
    dims = attrs.pop("_ARRAY_DIMENSIONS", None)
    if all(isinstance(d, str) for d in report["dimensions"]):
        assert dims == [d.rsplit("/", 1)[-1] for d in report["dimensions"]], where
    else:       # dimensions GDAL made up ("dim0"...) for an array whose names it did not write
        assert dims is None, where
    crs = attrs.pop("_CRS", None)
    assert (crs and crs["wkt"]) == (report.get("srs") or {}).get("wkt"), where
    assert _same(attrs, _expected_attributes(report)), where
    values = arr[...]
    if arr.dtype.kind in "SU":
        assert [v.decode() if isinstance(v, bytes) else v for v in values.tolist()] \
            == report["values"], where
    else:
        np.testing.assert_array_equal(values, _report_values(report["values"], dtype), where)
    np.testing.assert_array_equal(values, oracle[...], where)
    assert arr.dtype == oracle.dtype and arr.attrs == oracle.attrs.asdict(), where
    np.testing.assert_array_equal(arr.fill_value, oracle.fill_value, where)


def _check_group(group, oracle, report, where):
    assert _same(dict(group.attrs), _expected_attributes(report)), where
    assert _same(dict(group.attrs), oracle.attrs.asdict()), where
    assert sorted(n for n, _ in group.arrays()) == sorted(report.get("arrays", {})), where
    assert sorted(n for n, _ in group.groups()) == sorted(report.get("groups", {})), where
    for name, sub in report.get("arrays", {}).items():
        _check_array(group[name], oracle[name], sub, f"{where}{name}")
    for name, sub in report.get("groups", {}).items():
        _check_group(group[name], oracle[name], sub, f"{where}{name}/")


@pytest.mark.parametrize("name", [n for n in REPORTED if n != "quirks"])
def test_every_array_reads_as_gdal_reports_it(source, name):
    path = _store(source, name)
    report = json.loads((source / f"{name}.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = zarr.open_group(str(path), mode="r")
        _check_group(zarrx.open_group(str(path), mode="r"), oracle, report, "/")


def test_the_raster_corpus_holds_what_make_corpus_wrote():
    root = zarrx.open_group(str(DATA / "raster.zarr"), mode="r")
    for code in corpus.RASTER_TYPES:
        np.testing.assert_array_equal(root[code][...], corpus.raster_values(code), code)
    for band in (1, 2):
        np.testing.assert_array_equal(root[f"bands_band{band}"][...],
                                      corpus.band_values()[band - 1])
    compress = zarrx.open_group(str(DATA / "compress.zarr"), mode="r")
    for name in corpus.COMPRESS:
        np.testing.assert_array_equal(compress[name][...], corpus.compress_values(), name)
    assert compress["order_f"].order == "F" and compress["blosc_zstd"].chunks == (4, 5)


def _open(path, engine, group=None):
    if engine == "zarr":
        return xr.open_dataset(path, engine="zarr", group=group).load()
    return xr.open_dataset(path, engine=ZarrxBackendEntrypoint, group=group).load()


@pytest.mark.parametrize("name,group", [("raster", None), ("compress", None), ("mdim", None),
                                        ("mdim", "sub"), ("mdim_delta", None), ("strings", None),
                                        ("unicode", None)])
def test_xarray_reads_gdal_stores_as_engine_zarr_does(source, name, group):
    path = _store(source, name)
    ours = _open(path, "zarrx", group)
    xr.testing.assert_identical(ours, _open(path, "zarr", group))


def test_xarray_decodes_gdal_cf_attributes():
    ds = _open(DATA / "mdim.zarr", "zarrx")
    assert ds["temp"].dims == ("time", "lat", "lon")
    assert ds["temp"].attrs["units"] == "K"
    np.testing.assert_allclose(ds["temp"].values[0, 0, :2], [273.16, 273.17])
    assert np.isnan(ds["temp"].values[2, 3, 4])
    assert str(ds["time"].values[1]) == "2000-01-02T00:00:00.000000000"
    assert ds["wind"].dtype == np.complex64


def test_gdal_arrays_without_dimension_names_are_refused_by_xarray_by_name():
    # GDAL 3.6 writes _ARRAY_DIMENSIONS only when each of the array's dimensions has an
    # indexing variable in the array's group
    with pytest.raises(zarrx.MetadataError) as info:
        _open(DATA / "mdim.zarr", "zarrx", "plain")
    assert str(info.value) == ("/plain/u: expected the attribute _ARRAY_DIMENSIONS to list the "
                               "1 dimension names, found None")
    with pytest.raises(KeyError):
        _open(DATA / "mdim.zarr", "zarr", "plain")


def test_the_v3_draft_gdal_writes_is_refused_naming_what_it_found():
    # GDAL 3.6's FORMAT=ZARR_V3 is a draft that predates the v3 spec: its zarr.json names the
    # protocol by URL and the nodes' metadata is under meta/, chunks under data/
    path = DATA / "draft_v3.zarr"
    for opener in (zarrx.open_group, zarrx.open_array, zarrx.open):
        with pytest.raises(zarrx.MetadataError) as info:
            opener(str(path), mode="r")
        assert str(info.value) == (
            "zarr.json zarr_format: expected 3 (the final Zarr v3 spec; this zarr.json is the "
            "entry point of a draft of v3 that keeps metadata under meta/ and chunks under "
            "data/, which zarrx does not read), found "
            "'https://purl.org/zarr/spec/protocol/core/3.0'")
    with pytest.raises(zarrx.MetadataError):
        _open(path, "zarrx")


# -- what GDAL writes outside what numcodecs takes (quirks.zarr) --------------------------------

def _quirk(source, name):
    """The array ``name`` of quirks.zarr."""
    return zarrx.open_group(str(source / "quirks.zarr"), mode="r")[name]


def test_every_array_of_the_gdal_quirks_opens(source):
    root = zarrx.open_group(str(source / "quirks.zarr"), mode="r")
    report = json.loads((source / "quirks.json").read_text())
    assert sorted(root.array_keys()) == sorted(report["arrays"])
    assert root["blosc_snappy"].shape == (9, 11)


SNAPPY = pytest.mark.skipif(not _blosc.built("snappy"), reason="this c-blosc lacks snappy")


@pytest.mark.parametrize("name", ["blosc_bit", "blosc_noshuffle", "lzma", "lzma_delta",
                                  pytest.param("blosc_snappy", marks=SNAPPY)])
def test_gdal_compressor_fields_numcodecs_does_not_take_are_read(source, name):
    # GDAL writes blosc's shuffle as its creation option's text ("BIT", "NONE"), lzma with
    # the distance ("delta") of the delta filter its xz streams start with, and blosc with
    # snappy, which c-blosc may lack
    arr = _quirk(source, name)
    report = json.loads((source / "quirks.json").read_text())["arrays"][name]
    np.testing.assert_array_equal(arr[...], _report_values(report["values"], arr.dtype))
    np.testing.assert_array_equal(arr[...], corpus.compress_values())


def test_converting_gdal_blosc_arrays_to_v3_gives_the_core_blosc_codec(tmp_path):
    src = tmp_path / "quirks.zarr"
    shutil.copytree(DATA / "quirks.zarr", src)
    shutil.rmtree(src / "blosc_snappy")             # which zarrx's c-blosc may lack
    (src / ".zmetadata").unlink()
    zarrx.convert(str(src), str(tmp_path / "v3.zarr"), zarr_format=3)
    root = zarrx.open_group(str(tmp_path / "v3.zarr"), mode="r")
    for name, shuffle in (("blosc_bit", "bitshuffle"), ("blosc_noshuffle", "noshuffle")):
        doc = json.loads((tmp_path / "v3.zarr" / name / "zarr.json").read_text())
        assert doc["codecs"][1]["name"] == "blosc", name
        assert doc["codecs"][1]["configuration"]["shuffle"] == shuffle, name
        np.testing.assert_array_equal(root[name][...], corpus.compress_values())
    np.testing.assert_array_equal(root["delta_i4"][...], corpus.compress_values())


@pytest.mark.parametrize("name", ["blosc_bit", "blosc_noshuffle", "lzma_delta"])
def test_writing_into_gdal_compressed_arrays_keeps_their_metadata(tmp_path, name):
    path = tmp_path / name
    shutil.copytree(DATA / "quirks.zarr" / name, path)
    before = (path / ".zarray").read_text()
    arr = zarrx.open_array(str(path), mode="r+")
    arr[3:6, 4:9] = 5
    arr.attrs["note"] = "written by zarrx"
    assert (path / ".zarray").read_text() == before
    want = corpus.compress_values()
    want[3:6, 4:9] = 5
    np.testing.assert_array_equal(zarrx.open_array(str(path), mode="r")[...], want)
    if HAVE_GDAL:
        report = _gdal_report(path)
        np.testing.assert_array_equal(_report_values(report["values"], want.dtype), want)


@pytest.mark.parametrize("name", ["delta_i4", "none"])
def test_a_gdal_delta_filter_of_another_type_reads_the_bytes_as_that_type(source, name):
    # GDAL's DELTA_DTYPE=<i4 on an Int16 array: numcodecs reads each chunk's bytes as int32
    # (two int16 values to an item), and so do zarrx and zarr-python
    arr = _quirk(source, name)
    report = json.loads((source / "quirks.json").read_text())["arrays"][name]
    oracle = zarr.open_array(str(source / "quirks.zarr" / name), mode="r")
    np.testing.assert_array_equal(arr[...], corpus.compress_values())
    np.testing.assert_array_equal(arr[...], _report_values(report["values"], arr.dtype))
    np.testing.assert_array_equal(arr[...], oracle[...])


def test_a_gdal_delta_filter_on_complex_data_reads_its_components():
    # FILTER=DELTA on a complex array declares the component type (<f4 for complex64): the
    # differences run over real and imaginary parts in turn
    doc = json.loads((DATA / "mdim_delta.zarr" / "wind" / ".zarray").read_text())
    assert (doc["dtype"], doc["filters"]) == ("<c8", [{"id": "delta", "dtype": "<f4"}])
    wind = zarrx.open_group(str(DATA / "mdim_delta.zarr"), mode="r")["wind"]
    np.testing.assert_array_equal(
        wind[...], zarrx.open_group(str(DATA / "mdim.zarr"), mode="r")["wind"][...])


# -- GDAL reads what zarrx writes -----------------------------------------------------------------

def _gdal_report(path, array=None):
    """``gdalmdiminfo -detailed`` of the store at ``path``: the root group's report, or that of
    its array ``array`` (the store's own array when it is one)."""
    report = json.loads(subprocess.run(["gdalmdiminfo", "-detailed", str(path)], check=True,
                                       capture_output=True, text=True).stdout)
    if array is None and "arrays" in report and len(report["arrays"]) == 1 \
            and (path / ".zarray").exists():
        return next(iter(report["arrays"].values()))
    return report if array is None else report["arrays"][array]


WRITE_TYPES = ["u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8", "c8", "c16"]
WRITE_COMPRESSORS = {
    "none": None, "zlib": {"id": "zlib", "level": 1}, "gzip": {"id": "gzip", "level": 5},
    "zstd": {"id": "zstd", "level": 3}, "lz4": {"id": "lz4", "acceleration": 1},
    "lzma": {"id": "lzma", "preset": 1},
    "blosc_lz4": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1},
    "blosc_zstd_bit": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2},
    "blosc_auto": {"id": "blosc", "cname": "zlib", "clevel": 3, "shuffle": -1},
}


def _written_values(dtype):
    values = (np.arange(7 * 9).reshape(7, 9) * 5 - 40).astype(np.dtype(dtype).kind == "u"
                                                             and "u8" or "i8")
    out = values.astype(dtype)
    if out.dtype.kind == "c":
        out = out + 1j * values[::-1].astype(dtype)
    if out.dtype.kind == "f":
        out /= 4
    return out


def _write(path, *, dtype="i2", compressor=None, filters=None, separator=".", order="C",
           consolidated=False):
    """A group holding the array ``v`` ((7, 9) values, chunks (3, 4), its last row unwritten:
    fill value) with its dimensions named by ``_ARRAY_DIMENSIONS`` and their coordinates.
    The fill value is 9, but null for complex types: GDAL 3.6 cannot open an array whose
    complex fill value is ``[real, imag]``, as zarr-python and zarrx write it."""
    root = zarrx.open_group(str(path), mode="w", zarr_format=2)
    root.attrs.update({"title": "from zarrx", "version": 3, "scales": [0.5, 2.0]})
    fill = None if np.dtype(dtype).kind == "c" else 9
    arr = root.create_array("v", shape=(7, 9), chunks=(3, 4), dtype=dtype, fill_value=fill,
                            compressors=compressor, filters=filters, order=order,
                            chunk_key_encoding={"name": "v2", "separator": separator})
    arr.attrs.update({"_ARRAY_DIMENSIONS": ["y", "x"], "long_name": "values"})
    values = _written_values(dtype)
    arr[:6] = values[:6]
    for dim, n in (("y", 7), ("x", 9)):
        coord = root.create_array(dim, shape=(n,), chunks=(n,), dtype="f8", compressors=None)
        coord[:] = np.arange(n) * 1.5
        coord.attrs["_ARRAY_DIMENSIONS"] = [dim]
    if consolidated:
        zarrx.consolidate_metadata(str(path))
    want = values.copy()
    want[6] = fill or 0
    return want


def _check_gdal_reads(path, want):
    report = _gdal_report(path)
    v = report["arrays"]["v"]
    assert GDAL_TYPES[v["datatype"]] == want.dtype.str[1:] or \
        np.dtype(GDAL_TYPES[v["datatype"]]) == want.dtype
    assert v["dimensions"] == ["/y", "/x"] and v["block_size"] == [3, 4]
    assert v.get("nodata_value") == (None if want.dtype.kind == "c" else 9)
    assert v["attributes"] == {"long_name": {"datatype": "String", "value": "values"}}
    np.testing.assert_array_equal(_report_values(v["values"], want.dtype), want)
    assert report["arrays"]["x"]["values"] == [i * 1.5 for i in range(9)]
    assert {k: a["value"] for k, a in report["attributes"].items()} == \
        {"title": "from zarrx", "version": 3, "scales": [0.5, 2.0]}


@needs_gdal
@pytest.mark.parametrize("dtype", WRITE_TYPES)
def test_gdal_reads_each_type_zarrx_writes(tmp_path, dtype):
    path = tmp_path / "w.zarr"
    _check_gdal_reads(path, _write(path, dtype=dtype, compressor=WRITE_COMPRESSORS["zlib"]))


@needs_gdal
@pytest.mark.parametrize("name", list(WRITE_COMPRESSORS))
def test_gdal_reads_each_compressor_zarrx_writes(tmp_path, name):
    path = tmp_path / "w.zarr"
    _check_gdal_reads(path, _write(path, dtype="i4", compressor=WRITE_COMPRESSORS[name]))


@needs_gdal
@pytest.mark.parametrize("separator", [".", "/"])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("consolidated", [False, True])
def test_gdal_reads_zarrx_layouts(tmp_path, separator, order, consolidated):
    path = tmp_path / "w.zarr"
    want = _write(path, dtype="f8", compressor=WRITE_COMPRESSORS["blosc_lz4"], order=order,
                  separator=separator, consolidated=consolidated)
    assert (path / ".zmetadata").exists() == consolidated
    _check_gdal_reads(path, want)


@needs_gdal
def test_gdal_reads_the_delta_filter_zarrx_writes(tmp_path):
    path = tmp_path / "w.zarr"
    want = _write(path, dtype="i2", filters=[{"id": "delta", "dtype": "<i2"}],
                  compressor=WRITE_COMPRESSORS["zstd"])
    _check_gdal_reads(path, want)


# zarrx's types GDAL reads as another type (GDAL 3.6 has no Int8, Float16, Bool), big-endian
# types, and strings: name -> (dtype, values, GDAL's type)
OTHER_TYPES = {
    "b1": ("b1", [True, False, True], "Byte"), "i1": ("i1", [-128, 0, 127], "Int16"),
    "f2": ("f2", [0.5, -2.0, 65504.0], "Float32"), "be_i4": (">i4", [1, -2, 3], "Int32"),
    "be_f8": (">f8", [1.5, -2.0, 1e300], "Float64"), "be_u2": (">u2", [1, 2, 65535], "UInt16"),
    "bytes": ("S5", [b"ab", b"hello", b""], "String"),
    "text": ("U5", ["ab", "h\u00e9llo", ""], "String"),
}


@needs_gdal
def test_gdal_reads_the_other_types_zarrx_writes(tmp_path):
    path = tmp_path / "w.zarr"
    root = zarrx.open_group(str(path), mode="w", zarr_format=2)
    for name, (dtype, values, _) in OTHER_TYPES.items():
        arr = root.create_array(name, shape=(3,), chunks=(2,), dtype=dtype, compressors=None)
        arr[:] = np.asarray(values, dtype=dtype)
        arr.attrs["_ARRAY_DIMENSIONS"] = ["n"]
    report = _gdal_report(path)["arrays"]
    for name, (dtype, values, gdal_type) in OTHER_TYPES.items():
        assert report[name]["datatype"] == gdal_type, name
        want = [v.decode() if isinstance(v, bytes) else v for v in values]
        assert report[name]["values"] == want, name


def test_create_array_takes_gdal_compressor_fields_and_writes_numcodecs_forms(tmp_path):
    path = tmp_path / "a.zarr"
    for conf, stored in (
            ({"id": "blosc", "cname": "lz4", "shuffle": "BIT"},
             {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 2, "blocksize": 0}),
            ({"id": "lzma", "preset": 6, "delta": 2},
             {"id": "lzma", "format": 1, "check": -1, "preset": 6, "filters": None})):
        arr = zarrx.create_array(str(path), shape=(4,), dtype="i2", zarr_format=2,
                                 compressors=conf, overwrite=True)
        arr[:] = [1, 2, 3, 4]
        assert json.loads((path / ".zarray").read_text())["compressor"] == stored
        assert zarrx.open_array(str(path), mode="r")[...].tolist() == [1, 2, 3, 4]
    with pytest.raises(zarrx.CodecError) as info:
        zarrx.create_array(str(path), shape=(4,), dtype="i2", zarr_format=2,
                           compressors={"id": "lzma", "delta": 0}, overwrite=True)
    assert str(info.value) == ("create_array compressors[0].delta: expected an integer in "
                               "[1, 256], found 0")


@needs_gdal
def test_gdal_reads_the_fill_values_zarrx_writes(tmp_path):
    # (not uint64's 2**64 - 1: GDAL 3.6 reads it as 2**63 - 1, see tests/data/gdal/README.md)
    path = tmp_path / "w.zarr"
    root = zarrx.open_group(str(path), mode="w", zarr_format=2)
    root.attrs.update({"nan": float("nan"), "inf": [float("inf"), -1.0]})
    fills = {"nan": ("f4", float("nan"), "NaN"), "ninf": (">f8", -float("inf"), "-Infinity"),
             "i8min": ("i8", -2**63, -2**63), "u4max": ("u4", 2**32 - 1, 2**32 - 1),
             "true": ("b1", True, 1)}
    for name, (dtype, fill, _) in fills.items():
        arr = root.create_array(name, shape=(3,), chunks=(2,), dtype=dtype, fill_value=fill,
                                compressors=None)
        arr[:1] = np.ones(1, dtype)             # chunk 1 is never written: fill value
        arr.attrs["_ARRAY_DIMENSIONS"] = ["n"]
    report = _gdal_report(path)
    assert {k: a["value"] for k, a in report["attributes"].items()} == \
        {"nan": "NaN", "inf": ["Infinity", -1]}
    for name, (dtype, fill, reported) in fills.items():
        assert report["arrays"][name]["nodata_value"] == reported, name
        assert report["arrays"][name]["values"] == [1, reported, reported], name
