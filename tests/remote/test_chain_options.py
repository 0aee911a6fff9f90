"""Storage options of fsspec chains whose first link wraps another filesystem (a cache,
``dir::``, ``zip::``, ``tar::``): given flat, fsspec hands them to that first link, which
ignores them; they are refused before anything is opened, naming the link they belong to."""
from __future__ import annotations

import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError

pytest.importorskip("s3fs")


def _zipped_tree() -> bytes:
    g = zarrx.open_group(zarrx.storage.MemoryStore(), mode="w")
    g.create_array("a", shape=(6,), chunks=(2,), dtype="i4")[...] = np.arange(6)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for key in g.store.list_prefix(""):
            zf.writestr(key, bytes(g.store.get(key)))
    return buf.getvalue()


@pytest.fixture
def s3_zip(s3_server):
    import fsspec
    url = f"{s3_server.url()}/a.zip"
    fs = fsspec.filesystem("s3", skip_instance_cache=True, **s3_server.fsspec_options)
    fs.pipe(url[len("s3://"):], _zipped_tree())
    return url


@pytest.mark.parametrize("chain", ["zip", "tar", "dir", "simplecache::zip", "zip::simplecache"])
def test_flat_options_of_the_inner_filesystem_are_refused_naming_it(s3_server, s3_zip, chain,
                                                                    monkeypatch):
    """``zip::s3://...`` (or ``dir::``, ``tar::``, a cache before an archive) with s3's
    options given flat: the archive's or dir's filesystem ignored them and opening failed
    with NoCredentialsError; a cache before an archive opened the archive (reading it) before
    the options were checked."""
    import s3fs
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "")
    asked, stock = [], s3fs.S3FileSystem._call_s3

    async def call(self, method, *args, **kwargs):
        asked.append(method)
        return await stock(self, method, *args, **kwargs)
    monkeypatch.setattr(s3fs.S3FileSystem, "_call_s3", call)
    opts = s3_server.fsspec_options
    with pytest.raises(StoreError) as info:
        zarrx.open_group(f"{chain}::{s3_zip}", mode="r", storage_options=opts)
    first = chain.split("::")[0]
    cls = {"zip": "ZipFileSystem", "tar": "TarFileSystem", "dir": "DirFileSystem",
           "simplecache": "SimpleCacheFileSystem"}[first]
    verb = "caches" if first == "simplecache" else "reads"
    assert str(info.value) == (
        f"FsspecStore('{chain}::{s3_zip}'): storage_options client_kwargs, endpoint_url, key, "
        f"secret: not options of {cls} ({first}::), which would ignore them; options of the "
        f"filesystem it {verb} go under its protocol: storage_options={{'s3': {{...}}}}, "
        f"as fsspec takes them")
    assert opts["secret"] not in str(info.value)
    assert asked == []


def test_options_under_each_links_name_open_the_chain(s3_server, s3_zip):
    so = {"s3": s3_server.fsspec_options}
    g = zarrx.open_group(f"zip::{s3_zip}", mode="r", storage_options=so)
    assert g["a"][...].tolist() == list(range(6))
    g = zarrx.open_group(f"simplecache::zip::{s3_zip}", mode="r",
                         storage_options={**so, "zip": {"mode": "r"}})
    assert pickle.loads(pickle.dumps(g))["a"][...].tolist() == list(range(6))
    url = s3_server.url()
    w = zarrx.open_group(f"dir::{url}", mode="w", storage_options=so)
    w.create_array("b", shape=(2,), chunks=(2,), dtype="i1")[...] = [7, 8]
    z = zarrx.open_array(f"dir::{url}", path="b", mode="r", storage_options=so)
    assert pickle.loads(pickle.dumps(z))[...].tolist() == [7, 8]


def test_a_local_archive_takes_its_own_options_flat(tmp_path):
    """The options of the first link itself stay flat (``zip::``'s ``mode``)."""
    path = tmp_path / "a.zip"
    path.write_bytes(_zipped_tree())
    g = zarrx.open_group(f"zip::{path}", mode="r", storage_options={"mode": "r"})
    assert g["a"][...].tolist() == list(range(6))
    assert os.path.exists(path)


@pytest.mark.parametrize("key, s3fs_name", [("endpoint", "endpoint_url"),
                                            ("AWS_ACCESS_KEY_ID", "key"),
                                            ("region", "client_kwargs={'region_name': ...}")])
def test_obstore_names_given_to_the_s3_filesystem_of_a_chain(s3_server, key, s3fs_name):
    """obstore's names under ``{"s3": ...}`` of ``simplecache::s3://...`` (where the error
    for flat options sends them) reached s3fs, which failed at the first read
    (``AioSession.__init__() got an unexpected keyword argument 'endpoint'``)."""
    url = s3_server.url()
    so = {"s3": {**s3_server.fsspec_options, key: "x"}}
    with pytest.raises(StoreError) as info:
        zarrx.open_group(f"simplecache::{url}", mode="r", storage_options=so)
    assert str(info.value) == (
        f"FsspecStore('simplecache::{url}'): storage_options['s3'] {key}: obstore's name, "
        f"which s3fs does not take (it would fail at the first request); s3fs's is "
        f"{s3fs_name}")
