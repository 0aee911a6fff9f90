"""Servers whose answers are odd: dropped connections, bodies that are not the range asked
for, no HEAD, no Content-Length, a byte now and then, HTML where metadata should be."""
from __future__ import annotations

import http.server
import socket
import threading
import time

import pytest
from loopback import serving

import zarrx
from zarrx.errors import RemoteConnectionError, RemoteTimeoutError
from zarrx.store import ByteRange

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")


class _BadServer:
    """Answers every request with headers and part of the body, then closes (``drop``) or
    stalls (``stall``); or (``drip``) with the headers of a 40-byte body sent a byte every
    quarter of a second."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(65536)
                if not got:
                    return
                data += got
            if self.how == "drip":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\nETag: \"e\"\r\n\r\n")
                for _ in range(40):
                    if self.stop.wait(0.25):
                        return
                    try:
                        conn.sendall(b"x")
                    except OSError:                 # the client gave up
                        return
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nETag: \"e\"\r\n\r\n"
                         + b"x" * 100)
            if self.how == "stall":
                self.stop.wait(30)

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("how, error", [("drop", RemoteConnectionError),
                                        ("stall", RemoteTimeoutError)])
def test_fsspec_http_failures_are_store_errors(how, error):
    from zarrx.store.remote import FsspecStore
    server = _BadServer(how)
    try:
        store = FsspecStore(f"http://127.0.0.1:{server.port}/d", timeout=1, connect_timeout=1,
                            retries=1, backoff=0.01)
        t0 = time.monotonic()
        with pytest.raises(error) as info:
            store.get("k")
        assert time.monotonic() - t0 < 20
        assert "'k'" in str(info.value) and "after 2 attempts" in str(info.value)
    finally:
        server.close()


class _LyingHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``BODY`` at ``/<how>/k``, answering Range requests wrongly by ``how``: ``short``
    (one byte less than its Content-Range says), ``long`` (5 bytes more), ``shifted`` (an
    honest Content-Range of the range one byte earlier), ``ignore`` (200 and the whole body, as
    servers without Range support do), ``loop`` (a redirect to itself), ``stream`` (honest
    answers sent chunked, without Content-Length), ``nohead`` (honest answers to GET, 405 to
    HEAD), ``garbled`` (a Content-Range that does not parse)."""

    protocol_version = "HTTP/1.1"
    BODY = bytes(range(256)) * 40

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _answer(self, status: int, data: bytes, **headers: str) -> None:
        stream = self.path.startswith("/stream/")
        self.send_response(status)
        if stream:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", '"v1"')
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        if self.command == "GET" and stream:
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data) if data else b"0\r\n\r\n")
        elif self.command == "GET":
            self.wfile.write(data)

    def do_GET(self) -> None:
        how = self.path.strip("/").split("/")[0]
        body, size = self.BODY, len(self.BODY)
        if self.path.rstrip("/").rpartition("/")[2] != "k":
            return self._answer(404, b"")
        if how == "nohead" and self.command == "HEAD":
            return self._answer(405, b"")
        if how == "loop":
            return self._answer(302, b"", Location=self.path)
        rng = self.headers.get("Range")
        if rng is None or how == "ignore":
            return self._answer(200, body)
        first, last = rng.removeprefix("bytes=").split("-")
        start = max(0, size - int(last)) if first == "" else int(first)
        stop = size if first == "" or last == "" else min(int(last) + 1, size)
        data, shown = body[start:stop], start
        if how == "short":
            data = data[:-1]
        elif how == "long":
            data += b"extra"
        elif how == "shifted":
            shown = start - 1
            data = body[shown:stop]
        elif how == "garbled":
            return self._answer(206, data, Content_Range=f"bytes {start}/{size}")
        return self._answer(206, data, Content_Range=f"bytes {shown}-{stop - 1}/{size}")

    do_HEAD = do_GET


@pytest.fixture(scope="module")
def lying_http():
    with serving(_LyingHandler) as url:
        yield url


def _http_store(backend: str, url: str, **options):
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        return ObjectStore(url, retries=0, **options)
    from zarrx.store.remote import FsspecStore
    return FsspecStore(url, retries=0, **options)


_SHORT = "the server sent 999 bytes for bytes 100-1099 of a 10240-byte object, expected 1000 " \
         "bytes from byte 100"
