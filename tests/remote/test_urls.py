"""Which store a URL becomes, and the errors when a backend package is missing."""
from __future__ import annotations

import pathlib
import re
import sys

import pytest

import zarrx
from zarrx.errors import MissingDependencyError, StoreError, ZarrError
from zarrx.store import make_store
from zarrx.store.remote.dispatch import _obstore_options, default_backend
from zarrx.store.remote.urls import redact


@pytest.mark.parametrize("url, backend", [
    ("s3://b/p", "obstore"), ("gs://b/p", "obstore"), ("az://c/p", "obstore"),
    ("https://example.org/d.zarr", "obstore"), ("memory://x", "fsspec"),
    ("gcs://b/p", "fsspec"), ("ftp://host/p", "fsspec")])
def test_default_backends(url, backend):
    pytest.importorskip("obstore")
    assert default_backend(url.split("://")[0]) == backend


def test_missing_packages_are_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "obstore", None)
    monkeypatch.setitem(sys.modules, "fsspec", None)
    with pytest.raises(MissingDependencyError,
                       match=r"'s3://bucket/x': s3:// URLs need the package 'obstore' \(or "
                             r"'fsspec' with s3fs\).*pip install 'zarrx\[s3\]'"):
        zarrx.open("s3://bucket/x", mode="r")
    with pytest.raises(MissingDependencyError, match="need the package 'fsspec'"):
        make_store("memory://x", "r")
    with pytest.raises(ZarrError):                       # catching ZarrError is enough
        make_store("gs://bucket/x", "r")


def test_a_filesystem_whose_package_is_missing_is_named(monkeypatch):
    """fsspec knows the filesystem but not its package (gcsfs here): a MissingDependencyError
    quoting fsspec's hint, not a raw exception."""
    fsspec = pytest.importorskip("fsspec")

    def missing(*args, **kwargs):
        raise ImportError("Please install gcsfs to access Google Storage")
    monkeypatch.setattr(fsspec.core, "url_to_fs", missing)
    with pytest.raises(MissingDependencyError) as info:
        zarrx.open_array("gcs://bucket/x", mode="r")
    assert str(info.value) == ("FsspecStore('gcs://bucket/x'): a package this filesystem needs "
                               "is not installed: Please install gcsfs to access Google Storage")


def test_fsspec_is_used_when_obstore_is_missing(monkeypatch):
    pytest.importorskip("fsspec")
    monkeypatch.setitem(sys.modules, "obstore", None)
    assert default_backend("s3") == "fsspec"


def test_storage_options_need_a_url(tmp_path):
    with pytest.raises(zarrx.ArgumentTypeError, match="storage_options apply to URLs"):
        zarrx.open_group(str(tmp_path), mode="w", storage_options={"anon": True})
    with pytest.raises(ZarrError, match="storage_options: given without a store URL"):
        zarrx.create_array(shape=(2,), dtype="i1", storage_options={"anon": True})


def test_memory_urls_share_one_namespace():
    pytest.importorskip("fsspec")
    zarrx.create_array("memory://zarrx-url-test", shape=(3,), dtype="i2", chunks=(2,),
                       fill_value=7, overwrite=True)
    assert zarrx.open("memory://zarrx-url-test", mode="r")[...].tolist() == [7, 7, 7]


def test_addresses_shown_without_credentials():
    assert redact("https://user:pw@host:8080/a/b?X-Amz-Signature=s#f") == "https://host:8080/a/b"
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    s = ObjectStore("https://user:pw@example.org/data?token=abc")
    assert "pw" not in repr(s) and "abc" not in repr(s) and s.read_only


def test_s3fs_style_options_are_translated():
    assert _obstore_options("s3", {"key": "k", "secret": "s", "anon": True,
                                   "endpoint_url": "http://h:1",
                                   "client_kwargs": {"region_name": "r"}}) == {
        "access_key_id": "k", "secret_access_key": "s", "skip_signature": True,
        "endpoint": "http://h:1", "region": "r"}


