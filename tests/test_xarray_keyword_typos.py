"""Misspelt keywords of the xarray writer and engine "zarrx", and misspelt keys of a
variable's encoding, are ZarrErrors naming the closest name they take."""
from __future__ import annotations

import re

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx.xarray as zx  # noqa: E402
from zarrx.errors import ArgumentError, ArgumentTypeError  # noqa: E402
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402

DS = xr.Dataset({"v": (("t", "x"), np.zeros((6, 4), "f4"))})


@pytest.mark.parametrize("write", [lambda s, **kw: zx.to_zarrx(DS, s, **kw),
                                   lambda s, **kw: DS.zarrx.to_zarrx(s, **kw)],
                         ids=["function", "accessor"])
def test_a_misspelt_writer_keyword_names_the_closest_one(tmp_path, write):
    message = ("to_zarrx() got an unexpected keyword argument 'consolidate'; did you mean "
               "'consolidated'?")
    with pytest.raises(ArgumentTypeError, match=f"^{re.escape(message)}$"):
        write(str(tmp_path / "d.zarr"), consolidate=False)
    assert not (tmp_path / "d.zarr").exists()


@pytest.mark.parametrize("opener", [xr.open_dataset, xr.open_datatree, xr.open_groups])
def test_a_misspelt_engine_keyword_names_the_closest_one(tmp_path, opener):
    DS.zarrx.to_zarrx(str(tmp_path / "d.zarr"))
    with pytest.raises(ArgumentTypeError, match="unexpected keyword argument 'zarr_fromat'; "
                                                "did you mean 'zarr_format'[?]$"):
        opener(str(tmp_path / "d.zarr"), engine=ZarrxBackendEntrypoint, zarr_fromat=3)


@pytest.mark.parametrize("key, closest", [("chunk", "chunks"), ("scalefactor", "scale_factor"),
                                          ("_Fillvalue", "_FillValue"),
                                          ("compresors", "compressors")])
def test_a_misspelt_encoding_key_names_the_closest_one(tmp_path, key, closest):
    message = (f"to_zarrx: encoding of 'v': unexpected keys [{key!r}]; did you mean "
               f"{closest!r}?")
    with pytest.raises(ArgumentError, match=f"^{re.escape(message)}$"):
        DS.zarrx.to_zarrx(str(tmp_path / "d.zarr"), encoding={"v": {key: 1}})
    assert not (tmp_path / "d.zarr").exists()
