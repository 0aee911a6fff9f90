"""``to_zarrx`` writes into a stored variable only values of its kind (numbers, booleans, times,
time deltas, text, bytes; numbers also take booleans), appended or in a region, and a refused
write leaves the store as it was. xarray's writer casts the others: a time appended to integers
is stored as 0, an integer appended to times as that many of the stored units, 7 appended to
booleans as True, 300 appended to text of width 1 as "3" (see docs/guide/xarray.md).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")

import zarrx  # noqa: E402
import zarrx.xarray as zx  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

STORED = {
    "int32": np.array([1, 2, 3], dtype="i4"),
    "float64": np.array([1.0, 2.5, 3.0]),
    "bool": np.array([True, False, True]),
    "datetime64[ns]": np.array(["2000-01-01", "2000-01-02", "2000-01-03"], dtype="M8[ns]"),
    "timedelta64[ns]": np.array([1, 2, 3], dtype="m8[h]").astype("m8[ns]"),
    "<U1": np.array(["a", "b", "c"]),
}
GIVEN = {
    "int64": np.array([300]),
    "float64": np.array([7.0]),
    "bool": np.array([True]),
    "complex128": np.array([2 + 1j]),
    "datetime64[ns]": np.array(["2001-01-05"], dtype="M8[ns]"),
    "timedelta64[ns]": np.array([5], dtype="m8[h]").astype("m8[ns]"),
    "<U1": np.array(["x"]),
}
KIND = {"int32": "numbers", "int64": "numbers", "float64": "numbers", "bool": "booleans",
        "complex128": "complex numbers", "datetime64[ns]": "times",
        "timedelta64[ns]": "time deltas", "<U1": "text"}
TAKES = {"numbers": {"numbers", "booleans"}}


def stored(path):
    """Shape and values of every array of the group at ``path``, read by zarr-python."""
    return {name: (a.shape, a[...].tolist()) for name, a in zarr.open_group(path).arrays()}


def _cases():
    for s in STORED:
        for g in GIVEN:
            yield pytest.param(s, g, KIND[g] in TAKES.get(KIND[s], {KIND[s]}), id=f"{g}-into-{s}")


@pytest.mark.parametrize("fmt, how", [(2, "region"), (3, "append")])
@pytest.mark.parametrize("stored_as, given, taken", list(_cases()))
def test_values_of_another_kind_are_refused_and_change_nothing(tmp_path, fmt, how, stored_as,
                                                               given, taken):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"v": ("t", STORED[stored_as])}), path, zarr_format=fmt)
    before = stored(path)
    more = xr.Dataset({"v": ("t", GIVEN[given])})
    kw = {"append_dim": "t"} if how == "append" else {"region": {"t": slice(1, 2)}}
    if not taken:
        with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
                f"to_zarrx: variable 'v': the stored array holds {np.dtype(stored_as)} values; "
                f"cannot store values of dtype {np.dtype(given)} ({KIND[given]} into "
                f"{KIND[stored_as]})")):
            zx.to_zarrx(more, path, **kw)
        assert stored(path) == before
        return
    zx.to_zarrx(more, path, **kw)
    back = xr.open_zarr(path).v.values
    assert back[-1 if how == "append" else 1] == GIVEN[given][0]


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("stored_as", ["bool", "float64", "datetime64[ns]"])
def test_python_strings_are_refused_by_booleans_numbers_and_times(tmp_path, lazy, stored_as):
    # (into booleans, xarray's writer stored "x" as True)
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"v": ("t", STORED[stored_as])}), path)
    before = stored(path)
    more = xr.Dataset({"v": ("t", np.array(["x"], dtype=object))})
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape(
            f"to_zarrx: variable 'v': the stored array holds {np.dtype(stored_as)} values; "
            f"cannot store str 'x'")):
        zx.to_zarrx(more.chunk() if lazy else more, path, region={"t": slice(0, 1)})
    assert stored(path) == before


def test_python_objects_of_the_stored_kind_are_taken(tmp_path):
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"v": ("t", STORED["bool"])}), path)
    more = xr.Dataset({"v": ("t", np.array([False], dtype=object))})
    zx.to_zarrx(more.chunk(), path, append_dim="t")
    assert xr.open_zarr(path).v.values.tolist() == [True, False, True, False]


@pytest.mark.parametrize("fmt", [2, 3])
def test_numbers_in_the_stored_time_units_are_taken(tmp_path, fmt):
    # times read with decode_times=False are numbers in the stored units: appended as they are
    path = tmp_path / "z.zarr"
    zx.to_zarrx(xr.Dataset({"a": ("t", [1.0, 2.0])},
                           coords={"t": STORED["datetime64[ns]"][:2]}), path, zarr_format=fmt)
    raw = xr.open_zarr(path, decode_times=False).load()
    more = raw.isel(t=[-1]).assign_coords(t=raw.t[-1:] + 1)
    zx.to_zarrx(more, path, append_dim="t")
    assert xr.open_zarr(path).t.values.tolist() == STORED["datetime64[ns]"].tolist()
    # (numbers in other units, or none, are another kind)
    other = more.assign_coords(t=more.t.assign_attrs(units="hours since 2000-01-01") + 1)
    with pytest.raises(zarrx.ArgumentTypeError, match=re.escape("(numbers into times)")):
        zx.to_zarrx(other, path, append_dim="t")


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("lazy", [False, True])
def test_an_append_of_no_rows_takes_empty_python_objects_as_engine_zarr_does(tmp_path, fmt, lazy):
    # xarray's coders type an empty array of Python objects float64: it was refused as numbers
    # written into strings, though it holds no value
    path = tmp_path / "t.zarr"
    stored = xr.Dataset({"s": ("t", np.array(["a", "bc"], dtype=object)),
                         "b": ("t", np.array([b"ab", b"c"])), "v": ("t", [1.0, 2.0])})
    zx.to_zarrx(stored, path, zarr_format=fmt)
    none = xr.Dataset({"s": ("t", np.array([], dtype=object)),
                       "b": ("t", np.array([], dtype=object)), "v": ("t", np.zeros(0))})
    zx.to_zarrx(none.chunk() if lazy else none, path, append_dim="t")
    for engine in ("zarrx", "zarr"):
        got = xr.open_dataset(path, engine=engine).load()
        xr.testing.assert_identical(got, stored)
