"""Failures of a remote store, provoked for real (a proxy in front of the S3 server answers
with the status under test, or stalls; a closed port refuses connections): what is retried,
what the errors say, and that credentials never show."""
from __future__ import annotations

import pickle
import re

import pytest

from zarrx.bench.proxy import Fault
from zarrx.bench.servers import free_port
from zarrx.errors import (ConflictError, RemoteAccessError, RemoteConnectionError,
                          RemoteError, RemoteNotFoundError, RemoteServerError,
                          RemoteThrottledError, RemoteTimeoutError, StoreError)
from zarrx.store import ByteRange

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402

SECRET = "never-show-this-secret-0123456789"


@pytest.fixture(params=["obstore", "fsspec"])
def make(request, s3_server, proxy):
    """``make(**options)``: a store behind the proxy, with a recognisable secret key."""
    prefix = s3_server.fresh()

    def build(**overrides):
        overrides.setdefault("backoff", 0.01)
        if request.param == "obstore":
            so = {**s3_server.options, "endpoint": proxy.url, "secret_access_key": SECRET}
            return ObjectStore(f"s3://{s3_server.bucket}/{prefix}", storage_options=so,
                               **overrides)
        pytest.importorskip("s3fs")
        so = {**s3_server.fsspec_options, "endpoint_url": proxy.url, "secret": SECRET}
        return FsspecStore(f"s3://{s3_server.bucket}/{prefix}", storage_options=so,
                           **overrides)

    return build


def _gets(proxy):
    return [r for r in proxy.log if r.method == "GET"]


@pytest.mark.parametrize("status, body, cls", [
    (500, b"", RemoteServerError),
    (503, b"<Error><Code>SlowDown</Code></Error>", RemoteThrottledError),
    (429, b"", RemoteThrottledError),
])
def test_transient_failures_are_retried_then_succeed(make, proxy, status, body, cls):
    store = make(retries=3)
    store.set("k", b"value")
    proxy.reset()
    proxy.faults.append(Fault(status=status, times=2, body=body,
                              match=lambda m, p: m == "GET"))
    assert store.get("k") == b"value"
    assert [r.status for r in _gets(proxy)] == [status, status, 206]


@pytest.mark.parametrize("status, body, cls", [
    (500, b"", RemoteServerError),
    (503, b"<Error><Code>SlowDown</Code></Error>", RemoteThrottledError),
])
def test_transient_failures_give_up_after_the_retries(make, proxy, status, body, cls):
    store = make(retries=2)
    store.set("c/0", b"value")
    proxy.reset()
    proxy.faults.append(Fault(status=status, times=99, body=body,
                              match=lambda m, p: m == "GET"))
    with pytest.raises(cls) as info:
        store.get("c/0")
    assert len(_gets(proxy)) == 3
    msg = str(info.value)
    assert f"cannot read 'c/0' ({store._url('c/0')}): HTTP {status}" in msg
    assert "after 3 attempts" in msg
    assert info.value.url == store._url("c/0") and info.value.status == status


@pytest.mark.parametrize("status, cls", [(403, RemoteAccessError), (401, RemoteAccessError)])
def test_client_errors_are_not_retried(make, proxy, status, cls):
    store = make(retries=5)
    proxy.faults.append(Fault(status=status, times=99, match=lambda m, p: m == "GET"))
    with pytest.raises(cls, match=re.escape(f"cannot read 'k' ({store._url('k')}): HTTP {status}")):
        store.get("k")
    assert len(_gets(proxy)) == 1


def test_missing_key_is_none_but_missing_bucket_is_an_error(make, s3_server):
    store = make()
    assert store.get("nothing/here") is None
    assert store.get_many([("nothing", ByteRange.last(4))]) == [None]
    bad = ObjectStore("s3://no-such-bucket-zarrx/x", storage_options=s3_server.options)
    with pytest.raises(RemoteNotFoundError, match="NoSuchBucket"):
        bad.get("k")


