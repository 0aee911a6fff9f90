"""An append (``to_zarrx(append_dim=...)``) keeps the consolidated metadata in step with the
arrays it grows with a fixed number of writes of each consolidated document, however many
variables it appends: they are listed as pending once before the first grows and take their
new shapes once after the last (before: twice per array, so 300 variables rewrote the root's
document over 600 times)."""
from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray  # noqa: E402,F401
from zarrx.store import CountingStore, MemoryStore  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


def _ds(n: int, start: int = 0):
    x = np.arange(start, start + 3)
    return xr.Dataset({f"v{i}": ("x", x + float(i)) for i in range(n)}, coords={"x": x},
                      attrs={"title": "t"})


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("consolidated", [None, False])
@pytest.mark.parametrize("n", [2, 30])
def test_an_append_writes_the_consolidated_document_a_fixed_number_of_times(fmt,
                                                                            consolidated, n):
    inner = MemoryStore()
    _ds(n).zarrx.to_zarrx(inner, zarr_format=fmt)       # (consolidated)
    store = CountingStore(inner)
    _ds(n, start=3).zarrx.to_zarrx(store, append_dim="x", consolidated=consolidated)
    doc = ".zmetadata" if fmt == 2 else "zarr.json"
    # pending, then settled; the group's attributes (v3: its own document; v2: .zattrs, kept
    # in step the same way); and the consolidation of the whole hierarchy unless refused
    want = (3 if fmt == 3 else 4) + (consolidated is None)
    assert store.sets_by_key[doc] == want
    if fmt == 2:
        assert store.sets_by_key[".zattrs"] == 1
    for name in [f"v{i}" for i in range(n)] + ["x"]:
        assert store.sets_by_key[f"{name}/{'.zarray' if fmt == 2 else 'zarr.json'}"] == 1
    # the consolidated metadata kept lists every array at its new length
    back = xr.open_dataset(inner, engine=ZarrxBackendEntrypoint, consolidated=True).load()
    xr.testing.assert_identical(back, xr.concat([_ds(n), _ds(n, start=3)], dim="x"))
    entries = zarrx.open_group(inner, mode="r", use_consolidated=True).metadata.consolidated
    assert {entries[f"v{i}"].shape for i in range(n)} == {(6,)}
