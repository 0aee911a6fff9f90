"""Endpoints, storage options and configuration of remote stores: what is refused when the
store is made, and how errors name it without showing secrets."""
from __future__ import annotations

import pytest

import zarrx
from zarrx.errors import ArgumentTypeError, RemoteConnectionError, StoreError
from zarrx.store import make_store

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")


def test_endpoint_without_a_scheme_is_refused():
    pytest.importorskip("obstore")
    with pytest.raises(StoreError) as info:
        make_store("s3://bkt/x", "r", {"endpoint_url": "localhost:9000", "key": "k",
                                       "secret": "s"})
    assert str(info.value) == ("ObjectStore('s3://bkt/x'): storage_options endpoint: expected "
                               "a URL starting with http:// or https://, found 'localhost:9000'")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("endpoint, problem", [
    ("http://127.0.0.1:99999", "expected a URL starting with http:// or https:// and a valid "
                               "host and port, found 'http://127.0.0.1:99999' (Port out of "
                               "range 0-65535)"),
    ("http://", "expected a URL starting with http:// or https:// and a host, found 'http://'"),
    ("http://:80", "expected a URL starting with http:// or https:// and a host, found "
                   "'http://:80'"),
    ("http://[::1", "expected a URL starting with http:// or https:// and a valid host and "
                    "port, found 'http://[::1' (Invalid IPv6 URL)"),
    ("https://exa mple.org", "expected a URL starting with http:// or https:// and no spaces "
                             "or control characters, found 'https://exa mple.org'"),
    ("notaurl", "expected a URL starting with http:// or https://, found 'notaurl'"),
    # (botocore quoted the endpoint whole at the first request, a token in its query too)
    ("http://127.0.0.1:9000/?sig=s3cret", "expected a URL starting with http:// or https:// "
                                          "and no query or fragment ('?…', '#…', not shown), "
                                          "found 'http://127.0.0.1:9000/'"),
    ("https://u:pw@host#s3cret", "expected a URL starting with http:// or https:// and no "
                                 "query or fragment ('?…', '#…', not shown), found "
                                 "'https://host'"),
])
def test_an_unusable_endpoint_is_refused_when_the_store_is_made(backend, endpoint, problem):
    """Not a raw ValueError from botocore or a panic of obstore's client at the first
    request."""
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        with pytest.raises(StoreError) as info:
            ObjectStore("s3://bkt/x", storage_options={
                "endpoint": endpoint, "access_key_id": "k", "secret_access_key": "s"})
        assert str(info.value) == f"ObjectStore('s3://bkt/x'): storage_options endpoint: {problem}"
    else:
        pytest.importorskip("s3fs")
        from zarrx.store.remote import FsspecStore
        for so in ({"endpoint_url": endpoint}, {"client_kwargs": {"endpoint_url": endpoint}}):
            name = "endpoint_url" if "endpoint_url" in so else "client_kwargs['endpoint_url']"
            with pytest.raises(StoreError) as info:
                FsspecStore("s3://bkt/x", storage_options={"key": "k", "secret": "s", **so})
            assert str(info.value) == \
                f"FsspecStore('s3://bkt/x'): storage_options {name}: {problem}"


def test_an_upper_case_endpoint_scheme_is_a_scheme():
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    store = ObjectStore("s3://bkt/x", retries=0, storage_options={
        "endpoint": "HTTP://127.0.0.1:9", "access_key_id": "k", "secret_access_key": "s"})
    with pytest.raises(RemoteConnectionError):       # tried, not refused as not a URL
        store.get("k")


