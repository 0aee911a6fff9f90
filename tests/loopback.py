"""HTTP servers on loopback for tests: a handler class served on a free port, with a thread per
request, for as long as a ``with`` block runs."""
from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["serving", "not_found"]


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
