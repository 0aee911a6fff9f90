"""The stores a call opens for itself, and what becomes of them when the call fails.

A function given the path of a zip archive (``zarrx.open_array("data.zip", mode="a")``) opens
a :class:`~zarrx.store.zip.ZipStore` on it. Such a store writes a temporary archive beside
``path`` and puts it in place when it is closed or collected, so a call that failed after
opening it (a missing array, a refused argument, an interrupted write) would otherwise leave
an empty archive at a path that held none, or replace the archive that was there. Instead:

- :func:`opened` records a store :func:`~zarrx.store.make_store` opened from a path for a
  writing call, in the scope of the outermost call running on this thread (there is none
  outside :func:`discards_on_failure`: the store is then not recorded);
- :func:`discards_on_failure` wraps a public function: when the outermost such call raises
  (any exception, ``KeyboardInterrupt`` too), each store recorded in its scope is discarded
  (:meth:`~zarrx.store.zip.ZipStore.discard`: the archive at ``path`` stays as it was, or
  absent); when it returns, they stay with the nodes it returns, as before.

A store the caller passes (a ``ZipStore`` object) is the caller's, and is never discarded.
"""
from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["opened", "discards_on_failure"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: the stores opened in the scope of the outermost call running (None: no such call)
_OPENED: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "zarrx_call_stores", default=None)


def opened(store: Any) -> Any:
    """``store``, recorded to be discarded if the outermost call running fails."""
    scope = _OPENED.get()
    if scope is not None:
        scope.append(store)
    return store


def discards_on_failure(func: _F) -> _F:
    """``func``, which discards the stores opened in its scope (see :func:`opened`) when it
    raises; nested calls share the outermost call's scope."""
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _OPENED.get() is not None:
            return func(*args, **kwargs)
        scope: list[Any] = []
        token = _OPENED.set(scope)
        try:
            return func(*args, **kwargs)
        except BaseException:
            for store in reversed(scope):
                store.discard()
            raise
        finally:
            _OPENED.reset(token)
    return call  # type: ignore[return-value]