@pytest.fixture
def no_aws_configuration(monkeypatch, tmp_path):
    """No credentials, profiles or instance metadata for botocore to find."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.parametrize("so, cls, detail", [
    ({}, "RemoteAccessError",
     "access (credentials: NoCredentialsError: Unable to locate credentials)"),
    ({"key": "k"}, "RemoteAccessError",
     "access (credentials: PartialCredentialsError: Partial credentials found in explicit, "
     "missing: aws_secret_access_key)"),
    ({"profile": "nope"}, "RemoteError",
     "storage_options: ProfileNotFound: The config profile (nope) could not be found"),
    ({"key": "k", "secret": "s", "client_kwargs": {"region_name": "no such region"}},
     "RemoteError", "storage_options: InvalidRegionError: Provided region_name 'no such "
     "region' doesn't match a supported format."),
])
def test_s3fs_configuration_errors_are_store_errors(no_aws_configuration, so, cls, detail):
    """What botocore finds wrong when s3fs opens its session: a StoreError naming it, not a
    raw botocore exception."""
    pytest.importorskip("s3fs")
    from zarrx import errors
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("s3://bkt/x", retries=0,
                        storage_options={"endpoint_url": "http://127.0.0.1:9", **so})
    for call, what in ((lambda: store.get("k"), "read 'k' (s3://bkt/x/k)"),
                       (lambda: list(store.list_prefix("")), "list '<root>' (s3://bkt/x/<root>)")):
        with pytest.raises(StoreError) as info:
            call()
        assert type(info.value) is getattr(errors, cls)
        assert str(info.value) == f"FsspecStore('s3://bkt/x'): cannot {what}: {detail}"


@pytest.mark.parametrize("extra", [{"requester_pays": True}, {"profile": "default"},
                                   {"client_kwargs": {"verify": False}}])
def test_s3fs_only_options_open_an_fsspec_store(extra):
    pytest.importorskip("s3fs")
    store = make_store("s3://bkt/x", "r", {"endpoint_url": "http://127.0.0.1:9", "key": "k",
                                           "secret": "s", **extra})
    assert type(store).__name__ == "FsspecStore"


def test_configuration_values_never_show_in_errors():
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    with pytest.raises(StoreError) as info:
        ObjectStore("s3://bkt/x", storage_options={"endpoint": "http://127.0.0.1:9",
                                                   "skip_signature": "SUPERSECRETVALUE"})
    assert "SUPERSECRETVALUE" not in str(info.value)
    assert "cannot configure the store" in str(info.value)


@pytest.mark.parametrize("so, name, found", [
    ({"secret_access_key": 12345}, "secret_access_key", "int"),
    ({"region": ["us-east-1"]}, "region", "list")])
def test_an_obstore_option_of_the_wrong_type_is_named(so, name, found):
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    with pytest.raises(StoreError) as info:
        ObjectStore("s3://bkt/x", storage_options={"endpoint": "http://127.0.0.1:9", **so})
    assert str(info.value) == (f"ObjectStore('s3://bkt/x'): storage_options {name}: expected "
                               f"a str, found {found}")


@pytest.mark.parametrize("so, name, found", [
    ({"client_kwargs": ["region_name"]}, "client_kwargs", "list"),
    ({"config_kwargs": ["x"], "use_ssl": False}, "config_kwargs", "list"),
    ({"client_options": "x"}, "client_options", "str")])
def test_storage_options_holding_settings_must_be_dicts(so, name, found):
    """Not a raw AttributeError or ValueError from s3fs at the first request, nor a setting
    dropped without a word."""
    pytest.importorskip("obstore")
    pytest.importorskip("s3fs")
    from zarrx.store.remote import FsspecStore, ObjectStore
    base = {"endpoint_url": "http://127.0.0.1:9", "key": "k", "secret": "s"}
    with pytest.raises(ArgumentTypeError) as info:
        make_store("s3://bkt/x", "r", {**base, **so})
    assert str(info.value) == \
        f"'s3://bkt/x': storage_options {name}: expected a dict, found {found}"
    cls = ObjectStore if name == "client_options" else FsspecStore
    with pytest.raises(ArgumentTypeError) as info:
        cls("s3://bkt/x", storage_options=so)
    assert str(info.value) == (f"{cls.__name__}('s3://bkt/x'): storage_options {name}: "
                               f"expected a dict, found {found}")


def test_storage_options_must_be_a_dict():
    with pytest.raises(ArgumentTypeError) as info:
        make_store("memory://x", "r", "abc")       # type: ignore[arg-type]
    assert str(info.value) == "'memory://x': storage_options: expected a dict, found str"


def test_object_names_need_not_be_file_names():
    """S3 names may hold ':' and be longer than a file name; only file stores refuse them."""
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("memory://zarrx-names")
    long = "n" * 300
    for key in ("g/c:d/zarr.json", f"g/{long}"):
        store.set(key, b"v")
        assert store.get(key) == b"v"
    store.delete_prefix("")


def test_pickling_a_store_made_from_an_unpicklable_object_says_so():
    obstore = pytest.importorskip("obstore")
    import pickle
    from zarrx.store.remote import ObjectStore
    store = ObjectStore(obstore.store.MemoryStore())
    with pytest.raises(StoreError) as info:
        pickle.dumps(store)
    assert "cannot be pickled: the MemoryStore it was made from cannot" in str(info.value)
    assert "make the store from a URL" in str(info.value)


def test_obstore_memory_url_is_one_store_per_process():
    pytest.importorskip("obstore")
    import pickle
    from zarrx.store.remote import ObjectStore
    a = ObjectStore("memory:///zarrx-one")
    a.set("k", b"v")
    assert ObjectStore("memory:///zarrx-one").get("k") == b"v"
    assert pickle.loads(pickle.dumps(a)).get("k") == b"v"
    assert ObjectStore("memory:///zarrx-other").get("k") is None


def test_a_path_in_an_obstore_memory_url_is_a_prefix():
    """``memory://name/sub`` is the objects below ``sub/`` of the store ``memory://name``, as
    fsspec's memory filesystem and bucket URLs read a path."""
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    top = ObjectStore("memory://zarrx-pre")
    top.set("sub/k", b"v")
    top.set("other", b"w")
    below = ObjectStore("memory://zarrx-pre/sub/")
    assert below.get("k") == b"v" and below.get("other") is None
    assert sorted(below.list_prefix("")) == ["k"]
    below.set("deeper/x", b"y")
    assert top.get("sub/deeper/x") == b"y"
    below.delete("k")
    assert top.get("sub/k") is None
    assert ObjectStore("memory:///zarrx-pre").get("other") == b"w"


