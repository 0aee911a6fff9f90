"""Engine "zarrx" against engine "zarr" (the oracle) on what a read gives beyond the values: the
dtype of Zarr v2 big-endian arrays (in ``encoding["dtype"]``, which a later write keeps),
``encoding["preferred_chunks"]`` of arrays whose chunks are larger than they are, the order of
the variables (also of what ``to_zarrx`` writes, read by engine "zarr") and of encoding keys.
"""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def opened(path, engine, **kw):
    """The Dataset at ``path`` opened with ``engine``, not loaded."""
    if engine == "zarr":
        return xr.open_dataset(path, engine="zarr", chunks=None, **kw)
    return xr.open_dataset(path, engine=ZarrxBackendEntrypoint, **kw)


def big_endian_group(path, dtype, values, fill_value, attrs):
    grp = zarr.open_group(path, mode="w", zarr_format=2)
    arr = grp.create_array("v", shape=(len(values),), dtype=dtype, fill_value=fill_value)
    arr[...] = np.array(values, dtype=dtype)
    arr.attrs.update({"_ARRAY_DIMENSIONS": ["x"], **attrs})


BIG_ENDIAN = {
    # (netCDF-3 data is big-endian: packed integers copied into Zarr v2 keep their byte order)
    "masked int": (">i4", [1, 2, -9], -9, {}),
    "packed int16": (">i2", [100, -32768, 3], None,
                     {"scale_factor": 0.5, "add_offset": 10.0, "_FillValue": -32768}),
    "unsigned": (">u2", [1, 2, 3], 0, {}),
    "times": (">M8[ns]", ["2000-01-01", "NaT", "2001-02-03"], None, {}),
}


@pytest.mark.parametrize("case", list(BIG_ENDIAN))
@pytest.mark.parametrize("kw", [{}, {"decode_cf": False}, {"mask_and_scale": False}],
                         ids=["decoded", "raw", "unmasked"])
def test_big_endian_zarr_v2_arrays_keep_their_dtype_as_with_engine_zarr(tmp_path, case, kw):
    # engine "zarr" reads them as stored (">i4"), so that encoding["dtype"] is the stored
    # type; engine "zarrx" gave the native one ("int32")
    path = tmp_path / "be.zarr"
    big_endian_group(path, *BIG_ENDIAN[case])
    want, got = opened(path, "zarr", **kw), opened(path, "zarrx", **kw)
    assert got.v.dtype == want.v.dtype
    assert got.v.encoding.get("dtype") == want.v.encoding.get("dtype")
    want, got = want.load(), got.load()
    xr.testing.assert_identical(got, want)
    assert got.v.dtype == want.v.dtype


def test_big_endian_int_written_back_keeps_its_byte_order(tmp_path):
    big_endian_group(tmp_path / "be.zarr", *BIG_ENDIAN["packed int16"])
    for engine in ("zarr", "zarrx"):
        opened(tmp_path / "be.zarr", engine).to_zarr(tmp_path / f"{engine}.zarr", zarr_format=2)
    stored = [zarr.open_array(tmp_path / f"{e}.zarr", path="v").dtype for e in ("zarr", "zarrx")]
    assert stored == [np.dtype(">i2")] * 2


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("shape, chunks", [((6, 3), (10, 10)), ((0,), (5,)),
                                           ((7, 40), (10, 20))])
def test_preferred_chunks_are_the_stored_chunks_as_with_engine_zarr(tmp_path, fmt, shape,
                                                                    chunks):
    # engine "zarr" gives the chunk shape as stored; engine "zarrx" cut it to the array's shape
    dims = ("a", "b")[:len(shape)]
    ds = xr.Dataset({"v": (dims, np.zeros(shape, "f4"))})
    ds.to_zarr(tmp_path / "c.zarr", zarr_format=fmt, encoding={"v": {"chunks": chunks}})
    for chunks_kw in [None, {}, "auto"]:
        want = xr.open_dataset(tmp_path / "c.zarr", engine="zarr", chunks=chunks_kw)
        got = xr.open_dataset(tmp_path / "c.zarr", engine=ZarrxBackendEntrypoint,
                              chunks=chunks_kw)
        assert got.v.encoding["preferred_chunks"] == want.v.encoding["preferred_chunks"]
        assert got.v.encoding["chunks"] == want.v.encoding["chunks"]
        assert got.v.chunks == want.v.chunks


