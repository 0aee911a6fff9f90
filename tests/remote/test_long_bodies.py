"""Answers longer than what was asked for, and bodies of error answers: a read costs the bytes
asked for (and a piece), whatever a server sends after them; and an object read in parallel
parts is read into one buffer, not into parts joined afterwards."""
from __future__ import annotations

import http.server
import os
import threading
import tracemalloc

import pytest
from loopback import not_found, serving

from zarrx.errors import RemoteAccessError, RemoteError, RemoteServerError
from zarrx.store import ByteRange
from zarrx.store.remote.common import FORBIDDEN_HINT

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

MiB = 1 << 20
SIZE = 10240                       # the object size the answers' Content-Range gives
ENDLESS = 512 * MiB                # what a server sends at most before it gives up


class _EndlessHandler(http.server.BaseHTTPRequestHandler):
    """``/<how>/k`` (or ``/bkt/<how>/k``, S3 style) answered with a body that goes on for
    ``ENDLESS`` bytes unless the client stops reading: below ``long-cl`` and ``long-chunked``
    a 206 with the Content-Range of the range asked (of a ``SIZE``-byte object), framed by a
    Content-Length of 1 GiB or chunked; below ``error-<status>`` that error status, framed by
    a Content-Length of 1 TiB. ``sent`` records the bytes of each body sent."""

    protocol_version = "HTTP/1.1"
    sent: dict = {}
    done = threading.Event()

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        parts = self.path.strip("/").split("/")
        if parts[0] == "bkt":
            parts = parts[1:]
        if len(parts) != 2 or parts[1] != "k":
            return not_found(self)
        how = parts[0]
        chunked = how.endswith("chunked")
        if how.startswith("error-"):
            self.send_response(int(how.removeprefix("error-")))
            self.send_header("Content-Length", str(1 << 40))
        else:
            first, last = self.headers["Range"].removeprefix("bytes=").split("-")
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {first}-{last}/{SIZE}")
            self.send_header("ETag", '"e1"')
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(1 << 30))
        self.send_header("Connection", "close")
        self.end_headers()
        piece, n = b"x" * (64 << 10), 0
        try:
            while n < ENDLESS:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                n += len(piece)
        except OSError:
            pass                                    # the client stopped reading
        self.close_connection = True
        type(self).sent[how] = n
        type(self).done.set()


@pytest.fixture(scope="module")
def endless():
    with serving(_EndlessHandler) as url:
        yield url


def _store(backend: str, url: str, how: str):
    from zarrx.store.remote import FsspecStore, ObjectStore
    if backend == "obstore":
        pytest.importorskip("obstore")
        return ObjectStore(f"{url}/{how}", retries=0), f"{url}/{how}"
    if backend == "s3fs":
        pytest.importorskip("s3fs")
        return FsspecStore(f"s3://bkt/{how}", retries=0, storage_options={
            "endpoint_url": url, "key": "a", "secret": "b"}), f"s3://bkt/{how}"
    return FsspecStore(f"{url}/{how}", retries=0), f"{url}/{how}"


def _read(store, how: str, exc_type: type, rng: ByteRange | None) -> str:
    _EndlessHandler.sent.pop(how, None)
    _EndlessHandler.done.clear()
    with pytest.raises(exc_type) as info:
        store.get("k", rng)
    assert _EndlessHandler.done.wait(120)
    # the socket buffers of loopback hold a few MiB; reading the body on costs ENDLESS
    assert _EndlessHandler.sent[how] < 64 * MiB, _EndlessHandler.sent[how]
    return str(info.value)


@pytest.mark.parametrize("backend, how", [
    ("obstore", "long-cl"), ("fsspec", "long-cl"), ("fsspec", "long-chunked"),
    ("s3fs", "long-cl"), ("s3fs", "long-chunked")])
def test_a_body_longer_than_the_range_is_an_error_read_no_further(endless, backend, how):
    """A 206 whose body goes on past the range it names: ObjectStore (obstore) read the body
    up to the Content-Length claimed, FsspecStore's HTTP filesystem and s3fs to its end, all
    of it in memory, before the length was found wrong; the read now stops past the range."""
    store, url = _store(backend, endless, how)
    assert _read(store, how, RemoteError, ByteRange.slice(100, 1000)) == (
        f"{store!r}: cannot read 'k' ({url}/k): the server sent more than 1000 bytes for "
        f"bytes 100-1099 of a {SIZE}-byte object, expected 1000 bytes from byte 100")


@pytest.mark.parametrize("backend", ["fsspec", "s3fs"])
@pytest.mark.parametrize("status, exc_type", [(500, RemoteServerError),
                                              (403, RemoteAccessError)])
def test_the_body_of_an_error_answer_is_read_no_further_than_its_start(endless, backend,
                                                                       status, exc_type):
    """An error answer with a body that never ends (a Content-Length of 1 TiB): FsspecStore
    over HTTP reads none of it, and over s3fs its first 64 KiB (botocore read all of it to
    parse the error). (obstore reads such bodies whole: see the remote guide.)"""
    how = f"error-{status}"
    store, url = _store(backend, endless, how)
    hint = FORBIDDEN_HINT if status == 403 else ""
    assert _read(store, how, exc_type, ByteRange.slice(0, 1000)) == (
        f"{store!r}: cannot read 'k' ({url}/k): HTTP {status}{hint}")


BIG = os.urandom(48 * MiB)


class _RangeHandler(http.server.BaseHTTPRequestHandler):
    """``/d/k``: ``BIG``, served by range from views of it (the server copies nothing)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        if self.path != "/d/k":
            return not_found(self)
        rng = self.headers.get("Range")
        start, stop = 0, len(BIG)
        if rng is None:
            self.send_response(200)
        else:
            first, last = rng.removeprefix("bytes=").split("-")
            start, stop = int(first), min(int(last) + 1, len(BIG))
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{stop - 1}/{len(BIG)}")
        self.send_header("Content-Length", str(stop - start))
        self.send_header("ETag", '"big"')
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(memoryview(BIG)[start:stop])

    do_HEAD = do_GET


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_an_object_read_in_parts_is_held_once(backend):
    """A 48 MiB object read in 6 parts of 8 MiB: the parts were read into buffers of their
    own, then joined into another (96 MiB of buffers at the end); they are read into one
    buffer now, the first part copied in (56 MiB)."""
    with serving(_RangeHandler) as url:
        store, _ = _store(backend, url, "d")
        tracemalloc.start()
        try:
            got = store.get_many_buffers([("k", None)])[0]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert got == BIG
        assert peak < 72 * MiB, peak >> 20
