"""What zarrx's ZipStore writes, with each compression method, checked by the other readers of
zip archives: Python's ``zipfile``, Info-ZIP's ``unzip -t`` and zarr-python's ``ZipStore``."""
from __future__ import annotations

import shutil
import subprocess
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.store import ZipStore

A = np.arange(600, dtype="<i4").reshape(20, 30)
METHODS = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED,
           "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}


def written(path, method, layout):
    fmt, shards = (2, None) if layout == "v2" else (3, (10, 30))
    with ZipStore(path, mode="w", compression=method) as store:
        g = zarrx.open_group(store, mode="w", zarr_format=fmt, attributes={"title": "t"})
        g.create_array("a", shape=A.shape, chunks=(5, 10), shards=shards, dtype=A.dtype,
                       fill_value=-1)[...] = A
    return path


@pytest.mark.parametrize("layout", ["v2", "v3-sharded"])
@pytest.mark.parametrize("method", METHODS.values(), ids=list(METHODS))
def test_other_readers_take_what_zarrx_writes(tmp_path, method, layout):
    path = written(tmp_path / "data.zip", method, layout)
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        assert len(names) == len(set(names)) and not any(n.endswith("/") for n in names)
    if shutil.which("unzip") is not None and method != zipfile.ZIP_LZMA:   # (unzip 6.0: no LZMA)
        out = subprocess.run(["unzip", "-t", str(path)], capture_output=True, text=True)
        assert out.returncode == 0, out.stdout
        assert "No errors detected in compressed data" in out.stdout
    zarr = pytest.importorskip("zarr")
    zs = zarr.storage.ZipStore(str(path), mode="r")
    try:
        g = zarr.open_group(zs, mode="r")
        assert g.attrs["title"] == "t"
        np.testing.assert_array_equal(g["a"][...], A)
    finally:
        zs.close()