def test_timeouts(make, proxy):
    store = make(timeout=0.5, retries=1)
    store.set("k", b"v")
    proxy.faults.append(Fault(stall=3.0, times=2, match=lambda m, p: m == "GET"))
    with pytest.raises(RemoteTimeoutError, match=re.escape(f"cannot read 'k' ({store._url('k')})")):
        store.get("k")


def test_connection_refused(s3_server):
    port = free_port()                          # nothing listens there
    store = ObjectStore("s3://b/x", storage_options={**s3_server.options,
                                                     "endpoint": f"http://127.0.0.1:{port}"},
                        retries=1, backoff=0.01)
    with pytest.raises(RemoteConnectionError, match=re.escape("cannot read 'k' (s3://b/x/k)")):
        store.get("k")


def test_412_is_a_conflict_and_not_retried(make, proxy):
    store = make(retries=3)
    gen = store.set_if("k", b"one", None)
    store.set("k", b"two")
    proxy.reset()
    with pytest.raises(ConflictError):
        store.set_if("k", b"three", gen)
    assert proxy.count("PUT") == 1
    assert store.get("k") == b"two"


def test_credentials_never_show(make, proxy):
    store = make(retries=0)
    assert SECRET not in repr(store)
    proxy.faults.append(Fault(status=403, times=99, body=SECRET.encode()))
    for call in (lambda: store.get("k"), lambda: store.set("k", b"v"),
                 lambda: list(store.list_prefix("")), lambda: store.generation("k")):
        with pytest.raises(StoreError) as info:
            call()
        assert SECRET not in str(info.value) and SECRET not in repr(info.value)


def test_pickling_carries_configuration_not_clients(make, proxy):
    store = make(in_flight=7, coalesce_gap=123)
    store.set("k", b"v")
    state = store.__getstate__()
    assert set(state) >= {"storage_options", "read_only", "options"}
    clone = pickle.loads(pickle.dumps(store))
    assert clone.options.in_flight == 7 and clone.options.coalesce_gap == 123
    assert clone.get("k") == b"v"
    assert clone.requests["GET"] == 1                # a fresh store, not a copy of a live one


def test_an_empty_object_whose_head_fails_is_still_listed(s3_server, proxy):
    """Listing asks HEAD of empty objects (a folder marker 'z/' is listed by obstore as 'z');
    a HEAD that fails otherwise than 'not found' leaves the name listed, not the listing
    failed."""
    so = {**s3_server.options, "endpoint": proxy.url}
    store = ObjectStore(s3_server.url(), storage_options=so, retries=0)
    store.set("z", b"")
    store.set("a/b", b"1")
    proxy.faults.append(Fault(status=403, times=99, match=lambda m, p: m == "HEAD"))
    assert sorted(store.list_prefix("")) == ["a/b", "z"]


_CONDITIONAL_CONFLICT = (b"<Error><Code>ConditionalRequestConflict</Code><Message>A conflicting "
                         b"conditional action is currently in progress against this resource."
                         b"</Message></Error>")


def test_s3_409_conditional_request_conflict_is_retried(make, proxy):
    """S3 answers 409 ConditionalRequestConflict while another conditional write of the key is
    under way, asking for the request again: it is retried (FsspecStore raised RemoteError,
    ObjectStore a ConflictError expecting the generation it found)."""
    store = make(retries=3)
    gen = store.set_if("k", b"one", None)
    proxy.reset()
    proxy.faults.append(Fault(status=409, times=2, body=_CONDITIONAL_CONFLICT,
                              match=lambda m, p: m == "PUT"))
    store.set_if("k", b"two", gen)
    assert store.get("k") == b"two"
    assert proxy.count("PUT") == 3
    proxy.faults.append(Fault(status=409, times=99, body=_CONDITIONAL_CONFLICT,
                              match=lambda m, p: m == "PUT"))
    with pytest.raises(RemoteThrottledError) as info:
        store.set_if("new", b"x", None)
    assert str(info.value).endswith(f"cannot write 'new' ({store._url('new')}): HTTP 409 "
                                    "(ConditionalRequestConflict) after 4 attempts")


