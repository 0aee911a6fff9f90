"""A loopback HTTP proxy in front of a test server, adding what a real network has: a delay
per request, a bandwidth cap on every request body and every response (each connection's
share of a link, both ways), and (for tests) failures.

It records every request (method, path, query, status, bytes) and the most requests it ever
had in flight at once, so tests and the benchmark can count what a client really sent.
Runs on its own event loop thread; needs aiohttp.
"""
from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["Proxy", "Fault", "Logged"]

#: paths below this prefix control the proxy instead of being forwarded
ADMIN = "/__zarrx_proxy__/"
_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
        "trailers", "transfer-encoding", "upgrade", "content-length", "host"}


@dataclass
class Fault:
    """Answer ``times`` matching requests with ``status``, ``body`` and ``headers`` (or stall
    them for ``stall`` seconds; or, with ``reset``, drop the connection once the request's
    body is in, answering nothing) instead of forwarding them; with ``applied``, the request
    is forwarded first and the server's answer dropped (a write the server made whose answer
    the client never gets). ``match(method, path_qs)`` picks the requests."""

    status: int = 503
    times: int = 1
    match: Callable[[str, str], bool] = lambda method, path: True
    stall: float = 0.0
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    reset: bool = False
    applied: bool = False


@dataclass
class Logged:
    method: str
    path: str
    query: str
    status: int
    bytes_in: int
    bytes_out: int
    headers: dict = field(default_factory=dict)
    start: float = 0.0                  # loop time the request arrived
    received: float = 0.0               # loop time its body was in (after the cap)
    answered: float = 0.0               # loop time the server's answer was in
    end: float = 0.0                    # loop time its last byte was sent


