"""zarrx reads the Zarr v2 data zarr-python 2 and xarray (with zarr-python 2) wrote exactly as
they read it back: tests/data/zarr2 (see its README.md) holds the stores and what zarr-python 2
and xarray read from them."""
from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zarrx

DATA = Path(__file__).resolve().parent / "data" / "zarr2"
STORES, EXPECTED = DATA / "stores", DATA / "expected"
CORPUS = json.loads((EXPECTED / "arrays.json").read_text())
DATASETS = json.loads((EXPECTED / "datasets.json").read_text())


def descr_dtype(descr: Any) -> np.dtype:
    """The numpy type of a dtype as ``arrays.json`` records it (``str`` or a ``descr`` list)."""
    if isinstance(descr, str):
        return np.dtype(descr)
    return np.dtype([(f[0], descr_dtype(f[1]), *[tuple(s) for s in f[2:]]) for f in descr])


def in_memory(dt: np.dtype) -> np.dtype:
    """The type zarrx hands out for a stored type: native order, unless a structured type's
    fields differ in byte order (see docs/guide/migrating.md)."""
    orders = {o for o in _byte_orders(dt) if o != "|"}
    return dt.newbyteorder("=") if len(orders) < 2 else dt


def _byte_orders(dt: np.dtype) -> list[str]:
    if dt.names:
        return [o for name in dt.names for o in _byte_orders(dt.fields[name][0])]
    return [dt.base.byteorder]


# an object array's item as the corpus records it, as make_corpus.py records it
_spec = importlib.util.spec_from_file_location("zarr2_corpus_json", DATA / "corpus_json.py")
_corpus_json = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_corpus_json)
jsonable = _corpus_json.jsonable


def zero_as_empty(values: Any, empty: Any) -> Any:
    """zarr-python 2 reads the missing chunks of a string or bytes array whose fill value is
    0 (its default) as the integer 0; zarrx as the empty string or bytes."""
    if isinstance(values, list):
        return [zero_as_empty(v, empty) for v in values]
    return empty if values == 0 and not isinstance(values, bool) else values


def open_case(path: str) -> zarrx.Array:
    store, _, inner = path.partition("/")
    if store != "hierarchy":
        store, inner = "arrays", path
    return zarrx.open_array(str(STORES / store), path=inner, mode="r")


@pytest.mark.parametrize("path", sorted(CORPUS["arrays"]))
def test_arrays_read_as_zarr_python_2_reads_them(path: str) -> None:
    want = CORPUS["arrays"][path]
    a = open_case(path)
    stored = descr_dtype(want["dtype"])
    assert a.shape == tuple(want["shape"])
    assert a.chunks == tuple(want["chunks"])
    assert a.order == want["order"]
    assert a.attrs.asdict() == want["attrs"]
    got = np.asarray(a[...])        # a scalar for a 0-d array, as in zarr-python 3
    fill = want["fill_value"]
    if stored == object:
        values = jsonable(got.tolist())
        if fill == {"object": 0} and isinstance(a.fill_value, (str, bytes)):
            empty = jsonable(a.fill_value)
            assert empty in ("", {"bytes": ""})
            assert values == zero_as_empty(want["values"], empty)
        else:
            assert values == want["values"]
            assert jsonable(a.fill_value) == fill["object"]
        return
    assert a.dtype == in_memory(stored)
    expected = np.load(EXPECTED / f"{path}.npy", allow_pickle=False).astype(a.dtype)
    assert got.dtype == a.dtype and got.shape == expected.shape
    if fill is None:
        # the fill value is undefined: zarr-python 2 hands out uninitialised memory where no
        # chunk is stored, zarrx zeros; only the first row of chunks is stored
        rows = a.chunks[0]
        assert got[:rows].tobytes() == expected[:rows].tobytes()
        assert not got[rows:].tobytes().strip(b"\0")
        assert a.fill_value is None
    else:
        assert got.tobytes() == expected.tobytes()
        assert np.array(a.fill_value, dtype=stored).tobytes() == base64.b64decode(fill["bytes"])


def test_hierarchy_groups_and_consolidated_metadata() -> None:
    root = STORES / "hierarchy"
    g = zarrx.open_group(str(root), mode="r")
    for path, attrs in CORPUS["groups"]["hierarchy"].items():
        node = g[path] if path else g
        assert isinstance(node, zarrx.Group)
        assert node.attrs.asdict() == attrs
    assert sorted(name for name, _ in g.members(max_depth=None)) == [
        "empty", "sub", "sub/deeper", "sub/deeper/deepest", "sub/deeper/deepest/names",
        "sub/temps"]
    stored = json.loads((root / ".zmetadata").read_text())
    assert zarrx.open_consolidated(str(root), mode="r").attrs.asdict() == \
        stored["metadata"][".zattrs"]


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_xarray_datasets_decode_as_with_zarr_python_2(name: str) -> None:
    xr = pytest.importorskip("xarray")
    want = DATASETS[name]
    got = xr.open_dataset(STORES / name, engine="zarrx", decode_timedelta=True).load()
    assert got.attrs == want["attrs"]
    assert sorted(got.coords) == sorted(want["coords"])
    assert sorted(got.variables) == sorted(want["variables"])
    for vname, w in want["variables"].items():
        var = got.variables[vname]
        assert list(var.dims) == w["dims"], vname
        assert var.attrs == w["attrs"], vname
        if "values" in w:                  # text: object in xarray with zarr-python 2
            assert var.dtype.kind in "OTU" and var.values.tolist() == w["values"], vname
            continue
        assert var.dtype == np.dtype(w["dtype"]), vname
        np.testing.assert_array_equal(var.values, np.load(EXPECTED / name / f"{vname}.npy"),
                                      err_msg=vname)
