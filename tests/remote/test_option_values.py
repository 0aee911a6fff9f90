"""Storage option values of the wrong type or shape are StoreErrors when the store is made,
through either backend, and an error quoting an option never shows a secret in it."""
from __future__ import annotations

import re
import traceback

import pytest

import zarrx
from zarrx.errors import StoreError

pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")

from zarrx.store.remote import FsspecStore  # noqa: E402

SECRET = "s3cr3tVALUE"
BASE = {"endpoint_url": "http://127.0.0.1:9", "use_ssl": False}


@pytest.mark.parametrize("so, name, found", [
    ({"key": 12345, "secret": "x"}, "key", "int"),
    ({"key": "x", "secret": 12345}, "secret", "int"),
    ({"token": [SECRET]}, "token", "list"),
    ({"username": b"me", "password": "x"}, "username", "bytes"),
    ({"profile": 7}, "profile", "int"),
    ({"client_kwargs": {"region_name": 5}}, "client_kwargs['region_name']", "int"),
    ({"client_kwargs": {"aws_secret_access_key": 5}},
     "client_kwargs['aws_secret_access_key']", "int"),
])
def test_s3fs_credentials_and_region_that_are_not_strings_are_named(so, name, found):
    """botocore raised a bare TypeError or AttributeError at the first request (``'list'
    object has no attribute 'split'``), from deep inside its request signing."""
    url = "s3://bucket/data.zarr"
    expected = (f"FsspecStore('{url}'): storage_options {name}: expected a str, "
                f"found {found}")
    with pytest.raises(StoreError, match=re.escape(expected)) as info:
        FsspecStore(url, storage_options={**BASE, **so})
    assert SECRET not in str(info.value)
    with pytest.raises(StoreError, match=re.escape(expected)):
        zarrx.open(url, mode="r", storage_options={**BASE, **so})    # s3fs options: fsspec


def test_s3fs_options_set_to_none_are_not_given():
    store = FsspecStore("s3://bucket/data.zarr",
                        storage_options={**BASE, "key": None, "secret": None, "token": None,
                                         "client_kwargs": {"region_name": None}})
    assert repr(store) == "FsspecStore('s3://bucket/data.zarr')"


@pytest.mark.parametrize("backend, name", [("obstore", "endpoint"),
                                           ("fsspec", "endpoint_url")])
@pytest.mark.parametrize("endpoint", [f"minio:{SECRET}@127.0.0.1:9000",
                                      f"admin:{SECRET}@minio.local"])
def test_an_endpoint_without_a_scheme_is_refused_without_its_password(backend, name,
                                                                      endpoint):
    """The user and password of an endpoint written without ``http://`` were quoted in the
    error refusing it."""
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        owner = "ObjectStore"
        make = lambda: ObjectStore("s3://bucket/d", storage_options={name: endpoint})  # noqa: E731
    else:
        owner = "FsspecStore"
        make = lambda: FsspecStore("s3://bucket/d", storage_options={name: endpoint})  # noqa: E731
    with pytest.raises(StoreError) as info:
        make()
    host = endpoint.rpartition("@")[2]
    assert str(info.value) == (
        f"{owner}('s3://bucket/d'): storage_options {name}: expected a URL starting with "
        f"http:// or https://, found '…@{host}' (the part before '@' not shown)")
    assert SECRET not in "".join(traceback.format_exception(info.value))
