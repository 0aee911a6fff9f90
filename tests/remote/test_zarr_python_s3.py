"""zarr-python and zarrx read each other's arrays on the S3 test server, through each of
zarr-python's remote stores (FsspecStore over s3fs, ObjectStore over obstore)."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr", reason="zarr-python is not installed")
pytest.importorskip("obstore", reason="obstore is not installed")
pytest.importorskip("s3fs", reason="s3fs is not installed")

CASES = {"v3": dict(zarr_format=3, chunks=(16, 16)),
         "v3-sharded": dict(zarr_format=3, chunks=(8, 8), shards=(32, 32)),
         "v2": dict(zarr_format=2, chunks=(16, 16))}


def _zarr_store(kind: str, s3, url: str, read_only: bool):
    if kind == "fsspec":
        return zarr.storage.FsspecStore.from_url(url, storage_options=s3.fsspec_options,
                                                 read_only=read_only)
    from obstore.store import S3Store

    bucket, prefix = url[len("s3://"):].split("/", 1)
    o = s3.options
    native = S3Store(bucket, prefix=prefix, endpoint=o["endpoint"], region=o["region"],
                     access_key_id=o["access_key_id"], secret_access_key=o["secret_access_key"],
                     client_options={"allow_http": True})
    return zarr.storage.ObjectStore(native, read_only=read_only)


@pytest.mark.parametrize("kind", ["fsspec", "obstore"])
@pytest.mark.parametrize("case", list(CASES))
def test_zarr_python_reads_zarrx(s3_server, kind, case):
    url = s3_server.url()
    data = np.arange(64 * 48, dtype="i4").reshape(64, 48)
    z = zarrx.create_array(url, shape=data.shape, dtype="i4", storage_options=s3_server.options,
                           **CASES[case])
    z[...] = data
    z.attrs["who"] = "zarrx"
    a = zarr.open_array(_zarr_store(kind, s3_server, url, True), mode="r")
    np.testing.assert_array_equal(a[...], data)
    assert a.attrs["who"] == "zarrx"


@pytest.mark.parametrize("kind", ["fsspec", "obstore"])
@pytest.mark.parametrize("case", list(CASES))
def test_zarrx_reads_zarr_python(s3_server, kind, case):
    url = s3_server.url()
    data = np.random.default_rng(3).random((64, 48))
    a = zarr.create_array(_zarr_store(kind, s3_server, url, False), shape=data.shape,
                          dtype="f8", **CASES[case])
    a[...] = data
    z = zarrx.open(url, mode="r", storage_options=s3_server.options)
    np.testing.assert_array_equal(z[...], data)
    np.testing.assert_array_equal(z[5:40:3, 7], data[5:40:3, 7])


def test_zarrx_opens_zarr_python_store_objects(s3_server):
    url = s3_server.url()
    data = np.arange(100, dtype="u2")
    zarrx.create_array(url, shape=(100,), dtype="u2", chunks=(10,),
                       storage_options=s3_server.options)[...] = data
    for kind in ("fsspec", "obstore"):
        z = zarrx.open(_zarr_store(kind, s3_server, url, True), mode="r")
        np.testing.assert_array_equal(z[...], data)


@pytest.mark.parametrize("name", ["x%20y.zarr", "q%41r.zarr", "100%.zarr"])
def test_percent_signs_in_an_s3_url_are_part_of_the_key(s3_server, name):
    """``s3://bucket/x%20y`` names the key ``x%20y``, as s3fs and zarr-python read it: the same
    URL reaches the same objects through zarrx's obstore and fsspec stores and zarr-python."""
    url = f"{s3_server.url()}/{name}"
    data = np.arange(6, dtype="i4")
    zarrx.create_array(url, shape=(6,), chunks=(4,), dtype="i4",
                       storage_options=s3_server.options)[...] = data
    back = zarr.open_array(url, mode="r", storage_options=s3_server.fsspec_options)[...]
    assert np.array_equal(back, data)
    from zarrx.store.remote import FsspecStore
    fs = FsspecStore(url, storage_options=s3_server.fsspec_options, read_only=True)
    assert fs.get("zarr.json") is not None
    url2 = f"{s3_server.url()}/{name}"
    z = zarr.create_array(url2, shape=(6,), chunks=(4,), dtype="i4",
                          storage_options=s3_server.fsspec_options)
    z[...] = data
    got = zarrx.open_array(url2, mode="r", storage_options=s3_server.options)[...]
    assert np.array_equal(got, data)
