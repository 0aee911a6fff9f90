"""Arrays and groups on a real S3 server, through URLs and storage_options: v2 and v3,
sharded, consolidated, and what each costs in requests."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import zarrx
from zarrx.errors import ReadOnlyError

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402


def _data(shape, seed=0):
    return np.random.default_rng(seed).random(shape).astype("f4")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_url_round_trip(s3_server, zarr_format):
    url = s3_server.url()
    data = _data((100, 80))
    z = zarrx.create_array(url, shape=data.shape, dtype="f4", chunks=(32, 32),
                           zarr_format=zarr_format, storage_options=s3_server.options)
    z[...] = data
    assert isinstance(z.store, ObjectStore)
    back = zarrx.open(url, mode="r", storage_options=s3_server.options)
    np.testing.assert_array_equal(back[...], data)
    np.testing.assert_array_equal(back[5:50, ::3], data[5:50, ::3])
    assert back.store.read_only


def test_every_open_function_takes_storage_options(s3_server):
    url, so = s3_server.url(), s3_server.options
    g = zarrx.open_group(url, mode="w", storage_options=so)
    g.create_array("a", shape=(10,), dtype="i4", chunks=(5,))[...] = np.arange(10)
    zarrx.create_group(url, path="sub", storage_options=so)
    zarrx.consolidate_metadata(url, storage_options=so)
    assert isinstance(zarrx.open_consolidated(url, storage_options=so), zarrx.Group)
    np.testing.assert_array_equal(zarrx.open_array(url, path="a", mode="r",
                                                   storage_options=so)[...], np.arange(10))
    np.testing.assert_array_equal(zarrx.load(url, path="a", storage_options=so), np.arange(10))
    z = zarrx.zeros((4,), store=f"{url}/z", chunks=(2,), storage_options=so)
    assert z.store.read_only is False
    zarrx.save(f"{url}/s", np.ones(3), storage_options=so)
    np.testing.assert_array_equal(zarrx.open(f"{url}/s", mode="r", storage_options=so)[...],
                                  np.ones(3))


def test_fsspec_mapper_and_obstore_objects_are_stores(s3_server):
    s3fs = pytest.importorskip("s3fs")
    import obstore.store

    url = s3_server.url()
    data = _data((20, 20))
    zarrx.create_array(url, shape=data.shape, dtype="f4", chunks=(8, 8),
                       storage_options=s3_server.options)[...] = data
    fs = s3fs.S3FileSystem(**s3_server.fsspec_options)
    via_mapper = zarrx.open(fs.get_mapper(url), mode="r")
    assert isinstance(via_mapper.store, FsspecStore)
    np.testing.assert_array_equal(via_mapper[...], data)
    bucket, prefix = url[len("s3://"):].split("/", 1)
    opts = s3_server.options
    native = obstore.store.S3Store(bucket, prefix=prefix, endpoint=opts["endpoint"],
                                   access_key_id=opts["access_key_id"],
                                   secret_access_key=opts["secret_access_key"],
                                   region=opts["region"], client_options={"allow_http": True})
    via_obstore = zarrx.open(native, mode="r")
    assert isinstance(via_obstore.store, ObjectStore)
    np.testing.assert_array_equal(via_obstore[...], data)


def test_fsspec_style_options_work_with_the_default_backend(s3_server):
    url = s3_server.url()
    zarrx.open_group(url, mode="w", storage_options=s3_server.fsspec_options)
    assert isinstance(zarrx.open(url, mode="r", storage_options=s3_server.fsspec_options),
                      zarrx.Group)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_open_costs_one_round_trip(s3_server, zarr_format):
    url, so = s3_server.url(), s3_server.options
    g = zarrx.open_group(url, mode="w", zarr_format=zarr_format, storage_options=so)
    for name in "abc":
        g.create_array(name, shape=(4,), dtype="i2", chunks=(2,))
    zarrx.consolidate_metadata(url, storage_options=so)
    store = ObjectStore(url, storage_options=so, read_only=True)
    g = zarrx.open_consolidated(store, mode="r", zarr_format=zarr_format)
    members = sorted(name for name, _ in g.members())
    assert members == ["a", "b", "c"]
    g["b"].shape
    if zarr_format == 3:
        assert dict(store.requests) == {"GET": 1}      # the root zarr.json, nothing else
    else:                                              # .zarray .zgroup .zattrs .zmetadata
        assert dict(store.requests) == {"GET": 4}      # in flight together: one round trip


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_creating_a_nested_array_reads_its_parents_in_one_round_trip(s3_server, zarr_format):
    from store_rounds import Rounds

    url, so = s3_server.url(), s3_server.options
    zarrx.create_group(url, path="a/b", zarr_format=zarr_format, storage_options=so)
    store = ObjectStore(url, storage_options=so)
    rounds = Rounds(store)
    z = zarrx.create_array(rounds, name="a/b/x", shape=(4,), dtype="i4")
    assert z.metadata.zarr_format == zarr_format          # inherited from a/b
    first = rounds.reads()[0]
    assert first[0] == "get_many"
    assert rounds.node_reads("", "a", "a/b", "a/b/x") == [first[1]]
    assert len(first[1]) == 17          # 4 candidate documents of each node, the root's .zmetadata
    with pytest.raises(zarrx.errors.ContainsArrayError):
        zarrx.create_array(url, name="a/b/x/y", shape=(1,), dtype="i1", storage_options=so)


def test_sharded_region_costs_one_index_request_and_coalesced_data(s3_server):
    url, so = s3_server.url(), s3_server.options
    data = _data((512, 512))
    z = zarrx.create_array(url, shape=data.shape, dtype="f4", chunks=(128, 128),
                           shards=(512, 512), compressors=None, storage_options=so)
    z[...] = data
    store = ObjectStore(url, storage_options=so, read_only=True)
    a = zarrx.open_array(store, mode="r")
    store.requests.clear()
    np.testing.assert_array_equal(a[0:256, 0:256], data[0:256, 0:256])
    # a suffix range for the index (no HEAD), then the four inner chunks in one request
    assert dict(store.requests) == {"GET": 2}


def test_sharded_read_uses_the_same_version(s3_server, proxy):
    """Every data range of a shard read is conditioned (If-Match) on the ETag of its index."""
    so = {**s3_server.options, "endpoint": proxy.url}
    url = s3_server.url()
    data = _data((512, 512))
    zarrx.create_array(url, shape=data.shape, dtype="f4", chunks=(128, 128), shards=(512, 512),
                       compressors=None, storage_options=so)[...] = data
    proxy.reset()
    a = zarrx.open_array(url, mode="r", storage_options=so)
    np.testing.assert_array_equal(a[200:300, 0:512], data[200:300, 0:512])
    gets = [r for r in proxy.log if r.method == "GET" and r.path.endswith("/c/0/0")]
    assert gets[0].headers["Range"].startswith("bytes=-")
    assert len(gets) >= 2 and all("If-Match" in r.headers for r in gets[1:])
    assert proxy.count("HEAD") == 0


def test_v2_and_v3_sharded_and_consolidated_survive_pickling(s3_server):
    url, so = s3_server.url(), s3_server.options
    g = zarrx.open_group(url, mode="w", storage_options=so)
    z = g.create_array("s", shape=(64, 64), dtype="i4", chunks=(8, 8), shards=(32, 32))
    z[...] = np.arange(64 * 64).reshape(64, 64)
    zarrx.consolidate_metadata(url, storage_options=so)
    g2 = pickle.loads(pickle.dumps(zarrx.open_consolidated(url, storage_options=so)))
    np.testing.assert_array_equal(g2["s"][...], np.arange(64 * 64).reshape(64, 64))


def test_http_urls_are_read_only(s3_server):
    with pytest.raises(ReadOnlyError):
        zarrx.open_group("http://127.0.0.1:9/x.zarr", mode="w")


def test_more_than_a_thousand_keys_are_listed_and_deleted(s3_server):
    """S3 lists 1000 keys a page and deletes at most 1000 per request: a group whose array has
    1001 chunks lists every key and is removed whole (by deleting the array, then by mode "w")
    through both backends."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    url = s3_server.url()
    obs = ObjectStore(url, storage_options=s3_server.options)
    fs = FsspecStore(url, storage_options=s3_server.fsspec_options)
    expected = sorted(["a/zarr.json", "zarr.json"] + [f"a/c/{i}" for i in range(1001)])

    def write() -> None:
        g = zarrx.open_group(obs, mode="w")                    # the faster writer
        g.create_array("a", shape=(1001,), chunks=(1,), dtype="u1")[...] = np.arange(1001) % 9 + 1

    write()
    assert sorted(obs.list_prefix("")) == expected
    assert sorted(fs.list_prefix("")) == expected
    assert list(zarrx.open_group(obs, mode="r").keys()) == ["a"]
    assert "a (1001,) uint8" in str(zarrx.open_group(fs, mode="r").tree())
    del zarrx.open_group(fs)["a"]
    assert list(obs.list_prefix("")) == ["zarr.json"]
    write()
    zarrx.open_group(url, mode="w", storage_options=s3_server.options)
    assert list(fs.list_prefix("")) == ["zarr.json"]


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_objects_at_part_size_boundaries(s3_server, backend):
    """Objects one byte under, at and one byte over the part size (and S3's 5 MiB minimum
    part) are uploaded in parts and read back whole, in split ranges and as suffixes."""
    from zarrx.store import ByteRange
    mib = 1 << 20
    parts = dict(part_size=5 * mib, min_part_size=5 * mib, multipart_threshold=5 * mib)
    if backend == "obstore":
        store = ObjectStore(s3_server.url(), storage_options=s3_server.options, **parts)
    else:
        pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
        store = FsspecStore(s3_server.url(), storage_options=s3_server.fsspec_options, **parts)
    rng = np.random.default_rng(5)
    for size in (0, 5 * mib - 1, 5 * mib, 10 * mib + 1):
        value = rng.integers(0, 256, size, dtype="u1").tobytes()
        store.set("k", value)
        assert store.getsize("k") == size
        assert store.get("k") == value
        assert store.get("k", ByteRange.slice(5 * mib - 2, 4)) == value[5 * mib - 2:5 * mib + 2]
        assert store.get("k", ByteRange.last(5 * mib + 1)) == value[-(5 * mib + 1):]
        assert store.get_many([("k", None), ("k", ByteRange.slice(1, 6 * mib))]) == \
            [value, value[1:6 * mib + 1]]


