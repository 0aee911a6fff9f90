"""The tag a conditional write carries (zarrx/store/remote/lost_answers.py) where the backend
names user metadata by its own rules or keeps none, and where the server's HEAD shows the tag
without an ETag: the write must not fail because of it."""
from __future__ import annotations

import base64
import http.server
import re
import threading
from types import SimpleNamespace

import pytest

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")

import obstore  # noqa: E402

from zarrx.store.remote import ObjectStore  # noqa: E402

#: Azure's rule for metadata names: a C# identifier (a hyphen or a dot is HTTP 400)
_AZURE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@pytest.fixture
def azure():
    """A stand-in for Azure Blob Storage answering PUTs as Azure does: 400 InvalidMetadata
    for a metadata name that is not a C# identifier, else 201 with an ETag."""
    seen: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_PUT(self):  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            meta = {k[len("x-ms-meta-"):]: v for k, v in self.headers.items()
                    if k.lower().startswith("x-ms-meta-")}
            seen.append(meta)
            bad = any(not _AZURE_NAME.fullmatch(name) for name in meta)
            body = b"<?xml version=\"1.0\"?><Error><Code>InvalidMetadata</Code></Error>" \
                if bad else b""
            self.send_response(400 if bad else 201)
            self.send_header("ETag", '"0x8D0000000000001"')
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/acct", seen
    server.shutdown()
    thread.join()
    server.server_close()


def test_a_tagged_write_to_azure_names_its_metadata_as_azure_takes_it(azure):
    """The tag was sent as x-ms-meta-zarrx-write, which Azure refuses: every conditional write
    of an Azure store opened with conditional_writes=True failed with HTTP 400."""
    endpoint, seen = azure
    store = ObjectStore("az://ctr/x", conditional_writes=True, storage_options={
        "account_name": "acct", "account_key": base64.b64encode(b"k" * 32).decode(),
        "endpoint": endpoint, "client_options": {"allow_http": True}})
    assert store._run(store._put("k", memoryview(b"abc"), "create", "t0")) \
        == '"0x8D0000000000001"'
    assert [list(m.values()) for m in seen] == [["t0"]]


def test_a_local_obstore_store_writes_conditionally_without_a_tag(tmp_path):
    """obstore refuses metadata for local files (NotImplementedError), so a creation through
    an ObjectStore over a LocalStore with conditional_writes=True raised StoreError."""
    store = ObjectStore(obstore.store.LocalStore(str(tmp_path)), conditional_writes=True)
    gen = store.set_if("k", b"one", None)
    assert store.get("k") == b"one" and store.generation("k") == gen


def test_a_lost_answer_found_by_a_head_without_etag_succeeds(s3_server, proxy, monkeypatch):
    """The HEAD after the retry's 412 shows the write's own tag but no ETag: the write was
    made, yet it was reported as a conflict (an append would claim its rows again)."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install s3fs)")
    from zarrx.bench.proxy import Fault
    from zarrx.store.remote import FsspecStore, lost_answers

    monkeypatch.setattr(lost_answers, "secrets", SimpleNamespace(token_hex=lambda n: "a" * n))
    store = FsspecStore(s3_server.url(), retries=4, backoff=0.01, storage_options={
        **s3_server.fsspec_options, "endpoint_url": proxy.url})
    proxy.faults += [
        Fault(status=500, applied=True, match=lambda m, p: m == "PUT" and p.endswith("/k")),
        Fault(status=200, headers={f"x-amz-meta-{lost_answers.WRITE_TAG}": "a" * 12},
              match=lambda m, p: m == "HEAD" and p.endswith("/k"))]
    gen = store.set_if("k", b"one", None)
    assert not any(f.times for f in proxy.faults)
    assert store.get("k") == b"one" and store.generation("k") == gen
