"""A server that answers ranges with the whole object (or with a Content-Range of unknown
size, ``bytes a-b/*``, which obstore cannot read) costs ObjectStore one pass over the object
per read once the store has seen it, not one GET from the object's start for every part."""
from __future__ import annotations

import http.server
import re

import pytest
from loopback import serving

pytest.importorskip("obstore")

SIZE = 1 << 20
PART = 16 << 10                   # 64 parts
BODY = bytes(range(256)) * (SIZE // 256)


class _NoRangeHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``/d/k``: HEAD with its size; a ranged GET answered whole (``mode`` "whole")
    or as 206 with ``bytes a-b/*`` (``mode`` "star"), a plain GET whole. Counts the GETs and
    the body bytes it manages to send."""

    protocol_version = "HTTP/1.1"
    mode = "whole"
    gets = 0
    sent = 0

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _send(self, status: int, body: bytes, extra: list[tuple[str, str]]) -> None:
        self.send_response(status)
        self.send_header("ETag", '"v1"')
        self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        cls = type(self)
        try:
            for i in range(0, len(body), 4096):
                self.wfile.write(body[i:i + 4096])
                cls.sent += len(body[i:i + 4096])
        except OSError:
            self.close_connection = True

    def do_HEAD(self) -> None:
        self._send(200, b"" if self.path.endswith("/empty") else BODY, [])

    def do_GET(self) -> None:
        type(self).gets += 1
        if self.path.endswith("/empty"):
            return self._send(200, b"", [])
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        if m is not None and type(self).mode == "star":
            a, b = int(m.group(1)), min(int(m.group(2)), SIZE - 1)
            return self._send(206, BODY[a:b + 1], [("Content-Range", f"bytes {a}-{b}/*")])
        self._send(200, BODY, [])


@pytest.mark.parametrize("mode", ["whole", "star"])
def test_reads_in_parts_from_a_server_ignoring_ranges_pass_over_the_object_once(mode):
    """Before: each of the 64 parts of a read was a whole GET streaming from the object's
    start to the part's end, about 32 times the object's bytes per read; now the first read
    (which finds out) costs at most four GETs, two of them abandoned, and later reads one GET each."""
    from zarrx.store import remote
    from zarrx.store.base import ByteRange
    _NoRangeHandler.mode = mode
    _NoRangeHandler.gets = _NoRangeHandler.sent = 0
    with serving(_NoRangeHandler) as url:
        store = remote.ObjectStore(f"{url}/d", retries=0, part_size=PART, min_part_size=PART)
        assert store.get("k") == BODY
        first_gets, first_sent = _NoRangeHandler.gets, _NoRangeHandler.sent
        assert store.get("k") == BODY
        assert store.get("k", ByteRange.slice(100, SIZE - 200)) == BODY[100:SIZE - 100]
        gets, sent = _NoRangeHandler.gets, _NoRangeHandler.sent
    assert first_gets <= 4 and first_sent <= 4 * SIZE
    assert gets - first_gets == 2 and sent - first_sent <= 2 * SIZE


def test_an_empty_object_answered_whole_keeps_reads_in_parallel_parts():
    """Some servers answer a range of an empty object with the empty object (200): that
    says nothing of their other objects, which are still read in parallel parts."""
    from zarrx.store import remote
    from zarrx.store.base import ByteRange
    _NoRangeHandler.mode = "whole"
    with serving(_NoRangeHandler) as url:
        store = remote.ObjectStore(f"{url}/d", retries=0, part_size=PART, min_part_size=PART)
        assert store.get("empty", ByteRange.slice(0, 10)) == b""
        assert store._ignores_ranges is False
        assert store.get("k", ByteRange.slice(0, 10)) == BODY[:10]
        assert store._ignores_ranges is True


def _store(backend: str, url: str, **options):
    from zarrx.store import remote
    if backend == "fsspec":
        pytest.importorskip("aiohttp")
        return remote.FsspecStore(url, retries=0, **options)
    return remote.ObjectStore(url, retries=0, **options)


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_the_first_snapshot_read_in_parts_from_a_server_ignoring_ranges_sends_one_get(backend):
    """A snapshot that starts without a request (its version known: ``tail_prefetch=0``, or
    an object the store read lately) read its 64 parts all at once: each was answered with
    the whole object, and each then sent one more GET of the whole object (126 GETs, about 80
    times the object's bytes; FsspecStore 63 GETs, each streaming the object up to its part).
    Now the first part goes first, and the whole object it brings
    serves every part: two GETs, the first abandoned."""
    from zarrx.store.base import ByteRange
    _NoRangeHandler.mode = "whole"
    _NoRangeHandler.gets = _NoRangeHandler.sent = 0
    with serving(_NoRangeHandler) as url:
        store = _store(backend, f"{url}/d", part_size=PART, min_part_size=PART,
                       tail_prefetch=0)
        snap = store.snapshot("k")
        assert bytes(snap.read([ByteRange.slice(0, SIZE - 100)])[0]) == BODY[:SIZE - 100]
        assert _NoRangeHandler.gets <= 2 and _NoRangeHandler.sent <= 2 * SIZE


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_the_spans_of_a_snapshot_from_a_server_ignoring_ranges_share_one_get(backend):
    """The inner chunks of a shard far apart (not coalesced) were read with a GET each, each
    answered with the whole object and read again whole (16 GETs for 8 chunks; FsspecStore:
    8, each streaming the object up to its chunk); now the
    snapshot's tail finds the server out and one GET serves all of them."""
    from zarrx.store.base import ByteRange
    _NoRangeHandler.mode = "whole"
    _NoRangeHandler.gets = _NoRangeHandler.sent = 0
    with serving(_NoRangeHandler) as url:
        store = _store(backend, f"{url}/d", part_size=PART, min_part_size=PART,
                       coalesce_gap=0)
        snap = store.snapshot("k")
        before = _NoRangeHandler.gets
        got = snap.read([ByteRange.slice(i << 16, 1000) for i in range(8)])
        assert [bytes(g) for g in got] == [BODY[i << 16:(i << 16) + 1000] for i in range(8)]
        assert _NoRangeHandler.gets - before == 1
