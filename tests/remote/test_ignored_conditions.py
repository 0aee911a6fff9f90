"""A server that takes If-Match / If-None-Match on a PUT and writes anyway (some
S3-compatible servers): a create that must be new or a replace of a version since replaced
answered 200 and overwrote what another writer stored, with nothing in the answer to show it.
Now a store finds such a server out before its first conditional write (one PUT of an empty
probe object conditioned on a version that cannot exist) and raises a StoreError naming the
URL, never writing without the condition; the probe object is removed."""
from __future__ import annotations

import hashlib
import http.server
import re
import threading
from urllib.parse import urlparse

import pytest
from loopback import answer, answer_range, not_found, serving

from zarrx.errors import ConflictError, StoreError

pytest.importorskip("aiohttp")


class _CarelessS3(http.server.BaseHTTPRequestHandler):
    """A bucket ``bkt`` in memory that ignores every condition of a request."""

    protocol_version = "HTTP/1.1"
    objects: dict[str, bytes] = {}
    puts: list[str] = []
    lock = threading.Lock()

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _key(self) -> str:
        return urlparse(self.path).path.removeprefix("/bkt/")

    def _etag(self, body: bytes) -> str:
        return f'"{hashlib.md5(body).hexdigest()}"'

    def do_PUT(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.lock:
            self.objects[self._key()] = body
            self.puts.append(self._key())
        answer(self, 200, b"", [("ETag", self._etag(body))])

    def do_GET(self) -> None:
        body = self.objects.get(self._key())
        if body is None:
            return not_found(self)
        answer_range(self, body, [("ETag", self._etag(body)),
                                  ("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")])

    do_HEAD = do_GET

    def do_POST(self) -> None:          # DeleteObjects
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        keys = re.findall(r"<Key>([^<]*)</Key>", body)
        with self.lock:
            for k in keys:
                self.objects.pop(k, None)
        out = "".join(f"<Deleted><Key>{k}</Key></Deleted>" for k in keys)
        data = f'<?xml version="1.0" encoding="UTF-8"?><DeleteResult>{out}</DeleteResult>'
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())

    def do_DELETE(self) -> None:
        with self.lock:
            self.objects.pop(self._key(), None)
        answer(self, 204, b"", [])


def _store(backend: str, endpoint: str):
    from zarrx.store import remote
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore("s3://bkt/d", retries=0, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
    pytest.importorskip("s3fs")
    return remote.FsspecStore("s3://bkt/d", retries=0, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("how", ["create", "replace", "delete"])
def test_a_server_ignoring_conditions_is_found_out_before_a_conditional_write(backend, how):
    _CarelessS3.objects = {"d/k": b"another writer's"}
    _CarelessS3.puts = []
    with serving(_CarelessS3) as endpoint:
        store = _store(backend, endpoint)
        gen = store.generation("k")
        with pytest.raises(StoreError) as info:
            if how == "create":
                store.set_if("k", b"mine", None)       # must be new: it is not
            elif how == "replace":
                store.set_if("k", b"mine", gen)
            else:
                store.delete_if("k", gen)
    assert not isinstance(info.value, ConflictError)
    assert str(info.value).startswith(f"{store!r}: cannot write conditionally at "
                                      f"s3://bkt/d/: the server ignores the conditions of "
                                      f"writes")
    assert "conditional_writes=False" in str(info.value)
    assert _CarelessS3.objects == {"d/k": b"another writer's"}     # the probe is gone too
    assert len(_CarelessS3.puts) == 1 and \
        re.fullmatch(r"d/\.zarrx-condition-probe-[0-9a-f]{32}", _CarelessS3.puts[0])


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_server_keeping_conditions_costs_one_probe_per_store(backend, s3_server, proxy):
    from zarrx.store import remote
    prefix = s3_server.fresh()
    if backend == "obstore":
        store = remote.ObjectStore(f"s3://{s3_server.bucket}/{prefix}", storage_options={
            **s3_server.options, "endpoint": proxy.url})
    else:
        pytest.importorskip("s3fs")
        store = remote.FsspecStore(f"s3://{s3_server.bucket}/{prefix}", storage_options={
            **s3_server.fsspec_options, "endpoint_url": proxy.url})
    proxy.reset()
    gen = store.set_if("k", b"1", None)
    gen = store.set_if("k", b"2", gen)
    with pytest.raises(ConflictError):
        store.set_if("k", b"3", None)
    puts = [r for r in proxy.log if r.method == "PUT"]
    assert len(puts) == 4 and ".zarrx-condition-probe-" in puts[0].path
    assert [r.status for r in puts] in ([404, 200, 200, 412], [412, 200, 200, 412])
    assert list(store.list_prefix("")) == ["k"] and store.get("k") == b"2"