def test_an_unknown_s3fs_option_is_a_store_error_naming_it():
    pytest.importorskip("s3fs")
    from zarrx.errors import RemoteError
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("s3://bkt/x", retries=0, storage_options={
        "key": "k", "secret": "s", "endpoint_url": "http://127.0.0.1:9", "endpoint_ur": "x"})
    with pytest.raises(RemoteError, match="unexpected keyword argument 'endpoint_ur'"):
        store.get("k")


def test_remote_stores_upload_pooled_values_and_seal_them():
    """A write hands a remote store chunks gathered into pooled memory (``keeps_values``): the
    store seals the value (no writable view of it remains possible) and uploads its bytes."""
    pytest.importorskip("obstore")
    import numpy as np
    from zarrx.store._values import Value
    from zarrx.store.remote import ObjectStore
    store = ObjectStore("memory://zarrx-pooled")
    assert store.keeps_values
    value = Value.empty(1 << 20)
    memoryview(value)[:] = bytes(range(256)) * 4096
    store.set("k", value)
    assert memoryview(value).readonly
    assert store.get("k") == bytes(range(256)) * 4096
    z = zarrx.create_array(ObjectStore("memory://zarrx-pooled/a"), shape=(512, 512),
                           chunks=(256, 256), dtype="f4", compressors=None)
    z[...] = np.arange(512 * 512, dtype="f4").reshape(512, 512)
    assert np.array_equal(zarrx.open_array(ObjectStore("memory://zarrx-pooled/a"))[...],
                          np.arange(512 * 512, dtype="f4").reshape(512, 512))


def test_an_unclassified_obstore_failure_says_its_cause():
    """A failure zarrx has no class for names obstore's cause, not only the error's type
    ('other (GenericError)' said nothing of what went wrong)."""
    pytest.importorskip("obstore")
    from zarrx.errors import RemoteError
    from zarrx.store.remote import ObjectStore
    store = ObjectStore("s3://bkt/x", retries=0, storage_options={
        "endpoint": "http://127.0.0.1:9", "client_options": {"allow_http": False},
        "access_key_id": "a", "secret_access_key": "b", "region": "us-east-1"})
    with pytest.raises(RemoteError) as info:
        store.get("k")
    assert str(info.value) == ("ObjectStore('s3://bkt/x'): cannot read 'k' (s3://bkt/x/k): "
                               "other (GenericError: HTTP error: builder error)")


@pytest.mark.parametrize("url, backend, so, message", [
    ("memory://typo", "url", {"gloabl_store": True},
     "FsspecStore('memory://typo'): storage_options gloabl_store: not options of "
     "MemoryFileSystem, which would ignore them; it takes global_store, listings_expiry_time, "
     "max_paths, skip_instance_cache, use_listings_cache"),
    ("file:///tmp/zarrx-never-made/x.zarr", "url", {"auto_mkdri": True},
     "FsspecStore('file:///tmp/zarrx-never-made/x.zarr'): storage_options auto_mkdri: not "
     "options of LocalFileSystem, which would ignore them; it takes auto_mkdir, "
     "listings_expiry_time, max_paths, skip_instance_cache, use_listings_cache"),
    ("memory://typo", "obstore", {"region": "eu-west-1"},
     "ObjectStore('memory://typo'): storage_options region: a memory store takes no options"),
    ("s3://bucket/x", "obstore", {"regoin": "eu-west-1"},
     "ObjectStore('s3://bucket/x'): cannot configure the store: UnknownConfigurationKeyError: "
     "Configuration key: 'regoin' is not valid for store 'S3'. Did you mean 'region'?"),
    ("s3://bucket/x", "obstore", {"endpointurl": "http://127.0.0.1:1"},
     "ObjectStore('s3://bucket/x'): cannot configure the store: UnknownConfigurationKeyError: "
     "Configuration key: 'endpointurl' is not valid for store 'S3'. Did you mean "
     "'endpoint_url' or 'endpoint'?"),
    ("s3://bucket/x", "obstore", {"anonymous": True},
     "ObjectStore('s3://bucket/x'): cannot configure the store: UnknownConfigurationKeyError: "
     "Configuration key: 'anonymous' is not valid for store 'S3'. For unsigned requests give "
     "anon=True (s3fs's name) or skip_signature=True."),
    ("s3://bucket/x", "obstore", {"zzz": "1"},
     "ObjectStore('s3://bucket/x'): cannot configure the store: UnknownConfigurationKeyError: "
     "Configuration key: 'zzz' is not valid for store 'S3'."),
])
def test_a_storage_option_that_would_be_ignored_is_named(url, backend, so, message):
    """memory:// and file:// stores ignored storage options they do not know (a typo went
    unnoticed)."""
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        make = lambda: ObjectStore(url, storage_options=so)  # noqa: E731
    else:
        make = lambda: zarrx.open(url, mode="a", storage_options=so)  # noqa: E731
    with pytest.raises(StoreError) as info:
        make()
    assert str(info.value) == message
