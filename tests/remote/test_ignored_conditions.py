"""A server that takes If-Match / If-None-Match on a PUT, or If-Match on a DELETE, and acts
anyway (some S3-compatible servers), or keeps one of them and ignores another: a create that
must be new, a replace or a delete of a version since replaced answered 200 and overwrote or
removed what another writer stored, with nothing in the answer to show it. Now a store probes
each condition once, on an object of its own, before its first conditional write or delete
(five requests: see ``zarrx.store.remote.condition_check``) and raises a StoreError naming the
URL for a kind the server ignores, never writing or deleting without the condition; the probe
object is removed."""
from __future__ import annotations

import hashlib
import http.server
import re
import threading
from urllib.parse import urlparse

import pytest
from loopback import answer, answer_range, not_found, serving

from zarrx.errors import ConflictError, StoreError
from zarrx.store.remote.condition_check import PROBE_REQUESTS

pytest.importorskip("aiohttp")


class _CarelessS3(http.server.BaseHTTPRequestHandler):
    """A bucket ``bkt`` in memory that ignores the conditions named in ``ignores`` (of
    "If-None-Match", "If-Match" on a PUT, "DELETE If-Match") and keeps the others."""

    protocol_version = "HTTP/1.1"
    objects: dict[str, bytes] = {}
    puts: list[str] = []
    ignores = {"If-None-Match", "If-Match", "DELETE If-Match"}
    lock = threading.Lock()

    def _refused(self, kept: str, conditions: list[str]) -> bool:
        """Whether a condition of this request, kept by the server, fails (then answered)."""
        body = self.objects.get(self._key())
        none_match, match = self.headers.get("If-None-Match"), self.headers.get("If-Match")
        if "If-None-Match" in conditions and none_match and "If-None-Match" not in self.ignores:
            if body is not None:
                answer(self, 412, b"", [])
                return True
        if match and kept not in self.ignores:
            if body is None:
                not_found(self)
                return True
            if match != self._etag(body):
                answer(self, 412, b"", [])
                return True
        return False

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _key(self) -> str:
        return urlparse(self.path).path.removeprefix("/bkt/")

    def _etag(self, body: bytes) -> str:
        return f'"{hashlib.md5(body).hexdigest()}"'

    def do_PUT(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.lock:
            if self._refused("If-Match", ["If-None-Match"]):
                return
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
            if self._refused("DELETE If-Match", []):
                return
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


def _reset(ignores: set[str]) -> None:
    _CarelessS3.objects = {"d/k": b"another writer's"}
    _CarelessS3.puts = []
    _CarelessS3.ignores = ignores


_WRITES = "cannot write conditionally at s3://bkt/d/: the server ignores the conditions of writes"
_DELETES = "cannot delete conditionally at s3://bkt/d/: the server ignores the conditions of " \
           "deletes"


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("how", ["create", "replace", "delete"])
def test_a_server_ignoring_conditions_is_found_out_before_a_conditional_write(backend, how):
    _reset({"If-None-Match", "If-Match", "DELETE If-Match"})
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
    assert str(info.value).startswith(f"{store!r}: " + (_DELETES if how == "delete"
                                                        else _WRITES))
    assert "conditional_writes=False" in str(info.value)
    assert _CarelessS3.objects == {"d/k": b"another writer's"}     # the probe is gone too
    assert len(_CarelessS3.puts) == 3 and len(set(_CarelessS3.puts)) == 1 and \
        re.fullmatch(r"d/\.zarrx-condition-probe-[0-9a-f]{32}", _CarelessS3.puts[0])


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("ignored", ["If-None-Match", "If-Match", "DELETE If-Match"])
def test_a_server_ignoring_one_condition_is_found_out(backend, ignored):
    """A server keeping If-Match on a PUT but ignoring If-None-Match: * let a create over an
    existing object overwrite it and report success, and one ignoring If-Match on a DELETE
    let delete_if remove a version it was not given; each is refused now, with a StoreError
    naming the URL, while the conditions the server keeps go on working."""
    _reset({ignored})
    with serving(_CarelessS3) as endpoint:
        store = _store(backend, endpoint)
        gen = store.generation("k")
        if ignored == "DELETE If-Match":
            with pytest.raises(StoreError, match=re.escape(_DELETES)) as info:
                store.delete_if("k", gen)
            gen = store.set_if("k", b"mine", gen)            # writes keep their conditions
            with pytest.raises(ConflictError):
                store.set_if("k", b"theirs", None)
        else:
            with pytest.raises(StoreError, match=re.escape(_WRITES)) as info:
                store.set_if("k", b"mine", None if ignored == "If-None-Match" else gen)
            assert ("If-None-Match: *" in str(info.value)) == (ignored == "If-None-Match")
            store.delete_if("k", gen)                         # deletes keep theirs
            assert not store.exists("k")
            store.set("k", b"another writer's")
    assert not isinstance(info.value, ConflictError)
    assert "conditional_writes=False" in str(info.value)
    if ignored == "DELETE If-Match":
        assert _CarelessS3.objects == {"d/k": b"mine"}
    else:
        assert _CarelessS3.objects == {"d/k": b"another writer's"}


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_what_a_probe_finds_is_kept(backend):
    """A store probes a server once: later conditional writes of a kind found ignored are
    refused without a request."""
    _reset({"If-None-Match"})
    with serving(_CarelessS3) as endpoint:
        store = _store(backend, endpoint)
        sent = []
        for _ in range(3):
            with pytest.raises(StoreError, match=re.escape(_WRITES)):
                store.set_if("k", b"mine", None)
            sent.append(sum(store.requests.values()))
    assert sent == [PROBE_REQUESTS] * 3
    assert _CarelessS3.objects == {"d/k": b"another writer's"}


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
    store.delete_if("k", gen)
    probe = [r for r in proxy.log if ".zarrx-condition-probe-" in r.path
             or r.method == "POST"]                        # a delete is a DeleteObjects
    assert len(probe) == PROBE_REQUESTS
    assert [(r.method, r.status) for r in probe] == [
        ("PUT", 200), ("PUT", 412), ("PUT", 412), ("DELETE", 412),
        ("POST", 200)]
    assert [r.method for r in proxy.log if r not in probe].count("PUT") == 3
    assert list(store.list_prefix("")) == [] and store.get("k") is None


def test_a_delete_probe_the_client_cannot_send_leaves_writes_decided():
    """A client that cannot send a conditional DELETE (an old botocore without DeleteObject's
    IfMatch) leaves the question of deletes open; the writes the probe found kept go ahead."""
    _reset(set())
    with serving(_CarelessS3) as endpoint:
        store = _store("fsspec", endpoint)

        async def cannot(key, etag):
            raise TypeError("DeleteObject got an unexpected keyword argument 'IfMatch'")

        store._delete_if = cannot
        gen = store.set_if("new", b"1", None)
        store.set_if("new", b"2", gen)
        with pytest.raises(ConflictError):
            store.set_if("new", b"3", None)
    assert _CarelessS3.objects == {"d/k": b"another writer's", "d/new": b"2"}
    assert store._conditions_found == {"write": None}


# -- what a probe finds travels with a pickled store ---------------------------------------------

def _another_process() -> None:
    """What this process found for any configuration, forgotten: as in a dask worker."""
    from zarrx.store.remote import probe_findings
    probe_findings._found.clear()


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_pickled_store_sends_no_probe_its_original_made(backend):
    """A copy of a store (each task of a dask write gets one) probed again before its first
    conditional write: five requests more per task. What the probe found travels with it."""
    import pickle
    _reset(set())
    with serving(_CarelessS3) as endpoint:
        store = _store(backend, endpoint)
        store.set_if("a", b"1", None)
        assert sum(store.requests.values()) == PROBE_REQUESTS + 1
        blob = pickle.dumps(store)
        _another_process()
        copy = pickle.loads(blob)
        gen = copy.set_if("b", b"2", None)
        copy.set_if("b", b"3", gen)
        with pytest.raises(ConflictError):
            copy.set_if("b", b"4", None)
        copy.delete_if("b", copy.generation("b"))
    assert copy.requests == {"PUT": 3, "HEAD": 3, "DELETE": 1}      # no probe among them
    assert _CarelessS3.objects == {"d/k": b"another writer's", "d/a": b"1"}


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_store_pickled_before_its_probe_probes_once(backend):
    import pickle
    _reset(set())
    with serving(_CarelessS3) as endpoint:
        blob = pickle.dumps(_store(backend, endpoint))
        assert b"condition" not in blob                  # nothing found is carried
        _another_process()
        copy = pickle.loads(blob)
        sent = []
        for key in ("a", "b"):
            copy.set_if(key, b"1", None)
            sent.append(sum(copy.requests.values()))
    assert sent == [PROBE_REQUESTS + 1, PROBE_REQUESTS + 2]


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_server_found_ignoring_conditions_is_refused_by_a_pickled_store(backend):
    import pickle
    _reset({"If-None-Match"})
    with serving(_CarelessS3) as endpoint:
        store = _store(backend, endpoint)
        with pytest.raises(StoreError, match=re.escape(_WRITES)):
            store.set_if("k", b"mine", None)
        blob = pickle.dumps(store)
        _another_process()
        copy = pickle.loads(blob)
        with pytest.raises(StoreError, match=re.escape(_WRITES)) as info:
            copy.set_if("k", b"mine", None)
    assert str(info.value).startswith(f"{copy!r}: ")
    assert sum(copy.requests.values()) == 0
    assert _CarelessS3.objects == {"d/k": b"another writer's"}


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_tasks_of_a_dask_style_write_probe_once(backend):
    """Ten tasks, each with its own unpickled copy of a store that has not probed, writing
    conditionally at once: one probe (five requests), not one per task (fifty)."""
    import pickle
    from concurrent.futures import ThreadPoolExecutor
    _reset(set())
    with serving(_CarelessS3) as endpoint:
        blobs = [pickle.dumps(_store(backend, endpoint)) for _ in range(10)]
        _another_process()

        def task(i: int):
            copy = pickle.loads(blobs[i])
            copy.set_if(f"t{i}", b"x", None)
            return sum(copy.requests.values())

        with ThreadPoolExecutor(10) as pool:
            sent = list(pool.map(task, range(10)))
    assert sum(sent) == PROBE_REQUESTS + 10
    assert len([k for k in _CarelessS3.puts if ".zarrx-condition-probe-" in k]) == 1


def test_findings_are_not_taken_under_another_endpoint(monkeypatch):
    """A finding describes the server a configuration reaches: a copy unpickled where the
    environment names another endpoint, or a store opened with other options, probes
    itself."""
    import pickle
    from zarrx.store import remote
    _reset(set())
    with serving(_CarelessS3) as endpoint:
        store = _store("fsspec", endpoint)
        store.set_if("a", b"1", None)
        blob = pickle.dumps(store)
        _another_process()
        monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9")
        copy = pickle.loads(blob)
        monkeypatch.delenv("AWS_ENDPOINT_URL_S3")
        assert copy._conditions_found is None
        _CarelessS3.ignores = {"If-None-Match"}
        other = remote.FsspecStore("s3://bkt/d", retries=0, storage_options={
            "endpoint_url": endpoint, "key": "a", "secret": "b",
            "client_kwargs": {"region_name": "eu-west-1"}})
        with pytest.raises(StoreError, match=re.escape(_WRITES)):
            other.set_if("k", b"mine", None)
    assert _CarelessS3.objects == {"d/k": b"another writer's", "d/a": b"1"}


def test_stores_of_one_configuration_share_what_a_probe_found():
    """Within a process, a store opened again from the same URL and options takes what the
    first one's probe found; the dask name of a store is the same before and after."""
    from zarrx.dask.graph import store_token
    _reset({"DELETE If-Match"})
    with serving(_CarelessS3) as endpoint:
        first = _store("obstore", endpoint)
        token = store_token(first)
        first.set_if("a", b"1", None)
        assert store_token(first) == token
        again = _store("obstore", endpoint)
        again.set_if("b", b"1", None)
        with pytest.raises(StoreError, match=re.escape(_DELETES)):
            again.delete_if("b", again.generation("b"))
    assert again.requests == {"PUT": 1, "HEAD": 2}            # no probe