def test_a_bucket_in_another_region_says_to_set_the_region(s3_server, proxy):
    """S3 answers 301 PermanentRedirect (no Location) to a client of the wrong region; obstore
    does not follow it: the error says what to set (it said 'other (GenericError)')."""
    from zarrx.errors import RemoteError
    body = (b"<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to "
            b"access must be addressed using the specified endpoint.</Message></Error>")
    so = {**s3_server.options, "endpoint": proxy.url}
    store = ObjectStore("s3://bkt/x", storage_options=so, retries=0)
    proxy.faults.append(Fault(status=301, times=99, body=body))
    with pytest.raises(RemoteError) as info:
        store.get("k")
    assert str(info.value) == (
        "ObjectStore('s3://bkt/x'): cannot read 'k' (s3://bkt/x/k): the server redirected the "
        "request without saying where (S3 does so when the bucket is in another region): set "
        "the bucket's region in storage_options (region=...)")


def _record_pauses(monkeypatch):
    """The waits between attempts, recorded instead of slept."""
    from zarrx.store.remote import base
    pauses: list[float] = []

    async def pause(seconds):
        pauses.append(seconds)

    monkeypatch.setattr(base, "_pause", pause)
    return pauses


@pytest.mark.parametrize("status, body", [
    (503, b"<Error><Code>SlowDown</Code></Error>"),
    (429, b""),
])
@pytest.mark.parametrize("retry_after", ["3", "http-date"])
def test_retry_after_is_honoured_up_to_max_backoff(make, proxy, monkeypatch, status, body,
                                                   retry_after):
    """A throttling answer's Retry-After (seconds or an HTTP date) sets the wait before the
    next attempt, at most max_backoff; obstore does not show the headers of a failed request,
    so ObjectStore waits its own backoff."""
    import email.utils
    import time
    store = make(retries=3, backoff=0.25, max_backoff=2.0)
    store.set("k", b"value")
    proxy.reset()
    pauses = _record_pauses(monkeypatch)
    value = "3" if retry_after == "3" else email.utils.formatdate(time.time() + 60, usegmt=True)
    proxy.faults.append(Fault(status=status, times=1, body=body, headers={"Retry-After": value},
                              match=lambda m, p: m == "GET"))
    assert store.get("k") == b"value"
    assert [r.status for r in _gets(proxy)] == [status, 206]
    if isinstance(store, FsspecStore):
        assert pauses == [2.0]                          # 3 s or a minute, capped
    else:
        assert len(pauses) == 1 and 0.125 <= pauses[0] <= 0.25


def test_a_retry_after_shorter_than_the_backoff_is_waited_as_sent(make, proxy, monkeypatch):
    store = make(retries=3, backoff=1.0, max_backoff=5.0)
    store.set("k", b"value")
    proxy.reset()
    pauses = _record_pauses(monkeypatch)
    proxy.faults.append(Fault(status=503, times=2, headers={"Retry-After": "0"},
                              match=lambda m, p: m == "GET"))
    assert store.get("k") == b"value"
    if isinstance(store, FsspecStore):
        assert pauses == [0.0, 0.0]
    else:
        assert len(pauses) == 2 and 0.5 <= pauses[0] <= 1.0 and 1.0 <= pauses[1] <= 2.0


def test_unconditional_write_refused_is_not_called_conditional(make, proxy):
    """A server that does not implement an upload (HTTP 501 to a plain PUT, or to the requests
    of a multipart upload) is a failed write, not a missing conditional write."""
    store = make(conditional_writes=False)
    proxy.faults.append(Fault(status=501, times=99, match=lambda m, p: m in ("PUT", "POST")))
    with pytest.raises(RemoteError) as info:
        store.set("k", b"value")
    assert str(info.value) == f"{store!r}: cannot write 'k' ({store._url('k')}): HTTP 501"


