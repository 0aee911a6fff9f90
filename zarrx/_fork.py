"""What a process forked at any moment (``os.fork``, ``multiprocessing``'s fork method, dask's
multiprocessing scheduler) inherits from zarrx, made usable again in the child.

The child has only the thread that forked. A lock another thread held at the fork stays held
in the child for good, and the data it guards may be half updated. So every lock zarrx keeps
beyond one call (in a module, in a store, in a cache) is made here, and one hook, run in the
child right after the fork, makes each of them again unlocked (in place: the objects sharing a
lock keep sharing it). Whoever owns guarded data is told whether its lock was held, and then
drops or repairs what may be half updated; thread pools and I/O threads, which the child does
not have, are dropped and made again on first use.

- :func:`lock`, :func:`rlock`: a module's lock, made again in a child.
- :func:`cached_property`: ``functools.cached_property``, whose one lock per property (Python
  before 3.12, held while a value is computed) is made again in a child.
- :func:`at_fork`: a module's function, run in a child (drop a pool, clear a cache).
- :func:`track`: ``owner._after_fork()`` runs in a child while ``owner`` lives.
- :func:`reinit`: what an owner calls on its lock there: True if it was held at the fork.
"""
from __future__ import annotations

import functools
import os
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["at_fork", "cached_property", "lock", "reinit", "rlock", "track"]

F = TypeVar("F", bound=Callable[[], None])

_locks: list[Any] = []                        # module locks (they live as long as the process)
_hooks: list[Callable[[], None]] = []         # module functions, in the order registered
_owners: dict[int, weakref.ref] = {}          # id -> weak reference to an object with _after_fork


def reinit(made: Any) -> bool:
    """Make ``made`` (a lock or an ``RLock``) unlocked again in place, in a forked child; True
    if a thread held it at the fork (what it guards may be half updated)."""
    held = not made.acquire(blocking=False)     # the child's one thread: it never waits
    if not held:
        made.release()
    made._at_fork_reinit()
    return held


def lock() -> threading.Lock:
    """A module lock that a forked child has unlocked."""
    made = threading.Lock()
    _locks.append(made)
    return made


def rlock() -> threading.RLock:
    """A module ``RLock`` that a forked child has unlocked."""
    made = threading.RLock()
    _locks.append(made)
    return made


def cached_property(func: Callable[[Any], Any]) -> functools.cached_property:
    """``functools.cached_property(func)``; before Python 3.12 it holds one lock (for every
    instance of the class) while it computes a value, and a forked child gets it unlocked."""
    prop = functools.cached_property(func)
    made = getattr(prop, "lock", None)
    if made is not None:
        _locks.append(made)
    return prop


def at_fork(fn: F) -> F:
    """Run ``fn()`` in every forked child (after the locks are made again)."""
    _hooks.append(fn)
    return fn


def track(owner: object) -> None:
    """Call ``owner._after_fork()`` in every child forked while ``owner`` lives."""
    key = id(owner)

    def gone(ref: weakref.ref, key: int = key) -> None:
        if _owners.get(key) is ref:
            del _owners[key]

    _owners[key] = weakref.ref(owner, gone)


def _after_fork_in_child() -> None:
    for made in _locks:
        made._at_fork_reinit()
    for fn in _hooks:
        _run(fn)
    for ref in list(_owners.values()):
        owner = ref()
        if owner is not None:
            _run(owner._after_fork)


def _run(fn: Callable[[], None]) -> None:
    """``fn()``; an error is printed and the next one runs, as ``os.register_at_fork`` does."""
    try:
        fn()
    except Exception:  # noqa: BLE001 - nothing in a fork hook can raise to a caller
        traceback.print_exc()


os.register_at_fork(after_in_child=_after_fork_in_child)
