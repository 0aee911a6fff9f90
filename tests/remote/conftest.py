"""Servers for the remote-store tests, started once per session on loopback: an S3 server
(moto in server mode) and an HTTP server (nginx). A test that needs a server that cannot start
here is skipped with the reason."""
from __future__ import annotations

import itertools
import os
import uuid

import pytest

from zarrx.bench.servers import S3_KEYS, ServerUnavailable, create_bucket, start_moto, start_nginx

BUCKET = "zarrx-test"
_counter = itertools.count()


class S3:
    """The running S3 server: ``url(prefix)`` gives a fresh location, ``options`` the
    storage_options an ObjectStore needs, ``fsspec_options`` those of s3fs."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.bucket = BUCKET
        self.options = {"endpoint": endpoint, **S3_KEYS}
        self.fsspec_options = {"endpoint_url": endpoint, "key": S3_KEYS["access_key_id"],
                               "secret": S3_KEYS["secret_access_key"],
                               "client_kwargs": {"region_name": S3_KEYS["region"]}}

    def fresh(self) -> str:
        """A prefix no other test uses."""
        return f"t{next(_counter)}-{uuid.uuid4().hex[:8]}"

    def url(self, prefix: str | None = None) -> str:
        return f"s3://{self.bucket}/{prefix or self.fresh()}"


@pytest.fixture(scope="session")
def s3_server():
    try:
        server = start_moto(serial=True)   # conditional writes are atomic only so
    except ServerUnavailable as exc:
        pytest.skip(f"no S3 test server: {exc}")
    create_bucket(server.url, BUCKET)
    yield S3(server.url)
    server.stop()


@pytest.fixture(scope="session")
def http_root(tmp_path_factory):
    return tmp_path_factory.mktemp("www")


@pytest.fixture(scope="session")
def http_server(http_root):
    os.chmod(http_root, 0o755)
    try:
        server = start_nginx(str(http_root))
    except ServerUnavailable as exc:
        pytest.skip(f"no HTTP test server: {exc}")
    yield server
    server.stop()


@pytest.fixture
def proxy(s3_server):
    """A proxy in front of the S3 server that records requests and can inject failures."""
    pytest.importorskip("aiohttp", reason="aiohttp is not installed (pip install aiohttp)")
    from zarrx.bench.proxy import Proxy

    p = Proxy(s3_server.endpoint)
    p.start()
    yield p
    p.stop()


#: contract tests that are slow on the S3 test server and do not depend on the read options a
#: variant class changes; variants skip them (the default-options class runs them)
HEAVY = {"test_concurrent_set_get", "test_concurrent_increments_lose_nothing",
         "test_get_many_large_batch_keeps_order", "test_concurrent_overwrite_is_never_torn",
         "test_set_many", "test_round_trip", "test_bad_value_is_store_error",
         "test_read_only_refuses_writes", "test_close_twice", "test_non_str_key_is_store_error"}


class Variant:
    """Mixed into contract classes that rerun the contract with other read options."""

    @pytest.fixture(autouse=True)
    def _skip_heavy(self, request):
        if request.node.originalname in HEAVY:
            pytest.skip("independent of the read options; run by the default-options class")
