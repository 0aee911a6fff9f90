"""A multipart upload whose part fails (HTTP 5xx, a 4xx, a stalled answer) mid-upload: the
part is retried as configured; when it fails for good the upload is aborted, so no upload is
left listed by ListMultipartUploads (where the bucket would keep its parts, billed, for
ever), no partial object shows and the old object is intact, and the error is a StoreError
naming the key and its URL, never the credentials."""
from __future__ import annotations

import pytest

from zarrx.bench.proxy import Fault
from zarrx.errors import RemoteError, RemoteServerError, RemoteTimeoutError, StoreError

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")
boto3 = pytest.importorskip("boto3")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402

SECRET = "never-show-this-secret-0123456789"
MiB = 1 << 20
OLD, NEW = b"old value", bytes(range(256)) * (12 * MiB // 256)     # NEW: 3 parts of 4 MiB+


@pytest.fixture(params=["obstore", "fsspec"])
def make(request, s3_server, proxy):
    prefix = s3_server.fresh()

    def build(**overrides):
        overrides.update(backoff=0.01, multipart_threshold=5 * MiB, part_size=5 * MiB,
                         min_part_size=5 * MiB)
        if request.param == "obstore":
            so = {**s3_server.options, "endpoint": proxy.url, "secret_access_key": SECRET}
            return ObjectStore(f"s3://{s3_server.bucket}/{prefix}", storage_options=so,
                               **overrides)
        pytest.importorskip("s3fs")
        so = {**s3_server.fsspec_options, "endpoint_url": proxy.url, "secret": SECRET}
        return FsspecStore(f"s3://{s3_server.bucket}/{prefix}", storage_options=so,
                           **overrides)

    build.prefix = prefix
    return build


def _uploads(s3_server, prefix: str) -> list[str]:
    from zarrx.bench.servers import S3_KEYS
    client = boto3.client("s3", endpoint_url=s3_server.endpoint,
                          aws_access_key_id=S3_KEYS["access_key_id"],
                          aws_secret_access_key=S3_KEYS["secret_access_key"],
                          region_name=S3_KEYS["region"])
    got = client.list_multipart_uploads(Bucket=s3_server.bucket, Prefix=prefix)
    return [u["Key"] for u in got.get("Uploads", [])]


def _second_part(method: str, path: str) -> bool:
    return method == "PUT" and "partNumber=2" in path


@pytest.mark.parametrize("status, cls, attempts", [
    (503, RemoteServerError, 3), (500, RemoteServerError, 3), (400, RemoteError, 1),
    (403, StoreError, 1)])
def test_a_part_failing_for_good_aborts_the_upload(make, proxy, s3_server, status, cls,
                                                   attempts):
    store = make(retries=2)
    store.set("big", OLD)
    proxy.reset()
    proxy.faults.append(Fault(status=status, times=999, match=_second_part))
    with pytest.raises(cls) as info:
        store.set("big", NEW)
    msg = str(info.value)
    assert f"cannot write 'big' ({store._url('big')})" in msg and SECRET not in msg
    proxy.faults.clear()
    assert store.get("big") == OLD
    assert _uploads(s3_server, make.prefix) == []
    creates = [r for r in proxy.log if r.method == "POST" and "uploads" in r.query]
    assert len(creates) == attempts


def test_a_part_failing_once_is_retried_and_the_upload_completes(make, proxy, s3_server):
    store = make(retries=2)
    store.set("big", OLD)
    proxy.faults.append(Fault(status=503, times=1, match=_second_part))
    store.set("big", NEW)
    assert store.get("big") == NEW
    assert _uploads(s3_server, make.prefix) == []


def test_a_part_stalling_past_the_timeout_aborts_the_upload(make, proxy, s3_server):
    make(retries=0).set("big", OLD)
    store = make(retries=0, timeout=2)
    proxy.faults.append(Fault(stall=6, times=999, match=_second_part))
    with pytest.raises(RemoteTimeoutError) as info:
        store.set("big", NEW)
    assert f"cannot write 'big' ({store._url('big')})" in str(info.value)
    proxy.faults.clear()
    assert store.get("big") == OLD
    assert _uploads(s3_server, make.prefix) == []


def test_an_upload_left_behind_would_be_seen(s3_server):
    """The check above can see an upload that was not aborted."""
    from zarrx.bench.servers import S3_KEYS
    prefix = s3_server.fresh()
    client = boto3.client("s3", endpoint_url=s3_server.endpoint,
                          aws_access_key_id=S3_KEYS["access_key_id"],
                          aws_secret_access_key=S3_KEYS["secret_access_key"],
                          region_name=S3_KEYS["region"])
    up = client.create_multipart_upload(Bucket=s3_server.bucket, Key=f"{prefix}/big")
    assert _uploads(s3_server, prefix) == [f"{prefix}/big"]
    client.abort_multipart_upload(Bucket=s3_server.bucket, Key=f"{prefix}/big",
                                  UploadId=up["UploadId"])


@pytest.mark.parametrize("status", [500, 400])
def test_a_completion_failing_for_good_aborts_the_upload(make, proxy, s3_server, status):
    store = make(retries=1)
    store.set("big", OLD)
    proxy.faults.append(Fault(status=status, times=999,
                              match=lambda m, p: m == "POST" and "uploadId=" in p))
    with pytest.raises(StoreError) as info:
        store.set("big", NEW)
    assert f"cannot write 'big' ({store._url('big')})" in str(info.value)
    assert SECRET not in str(info.value)
    proxy.faults.clear()
    assert store.get("big") == OLD
    assert _uploads(s3_server, make.prefix) == []


@pytest.mark.parametrize("times, fails", [(1, False), (999, True)])
def test_a_part_whose_connection_is_reset_is_retried_or_aborts_the_upload(
        make, proxy, s3_server, times, fails):
    from zarrx.errors import RemoteConnectionError
    store = make(retries=2)
    store.set("big", OLD)
    proxy.faults.append(Fault(reset=True, times=times, match=_second_part))
    if fails:
        with pytest.raises(RemoteConnectionError) as info:
            store.set("big", NEW)
        assert f"cannot write 'big' ({store._url('big')})" in str(info.value)
        assert SECRET not in str(info.value)
    else:
        store.set("big", NEW)
    proxy.faults.clear()
    assert store.get("big") == (OLD if fails else NEW)
    assert _uploads(s3_server, make.prefix) == []