def test_403_for_a_missing_key_reads_as_missing_when_asked(make, proxy):
    """S3 answers 403 AccessDenied where a key is missing to a client without list permission:
    a RemoteAccessError, unless the store is told 403 means missing (``forbidden_is_missing``)."""
    denied = b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
    store = make(forbidden_is_missing=True)
    store.set("k", b"value")
    proxy.faults.append(Fault(status=403, times=99, body=denied,
                              match=lambda m, p: p.endswith("/gone")))
    assert store.get("gone") is None
    assert store.get("gone", ByteRange.last(4)) is None
    assert not store.exists("gone")
    assert store.get("k") == b"value"
    with pytest.raises(RemoteAccessError, match=re.escape(
            f"cannot read 'gone' ({store._url('gone')}): HTTP 403")):
        make().get("gone")


@pytest.mark.parametrize("code", ["InvalidAccessKeyId", "SignatureDoesNotMatch",
                                  "ExpiredToken"])
def test_refused_credentials_are_said_and_never_read_as_missing(make, proxy, code):
    """A 403 naming refused credentials said to set forbidden_is_missing=True, which would
    then read every key as missing (fill values); it now says to check the credentials, and
    fails with or without that setting."""
    body = f"<Error><Code>{code}</Code><Message>refused</Message></Error>".encode()
    for store in (make(), make(forbidden_is_missing=True)):
        proxy.faults.append(Fault(status=403, times=99, body=body,
                                  match=lambda m, p: p.endswith("/k")))
        with pytest.raises(RemoteAccessError) as info:
            store.get("k")
        assert str(info.value) == (
            f"{store!r}: cannot read 'k' ({store._url('k')}): HTTP 403 ({code}); the server "
            "refused the credentials: check the access key and secret (storage_options "
            "access_key_id and secret_access_key, or key and secret), the session token and "
            "the AWS_* environment variables")
        assert SECRET not in str(info.value)
        proxy.faults.clear()


@pytest.mark.parametrize("status", [404, 409])
def test_a_plain_write_refused_with_404_or_409_is_a_remote_error(make, proxy, status):
    """A plain upload sends no condition: a 404 (a proxy, a server without the path) or a 409
    answering it fails the write with a RemoteError naming the key, never an internal
    exception or a ConflictError; set_many and multipart uploads alike."""
    store = make(retries=0, multipart_threshold=5 << 20, part_size=5 << 20)
    proxy.faults.append(Fault(status=status, times=99, match=lambda m, p: m in ("PUT", "POST")))
    for key, write in [("k", lambda: store.set("k", b"value")),
                       ("a", lambda: store.set_many([("a", b"1")])),
                       ("big", lambda: store.set("big", bytes(6 << 20)))]:
        with pytest.raises(RemoteError) as info:
            write()
        assert type(info.value) is RemoteError
        assert str(info.value) == f"{store!r}: cannot write {key!r} ({store._url(key)}): " \
                                  f"HTTP {status}"


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_listing_a_missing_bucket_is_an_error_not_an_empty_listing(s3_server, backend):
    """(before, through s3fs: an empty listing, so ``members()`` and ``zarrx ls`` showed an
    empty hierarchy where the bucket's name was wrong.)"""
    url = "s3://no-such-bucket-zarrx/x"
    store = ObjectStore(url, storage_options=s3_server.options) if backend == "obstore" \
        else FsspecStore(url, storage_options=s3_server.fsspec_options)
    with pytest.raises(RemoteNotFoundError, match=re.escape(
            f"{store!r}: cannot list '<root>' ({url}/<root>): HTTP 404 (NoSuchBucket)")):
        list(store.list_prefix(""))
    with pytest.raises(RemoteNotFoundError, match="NoSuchBucket"):
        list(store.list_prefix("a/b"))
