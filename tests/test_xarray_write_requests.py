"""The requests a ``to_zarrx`` write makes do not grow with the number of variables where the
write does not need them to: a group created or replaced (modes "w", "w-") is listed once for
what is below its new arrays' places (before: once per array, on an object store a listing
request each), and each stored array's metadata is read once (before: three or four times)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray  # noqa: E402,F401
from zarrx.store import CountingStore, MemoryStore  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


def _ds(n: int, start: int = 0):
    x = np.arange(start, start + 3)
    return xr.Dataset({f"v{i}": ("x", x + float(i)) for i in range(n)}, coords={"x": x})


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("mode", ["w", "w-"])
@pytest.mark.parametrize("consolidated", [None, False])
@pytest.mark.parametrize("n", [3, 40])
def test_a_new_group_is_listed_a_fixed_number_of_times(fmt, mode, consolidated, n):
    inner = MemoryStore()
    if mode == "w":
        _ds(2).zarrx.to_zarrx(inner, zarr_format=fmt)
    store = CountingStore(inner)
    _ds(n).zarrx.to_zarrx(store, mode=mode, zarr_format=fmt, consolidated=consolidated)
    # mode "w": the group replaced (one listing), then its new arrays' places (one);
    # mode "w-": the place checked unused (one), then the new arrays' places (one); and the
    # consolidation's walk of the hierarchy
    assert store.counts["list"] == 2 + (consolidated is None)
    back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint,
                           consolidated=consolidated).load()
    xr.testing.assert_identical(back, _ds(n))


@pytest.mark.parametrize("fmt", [2, 3])
def test_replacing_a_sub_group_deletes_what_was_below_each_array(fmt):
    """A sub-group replaced is listed twice (replaced, then its new arrays' places), however
    many arrays it gets, and nothing outside it is touched."""
    inner = MemoryStore()
    _ds(2).zarrx.to_zarrx(inner, group="g", zarr_format=fmt)
    _ds(1).zarrx.to_zarrx(inner, group="h", zarr_format=fmt)
    store = CountingStore(inner)
    _ds(3).zarrx.to_zarrx(store, mode="w", group="g", consolidated=False)
    assert store.counts["list"] == 2
    for group, n in (("g", 3), ("h", 1)):
        back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint, group=group,
                               consolidated=False).load()
        xr.testing.assert_identical(back, _ds(n))