MIXED_CASE = xr.Dataset({"zeta": ("x", np.arange(3)), "alpha": ("x", np.arange(3.0)),
                         "Mid": ((), 1), "ß": ((), 2.0)},
                        coords={"x": [1, 2, 3], "Lon": ("x", [1.0, 2, 3]), "aaa": ((), 0)})


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
def test_variables_come_in_the_order_engine_zarr_gives_them(tmp_path, fmt, writer):
    # engine "zarr" lists a consolidated group's arrays as zarr-python sorts them (by name,
    # case-insensitively: alpha, Mid, zeta); engine "zarrx" sorted "Mid" first, and to_zarrx
    # stored its Zarr v3 consolidated metadata so, which engine "zarr" then followed
    import zarrx.xarray as zx

    def order(ds):
        return list(ds.variables), list(ds.data_vars), list(ds.coords)

    MIXED_CASE.to_zarr(tmp_path / "zarr.zarr", zarr_format=fmt)
    want = order(opened(tmp_path / "zarr.zarr", "zarr"))
    assert want[1] == ["alpha", "Mid", "ß", "zeta"]
    path = tmp_path / "zarr.zarr"
    if writer == "zarrx":
        path = tmp_path / "zarrx.zarr"
        zx.to_zarrx(MIXED_CASE, path, zarr_format=fmt)
        assert order(opened(path, "zarr")) == want
    assert order(opened(path, "zarrx")) == want
    assert order(opened(path, "zarrx", consolidated=False)) == want


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("kw", [{}, {"mask_and_scale": False}, {"decode_cf": False}],
                         ids=["decoded", "unmasked", "raw"])
def test_encoding_keys_come_in_the_order_engine_zarr_gives_them(tmp_path, fmt, kw):
    # engine "zarrx" gave preferred_chunks first and shards before compressors
    ds = xr.Dataset({"f": ("t", [1.0, np.nan, 2.0]), "s": ("t", np.array(["a", "", "b"], object)),
                     "i": ("t", np.array([1, 2, 3], "i2"))},
                    coords={"t": np.array(["2000-01-01", "NaT", "2001-01-01"], "M8[ns]")})
    ds.to_zarr(tmp_path / "e.zarr", zarr_format=fmt, encoding={"i": {"_FillValue": -1}})
    path = tmp_path / "e.zarr"
    want, got = opened(path, "zarr", **kw), opened(path, "zarrx", **kw)
    assert {n: list(got[n].encoding) for n in got.variables} == \
        {n: list(want[n].encoding) for n in want.variables}


@pytest.mark.parametrize("fmt", [2, 3])
def test_groups_come_in_the_order_engine_zarr_gives_them(tmp_path, fmt):
    # engine "zarr" walks a consolidated hierarchy group by group, each group's children by
    # name ignoring case; engine "zarrx" put "/B2" before "/a"
    tree = xr.DataTree.from_dict({"/": xr.Dataset(), "/b": xr.Dataset(), "/a/z": xr.Dataset(),
                                  "/B2": xr.Dataset(), "/a/Y": xr.Dataset()})
    tree.to_zarr(tmp_path / "t.zarr", zarr_format=fmt)
    for kw in [{}, {"group": "a"}]:
        want = list(xr.open_groups(tmp_path / "t.zarr", engine="zarr", **kw))
        assert list(xr.open_groups(tmp_path / "t.zarr", engine=ZarrxBackendEntrypoint,
                                   **kw)) == want
    assert want == [".", "Y", "z"]
    want = [n.path for n in xr.open_datatree(tmp_path / "t.zarr", engine="zarr").subtree]
    got = xr.open_datatree(tmp_path / "t.zarr", engine=ZarrxBackendEntrypoint)
    assert [n.path for n in got.subtree] == want == ["/", "/a", "/b", "/B2", "/a/Y", "/a/z"]
