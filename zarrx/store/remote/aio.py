"""The event loop remote stores run their requests on: one daemon thread for the process.

Format logic is synchronous; a remote store's synchronous call hands a coroutine to this loop
and waits for its result, so a batch of hundreds of requests is in flight at once on one
thread (the backends' clients are asynchronous), not on one Python thread per request. The
loop is made on first use and made again in a forked child (a loop inherited across ``fork``
belongs to a thread that does not exist there).
"""
from __future__ import annotations

import asyncio
import atexit
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from zarrx import _fork

__all__ = ["run", "loop"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The shared loop, running on its own daemon thread."""
    global _loop, _thread
    with _lock:
        if _loop is None:
            new = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(new)
                new.call_soon(ready.set)
                new.run_forever()

            _thread = threading.Thread(target=serve, name="zarrx-remote-io", daemon=True)
            _thread.start()
            ready.wait()
            _loop = new
            atexit.register(_quiesce)
        return _loop


#: how long the interpreter waits at exit for the backends' own threads to hand back results
QUIESCE_SECONDS = 0.05


def _quiesce() -> None:
    """At interpreter exit, before it finalises: stop the loop and give the backends' own
    threads (obstore's tokio workers) a moment to finish handing results to Python. A worker
    that takes the interpreter lock once finalisation has begun ends the process with SIGABRT
    (seen in about 1 exit in 6 right after an obstore request, with or without zarrx)."""
    global _loop, _thread
    with _lock:
        lp, th = _loop, _thread
        _loop = _thread = None          # a later call (another exit handler) makes a new one
    if lp is None or lp.is_closed():
        return
    try:
        lp.call_soon_threadsafe(lp.stop)
    except RuntimeError:
        return
    if th is not None:
        th.join(1.0)
    time.sleep(QUIESCE_SECONDS)


def run(coro: Coroutine[Any, Any, T], on: asyncio.AbstractEventLoop | None = None) -> T:
    """Run ``coro`` on ``on`` (default: the shared loop) and return its result; called from
    any thread but the loop's own."""
    target = on or loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is target:
        coro.close()
        raise RuntimeError("zarrx remote store: a synchronous call was made on its own event "
                           "loop thread")
    return asyncio.run_coroutine_threadsafe(coro, target).result()


def _forget_after_fork() -> None:
    global _loop, _thread, _lock
    _loop, _thread, _lock = None, None, threading.Lock()


_fork.at_fork(_forget_after_fork)
