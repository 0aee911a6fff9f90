"""The ``astype`` field of numcodecs ``delta``, ``quantize`` and ``fixedscaleoffset`` as each
format's writers write it: Zarr v3 leaves it out when it is not given (zarr-python), Zarr v2
names it always (numcodecs); zarrx and zarr-python read each other's arrays."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import zarrx
from zarrx import codecs as zc

zarr = pytest.importorskip("zarr")
z3 = pytest.importorskip("numcodecs.zarr3")
numcodecs = pytest.importorskip("numcodecs")

# (zarrx filter, zarr-python v3 filter, numcodecs v2 filter, data type)
CASES = {
    "delta": (lambda: zc.Delta(dtype="<i4"), lambda: z3.Delta(dtype="<i4"),
              lambda: numcodecs.Delta(dtype="<i4"), "<i4"),
    "delta-astype": (lambda: zc.Delta(dtype="<i4", astype="<i2"),
                     lambda: z3.Delta(dtype="<i4", astype="<i2"),
                     lambda: numcodecs.Delta(dtype="<i4", astype="<i2"), "<i4"),
    "quantize": (lambda: zc.Quantize(digits=3, dtype="<f8"),
                 lambda: z3.Quantize(digits=3, dtype="<f8"),
                 lambda: numcodecs.Quantize(digits=3, dtype="<f8"), "<f8"),
    "quantize-astype": (lambda: zc.Quantize(digits=3, dtype="<f8", astype="<f4"),
                        lambda: z3.Quantize(digits=3, dtype="<f8", astype="<f4"),
                        lambda: numcodecs.Quantize(digits=3, dtype="<f8", astype="<f4"), "<f8"),
    "fixedscaleoffset": (lambda: zc.FixedScaleOffset(offset=1, scale=10, dtype="<f8"),
                         lambda: z3.FixedScaleOffset(offset=1, scale=10, dtype="<f8"),
                         lambda: numcodecs.FixedScaleOffset(offset=1, scale=10, dtype="<f8"),
                         "<f8"),
}


def _data(dtype):
    return (np.arange(40) * 3 % 17).astype(dtype) + (np.float64(0.5) if dtype == "<f8" else 0)


def _filters(path, fmt):
    with open(path / ("zarr.json" if fmt == 3 else ".zarray")) as f:
        doc = json.load(f)
    return doc["codecs"][:1] if fmt == 3 else doc["filters"]


@pytest.mark.parametrize("fmt", [3, 2])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_filter_is_written_as_zarr_python_writes_it_and_reads_both_ways(tmp_path, case, fmt):
    if (case, fmt) == ("quantize-astype", 3):
        pytest.skip("zarr-python 3 neither writes nor reads a v3 quantize filter whose "
                    "astype is not its dtype")
    ours_filter, v3_filter, v2_filter, dtype = CASES[case]
    data = _data(dtype)
    ours = zarrx.create_array(str(tmp_path / "ours"), shape=(40,), dtype=dtype, chunks=(16,),
                              filters=[ours_filter()], compressors=None, zarr_format=fmt)
    ours[...] = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.create_array(str(tmp_path / "theirs"), shape=(40,), dtype=dtype,
                                   chunks=(16,), compressors=None, zarr_format=fmt,
                                   filters=[v3_filter() if fmt == 3 else v2_filter()])
        theirs[...] = data
        assert _filters(tmp_path / "ours", fmt) == _filters(tmp_path / "theirs", fmt)
        read_by_zarr = zarr.open_array(str(tmp_path / "ours"), mode="r")[...]
    np.testing.assert_array_equal(read_by_zarr, ours[...])
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "theirs"), mode="r")[...],
                                  theirs[...])


@pytest.mark.parametrize("name, conf, dtype", [
    ("numcodecs.delta", {"dtype": "<i4"}, "<i4"),
    ("numcodecs.delta", {"dtype": "<i4", "astype": "<i4"}, "<i4"),
    ("numcodecs.quantize", {"digits": 3, "dtype": "<f8"}, "<f8"),
    ("numcodecs.quantize", {"digits": 3, "dtype": "<f8", "astype": "<f8"}, "<f8"),
])
def test_both_forms_are_read_and_written_back_as_found(tmp_path, name, conf, dtype):
    a = zarrx.create_array(str(tmp_path / "a"), shape=(40,), dtype=dtype, chunks=(16,),
                           filters=[{"name": name, "configuration": conf}], compressors=None)
    a[...] = _data(dtype)
    assert _filters(tmp_path / "a", 3) == [{"name": name, "configuration": conf}]
    a = zarrx.open_array(str(tmp_path / "a"), mode="r+")
    a.attrs["k"] = 1                                    # the document written again
    assert _filters(tmp_path / "a", 3) == [{"name": name, "configuration": conf}]
    expected = _data(dtype) if name.endswith("delta") else \
        numcodecs.Quantize(3, dtype).decode(numcodecs.Quantize(3, dtype).encode(_data(dtype)))
    np.testing.assert_array_equal(a[...], expected)
