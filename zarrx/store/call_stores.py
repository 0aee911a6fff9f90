"""The stores a call opens for itself, and what becomes of them when the call fails.

A function given the path of a zip archive (``zarrx.open_array("data.zip", mode="a")``) opens
a :class:`~zarrx.store.zip.ZipStore` on it. Such a store writes a temporary archive beside
``path`` and puts it in place when it is closed or collected, so a call that failed after
opening it (a missing array, a refused argument, an interrupted write) would otherwise leave
an empty archive at a path that held none, or replace the archive that was there. Instead:

- :func:`opened` records a store :func:`~zarrx.store.make_store` opened from a path for a
  writing call, in the scope of the call running (none outside :func:`discards_on_failure`:
  the store is then not recorded);
- :func:`discards_on_failure` wraps a public function: when such a call raises (any
  exception, ``KeyboardInterrupt`` too), each store recorded in its scope is discarded
  (:meth:`~zarrx.store.zip.ZipStore.discard`: the archive at ``path`` stays as it was, or
  absent); when it returns, they stay with the nodes it returns, as before.

A call that zarrx makes on behalf of another (``save`` calling ``save_array``, ``open``
creating a group) shares that call's scope: the stores it opens are discarded when the call
the user made fails. A call the user's own code makes while a call runs (in a source's
``__array__``, in a dask task the synchronous scheduler runs on the calling thread) is a call
of its own, with its own scope: what it wrote stays when the call around it fails. So does a
call on another thread or in another process, also one whose context was copied from a
running call (Python 3.14's threads on free-threaded builds, ``contextvars.copy_context``): a
scope is the call's while it runs, on its thread, and nothing's once it has returned.

A store the caller passes (a ``ZipStore`` object) is the caller's, and is never discarded.
"""
from __future__ import annotations

import contextvars
import functools
import os
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

__all__ = ["opened", "discards_on_failure"]

_F = TypeVar("_F", bound=Callable[..., Any])


class _Scope:
    """The stores opened for one call, while it runs: ``frame``, the frame of the call (None
    once it has returned), on the thread ``thread`` of the process ``pid``."""

    __slots__ = ("stores", "frame", "thread", "pid")

    def __init__(self, frame: FrameType) -> None:
        self.stores: list[Any] = []
        self.frame: FrameType | None = frame
        self.thread = threading.get_ident()
        self.pid = os.getpid()

    def running_here(self) -> bool:
        """Whether the call is running, on this thread of this process."""
        return self.frame is not None and self.thread == threading.get_ident() and \
            self.pid == os.getpid()

    def delegates(self, caller: FrameType | None) -> bool:
        """Whether a call made from ``caller`` is made by zarrx on behalf of this call: every
        frame from ``caller`` up to this call's runs zarrx code (a frame of the user's code, or
        of another library, between them: a call of the user's own)."""
        if not self.running_here():
            return False
        frame = caller
        while frame is not None:
            if frame is self.frame:
                return True
            name = frame.f_globals.get("__name__")
            if not isinstance(name, str) or not (name == "zarrx" or name.startswith("zarrx.")):
                return False
            frame = frame.f_back
        return False


#: the scope of the call running (None: no such call)
_OPENED: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar(
    "zarrx_call_stores", default=None)


def opened(store: Any) -> Any:
    """``store``, recorded to be discarded if the call running fails, when zarrx opened it
    for that call (every frame from its opener up to the call's runs zarrx code): a store the
    user's own code opens while a call runs (``make_store`` in a source's ``__array__``) is
    the user's."""
    scope = _OPENED.get()
    if scope is not None and scope.delegates(sys._getframe(1)):
        scope.stores.append(store)
    return store


def discards_on_failure(func: _F) -> _F:
    """``func``, which discards the stores opened in its scope (see :func:`opened`) when it
    raises; a call zarrx makes for it shares its scope."""
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        outer = _OPENED.get()
        if outer is not None and outer.delegates(sys._getframe(1)):
            return func(*args, **kwargs)
        scope = _Scope(sys._getframe())
        token = _OPENED.set(scope)
        try:
            return func(*args, **kwargs)
        except BaseException:
            for store in reversed(scope.stores):
                store.discard()
            raise
        finally:
            _OPENED.reset(token)
            scope.frame = None          # returned: a context copied meanwhile records nothing
            scope.stores = []
    return call  # type: ignore[return-value]