# (the body is read up to the bytes asked for: what comes after them is left unread)
_LONG = "the server sent more than 1000 bytes for bytes 100-1099 of a 10240-byte object, " \
        "expected 1000 bytes from byte 100"


@pytest.mark.parametrize("backend, how, detail", [
    ("obstore", "short", _SHORT),
    ("fsspec", "short", _SHORT),
    ("obstore", "long", _LONG),
    ("fsspec", "long", _LONG),
    ("obstore", "shifted", "the server sent bytes 99-1099 for bytes 100-1099"),
    ("fsspec", "shifted", _LONG),
    ("obstore", "loop", "the server's redirects cannot be followed (a loop, or too many)"),
    ("obstore", "garbled", "the server sent a Content-Range that is not a range of bytes: "
                           "'bytes 100/10240'"),
    ("fsspec", "garbled", "the server sent a Content-Range that is not a range of bytes: "
                          "'bytes 100/10240'"),
    ("fsspec", "loop", "the server's redirects cannot be followed (a loop, or too many)"),
])
def test_answers_that_are_not_the_range_asked_for_are_store_errors(lying_http, backend, how,
                                                                   detail):
    """A body longer or shorter than the range, or of another range, would shift every slice
    cut from it: it is an error naming what was asked and what came, never data."""
    from zarrx.errors import RemoteError
    store = _http_store(backend, f"{lying_http}/{how}")
    with pytest.raises(RemoteError) as info:
        store.get("k", ByteRange.slice(100, 1000))
    name = type(store).__name__
    assert str(info.value) == (f"{name}('{lying_http}/{how}', read_only=True): cannot read 'k' "
                               f"({lying_http}/{how}/k): {detail}")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_server_ignoring_ranges_gives_the_right_bytes_of_objects_read_in_parts(lying_http,
                                                                               backend):
    """Parts and ranges of an object larger than ``part_size`` from a server that answers every
    Range request with the whole object: each part cut from it, never the whole body joined."""
    body = _LyingHandler.BODY
    store = _http_store(backend, f"{lying_http}/ignore", part_size=1000, min_part_size=1000)
    assert store.get("k") == body
    assert store.get("k", ByteRange.slice(100, 5000)) == body[100:5100]
    assert store.get("k", ByteRange.last(3000)) == body[-3000:]
    assert store.get_many([("k", ByteRange.slice(1, 50)), ("k", ByteRange.slice(9000, 1240))]) \
        == [body[1:51], body[9000:]]


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_server_answering_head_with_405_has_its_objects(lying_http, backend):
    """HEAD refused (405): sizes and versions come from a GET's headers; obstore takes the 405
    for a missing object, and exists() said False."""
    body = _LyingHandler.BODY
    store = _http_store(backend, f"{lying_http}/nohead")
    assert store.exists("k") and store.getsize("k") == len(body)
    assert store.generation("k") is not None
    assert not store.exists("other") and store.getsize("other") is None
    assert store.get("k", ByteRange.slice(100, 50)) == body[100:150]
    with store.snapshot("k") as snap:
        assert [bytes(v) for v in snap.read([ByteRange.last(3), None])] == [body[-3:], body]


def test_fsspec_reads_a_server_that_sends_no_content_length(lying_http):
    """Answers streamed without Content-Length: fsspec's HTTP filesystem gives no size, and
    FsspecStore raised a bare TypeError; it now reads the object to know its size."""
    body = _LyingHandler.BODY
    store = _http_store("fsspec", f"{lying_http}/stream")
    assert store.get("k") == body and store.getsize("k") == len(body)
    assert store.get("k", ByteRange.slice(100, 50)) == body[100:150]
    assert store.get("k", ByteRange.last(7)) == body[-7:]
    assert store.get_versioned("k")[0] == body
    assert store.get("other") is None


def test_obstore_says_a_server_that_sends_no_content_length_needs_fsspec(lying_http):
    pytest.importorskip("obstore")
    from zarrx.errors import RemoteError
    store = _http_store("obstore", f"{lying_http}/stream")
    with pytest.raises(RemoteError) as info:
        store.get("k")
    assert str(info.value) == (
        f"ObjectStore('{lying_http}/stream', read_only=True): cannot read 'k' "
        f"({lying_http}/stream/k): the server's answer has no Content-Length header, which "
        "ObjectStore needs (FsspecStore reads such servers)")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("scheme", ["http", "s3"])
