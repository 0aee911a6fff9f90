"""Zip entry names longer than a file system takes: a segment over 255 bytes is an ordinary
zip name (zarr-python's ZipStore writes one for an array named with 300 characters), and a
whole name holds at most 65,535 bytes (its length is a 2-byte field of the zip headers)."""
from __future__ import annotations

import re
import warnings
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import ZipStore

LONG = "a" * 300                     # one segment of 300 bytes
DEEP = "/".join(["é" * 100] * 12)    # 12 segments of 200 bytes: 2,411 bytes


@pytest.mark.parametrize("name", [LONG, DEEP], ids=["long-segment", "deep"])
def test_an_array_with_a_long_name_zarr_python_wrote_reads(tmp_path, name):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "a.zip")
    zs = zarr.storage.ZipStore(path, mode="w")
    zarr.open_group(zs, mode="w").create_array(name, shape=(4,), chunks=(2,), dtype="i4")[:] = \
        np.arange(4)
    zs.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no entry skipped
        with ZipStore(path) as store:
            g = zarrx.open_group(store, mode="r")
            np.testing.assert_array_equal(g[name][:], np.arange(4))
            assert name.split("/")[0] in list(g.keys())


@pytest.mark.parametrize("name", [LONG, DEEP], ids=["long-segment", "deep"])
def test_an_array_with_a_long_name_zarrx_wrote_reads_in_zarr_python(tmp_path, name):
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "a.zip")
    with ZipStore(path, mode="w") as store:
        zarrx.open_group(store, mode="w").create_array(name, shape=(4,), chunks=(2,),
                                                       dtype="i4")[:] = np.arange(4)
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert f"{name}/c/1" in zf.namelist()
    got = zarr.open_group(zarr.storage.ZipStore(path, mode="r"), mode="r")[name][:]
    np.testing.assert_array_equal(got, np.arange(4))


def test_a_key_longer_than_a_zip_name_holds_is_refused_and_the_archive_stays_whole(tmp_path):
    path = tmp_path / "a.zip"
    key = "/".join(["b" * 250] * 300)           # every segment short, 75,299 bytes in all
    with ZipStore(path, mode="w") as store:
        store.set("zarr.json", b"{}")
        with pytest.raises(StoreError, match=re.escape(
                f": found a key of 75299 bytes; a zip entry's name holds at most 65535 bytes")):
            store.set(key, b"x")
        assert store.get(key[:65535 - 1]) is None   # one byte short: an ordinary key
        store.set("after", b"y")                    # the store still takes writes
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        assert zf.namelist() == ["zarr.json", "after"]


def test_an_array_whose_document_name_is_too_long_writes_nothing(tmp_path):
    path = tmp_path / "a.zip"
    name = "é" * 32763                  # 65,526 bytes: "p/" and "/zarr.json" make 65,538
    with ZipStore(path, mode="w") as store:
        g = zarrx.open_group(store, mode="w")
        with pytest.raises(StoreError, match="found a key of 65538 bytes; a zip entry's name "
                                             "holds at most 65535 bytes"):
            g.create_array(f"p/{name}", shape=(2,), dtype="i1")
        assert sorted(store.list_prefix("")) == ["zarr.json"]      # no parent group either
        g.create_array(name[:-1], shape=(2,), dtype="i1")[:] = 3    # 65,534 bytes: fits
    with ZipStore(path) as store:
        np.testing.assert_array_equal(zarrx.open_group(store, mode="r")[name[:-1]][:], [3, 3])