def test_options_set_to_none_are_not_given():
    """As s3fs reads them: ``token=os.environ.get("AWS_SESSION_TOKEN")`` and the like."""
    from zarrx.store.remote.dispatch import _s3fs_only
    so = {"key": "k", "secret": "s", "token": None, "profile": None,
          "client_kwargs": {"region_name": None, "verify": None}}
    assert _obstore_options("s3", so) == {"access_key_id": "k", "secret_access_key": "s"}
    assert _s3fs_only("s3", so) == []


def test_a_file_url_with_storage_options_is_fsspecs_local_filesystem(tmp_path):
    """As zarr-python opens it; without storage_options a file:// URL is a LocalStore."""
    pytest.importorskip("fsspec")
    url = f"file://{tmp_path}/d/x.zarr"
    z = zarrx.create_array(url, shape=(5,), chunks=(2,), dtype="i2", fill_value=1,
                           storage_options={"auto_mkdir": True})
    z[:3] = 4
    assert type(z.store).__name__ == "FsspecStore"
    assert zarrx.open_array(str(tmp_path / "d" / "x.zarr"), mode="r")[...].tolist() == \
        [4, 4, 4, 1, 1]
    assert type(zarrx.open_array(url, mode="r").store).__name__ == "LocalStore"


@pytest.mark.parametrize("url, so, expected", [
    ("gs://b/p", {"token": "anon"}, {"skip_signature": True}),
    ("gs://b/p", {"token": "google_default"}, {}),
    ("az://c/p", {"account_name": "a", "anon": True},
     {"account_name": "a", "skip_signature": True}),
    ("abfs://c/p", {"account_name": "a", "sas_token": "sv=1&sig=2"},
     {"account_name": "a", "sas_key": "sv=1&sig=2"})])
def test_gcsfs_and_adlfs_style_options_are_translated(url, so, expected):
    """zarr-python's storage options for public GCS and Azure data (gcsfs's token="anon",
    adlfs's anon and sas_token) open an ObjectStore; obstore used to refuse the names."""
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore, open_url
    assert _obstore_options(url.split("://")[0], so) == expected
    store = open_url(url, read_only=True, storage_options=so)
    assert type(store) is ObjectStore and store._storage_options == expected


@pytest.mark.parametrize("url, so, message", [
    ("gs://b/p", {"project": "p", "token": "/creds.json"},
     "'gs://b/p': the storage options project, token are gcsfs options, which need the "
     "packages 'fsspec' and 'gcsfs': pip install fsspec gcsfs"),
    ("az://c/p", {"connection_string": "AccountName=a;AccountKey=k"},
     "'az://c/p': the storage options connection_string are adlfs options, which need the "
     "packages 'fsspec' and 'adlfs': pip install fsspec adlfs")])
def test_gcsfs_and_adlfs_only_options_need_their_filesystem(monkeypatch, url, so, message):
    """Options only gcsfs or adlfs understand go to fsspec, as s3fs-only ones do for S3: the
    package is named when missing (obstore used to refuse the first with an unknown
    configuration key)."""
    pytest.importorskip("obstore")
    from zarrx.store.remote import open_url
    monkeypatch.setitem(sys.modules, "gcsfs", None)
    monkeypatch.setitem(sys.modules, "adlfs", None)
    with pytest.raises(MissingDependencyError) as info:
        open_url(url, read_only=True, storage_options=so)
    assert str(info.value) == message


def test_an_http_url_without_obstore_or_aiohttp_names_aiohttp(monkeypatch):
    """Without obstore an http(s) URL opens an FsspecStore, which needs aiohttp: a
    MissingDependencyError naming it, not a raw ModuleNotFoundError."""
    pytest.importorskip("fsspec")
    monkeypatch.setitem(sys.modules, "obstore", None)
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    with pytest.raises(MissingDependencyError) as info:
        zarrx.open_group("https://example.org/data.zarr", mode="r")
    assert str(info.value) == ("FsspecStore('https://example.org/data.zarr') needs the package "
                               "'aiohttp', which is not installed: pip install aiohttp (or pip "
                               "install 'zarrx[http]')")


