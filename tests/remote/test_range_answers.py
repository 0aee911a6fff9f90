"""Partial answers (HTTP 206) checked against the Content-Range rules of RFC 9110 §14.4 the
same way by both stores: a range of an object of unknown length (``bytes 0-9/*``) is a valid
answer and is read; a partial answer whose Content-Range is missing, names no range of bytes,
or names another range than the one asked for is a RemoteError naming it, never bytes taken
for the range asked for."""
from __future__ import annotations

import http.server

import pytest
from loopback import not_found, serving

from zarrx.errors import RemoteError
from zarrx.store import ByteRange

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

BODY = bytes(range(256)) * 40


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``BODY`` at ``/<how>/k`` (ETag ``"v1"``), a Range request answered with 206, the
    bytes asked for and a Content-Range by ``how``: ``star`` (``bytes a-b/*``), ``zero``
    (the bytes of the range of the same length from byte 0, and their honest Content-Range),
    ``none`` (no Content-Range), ``garbled`` (``bytes a/size``), ``unsatisfied``
    (``bytes */size``), ``items`` (another unit), ``inverted`` (``bytes b-a/size``) and
    ``past`` (a size that ends before the range)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        how = self.path.strip("/").split("/")[0]
        if not self.path.endswith("/k"):
            return not_found(self)
        size, rng = len(BODY), self.headers.get("Range")
        headers = [("ETag", '"v1"')]
        if rng is None:
            status, data = 200, BODY
        else:
            first, last = rng.removeprefix("bytes=").split("-")
            start = max(0, size - int(last)) if first == "" else int(first)
            stop = size if first == "" or last == "" else min(int(last) + 1, size)
            if how == "zero":
                start, stop = 0, stop - start
            status, data = 206, BODY[start:stop]
            shown = {"star": f"bytes {start}-{stop - 1}/*",
                     "zero": f"bytes {start}-{stop - 1}/{size}",
                     "garbled": f"bytes {start}/{size}", "unsatisfied": f"bytes */{size}",
                     "items": f"items {start}-{stop - 1}/{size}",
                     "inverted": f"bytes {stop - 1}-{start}/{size}",
                     "past": f"bytes {start}-{stop - 1}/{stop - 5}"}.get(how)
            if shown is not None:
                headers.append(("Content-Range", shown))
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(data)

    do_HEAD = do_GET


@pytest.fixture(scope="module")
def range_http():
    with serving(_RangeHandler) as url:
        yield url


def _store(backend: str, url: str):
    from zarrx.store import remote
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore(url, retries=0)
    return remote.FsspecStore(url, retries=0)


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_range_of_an_object_of_unknown_length_is_read(range_http, backend):
    """``Content-Range: bytes 0-9/*`` is valid for a 206 (RFC 9110): ObjectStore raised
    RemoteError on every ranged read (obstore cannot parse it); both stores read it now."""
    store = _store(backend, f"{range_http}/star")
    assert store.get("k") == BODY
    assert store.get("k", ByteRange(100, 1000)) == BODY[100:1100]
    assert store.get("k", ByteRange.last(50)) == BODY[-50:]
    assert store.get("k", ByteRange(10000)) == BODY[10000:]
    snap = store.snapshot("k")
    assert snap.size == len(BODY)
    assert bytes(snap.read([ByteRange(5, 10)])[0]) == BODY[5:15]


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("rng, detail", [
    (ByteRange(100, 1000), "the server sent bytes 0-999 for bytes 100-1099"),
    (ByteRange.last(50), "the server sent bytes 0-49 for bytes 10190-10239"),
    (ByteRange(10000), "the server sent bytes 0-239 for bytes 10000-10239"),
])
def test_bytes_of_another_range_are_not_the_range_asked_for(range_http, backend, rng, detail):
    """A 206 holding bytes of another range of the same length, with its honest Content-Range:
    FsspecStore over HTTP took them for the range asked for (wrong bytes, silently)."""
    store = _store(backend, f"{range_http}/zero")
    with pytest.raises(RemoteError) as info:
        store.get("k", rng)
    assert str(info.value) == f"{store!r}: cannot read 'k' ({store.address('k')}): {detail}"


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("how, detail", [
    ("none", "the server sent a partial answer (HTTP 206) without a Content-Range"),
    ("garbled", "the server sent a Content-Range that is not a range of bytes: "
                "'bytes 100/10240'"),
    ("unsatisfied", "the server sent a Content-Range that is not a range of bytes: "
                    "'bytes */10240'"),
    ("items", "the server sent a Content-Range that is not a range of bytes: "
              "'items 100-1099/10240'"),
])
def test_a_partial_answer_that_names_no_range_is_an_error(range_http, backend, how, detail):
    """FsspecStore read such answers as the range asked for when their length fitted;
    ObjectStore raised a RemoteError saying only "other (GenericError: ...)"."""
    store = _store(backend, f"{range_http}/{how}")
    with pytest.raises(RemoteError) as info:
        store.get("k", ByteRange(100, 1000))
    assert str(info.value) == f"{store!r}: cannot read 'k' ({store.address('k')}): {detail}"


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("how", ["inverted", "past"])
def test_a_content_range_outside_its_object_is_an_error(range_http, backend, how):
    store = _store(backend, f"{range_http}/{how}")
    with pytest.raises(RemoteError, match="cannot read 'k'.*the server sent"):
        store.get("k", ByteRange(100, 1000))


