"""zarrx works with the oldest versions pyproject.toml declares (numpy 1.25, xarray 2024.10),
although the test environment has the newest: each test here makes numpy or xarray behave as
the old version does where zarrx once relied on the new behaviour."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore


def _reshape_before_2_1(a, newshape=None, order="C", **kwargs):
    if kwargs:          # numpy < 2.1: reshape(a, newshape, order='C'), no copy=
        raise TypeError(f"reshape() got an unexpected keyword argument {next(iter(kwargs))!r}")
    return np.asarray(a).reshape(newshape, order=order)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_outer_reads_of_small_sharded_chunks_need_no_reshape_copy_argument(monkeypatch, ndim):
    shape = (24, 20, 6)[:ndim]
    z = zarrx.create_array(MemoryStore(), shape=shape, dtype="i4", chunks=(2, 2, 2)[:ndim],
                           shards=(8, 10, 6)[:ndim], fill_value=-1)
    data = np.arange(np.prod(shape), dtype="i4").reshape(shape)
    z[...] = data
    z[(slice(8, 16),) + (slice(None),) * (ndim - 1)] = -1        # a missing shard
    data[8:16] = -1
    monkeypatch.setattr(np, "reshape", _reshape_before_2_1)
    for sel in [(slice(None),) * ndim, (slice(1, None, 3),) + (slice(None, None, 2),) * (ndim - 1),
                (slice(None, None, 5),) * ndim]:
        np.testing.assert_array_equal(z[sel], data[sel])
        np.testing.assert_array_equal(z.oindex[sel], data[sel])


_minimum = np.minimum


def _minimum_value_based(a, b, *args, **kwargs):
    # numpy 1: a 0-d uint8 array with a Python int promotes by value, to int64
    if type(b) is int and np.ndim(a) == 0:
        b = np.int64(b)
    return _minimum(a, b, *args, **kwargs)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_0d_bool_holding_another_byte_reads_as_one_with_value_based_casting(monkeypatch,
                                                                              zarr_format):
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(), dtype=bool, compressors=None,
                           zarr_format=zarr_format)
    z[...] = True
    key = "c" if zarr_format == 3 else "0"
    store.set(key, bytes([2]))
    monkeypatch.setattr(np, "minimum", _minimum_value_based)
    for a in (z[...], z[()], np.asarray(z[...])):
        assert a.view("u1") == 1 and a.dtype == bool
    out = np.zeros((), bool)
    z.get_basic_selection((), out=out)
    assert out.view("u1") == 1


def test_the_xarray_backend_imports_from_where_xarray_2024_10_keeps_its_coding_helpers(
        monkeypatch):
    xr = pytest.importorskip("xarray")
    from xarray.coding import variables
    old = type("Helper", (), {})
    monkeypatch.setattr(variables, "_ElementwiseFunctionArray", old, raising=False)
    monkeypatch.setitem(sys.modules, "xarray.coding.common", None)   # (not in 2024.10)
    # the module run on its own (not imported: the package's accessors stay as they are)
    path = Path(zarrx.__file__).parent / "xarray" / "cf_checks.py"
    spec = importlib.util.spec_from_file_location("_cf_checks_of_old_xarray", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert issubclass(module._Guarded, old)
    assert xr.SerializationWarning is variables.SerializationWarning


def test_text_stored_as_utf8_bytes_reads_as_str_without_string_dtype(monkeypatch):
    # numpy 1 has no StringDType: strings are read into object arrays, where items a codec
    # such as vlen-bytes decodes as bytes are text all the same
    import json
    monkeypatch.delattr(np.dtypes, "StringDType")
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "string",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "",
           "codecs": [{"name": "vlen-bytes", "configuration": {}}], "attributes": {}}
    store = MemoryStore({"zarr.json": json.dumps(doc).encode(),
                         "c/0": b"\x02\x00\x00\x00\x01\x00\x00\x00a\x02\x00\x00\x00\xc3\xa9"})
    z = zarrx.open_array(store, mode="r+")
    assert z.dtype == object
    assert z[:].tolist() == ["a", "é", "", ""]
    assert z[1] == "é" and z.oindex[[1, 0]].tolist() == ["é", "a"]
    z[2] = b"x"
    assert z[2:].tolist() == ["x", ""]
    store.set("c/0", b"\x02\x00\x00\x00\x01\x00\x00\x00a\x01\x00\x00\x00\xff")
    with pytest.raises(zarrx.errors.CodecError, match=r"c/0.*expected text .*not UTF-8"):
        z[:]
