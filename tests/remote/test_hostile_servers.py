"""Servers whose answers claim what they do not send: a read costs the bytes that come and
ends in a StoreError naming the key, never a process that aborts on the size a header claims.

Each case runs in a child process whose address space is limited (RLIMIT_AS), so that an
allocation of a claimed size fails there, as it would on a machine without that much memory,
instead of being granted untouched by the kernel."""
from __future__ import annotations

import http.server
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from loopback import not_found, serving

import zarrx

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="RLIMIT_AS and /proc")

TIB = 1 << 40


class _ClaimHandler(http.server.BaseHTTPRequestHandler):
    """Answers a GET of ``/k`` with 206 for the range asked, its Content-Range saying the
    object is 1 TiB long (a range from an offset: up to that end), and a body of at most 20000
    bytes of it (bytes 0-255 over and over), sent in two pieces; below ``/ignore/``, 200 (the
    range ignored) with a Content-Length of 1 TiB and 20000 bytes of body, then the connection
    closed; 404 for anything else."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        rng = self.headers.get("Range", "")
        named = self.path.rstrip("/").rpartition("/")[2] == "k"
        if named and self.path.startswith("/ignore/"):
            self.send_response(200)
            self.send_header("Content-Length", str(TIB))
            self.send_header("ETag", '"v1"')
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command == "GET":
                try:
                    self.wfile.write(bytes(range(256)) * 78 + bytes(32))
                except OSError:
                    pass
            self.close_connection = True
            return
        if not named or not rng.startswith("bytes="):
            return not_found(self)
        first, last = rng.removeprefix("bytes=").split("-")
        start = TIB - int(last) if first == "" else int(first)
        stop = TIB if first == "" or last == "" else int(last) + 1
        body = bytes((start + i) % 256 for i in range(min(stop - start, 20000)))
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{TIB}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"v1"')
        self.end_headers()
        try:
            self.wfile.write(body[:10000])
            self.wfile.flush()
            time.sleep(0.01)
            self.wfile.write(body[10000:])
        except OSError:
            pass

    do_HEAD = do_GET


CHILD = """
import resource, sys
from zarrx.errors import StoreError
from zarrx.store import ByteRange
from zarrx.store.remote import FsspecStore, ObjectStore
cls = ObjectStore if sys.argv[1] == "obstore" else FsspecStore
store = cls(sys.argv[2], retries=0, part_size=1000, min_part_size=1000)
assert store.get("missing") is None
with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + (2 << 30), resource.RLIM_INFINITY))
rng = {"whole": None, "offset": ByteRange(offset=100),
       "slice": ByteRange.slice(1000, 3000)}[sys.argv[3]]
try:
    got = store.get("k", rng)
except StoreError as exc:
    print(type(exc).__name__, exc)
else:
    print(bytes(got) == (bytes(range(256)) * 78)[1000:4000])