@pytest.mark.parametrize("so, cls", [({"skip_signature": True}, "ObjectStore"),
                                     ({"profile": "p"}, "FsspecStore")])
def test_an_upper_case_scheme_is_the_scheme(so, cls):
    """'S3://bucket/x' is 's3://bucket/x' for both backends (fsspec refused it with 'Protocol
    not known: S3' when s3fs options routed it there)."""
    pytest.importorskip("obstore")
    pytest.importorskip("s3fs")
    from zarrx.store.remote import open_url
    store = open_url("S3://bucket/x", read_only=True, storage_options=so)
    assert repr(store) == f"{cls}('s3://bucket/x', read_only=True)"


@pytest.mark.parametrize("url, segment", [("s3://bkt/..", ".."), ("s3://bkt/data/../other", ".."),
                                          ("gs://bkt/a/./b", "."), ("az://c/x/..", "..")])
def test_dot_segments_of_a_bucket_url_are_refused_by_obstore(url, segment):
    """obstore resolves '.' and '..' as a URL path ('s3://bkt/..' was the whole bucket, which
    mode='w' would have emptied), where s3fs and zarr-python name such keys literally."""
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    with pytest.raises(StoreError) as info:
        ObjectStore(url, storage_options={"skip_signature": True})
    assert str(info.value) == (
        f"ObjectStore({url!r}): the path segment {segment!r}: keys are named literally, but "
        "obstore would resolve it and address other keys than the URL names; open keys with "
        "'.' or '..' segments with FsspecStore")


@pytest.mark.parametrize("url, path", [("s3://bkt/a//b", "a//b"), ("s3://bkt//a", "/a"),
                                       ("gs://bkt/x//y/", "x//y"),
                                       ("https://h.example//data.zarr", "//data.zarr"),
                                       ("https://h.example/a//b//", "/a//b")])
def test_empty_segments_obstore_cannot_address_are_refused_naming_the_path(url, path):
    """A path with an empty segment ('//' before its trailing slashes) is refused saying so
    (obstore's 'Generic URL error', with an install hint for an installed extra, said neither
    what to change nor that FsspecStore reads such keys)."""
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    with pytest.raises(StoreError) as info:
        ObjectStore(url, storage_options={"skip_signature": True} if "://bkt" in url else None)
    assert str(info.value) == (
        f"ObjectStore({url!r}): the path {path!r} holds an empty segment ('//'), which obstore "
        "cannot address; write the URL with single slashes, or open keys with empty segments "
        "with FsspecStore")


_S3_HOW = ("credentials are not read from URLs: pass them in storage_options={'access_key_id': "
           "..., 'secret_access_key': ...} (s3fs: 'key', 'secret') or set AWS_ACCESS_KEY_ID "
           "and AWS_SECRET_ACCESS_KEY; an endpoint goes in storage_options={'endpoint': ...}")


@pytest.mark.parametrize("url", ["s3://AKIDEXAMPLE:s3cr%2Fet@bucket/data.zarr",
                                 "s3://AKIDEXAMPLE:s3cr/et@bucket/data.zarr",
                                 "s3a://AKIDEXAMPLE@bucket/data.zarr",
                                 "s3://localhost:9000/bucket"])
