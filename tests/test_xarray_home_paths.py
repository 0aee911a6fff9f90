"""A path starting with ``~`` given to the xarray writer and reader is in the home directory,
as ``Dataset.to_zarr`` and engine "zarr" read it; zarrx's own functions take it as written,
as zarr-python does (docs/guide/stores.md)."""
from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

import zarrx  # noqa: E402
import zarrx.xarray  # noqa: E402, F401
from zarrx.xarray import ZarrxBackendEntrypoint  # noqa: E402


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    os.mkdir(tmp_path / "home")
    return tmp_path / "home"


DS = xr.Dataset({"t": ("x", np.arange(3.0))}, attrs={"title": "t"})


@pytest.mark.parametrize("spelling", [str, pathlib.Path], ids=["str", "Path"])
def test_to_zarrx_writes_a_tilde_path_in_the_home_directory(home, spelling):
    DS.zarrx.to_zarrx(spelling("~/data.zarr"), zarr_format=3)
    assert not os.path.exists("~")
    xr.testing.assert_identical(xr.open_zarr(home / "data.zarr").load(), DS)
    DS.zarrx.to_zarrx(spelling("~/data.zarr"), append_dim="x")
    assert zarrx.open_array(home / "data.zarr/t", mode="r").shape == (6,)


def test_to_zarrx_writes_a_tilde_zip_path_in_the_home_directory(home):
    DS.zarrx.to_zarrx("~/data.zip")
    assert os.listdir(home) == ["data.zip"] and not os.path.exists("~")


@pytest.mark.parametrize("spelling", [str, pathlib.Path], ids=["str", "Path"])
def test_engine_reads_a_tilde_path_in_the_home_directory(home, spelling):
    DS.to_zarr(home / "data.zarr", zarr_format=2, consolidated=False)
    os.makedirs("~/data.zarr")              # a folder named "~" in the current one is not read
    back = xr.open_dataset(spelling("~/data.zarr"), engine=ZarrxBackendEntrypoint)
    xr.testing.assert_identical(back.load(), DS)
    tree = xr.open_datatree(spelling("~/data.zarr"), engine=ZarrxBackendEntrypoint)
    xr.testing.assert_identical(tree.to_dataset().load(), DS)
