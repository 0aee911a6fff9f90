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


@pytest.mark.parametrize("name", ["x%20y.zarr", "q%41r.zarr", "100%.zarr", "v#1.zarr",
                                  "q?r.zarr"])
def test_percent_hash_and_question_marks_in_an_s3_url_are_part_of_the_key(s3_server, name):
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


@pytest.mark.parametrize("kind", ["fsspec", "obstore"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_hierarchies_both_ways(s3_server, kind, zarr_format):
    """A consolidated hierarchy (nested group with attributes, a sharded array in v3, a
    scalar) written by either library is opened from its consolidated metadata by the other;
    zarrx adds an array to zarr-python's and consolidates again, and zarr-python sees it."""
    data = np.arange(24 * 20, dtype="i4").reshape(24, 20)
    shards = {"shards": (12, 10)} if zarr_format == 3 else {}

    def fill(g) -> None:
        sub = g.create_group("sub")
        sub.attrs["a"] = [1, "x"]
        sub.create_array("arr", shape=data.shape, chunks=(6, 5), dtype="i4", **shards)[...] = data
        g.create_array("s", shape=(), dtype="f8", fill_value=1.5)

    url = s3_server.url()
    fill(zarrx.open_group(url, mode="w", zarr_format=zarr_format,
                          storage_options=s3_server.options))
    zarrx.consolidate_metadata(url, storage_options=s3_server.options)
    zg = zarr.open_consolidated(_zarr_store(kind, s3_server, url, True), mode="r",
                                zarr_format=zarr_format)
    np.testing.assert_array_equal(zg["sub/arr"][...], data)
    assert zg["sub"].attrs["a"] == [1, "x"] and zg["s"][()] == 1.5

    url = s3_server.url()
    store = _zarr_store(kind, s3_server, url, False)
    fill(zarr.open_group(store, mode="w", zarr_format=zarr_format))
    zarr.consolidate_metadata(store)
    xg = zarrx.open_consolidated(url, mode="r", storage_options=s3_server.options)
    assert sorted(k for k, _ in xg.members(max_depth=None)) == ["s", "sub", "sub/arr"]
    np.testing.assert_array_equal(xg["sub/arr"][3:20, 2:17], data[3:20, 2:17])
    assert xg["sub"].attrs["a"] == [1, "x"] and xg["s"][()] == 1.5
    zarrx.open_group(url, mode="a", storage_options=s3_server.options).create_array(
        "new", shape=(3,), dtype="u1", fill_value=7)
    zarrx.consolidate_metadata(url, storage_options=s3_server.options)
    zg = zarr.open_consolidated(_zarr_store(kind, s3_server, url, True), mode="r",
                                zarr_format=zarr_format)
    assert sorted(zg.keys()) == ["new", "s", "sub"] and zg["new"][...].tolist() == [7, 7, 7]


def test_a_hash_or_question_mark_in_an_s3_url_is_part_of_the_key(s3_server):
    """``s3://bucket/d#v1`` and ``s3://bucket/d#v2`` are two datasets (as s3fs reads them),
    not both ``d``; the store's address shows the whole key."""
    from zarrx.store.remote import ObjectStore
    base = s3_server.url()
    for i, name in enumerate(["d#v1", "d#v2", "d?v3", "d"]):
        zarrx.create_array(f"{base}/{name}", shape=(2,), dtype="i1", fill_value=i,
                           storage_options=s3_server.options)
    for i, name in enumerate(["d#v1", "d#v2", "d?v3", "d"]):
        z = zarrx.open_array(f"{base}/{name}", mode="r", storage_options=s3_server.options)
        assert z[...].tolist() == [i, i]
        assert repr(z.store) == f"ObjectStore('{base}/{name}', read_only=True)"
    listing = ObjectStore(base, storage_options=s3_server.options).list_prefix("")
    assert sorted(listing) == ["d#v1/zarr.json", "d#v2/zarr.json", "d/zarr.json",
                               "d?v3/zarr.json"]


@pytest.mark.parametrize("kind", ["fsspec", "obstore"])
def test_node_names_with_url_characters_both_ways(s3_server, kind):
    """Node names with spaces, '%', '#', '?', '+' and non-ASCII letters name the same keys in
    zarr-python and zarrx, whichever writes."""
    names = ["a b", "p%20q", "h#1", "q?r", "x+y", "\u00fc", "pct%"]
    url = s3_server.url()
    g = zarr.open_group(_zarr_store(kind, s3_server, url, False), mode="w")
    for i, name in enumerate(names):
        g.create_array(name, shape=(2,), chunks=(1,), dtype="i1")[...] = i + 1
    for so in (s3_server.options, {**s3_server.fsspec_options, "use_ssl": False}):
        h = zarrx.open_group(url, mode="r", storage_options=so)
        assert sorted(h.keys()) == sorted(names)
        assert [h[n][...].tolist() for n in names] == [[i + 1] * 2 for i in range(len(names))]
    url = s3_server.url()
    g = zarrx.open_group(url, mode="w", storage_options=s3_server.options)
    for i, name in enumerate(names):
        g.create_array(name, shape=(2,), chunks=(1,), dtype="i1")[...] = i + 1
    zg = zarr.open_group(_zarr_store(kind, s3_server, url, True), mode="r")
    assert sorted(zg.keys()) == sorted(names)
    assert [zg[n][...].tolist() for n in names] == [[i + 1] * 2 for i in range(len(names))]
