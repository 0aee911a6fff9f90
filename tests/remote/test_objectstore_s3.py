"""The store and generation contracts of ObjectStore against a real S3 server (moto)."""
from __future__ import annotations

import pytest
from store_contract import StoreContract

import zarrx
from zarrx.errors import StoreError

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")

from zarrx.store.remote import ObjectStore  # noqa: E402

from .conftest import Variant  # noqa: E402


class S3Contract(StoreContract):
    generations_per_write = False      # an S3 ETag is a digest of the bytes
    overrides: dict = {}

    @pytest.fixture
    def store(self, s3_server, tmp_path):
        self.s3 = s3_server
        s = self.make_store(tmp_path)
        yield s
        s.close()

    def make_store(self, tmp_path):
        self.url = self.s3.url()
        return ObjectStore(self.url, storage_options=self.s3.options, **self.overrides)

    def reopen_read_only(self, store, tmp_path):
        return ObjectStore(self.url, storage_options=self.s3.options, read_only=True,
                           **self.overrides)


class TestObjectStoreS3(S3Contract):
    """Default options: a snapshot of an object the store just wrote starts at the ETag it
    wrote, and its reads are If-Match requests (a replace is a ConflictError)."""


class TestObjectStoreS3Tail(Variant, S3Contract):
    """Every snapshot starts by reading the last 64 KiB, so the small objects of the contract
    are served whole from that one response (the snapshot pins their version)."""

    snapshot_pins_version = True
    overrides = {"revalidate_after": 0}


class TestObjectStoreS3Split(Variant, S3Contract):
    """Small parts, no tail prefetch, no coalescing: every large read is split into parallel
    parts conditioned on one ETag, and every snapshot read is an If-Match request."""

    snapshot_pins_version = False
    overrides = {"part_size": 64 << 10, "tail_prefetch": 0, "coalesce_gap": 0,
                 "in_flight": 4}


@pytest.mark.slow
def test_a_process_exits_cleanly_right_after_its_requests(s3_server):
    """obstore's own threads may still be handing a result to Python as the interpreter
    exits; one that takes the interpreter lock once finalisation has begun aborts the process
    (SIGABRT in about 1 exit in 6 here, without zarrx's exit handler)."""
    import subprocess
    import sys
    code = ("import sys, json; from zarrx.store.remote import ObjectStore; "
            "st = ObjectStore(sys.argv[1], storage_options=json.loads(sys.argv[2])); "
            "st.set('k', b'x'); st.exists('k')")
    import json
    url = s3_server.url()
    codes = [subprocess.run([sys.executable, "-c", code, url, json.dumps(s3_server.options)],
                            capture_output=True, timeout=60).returncode for _ in range(12)]
    assert codes == [0] * 12


def test_a_listed_name_obstore_cannot_read_is_named(s3_server):
    """An object another tool wrote as 'x//y' makes obstore's listing fail: the error names
    the object and what is wrong with its name."""
    s3fs = pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    prefix = s3_server.fresh()
    store = ObjectStore(f"s3://{s3_server.bucket}/{prefix}", storage_options=s3_server.options)
    store.set("zarr.json", b'{"zarr_format": 3, "node_type": "group"}')
    fs = s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.fsspec_options)
    fs.pipe(f"{s3_server.bucket}/{prefix}/x//y", b"")
    with pytest.raises(StoreError) as info:
        list(zarrx.open_group(store, mode="r").keys())
    assert str(info.value) == (
        f"ObjectStore('s3://{s3_server.bucket}/{prefix}', read_only=True): cannot list '<root>' "
        f"(s3://{s3_server.bucket}/{prefix}/<root>): obstore cannot read an object's name: "
        f"Path \"{prefix}/x//y\" contained empty path segment")


def test_an_http_endpoint_from_the_environment_is_allowed(s3_server, monkeypatch):
    """AWS_ENDPOINT_URL=http://... (MinIO, a local server) with the keys in the environment:
    the store reaches it (the client options zarrx sets used to replace obstore's own reading
    of AWS_ALLOW_HTTP, and every request failed as 'other (GenericError)')."""
    from zarrx.bench.servers import S3_KEYS
    for name in ("AWS_ENDPOINT", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", S3_KEYS["access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", S3_KEYS["secret_access_key"])
    monkeypatch.setenv("AWS_REGION", S3_KEYS["region"])
    url = s3_server.url()
    zarrx.create_array(url, shape=(3,), dtype="i2", fill_value=7)
    assert zarrx.open_array(url, mode="r")[...].tolist() == [7, 7, 7]


def test_the_cli_shows_a_url_without_its_credentials(s3_server, capsys):
    """`zarrx check` printed the location as given, user name and password included; such a
    URL is now refused (its credentials were never used), still without showing them."""
    from zarrx.cli import main
    url = s3_server.url()
    zarrx.create_array(url, shape=(2,), dtype="i1", fill_value=1,
                       storage_options=s3_server.options)
    bucket_and_prefix = url.split("://", 1)[1]
    options = [arg for k, v in s3_server.options.items() for arg in ("-S", f"{k}={v}")]
    assert main(["check", f"s3://USER:PASSWD@{bucket_and_prefix}", *options]) == 3
    out = capsys.readouterr()
    assert "PASSWD" not in out.out + out.err and "USER" not in out.out + out.err
    assert out.err.startswith("zarrx: s3:// URL: expected a bucket name after 's3://', found "
                              "user information or ':' (not shown: it may hold a secret); ")
    assert main(["check", url, *options]) == 0
    assert capsys.readouterr().out.startswith(
        f"checked {url}: 0 groups, 1 arrays, 0 stored objects in ")
