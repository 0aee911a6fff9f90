"""A ``_FillValue`` of the other string type than the variable's: a bytes one for text is
refused (stored as engine "zarr" stores it, ``"b'a'"``, or as the text it encodes, it would
change what is read back), a str one for bytes in Zarr v2 masks the bytes it encodes, as with
engine "zarr"; stores of either engine read the same with both."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from xarray_checks import WRITERS, read  # noqa: E402

from zarrx.errors import ArgumentTypeError  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning",
                                        "ignore::RuntimeWarning",
                                        "ignore::FutureWarning",
                                        "ignore::DeprecationWarning")

TEXT = {"object": np.array(["a", "b", ""], dtype=object),
        "unicode": np.array(["a", "b", ""]),
        "StringDType": np.array(["a", "b", ""], dtype=np.dtypes.StringDType())}


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("key", ["_FillValue", "missing_value"])
@pytest.mark.parametrize("kind", list(TEXT))
def test_a_bytes_fill_value_for_text_is_refused(tmp_path, fmt, key, kind):
    # Zarr v2 object text stored the fill value b"a" as "a": the stored "a" read back as NaN
    ds = xr.Dataset({"v": ("x", TEXT[kind])})
    msg = (f"to_zarrx: variable 'v': {key}: expected str for text (dtype "
           f"{TEXT[kind].dtype}), found bytes b'a'")
    with pytest.raises(ArgumentTypeError, match=re.escape(msg)):
        ds.zarrx.to_zarrx(tmp_path / "t.zarr", zarr_format=fmt, encoding={"v": {key: b"a"}})
    assert not (tmp_path / "t.zarr").exists()


@pytest.mark.parametrize("kind", ["object", "unicode"])
def test_engine_zarr_bytes_fill_value_for_text_reads_the_same(tmp_path, kind):
    # engine "zarr" stores b"a" as the text "b'a'": the stored "a" stays "a" with both engines
    ds = xr.Dataset({"v": ("x", TEXT[kind])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(tmp_path / "t.zarr", zarr_format=2, consolidated=False,
                   encoding={"v": {"_FillValue": b"a"}})
    for engine in ("zarr", "zarrx"):
        got = read(tmp_path / "t.zarr", engine, consolidated=False)
        assert got.v.values.tolist() == ["a", "b", ""], engine
        assert got.v.encoding["_FillValue"] == "b'a'", engine


@pytest.mark.parametrize("writer", ["zarr", "zarrx"])
@pytest.mark.parametrize("fill", ["a", "ab"], ids=["str-text", "str-bytes"])
def test_a_str_fill_value_masks_as_with_engine_zarr_in_v2(tmp_path, writer, fill):
    values = np.array(["a", "b", ""], dtype=object) if fill == "a" else \
        np.array([b"ab", b"cd", b""], dtype=object)
    ds = xr.Dataset({"v": ("x", values)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        WRITERS[writer](ds, tmp_path / "t.zarr", zarr_format=2, consolidated=False,
                        encoding={"v": {"_FillValue": fill}})
    for engine in ("zarr", "zarrx"):
        got = read(tmp_path / "t.zarr", engine, consolidated=False).v.values.tolist()
        assert got[0] != got[0] and got[1:] == list(values[1:]), (engine, got)


def test_variable_length_bytes_with_a_str_fill_value_are_refused_in_v3(tmp_path):
    # (as engine "zarr" refuses them; Zarr v2 masks the bytes the text encodes, as above)
    ds = xr.Dataset({"v": ("x", np.array([b"ab", b"cd"], dtype=object))})
    with pytest.raises(ArgumentTypeError, match=re.escape(
            "to_zarrx: variable 'v': _FillValue: expected bytes for dtype |S2, found str")):
        ds.zarrx.to_zarrx(tmp_path / "t.zarr", zarr_format=3,
                          encoding={"v": {"_FillValue": "ab"}})
    assert not (tmp_path / "t.zarr").exists()
