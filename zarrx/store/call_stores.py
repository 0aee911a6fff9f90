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

How: the wrapper :func:`discards_on_failure` puts around a function holds the list of its
stores in its frame (one list made per call: nothing else, since public calls such as
``open_array`` run on hot paths); :func:`opened` walks the stack up from the frame that opened
the store while the frames run zarrx code, and records the store in the outermost wrapper's
list it meets. A frame of another module (the user's code, numpy calling an ``__array__``
of the user's, dask's scheduler) ends the walk, so a call made from it is a call of its own;
another thread, or a forked process's worker, starts on a stack of its own.
"""
from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["opened", "discards_on_failure"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _zarrx_code(frame: Any) -> bool:
    name = frame.f_globals.get("__name__")
    return isinstance(name, str) and (name == "zarrx" or name.startswith("zarrx."))


def opened(store: Any) -> Any:
    """``store``, recorded to be discarded if the call running fails, when zarrx opened it
    for that call (every frame from its opener up to the call's runs zarrx code): a store the
    user's own code opens while a call runs (``make_store`` in a source's ``__array__``) is
    the user's."""
    scope = None
    frame = sys._getframe(1)
    while frame is not None and _zarrx_code(frame):
        if frame.f_code is _CALL:           # a wrapped call: the outermost one takes it
            scope = frame
        frame = frame.f_back
    if scope is not None:
        scope.f_locals["stores"].append(store)
    return store


def discards_on_failure(func: _F) -> _F:
    """``func``, which discards the stores opened in its scope (see :func:`opened`) when it
    raises; a call zarrx makes for it shares its scope."""
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        stores: list[Any] = []      # (filled by opened(), through this frame)
        try:
            return func(*args, **kwargs)
        except BaseException:
            for store in reversed(stores):
                store.discard()
            raise
    return call  # type: ignore[return-value]


#: the code of every wrapper discards_on_failure makes: how opened() knows their frames
_CALL = discards_on_failure(lambda: None).__code__
