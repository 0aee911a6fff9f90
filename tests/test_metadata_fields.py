"""``Array.metadata`` has the fields zarr-python's array metadata has under its names: ``chunks``
and ``shards`` (the inner chunk and the shard when sharded), ``dtype``, ``chunk_key_encoding``,
and for a Zarr v2 array ``order``, ``dimension_separator``, ``compressor`` and ``filters`` (the
``.zarray`` JSON objects; zarr-python hands out numcodecs objects there). The v2-only fields are
an ``AttributeError`` for a Zarr v3 array, as in zarr-python."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

CASES = {
    "v3": dict(zarr_format=3),
    "v3-sharded": dict(zarr_format=3, shards=(4, 4)),
    "v3-dot-keys": dict(zarr_format=3, chunk_key_encoding={"name": "default", "separator": "."}),
    "v2": dict(zarr_format=2),
    "v2-F-raw": dict(zarr_format=2, order="F", compressors=None),
    "v2-delta": dict(zarr_format=2, filters=[numcodecs.Delta("<i4")]),
    "v2-slash": dict(zarr_format=2, chunk_key_encoding={"name": "v2", "separator": "/"}),
}
FIELDS = ["chunks", "shards", "order", "dimension_separator", "compressor", "filters"]


def _fields(lib, kw) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        meta = lib.create_array({}, shape=(8, 8), dtype="i4", chunks=(2, 2), **kw).metadata
    out = {}
    for name in FIELDS:
        try:
            value = getattr(meta, name)
        except AttributeError:
            out[name] = AttributeError
            continue
        if hasattr(value, "get_config"):                # zarr-python's numcodecs objects
            value = {k: v for k, v in value.get_config().items() if k != "checksum"}
        elif isinstance(value, tuple) and value and hasattr(value[0], "get_config"):
            value = tuple(v.get_config() for v in value)
        out[name] = value
    dtype = meta.dtype
    out["dtype"] = np.dtype(dtype.to_native_dtype()) if hasattr(dtype, "to_native_dtype") \
        else dtype
    cke = meta.chunk_key_encoding if kw["zarr_format"] == 3 or lib is zarrx else None
    out["chunk_key_encoding"] = None if cke is None else (cke.name, cke.separator)
    return out


@pytest.mark.parametrize("case", CASES)
def test_metadata_fields_read_as_zarr_pythons(case):
    kw = CASES[case]
    zx, zp = _fields(zarrx, kw), _fields(zarr, kw)
    if kw["zarr_format"] == 2:                          # zarr-python's v2 metadata has none
        assert zx.pop("chunk_key_encoding") == ("v2", zx["dimension_separator"])
        zp.pop("chunk_key_encoding")
    assert zx == zp


def test_v2_codec_fields_are_the_zarray_objects_and_copies():
    a = zarrx.create_array({}, shape=(6,), dtype="i4", chunks=(3,), zarr_format=2,
                           filters=[{"id": "delta", "dtype": "<i4", "astype": "<i4"}])
    meta = a.metadata
    assert meta.compressor == {"id": "zstd", "level": 0}
    assert meta.filters == ({"id": "delta", "dtype": "<i4", "astype": "<i4"},)
    meta.compressor["level"] = 9
    meta.filters[0]["dtype"] = "<i8"
    assert a.metadata.to_dict()["compressor"] == {"id": "zstd", "level": 0}
    assert a.metadata.filters == ({"id": "delta", "dtype": "<i4", "astype": "<i4"},)
    raw = zarrx.create_array({}, shape=(6,), dtype="i4", zarr_format=2, compressors=None)
    assert (raw.metadata.compressor, raw.metadata.filters) == (None, None)


@pytest.mark.parametrize("name", ["order", "dimension_separator", "compressor", "filters"])
def test_v2_only_fields_of_a_v3_array_are_attribute_errors(name):
    meta = zarrx.create_array({}, shape=(4,), dtype="i4").metadata
    with pytest.raises(AttributeError, match=f"'{name}' is a field of Zarr v2 array metadata"):
        getattr(meta, name)
    assert not hasattr(meta, name)


@pytest.mark.parametrize("dtype", ["i4", ">i4", "f8", "U3", "S2", str, bytes, "M8[s]",
                                   [("a", "i2"), ("b", "f4")]], ids=str)
@pytest.mark.parametrize("fmt", [2, 3])
def test_metadata_dtype_is_the_arrays_dtype(dtype, fmt):
    a = zarrx.create_array({}, shape=(2,), dtype=dtype, zarr_format=fmt)
    assert a.metadata.dtype == a.dtype
    if dtype is str:                                  # zarr-python's native type of strings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            native = zarr.create_array({}, shape=(2,), dtype=str, zarr_format=fmt
                                       ).metadata.dtype.to_native_dtype()
        assert a.metadata.dtype == native