def test_credentials_in_a_bucket_url_are_refused_never_dropped_or_shown(url):
    """obstore dropped them silently (the request went out unsigned or with other
    credentials) and s3fs took 'key:secret@bucket' for a bucket's name."""
    pytest.importorskip("obstore")
    pytest.importorskip("s3fs")
    from zarrx.store.remote import FsspecStore, ObjectStore
    scheme = url.split("://")[0]
    expected = (f"{scheme}:// URL: expected a bucket name after '{scheme}://', found user "
                f"information or ':' (not shown: it may hold a secret); {_S3_HOW}")
    for owner, make in [("", lambda: zarrx.open(url, mode="r")),
                        ("", lambda: make_store(url, "w", {"region": "eu-west-1"})),
                        ("ObjectStore: ", lambda: ObjectStore(url)),
                        ("FsspecStore: ", lambda: FsspecStore(url))]:
        with pytest.raises(StoreError) as info:
            make()
        assert str(info.value) == owner + expected
        assert "s3cr" not in str(info.value) and "AKIDEXAMPLE" not in str(info.value)


def test_credentials_in_a_gs_url_are_refused():
    pytest.importorskip("obstore")
    with pytest.raises(StoreError) as info:
        zarrx.open("gs://ya29.t0ken@bucket/x", mode="r")
    assert str(info.value) == (
        "gs:// URL: expected a bucket name after 'gs://', found user information or ':' (not "
        "shown: it may hold a secret); credentials are not read from URLs: pass them in "
        "storage_options={'service_account_path': ...} (gcsfs: 'token') or set "
        "GOOGLE_APPLICATION_CREDENTIALS; an endpoint goes in storage_options={'endpoint': ...}")


@pytest.mark.parametrize("url", ["s3://bucket/a@b:c", "abfs://container@account.dfs.core.windows.net/p"])
def test_an_at_sign_in_a_key_or_an_azure_address_is_not_credentials(url):
    pytest.importorskip("obstore")
    store = make_store(url, "r")
    assert redact(url) in repr(store)


@pytest.mark.parametrize("url, report", [
    ("s3://bucket name/x", 'Invalid bucket name "bucket name": Bucket name must match the '
                           'regex "^[a-zA-Z0-9.\\-_]{1,255}$"'),
    ("s3://b/x{y", None)])
def test_a_bucket_name_botocore_refuses_is_named(url, report):
    """s3fs's request for a bucket name botocore refuses said only 'storage_options:
    ParamValidationError: Parameter validation failed:', the first line of botocore's message,
    blaming the options for the URL."""
    pytest.importorskip("s3fs")
    from zarrx.errors import RemoteError
    from zarrx.store.remote import FsspecStore
    store = FsspecStore(url, storage_options={"endpoint_url": "http://127.0.0.1:9", "key": "k",
                                             "secret": "s"})
    if report is None:                    # a valid name: the request goes out (and fails)
        with pytest.raises(RemoteError, match="connection"):
            store.get("zarr.json")
        return
    with pytest.raises(RemoteError) as info:
        store.get("zarr.json")
    assert str(info.value) == (f"{store!r}: cannot read 'zarr.json' ({url}/zarr.json): "
                               f"botocore refused the request: {report}")


@pytest.mark.parametrize("path, meant", [
    ("s3:/bucket/a.zarr", "s3://bucket/a.zarr"), ("S3:bucket/a.zarr", "S3://bucket/a.zarr"),
    ("gs:/KEY:SECRET@bucket/a", "gs://bucket/a"), ("https:/example.org/d", "https://example.org/d")])
def test_url_with_one_slash_is_refused_before_a_folder_is_made(tmp_path, monkeypatch, path,
                                                               meant):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"is not a URL \(a URL has two slashes after "
                                         rf"'\w+:'\): write '{re.escape(meant)}'") as info:
        zarrx.create_array(path, shape=(3,), dtype="i4")
    assert "SECRET" not in str(info.value)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(StoreError, match="is not a URL"):      # pathlib.Path makes s3:/...
        zarrx.open(pathlib.Path("s3://bucket/a.zarr"), mode="r")
    local = zarrx.create_array(str(tmp_path / path), shape=(3,), dtype="i4")  # absolute: a folder
    assert local.shape == (3,)