"""


@pytest.fixture(scope="module")
def claiming_http():
    with serving(_ClaimHandler) as url:
        yield url


def _in_child(backend: str, url: str, read: str) -> str:
    # the budget is address space: threads made later (stacks, malloc arenas) take some of it,
    # so it leaves 2 GiB, a few of the 1 GiB parts claimed (64 are asked for at once)
    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD, backend, url, read], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def test_a_range_to_the_end_of_an_object_claimed_huge_costs_what_comes(claiming_http):
    """A range from an offset, answered with a Content-Range to the end of a 1 TiB object and
    a 20000-byte body: obstore allocated the claimed length before the body came, and the
    process aborted."""
    pytest.importorskip("obstore")
    url = f"{claiming_http}/d"
    assert _in_child("obstore", url, "offset") == (
        f"RemoteError ObjectStore('{url}', read_only=True): cannot read 'k' ({url}/k): the "
        f"server sent 20000 bytes for bytes 100- of a {TIB}-byte object, expected "
        f"{TIB - 100} bytes from byte 100")


def test_the_parts_of_an_object_claimed_huge_cost_what_comes(claiming_http):
    """A whole object read in parts: the lead's Content-Range says 1 TiB, so the other parts
    are about 1 GiB each (at most 1024 of them); obstore allocated each part's length before
    its body came, and the process aborted. Each part costs what comes, and the first short
    one is the error."""
    pytest.importorskip("obstore")
    url = f"{claiming_http}/d"
    out = _in_child("obstore", url, "whole")
    m = re.fullmatch(
        rf"RemoteError ObjectStore\('{re.escape(url)}', read_only=True\): cannot read 'k' "
        rf"\({re.escape(url)}/k\): the server sent 20000 bytes for bytes (\d+)-(\d+) of a "
        rf"{TIB}-byte object, expected (\d+) bytes from byte (\d+)", out)
    assert m is not None, out
    a, b, n, at = (int(g) for g in m.groups())
    assert a == at and n == b - a + 1 and n > 1 << 29


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_range_to_the_end_from_a_server_ignoring_ranges_costs_what_comes(claiming_http,
                                                                           backend):
    """A range from an offset, answered with the whole object (200), said to be 1 TiB long,
    whose body ends after 20000 bytes: the range was allocated at the claimed length before
    the body came (a MemoryError, or memory the process does not have)."""
    if backend == "obstore":
        pytest.importorskip("obstore")
    url = f"{claiming_http}/ignore"
    name = "ObjectStore" if backend == "obstore" else "FsspecStore"
    cause = "interrupted error" if backend == "obstore" else "ClientPayloadError"
    assert _in_child(backend, url, "offset") == (
        f"RemoteConnectionError {name}('{url}', read_only=True): cannot read 'k' ({url}/k): "
        f"connection ({cause})")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_range_from_a_server_ignoring_ranges_costs_the_range_not_the_object(claiming_http,
                                                                              backend):
    """A range answered with the whole object (200), said to be 1 TiB long: the range is taken
    from the body as it streams by, and the rest is left unread (obstore allocated the claimed
    size, and the process aborted; fsspec read the body until memory ran out)."""
    if backend == "obstore":
        pytest.importorskip("obstore")
    assert _in_child(backend, f"{claiming_http}/ignore", "slice") == "True"


class _VersionsHandler(http.server.BaseHTTPRequestHandler):
    """Serves a 5000-byte object ``/<name>/k`` ignoring If-Match, as many web servers do.
    Below ``/once-<n>/`` it is replaced after the first GET (version 1: 5000 bytes of 1,
    then version 2: of 2); below ``/always-<n>/`` every request finds a new version."""

    protocol_version = "HTTP/1.1"
    gets: dict = {}

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        folder, _, name = self.path.strip("/").partition("/")
        if name != "k":
            return not_found(self)
        seen = self.gets[folder] = self.gets.get(folder, 0) + (
            self.command == "GET" or folder.startswith("always"))
        version = (1 if seen <= 1 else 2) if folder.startswith("once") else seen
        body = bytes([version % 256]) * 5000
        rng = self.headers.get("Range")
        if rng is None:
            self.send_response(200)
        else:
            first, last = rng.removeprefix("bytes=").split("-")
            start = 5000 - int(last) if first == "" else int(first)
            stop = 5000 if first == "" or last == "" else min(int(last) + 1, 5000)
            body = body[start:stop]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/5000")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", f'"v{version}"')
        self.end_headers()
        if self.command == "GET":
            try:
                self.wfile.write(body)
            except OSError:
                pass

    do_HEAD = do_GET


@pytest.fixture(scope="module")
def versions_http():
    with serving(_VersionsHandler) as url:
        yield url


def _store(backend: str, url: str):
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        return ObjectStore(url, retries=0, part_size=1000, min_part_size=1000)
    from zarrx.store.remote import FsspecStore
    return FsspecStore(url, retries=0, part_size=1000, min_part_size=1000)


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("call", ["get", "get_versioned"])
def test_a_read_in_parts_never_joins_versions_a_server_sent_despite_if_match(
        versions_http, backend, call):
    """A whole object read in 5 parts from a server that ignores If-Match, replaced after the
    first part: ObjectStore joined the first part of version 1 to four parts of version 2 (and
    get_versioned called it version 1); a part of another version is now a failed condition,
    and the read starts again."""
    _VersionsHandler.gets.clear()
    store = _store(backend, f"{versions_http}/once-{backend}-{call}")
    if call == "get":
        assert store.get("k") == bytes([2]) * 5000
    else:
        from zarrx.store.remote.common import ETag
        assert store.get_versioned("k") == (bytes([2]) * 5000, ETag('"v2"'))


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("call", ["get", "get_versioned"])
def test_an_object_changing_on_every_request_is_a_conflict(versions_http, backend, call):
    """A server whose every answer is a new version: the read in parts is tried 8 times, then
    is a ConflictError saying so (get_versioned said "expected no object", though none was
    expected; ObjectStore's get joined the parts of 5 versions)."""
    from zarrx.errors import ConflictError
    url = f"{versions_http}/always-{backend}-{call}"
    store = _store(backend, url)
    with pytest.raises(ConflictError) as info:
        getattr(store, call)("k")
    assert str(info.value) == (f"{store!r}: cannot read 'k' ({url}/k): it changed during each "
                               f"of 8 reads")


_BOMB = __import__("gzip").compress(bytes(16 << 20), 9)     # 16 MiB of zeros in about 16 KiB


class _GzipHandler(http.server.BaseHTTPRequestHandler):
    """``/bomb/zarr.json``: ``_BOMB`` with ``Content-Encoding: gzip`` whatever the client
    accepts, ranges being of those compressed bytes, as HTTP has them; ``/polite/zarr.json``: a
    group's document, gzip-compressed only for a client that accepts gzip, or that does not
    say what it accepts (HTTP lets a server choose then)."""

    protocol_version = "HTTP/1.1"
    DOC = b'{"zarr_format": 3, "node_type": "group", "attributes": {"a": 1}}'
    accepted: list = []

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        folder, _, name = self.path.strip("/").partition("/")
        if name != "zarr.json":
            return not_found(self)
        accept = self.headers.get("Accept-Encoding") or ""
        self.accepted.append(accept)
        squeeze = "gzip" in accept or not accept
        body, gz = (_BOMB, True) if folder == "bomb" else \
            (__import__("gzip").compress(self.DOC), True) if squeeze else (self.DOC, False)
        size, rng = len(body), self.headers.get("Range")
        if rng is None:
            self.send_response(200)
        else:
            first, last = rng.removeprefix("bytes=").split("-")
            start = size - int(last) if first == "" else int(first)
            stop = size if first == "" or last == "" else min(int(last) + 1, size)
            body = body[start:stop]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{size}")
        if gz:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", '"g1"')
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)

    do_HEAD = do_GET


