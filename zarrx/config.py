"""Run-time settings: ``zarrx.config.threads`` and a context manager to change them.

``threads`` is the number of threads that decode/encode the chunks of one read or write
(default: the CPU count). ``threads=1`` is strictly single-threaded: no pool is used at all.

    with zarrx.config.set(threads=1):
        z[:]                      # decoded on the calling thread only
"""
from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

__all__ = ["set", "get"]

_DEFAULTS = {"threads": os.cpu_count() or 1, "write_empty_chunks": False,
             "consistency": "strict"}
CONSISTENCY = ("strict", "none")
_lock = threading.Lock()
_values = dict(_DEFAULTS)


def get(name: str) -> object:
    return _values[name]


def _check(name: str, value: object) -> object:
    from zarrx.errors import ZarrError

    if name not in _DEFAULTS:
        raise ZarrError(f"zarrx.config: unknown setting {name!r}; known: {sorted(_DEFAULTS)}")
    if name == "threads" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ZarrError(f"zarrx.config.threads: expected an int >= 1, found {value!r}")
    if name == "write_empty_chunks" and not isinstance(value, bool):
        raise ZarrError(f"zarrx.config.write_empty_chunks: expected a bool, found {value!r}")
    if name == "consistency" and value not in CONSISTENCY:
        raise ZarrError(f"zarrx.config.consistency: expected one of {', '.join(CONSISTENCY)}, "
                        f"found {value!r}")
    return value


@contextlib.contextmanager
def _restore(old: dict) -> Iterator[None]:
    try:
        yield
    finally:
        with _lock:
            _values.clear()
            _values.update(old)


def set(**settings: object) -> contextlib.AbstractContextManager[None]:  # noqa: A001
    """Change settings now; the returned context manager restores the previous ones on exit."""
    checked = {k: _check(k, v) for k, v in settings.items()}
    with _lock:
        old = dict(_values)
        _values.update(checked)
    return _restore(old)


def __getattr__(name: str) -> object:
    try:
        return _values[name]
    except KeyError:
        raise AttributeError(name) from None