class _RefusingHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``FILES`` (path -> bytes), answering every Range request with 416 (``bytes
    */size``), as a server that refuses ranges does; counts the GETs in ``gets``."""

    protocol_version = "HTTP/1.1"
    FILES: dict[str, bytes] = {}
    gets = 0

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        body = self.FILES.get(self.path)
        if body is None:
            return not_found(self)
        if self.command == "GET":
            type(self).gets += 1
        ranged = self.headers.get("Range") is not None
        self.send_response(416 if ranged else 200)
        if ranged:
            self.send_header("Content-Range", f"bytes */{len(body)}")
        self.send_header("Content-Length", "0" if ranged else str(len(body)))
        self.send_header("ETag", '"v1"')
        self.end_headers()
        if self.command == "GET" and not ranged:
            self.wfile.write(body)

    do_HEAD = do_GET


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_server_refusing_ranges_inside_an_object_is_read_right(backend):
    """A 416 to a range that starts inside the object (as its HEAD says): both stores read
    it as the empty bytes past the object's end, so every ranged read, and every whole read
    (whose first part is a range), gave b'' and an array read as a bad chunk."""
    import numpy as np

    import zarrx
    from zarrx.store import MemoryStore
    src = MemoryStore()
    a = np.arange(400, dtype="<i4").reshape(20, 20)
    zarrx.create_array(src, shape=a.shape, chunks=(5, 5), shards=(10, 10), dtype=a.dtype,
                       zarr_format=3)[...] = a
    _RefusingHandler.FILES = {f"/d/{k}": src.get(k) for k in src.list_prefix("")}
    _RefusingHandler.FILES["/d/k"] = BODY
    with serving(_RefusingHandler) as url:
        store = _store(backend, f"{url}/d")
        assert store.get("k") == BODY
        assert store.get("k", ByteRange(100, 1000)) == BODY[100:1100]
        assert store.get("k", ByteRange.last(50)) == BODY[-50:]
        assert store.get("k", ByteRange(20000, 10)) == b""
        _RefusingHandler.gets = 0
        assert store.get_many([("k", ByteRange(0, 10)), ("k", ByteRange(5000, 10))]) == \
            [BODY[:10], BODY[5000:5010]]
        assert _RefusingHandler.gets == 2     # the coalesced range, then the whole object
        np.testing.assert_array_equal(zarrx.open_array(store, mode="r")[3:17, 2:9], a[3:17, 2:9])


class _WrongHeadHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``BODY`` at ``/<how>/k`` with honest ranges (206, ETag ``"v1"``), its HEAD
    answered with the ETag and ``Content-Length: 0`` (``zero``, as some servers answer HEAD)
    or twice the size (``double``); counts the HEADs in ``heads``."""

    protocol_version = "HTTP/1.1"
    heads = 0

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_HEAD(self) -> None:
        if not self.path.endswith("/k"):
            return not_found(self)
        type(self).heads += 1
        claimed = 0 if self.path.startswith("/zero/") else 2 * len(BODY)
        self.send_response(200)
        self.send_header("ETag", '"v1"')
        self.send_header("Content-Length", str(claimed))
        self.end_headers()

    def do_GET(self) -> None:
        if not self.path.endswith("/k"):
            return not_found(self)
        size, rng = len(BODY), self.headers.get("Range")
        status, data, headers = 200, BODY, [("ETag", '"v1"')]
        if rng is not None:
            first, last = rng.removeprefix("bytes=").split("-")
            start = max(0, size - int(last)) if first == "" else int(first)
            stop = size if first == "" or last == "" else min(int(last) + 1, size)
            status, data = 206, BODY[start:stop]
            headers.append(("Content-Range", f"bytes {start}-{stop - 1}/{size}"))
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("how", ["zero", "double"])
def test_a_head_that_misstates_the_size_does_not_spoil_ranged_reads(backend, how):
    """FsspecStore over HTTP took an object's size from a HEAD after each ranged GET, not from
    the GET's own Content-Range: against a server answering HEAD with Content-Length: 0 every
    read failed ('the server sent bytes 100-1099 for bytes 0--1'), and with a larger size so
    did whole reads and suffix ranges. The answer's ETag and size now version its bytes, with
    no HEAD."""
    with serving(_WrongHeadHandler) as url:
        store = _store(backend, f"{url}/{how}")
        _WrongHeadHandler.heads = 0
        assert store.get("k") == BODY
        assert store.get("k", ByteRange(100, 1000)) == BODY[100:1100]
        assert store.get("k", ByteRange.last(50)) == BODY[-50:]
        assert store.get("k", ByteRange(10000)) == BODY[10000:]
        assert _WrongHeadHandler.heads == 0