@pytest.mark.parametrize("suffix", ["", "/", "//"])
def test_a_bucket_root_is_a_store_root(s3_server, suffix):
    """``s3://bucket`` (with or without trailing slashes) is a hierarchy at the bucket's root,
    through both backends; mode "w" empties the bucket of the old hierarchy."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    from zarrx.bench.servers import create_bucket
    bucket = f"root-{s3_server.fresh()}".lower()
    create_bucket(s3_server.endpoint, bucket)
    url = f"s3://{bucket}{suffix}"
    g = zarrx.open_group(url, mode="w", storage_options=s3_server.options)
    g.create_group("sub").create_array("a", shape=(3,), dtype="i1", fill_value=1)[:2] = 2
    fs = FsspecStore(url, storage_options=s3_server.fsspec_options)
    assert sorted(fs.list_prefix("")) == ["sub/a/c/0", "sub/a/zarr.json", "sub/zarr.json",
                                          "zarr.json"]
    h = zarrx.open_group(fs, mode="r")
    assert [k for k, _ in h.members(max_depth=None)] == ["sub", "sub/a"]
    assert h["sub/a"][...].tolist() == [2, 2, 1]
    assert repr(g.store) == f"ObjectStore('s3://{bucket}')"
    zarrx.open_group(url, mode="w", storage_options=s3_server.fsspec_options)
    assert sorted(ObjectStore(url, storage_options=s3_server.options).list_prefix("")) == \
        ["zarr.json"]


def test_trailing_slashes_of_a_url_name_no_key(s3_server):
    """``s3://bucket/p//`` is ``s3://bucket/p``, as s3fs reads it (obstore refused the empty
    path segment)."""
    url = s3_server.url()
    zarrx.create_array(url + "//", shape=(2,), dtype="i1", fill_value=4,
                       storage_options=s3_server.options)
    assert zarrx.open_array(url, mode="r", storage_options=s3_server.options)[...].tolist() \
        == [4, 4]
