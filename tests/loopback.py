"""HTTP servers on loopback for tests: a handler class served on a free port, with a thread per
request, for as long as a ``with`` block runs."""
from __future__ import annotations

import http.server
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["serving", "not_found", "answer", "answer_range"]


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # a store keeps many requests in flight: with the default backlog of 5, the connections
    # past it are dropped and their clients try again a second later
    request_queue_size = 128


class _Server6(_Server):
    address_family = socket.AF_INET6


@contextmanager
def serving(handler: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """``handler`` (a request handler class, or a partial of one) served on loopback (``host``:
    ``"::1"`` for IPv6); the server's base URL (``http://127.0.0.1:<port>``,
    ``http://[::1]:<port>``). The server stops when the block ends."""
    server = (_Server6 if ":" in host else _Server)((host, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{f'[{host}]' if ':' in host else host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def not_found(handler: http.server.BaseHTTPRequestHandler) -> None:
    """Answer the request ``handler`` serves with an empty 404."""
    handler.send_response(404)
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def answer(handler: http.server.BaseHTTPRequestHandler, status: int, body: bytes,
           headers: list[tuple[str, str]]) -> None:
    """Answer with ``status``, ``headers`` and ``body`` (not sent to a HEAD request)."""
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command == "GET":
        handler.wfile.write(body)


def answer_range(handler: http.server.BaseHTTPRequestHandler, body: bytes,
                 headers: list[tuple[str, str]], suffixes: bool = True) -> None:
    """Answer with ``body``, or with the part of it the request's Range header asks for (206,
    with its Content-Range; 416 for a range past the end, and for a suffix range when not
    ``suffixes`` or the body is empty)."""
    m = re.fullmatch(r"bytes=(\d*)-(\d*)", handler.headers.get("Range") or "")
    if m is None:
        return answer(handler, 200, body, headers)
    first, last = m.groups()
    size = len(body)
    if first == "":
        if not suffixes or size == 0:
            return answer(handler, 416, b"", [("Content-Range", f"bytes */{size}")])
        start, stop = max(size - int(last), 0), size
    else:
        start, stop = int(first), size if last == "" else min(int(last) + 1, size)
    if start >= size:
        return answer(handler, 416, b"", [("Content-Range", f"bytes */{size}")])
    answer(handler, 206, body[start:stop],
           headers + [("Content-Range", f"bytes {start}-{stop - 1}/{size}")])
