"""The event loop remote stores run their requests on: one daemon thread for the process.

Format logic is synchronous; a remote store's synchronous call hands a coroutine to this loop
and waits for its result, so a batch of hundreds of requests is in flight at once on one
thread (the backends' clients are asynchronous), not on one Python thread per request. The
loop is made on first use and made again in a forked child (a loop inherited across ``fork``
belongs to a thread that does not exist there).
"""
from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

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
        return _loop


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


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
