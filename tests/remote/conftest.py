"""Servers for the remote-store tests, started once per session on loopback: an S3 server
(moto in server mode), a GCS server (gcp-storage-emulator) and an HTTP server (nginx). A test
that needs a server that cannot start here is skipped with the reason."""
from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
import tempfile
import uuid

import pytest

from zarrx.bench.servers import (S3_KEYS, Server, ServerUnavailable, _wait, create_bucket,
                                 free_port, start_moto, start_nginx)

# recent gcsfs releases ask a gRPC service for each bucket's layout before its requests; an
# emulator has none, and every request would wait a minute for it. Read at gcsfs's import.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

BUCKET = "zarrx-test"
_counter = itertools.count()


def fresh_prefix() -> str:
    """A key prefix no other test uses."""
    return f"t{next(_counter)}-{uuid.uuid4().hex[:8]}"


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
        return fresh_prefix()

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


class GCS:
    """The running GCS server: ``url(prefix)`` gives a fresh location, ``fsspec_options`` the
    storage_options gcsfs needs."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.bucket = BUCKET
        self.fsspec_options = {"endpoint_url": endpoint, "token": "anon"}

    def url(self, prefix: str | None = None) -> str:
        return f"gs://{self.bucket}/{prefix or fresh_prefix()}"


# the emulator, answering suffix ranges (``bytes=-N``: the last N bytes) and listing in pages
# (``maxResults``, at most 1000 items and prefixes a page, and ``pageToken``) as GCS does; it
# would answer them with the whole object and list all in one page
_GCS_EMULATOR = """\
import json
import sys
from gcp_storage_emulator import __main__ as main
try:
    from gcp_storage_emulator import server
    from gcp_storage_emulator.handlers import objects
    stock_ls, stock = objects.ls, objects.download
except (ImportError, AttributeError):
    sys.exit(3)


def ls(request, response, storage, *args, **kwargs):
    stock_ls(request, response, storage, *args, **kwargs)
    if response.status != 200 or not response._content:
        return
    page = json.loads(response._content)
    entries = sorted([(i["name"], i) for i in page.get("items", [])]
                     + [(p, None) for p in page.get("prefixes", [])], key=lambda e: e[0])
    asked = request.query.get("maxResults")
    most = min(int(asked[0]) if asked else 1000, 1000)
    token = (request.query.get("pageToken") or [""])[0]
    entries = [e for e in entries if e[0] > token]
    out = {"kind": "storage#objects",
           "items": [i for _, i in entries[:most] if i is not None],
           "prefixes": [p for p, i in entries[:most] if i is None]}
    if len(entries) > most:
        out["nextPageToken"] = entries[most - 1][0]
    response.json(out)


def download(request, response, storage, *args, **kwargs):
    rng = (request.get_header("range", None) or "").strip()
    if rng.startswith("bytes=-") and rng[7:].isdigit():
        try:
            size = len(storage.get_file(request.params["bucket_name"],
                                        request.params["object_id"]))
        except Exception:
            size = 0
        if size:
            start = max(size - int(rng[7:]), 0)
            headers = request._request_handler.headers
            del headers["Range"]
            headers["Range"] = f"bytes={start}-{size - 1}"
    return stock(request, response, storage, *args, **kwargs)


objects.download = download
swap = {stock: download, stock_ls: ls}
server.HANDLERS = tuple((p, {m: swap.get(f, f) for m, f in h.items()}) for p, h in server.HANDLERS)
if {f for _, h in server.HANDLERS for f in h.values()} >= {download, ls}:
    sys.exit(main.main())
sys.exit(3)
"""

#: the emulator's exit status when what the tests change in it is not where it was
_CHANGED = 3


def start_gcs() -> Server:
    """gcp-storage-emulator (its JSON API, which gcsfs speaks) in its own process, keeping
    objects in memory, with the test bucket."""
    if importlib.util.find_spec("gcp_storage_emulator") is None:
        raise ServerUnavailable("gcp-storage-emulator is not installed "
                                "(pip install gcp-storage-emulator)")
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="zarrx-gcs-")
    log = os.path.join(workdir, "server.log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", _GCS_EMULATOR, "start", "--host", "127.0.0.1",
             "--port", str(port), "--in-memory", "--default-bucket", BUCKET, "-q"],
            stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
    server = Server(f"http://127.0.0.1:{port}", proc, workdir, log)
    try:
        _wait(server.url + "/", proc, log, "gcp-storage-emulator")
    except ServerUnavailable:
        server.stop()
        if proc.poll() == _CHANGED:
            # not a server that cannot start here: this release's handlers are not those the
            # tests change (every GCS test skipped would pass for nothing)
            pytest.fail("gcp-storage-emulator's handlers are not those the tests change "
                        f"(objects.ls, objects.download): see {log}")
        raise
    return server


@pytest.fixture(scope="session")
def gcs_server():
    pytest.importorskip("gcsfs", reason="gcsfs is not installed (pip install gcsfs)")
    try:
        server = start_gcs()
    except ServerUnavailable as exc:
        pytest.skip(f"no GCS test server: {exc}")
    yield GCS(server.url)
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


@pytest.fixture(autouse=True)
def _no_findings_from_other_tests():
    """What condition probes found is kept per configuration for the process: a loopback
    server of another test may have had the same address (a port used again)."""
    from zarrx.store.remote import probe_findings
    probe_findings._found.clear()
    yield