class Proxy:
    """``Proxy(upstream, latency=0.02, bandwidth=None)``; ``start()`` returns its URL."""

    def __init__(self, upstream: str, *, latency: float = 0.0, bandwidth: float | None = None
                 ) -> None:
        self.upstream = upstream.rstrip("/")
        self.latency = latency
        self.bandwidth = bandwidth          # bytes/s per body, each way (None: unlimited)
        self.faults: list[Fault] = []
        self.log: list[Logged] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner = None
        self._session = None

    # -- control --------------------------------------------------------------------------------
    def start(self) -> str:
        import aiohttp  # noqa: F401 - fail early and clearly when it is missing

        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            self._loop.run_until_complete(self._start())
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, name="zarrx-test-proxy", daemon=True)
        self._thread.start()
        ready.wait(30)
        return self.url

    def stop(self) -> None:
        if self._loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._stop(), self._loop)
        fut.result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        assert self._thread is not None
        self._thread.join(30)
        self._loop = None

    def reset(self) -> None:
        self.log.clear()
        self.faults.clear()
        self.max_in_flight = 0

    def idle(self, timeout: float = 10.0) -> None:
        """Wait until no request is in flight: a client can have a whole answer before the
        proxy has recorded the request's end."""
        import time

        deadline = time.monotonic() + timeout
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.005)

    def count(self, method: str | None = None) -> int:
        return sum(1 for r in self.log if method is None or r.method == method)

    def __enter__(self) -> Proxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the server -----------------------------------------------------------------------------
    async def _start(self) -> None:
        import aiohttp
        from aiohttp import web

        self._session = aiohttp.ClientSession(
            auto_decompress=False, connector=aiohttp.TCPConnector(limit=0),
            timeout=aiohttp.ClientTimeout(total=None))
        app = web.Application(client_max_size=1 << 34)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    def _fault(self, method: str, path: str) -> Fault | None:
        for f in self.faults:
            if f.times > 0 and f.match(method, path):
                f.times -= 1
                return f
        return None

    def stats(self) -> dict:
        by: dict[str, int] = {}
        for r in self.log:
            by[r.method] = by.get(r.method, 0) + 1
        return {"requests": len(self.log), "by_method": by,
                "bytes_in": sum(r.bytes_in for r in self.log),
                "bytes_out": sum(r.bytes_out for r in self.log),
                "max_in_flight": self.max_in_flight,
                "timeline": self.timeline()}

    def timeline(self) -> list[tuple]:
        """``(method, range header, start, end, server)`` per request: seconds from the first
        request's arrival to its arrival and to its last byte out, and the seconds the server
        took to answer it once its body was in (0 for requests the proxy answered itself)."""
        t0 = min((r.start for r in self.log), default=0.0)
        # a body the server answered before taking all of it in has no receipt time
        return [(r.method, r.headers.get("Range", ""), round(r.start - t0, 4),
                 round(r.end - t0, 4),
                 round(max(r.answered - (r.received or r.answered), 0.0), 4))
                for r in self.log]

    async def _admin(self, request):  # type: ignore[no-untyped-def]
        from aiohttp import web

        if request.path.endswith("/reset"):
            self.reset()
        elif request.path.endswith("/config"):
            cfg = await request.json()
            self.latency = float(cfg.get("latency", self.latency))
            bw = cfg.get("bandwidth", self.bandwidth)
            self.bandwidth = None if bw in (None, 0) else float(bw)
        return web.json_response(self.stats())

    async def _handle(self, request):  # type: ignore[no-untyped-def]
        from aiohttp import web

        if request.path.startswith(ADMIN):
            return await self._admin(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        loop = asyncio.get_running_loop()
        entry = Logged(request.method, request.path, request.query_string, 0, 0, 0,
                       {k: v for k, v in request.headers.items()
                        if k.lower() in ("range", "if-match", "if-none-match")},
                       start=loop.time())
        self.log.append(entry)
        try:
            fault = self._fault(request.method, request.path_qs)
            headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
            headers["Host"] = request.headers.get("Host", "")
            length = request.content_length if request.can_read_body else None
            if fault is not None or not length:
                body: bytes | AsyncIterator[bytes] | None = await self._receive(request)
                entry.bytes_in, entry.received = len(body), loop.time()
                body = body or None
                if self.latency:
                    await asyncio.sleep(self.latency)
            else:
                # the body goes on to the server as it comes in, at the cap, as a link carries
                # it: the server takes in many uploads side by side, not all at their end
                if self.latency:
                    await asyncio.sleep(self.latency)
                headers["Content-Length"] = str(length)
                body = self._relay(request, entry)
            if fault is not None and fault.applied:
                async with self._session.request(  # type: ignore[union-attr]
                        request.method, self.upstream + request.path_qs, headers=headers,
                        data=body, allow_redirects=False) as up:
                    await up.read()
                    entry.answered = loop.time()
            if fault is not None:
                if fault.stall:
                    await asyncio.sleep(fault.stall)
                if fault.reset and request.transport is not None:
                    request.transport.abort()
                    raise asyncio.CancelledError
                entry.status = fault.status
                return web.Response(status=fault.status, body=fault.body, headers=fault.headers)
            async with self._session.request(  # type: ignore[union-attr]
                    request.method, self.upstream + request.path_qs, headers=headers,
                    data=body, allow_redirects=False) as up:
                data = await up.read()
                entry.answered = loop.time()
                entry.status = up.status
                entry.bytes_out = len(data)
                out_headers = {k: v for k, v in up.headers.items() if k.lower() not in _HOP}
                resp = web.StreamResponse(status=up.status, headers=out_headers)
                if request.method == "HEAD":
                    if "Content-Length" in up.headers:
                        resp.headers["Content-Length"] = up.headers["Content-Length"]
                    await resp.prepare(request)
                    await resp.write_eof()
                    return resp
                if up.status not in (204, 304):
                    resp.content_length = len(data)
                await resp.prepare(request)
                if data:
                    await self._send(resp, data)
                await resp.write_eof()
                return resp
        finally:
            self.in_flight -= 1
            entry.end = loop.time()

    def _pace(self) -> tuple[int, Callable[[float, int], Awaitable[None]]]:
        """The slice size (about 20 ms of the cap) and a wait that keeps ``n`` bytes moved
        since loop time ``t0`` at the cap."""
        bandwidth = self.bandwidth or 1.0

        async def wait(t0: float, n: int) -> None:
            due = t0 + n / bandwidth
            if (left := due - asyncio.get_running_loop().time()) > 0:
                await asyncio.sleep(left)

        return max(1 << 14, int(bandwidth / 50)), wait

    async def _receive(self, request) -> bytes:  # type: ignore[no-untyped-def]
        """The request body, taken off the connection no faster than the cap."""
        if not self.bandwidth or not request.can_read_body:
            return await request.read()
        step, wait = self._pace()
        t0 = asyncio.get_running_loop().time()
        body = bytearray()
        while piece := await request.content.read(step):
            body += piece
            await wait(t0, len(body))
        return bytes(body)

    async def _relay(self, request, entry: Logged) -> AsyncIterator[bytes]:  # type: ignore[no-untyped-def]
        """The request body in pieces, taken off the connection no faster than the cap."""
        loop = asyncio.get_running_loop()
        step, wait = self._pace() if self.bandwidth else (1 << 20, None)
        t0, n = loop.time(), 0
        while piece := await request.content.read(step):
            n += len(piece)
            entry.bytes_in = n
            if wait is not None:
                await wait(t0, n)                # a piece goes on once the link has carried it
            yield piece
        entry.received = loop.time()

    async def _send(self, resp, data: bytes) -> None:  # type: ignore[no-untyped-def]
        if not self.bandwidth or not data:
            await resp.write(data)
            return
        step, wait = self._pace()
        t0 = asyncio.get_running_loop().time()
        view = memoryview(data)
        for pos in range(0, len(data), step):
            await resp.write(view[pos:pos + step])
            await wait(t0, min(pos + step, len(data)))


def main(argv: list[str] | None = None) -> int:
    """``python -m zarrx.bench.proxy UPSTREAM [--latency S] [--bandwidth B/s]``: serve until
    killed, after printing the proxy's URL on stdout. ``GET {ADMIN}stats`` reports the counts,
    ``POST {ADMIN}reset`` clears them, ``POST {ADMIN}config`` sets latency/bandwidth."""
    import argparse
    import sys
    import time

    ap = argparse.ArgumentParser(prog="python -m zarrx.bench.proxy")
    ap.add_argument("upstream")
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--bandwidth", type=float, default=0.0)
    ns = ap.parse_args(argv)
    proxy = Proxy(ns.upstream, latency=ns.latency, bandwidth=ns.bandwidth or None)
    print(proxy.start(), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        proxy.stop()
    return 0 if sys.stdout else 0


if __name__ == "__main__":
    raise SystemExit(main())