@pytest.fixture(scope="module")
def gzip_http():
    with serving(_GzipHandler) as url:
        yield url


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_compressed_answer_is_read_as_stored(gzip_http, backend):
    """An answer with Content-Encoding gzip is its bytes as sent: FsspecStore (aiohttp)
    inflated it, 16 KiB to 16 MiB here and a few MiB of a range to GiB at a thousand to one,
    where ObjectStore gives the bytes as sent; the document that is no JSON says so."""
    from zarrx.errors import MetadataError
    store = _store(backend, f"{gzip_http}/bomb")
    assert store.get("zarr.json") == _BOMB
    with pytest.raises(MetadataError) as info:
        zarrx.open_group(store, mode="r", zarr_format=3)
    assert str(info.value) == (
        f"{store!r}: zarr.json ({gzip_http}/bomb/zarr.json): expected a JSON metadata "
        f"document, found {len(_BOMB)} bytes that are not JSON, starting "
        f"{_BOMB[:24]!r}")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_http_stores_ask_for_answers_as_stored(gzip_http, backend):
    """Both stores ask for uncompressed answers, so that a server compressing on the fly sends
    the document itself: aiohttp asked for gzip, and obstore said nothing, which lets a server
    compress (ObjectStore then read the compressed bytes, no JSON)."""
    _GzipHandler.accepted.clear()
    g = zarrx.open_group(_store(backend, f"{gzip_http}/polite"), mode="r", zarr_format=3)
    assert g.attrs["a"] == 1
    assert _GzipHandler.accepted and set(_GzipHandler.accepted) == {"identity"}


class _RepeatingListHandler(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint whose ListObjectsV2 ignores the continuation token: every page is the
    first one again (keys ``a`` and ``b`` below the prefix asked for), truncated, naming a
    token for the next; the 50th page of a listing is its last, so that a client that never
    notices still finishes."""

    protocol_version = "HTTP/1.1"
    pages = 0

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        from urllib.parse import parse_qs, urlparse
        query = parse_qs(urlparse(self.path).query)
        if "list-type" not in query:
            return not_found(self)
        first = "continuation-token" not in query
        type(self).pages = 1 if first else type(self).pages + 1
        more = "true" if type(self).pages < 50 else "false"
        prefix = query.get("prefix", [""])[0]
        items = "".join(f"<Contents><Key>{prefix}{k}</Key><LastModified>2024-01-01T00:00:00.000Z"
                        f"</LastModified><ETag>\"e\"</ETag><Size>3</Size></Contents>"
                        for k in "ab")
        body = ('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns='
                '"http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name>'
                f"<Prefix>{prefix}</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>"
                f"<IsTruncated>{more}</IsTruncated>{items}"
                + ("<NextContinuationToken>t1</NextContinuationToken>" if more == "true" else "")
                + "</ListBucketResult>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_listing_that_repeats_its_pages_is_an_error(backend):
    """An S3 server repeating the first page of a listing for ever: both backends asked for
    the next page for ever (the listing never returned); a key listed twice now ends it."""
    from zarrx.errors import RemoteError
    from zarrx.store import remote
    with serving(_RepeatingListHandler) as endpoint:
        if backend == "obstore":
            pytest.importorskip("obstore")
            store = remote.ObjectStore("s3://bkt/d", retries=0, storage_options={
                "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
                "region": "us-east-1"})
        else:
            pytest.importorskip("s3fs")
            store = remote.FsspecStore("s3://bkt/d", retries=0, storage_options={
                "endpoint_url": endpoint, "key": "a", "secret": "b"})
        with pytest.raises(RemoteError) as info:
            list(store.list_prefix(""))
    assert str(info.value) == (f"{store!r}: cannot list '<root>' (s3://bkt/d/<root>): the "
                               f"server listed 'a' twice (a listing that repeats itself would "
                               f"never end)")