def test_a_server_sending_a_byte_now_and_then_times_out(backend, scheme):
    """``timeout`` bounds a whole request: a body trickling in (a byte every 0.25 s, 10 s in
    all) fails after ``timeout`` seconds. aiohttp and botocore bound each read only, and
    FsspecStore returned the body once it had all come."""
    server = _BadServer("drip")
    try:
        endpoint = f"http://127.0.0.1:{server.port}"
        if scheme == "s3":
            pytest.importorskip("s3fs")
            so = ({"endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
                   "region": "us-east-1"} if backend == "obstore"
                  else {"endpoint_url": endpoint, "key": "a", "secret": "b"})
            cls = "ObjectStore" if backend == "obstore" else "FsspecStore"
            from zarrx.store import remote
            store = getattr(remote, cls)("s3://bkt/d", storage_options=so, timeout=1,
                                         retries=1, backoff=0.01)
        else:
            store = _http_store(backend, f"{endpoint}/d", timeout=1)
        with pytest.raises(RemoteTimeoutError) as info:
            store.get("k")
        assert str(info.value).startswith(f"{store!r}: cannot read 'k' ({store._url('k')}): "
                                          "timeout")
    finally:
        server.close()


class _PageHandler(http.server.BaseHTTPRequestHandler):
    """Answers every GET and HEAD with 200 and an HTML sign-in page (as a portal in front of a
    data server does for a client without its cookie); under ``/busy/``, the first request for
    each path gets 503 with ``Retry-After: 7``."""

    PAGE = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>...</body></html>"
    busy: set = set()

    def do_GET(self) -> None:
        if self.path.startswith("/busy/") and self.path not in self.busy:
            self.busy.add(self.path)
            self.send_response(503)
            self.send_header("Retry-After", "7")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.PAGE)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(self.PAGE)

    do_HEAD = do_GET

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass


@pytest.fixture(scope="module")
def page_http():
    with serving(_PageHandler) as url:
        yield url


@pytest.mark.parametrize("backend, ctype", [("obstore", "text/html; charset=utf-8"),
                                            ("fsspec", "text/html")])
@pytest.mark.parametrize("zarr_format, key", [(None, "zarr.json"), (3, "zarr.json"),
                                              (2, ".zarray")])
def test_an_html_page_where_metadata_should_be_names_the_url_and_what_came(
        page_http, backend, ctype, zarr_format, key):
    """A server answering 200 with a login page gave "zarr.json: expected valid JSON, found
    Expecting value at line 1 column 1", naming neither the store nor the URL."""
    from zarrx.errors import MetadataError
    store = _http_store(backend, f"{page_http}/data.zarr")
    with pytest.raises(MetadataError) as info:
        zarrx.open(store, mode="r", zarr_format=zarr_format)
    name = type(store).__name__
    assert str(info.value) == (
        f"{name}('{page_http}/data.zarr', read_only=True): {key} ({page_http}/data.zarr/{key}): "
        f"expected a JSON metadata document, found an HTML page titled 'Sign in' "
        f"(Content-Type {ctype})")


def test_metadata_that_is_not_json_names_the_store_and_what_came(tmp_path):
    from zarrx.errors import MetadataError
    root = tmp_path / "a.zarr"
    root.mkdir()
    for doc, found in [(b"", "an empty object"), (b" \n", "only white space"),
                       (b"\x1f\x8b\x08\x00gz", "6 bytes that are not JSON, starting "
                                               "b'\\x1f\\x8b\\x08\\x00gz'")]:
        (root / "zarr.json").write_bytes(doc)
        with pytest.raises(MetadataError) as info:
            zarrx.open(str(root), mode="r")
        assert str(info.value) == (f"LocalStore('{root}', read_only=True): zarr.json: expected "
                                   f"a JSON metadata document, found {found}")


def test_fsspec_http_honours_retry_after(page_http, monkeypatch):
    """fsspec's HTTP filesystem shows the headers of a failed answer: a 503's Retry-After sets
    the wait before the next attempt (at most max_backoff)."""
    from zarrx.store.remote import FsspecStore, base
    pauses: list[float] = []

    async def pause(seconds):
        pauses.append(seconds)

    monkeypatch.setattr(base, "_pause", pause)
    store = FsspecStore(f"{page_http}/busy/x", retries=2, backoff=0.01, max_backoff=3.0)
    assert store.get("k") == _PageHandler.PAGE
    assert pauses == [3.0]
