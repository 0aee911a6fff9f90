"""In-process locks keyed by (store, key): threads of one process that update the same stored
object (a read-modify-write of a shard or of a partly written chunk) take turns.

One lock per object being updated, taken on first use and given back when its last user leaves
(a few given-back locks are kept for reuse, so writing many small chunks makes no lock per
chunk), so updates of different objects never wait for each other (a remote write can hold its object's
lock for seconds). A thread never holds two of them (a write operation holds one object's lock
at a time, and never while it waits for pool work), so they cannot deadlock. Processes and
machines are kept apart by the store's generations instead (conditional writes).
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from zarrx import _fork
from zarrx.store.base import Store

__all__ = ["KeyedLocks", "KeyedSharedLocks", "object_lock", "with_object_lock",
           "with_objects_lock"]

#: how many unused locks a :class:`KeyedLocks` keeps for reuse
SPARE_LOCKS = 64

R = TypeVar("R")


class _Held:
    """The lock of one name and how many threads hold or wait for it; ``names``: the names
    it is the lock of when one thread took it for many at once (see
    :meth:`KeyedLocks.run_all`), else None."""

    __slots__ = ("lock", "users", "names")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.names: Any = None


class _KeyedTable:
    """The table of a keyed lock: one entry per name in use, behind ``_guard``; a forked child
    starts with an empty table (a lock held by another thread at the fork stays held)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._table: dict[Hashable, Any] = {}
        _fork.track(self)

    def _after_fork(self) -> None:
        self._guard, self._table = threading.Lock(), {}

    def __len__(self) -> int:
        """How many names have a lock now (none once every holder has left)."""
        with self._guard:
            return len(self._table)

    def _join(self, name: Hashable, make: Any) -> Any:
        """The entry of ``name`` (made by ``make()`` if there is none), counting one more user."""
        with self._guard:
            held = self._table.get(name)
            if held is None:
                held = self._table[name] = make()
            held.users += 1
        return held

    def _leave(self, name: Hashable, held: Any) -> None:
        """One user of ``held``, the entry of ``name``, fewer; the entry goes with the last
        (with the entries of every name it is the lock of)."""
        with self._guard:
            held.users -= 1
            if not held.users:
                _drop(self._table, name, held)
                self._given_back(held)

    def _given_back(self, held: Any) -> None:
        """``held``, unheld and left by its last user (under ``_guard``): kept for reuse or not."""


class KeyedLocks(_KeyedTable):
    """``with locks(name):`` holds the lock of ``name`` (any hashable): one lock per name in
    use, taken on first use and given back when its last user leaves, so different names never
    wait for each other. Given-back locks (unheld, with no user) are reused, up to
    ``SPARE_LOCKS`` of them."""

    def __init__(self) -> None:
        super().__init__()
        self._spare: list[_Held] = []

    def _after_fork(self) -> None:
        super()._after_fork()
        self._spare = []

    def __call__(self, name: Hashable) -> _Holding:
        return _Holding(self, name)

    def _join(self, name: Hashable, make: Any = None) -> _Held:
        return super()._join(name, self._spare_or_new)

    def _spare_or_new(self) -> _Held:
        return self._spare.pop() if self._spare else _Held()

    def _given_back(self, held: Any) -> None:
        if len(self._spare) < SPARE_LOCKS:            # released by its last holder already
            self._spare.append(held)

    def run(self, name: Hashable, fn: Callable[..., R], *args: Any) -> R:
        """``fn(*args)`` holding the lock of ``name``: ``with self(name):`` in fewer calls,
        for work done once per chunk."""
        guard = self._guard
        with guard:
            held = self._table.get(name)
            if held is None:
                held = self._table[name] = self._spare.pop() if self._spare else _Held()
            held.users += 1
        try:
            with held.lock:
                return fn(*args)
        finally:
            with guard:
                held.users -= 1
                if not held.users:
                    if held.names is None:
                        del self._table[name]
                    else:
                        _drop(self._table, name, held)
                    if len(self._spare) < SPARE_LOCKS:
                        self._spare.append(held)

    def run_all(self, names: list, fn: Callable[..., R], *args: Any) -> R | None:
        """``fn(*args)`` holding the locks of all ``names`` at once, when no thread holds or
        waits for any of them: one lock then stands for all of them (a thread arriving for
        one of them waits for it, as for the lock of that name), so the thread still holds a
        single lock, and taking it costs no call per name. Returns ``_BUSY`` without calling
        ``fn`` when one of them is in use (the caller then takes them one at a time)."""
        guard, table = self._guard, self._table
        with guard:
            if not table.keys().isdisjoint(names):
                return _BUSY                    # type: ignore[return-value]
            held = self._spare.pop() if self._spare else _Held()
            held.names = names
            held.users = len(names)             # one user per name, until fn is done
            table.update(dict.fromkeys(names, held))
        try:
            with held.lock:
                return fn(*args)
        finally:
            with guard:
                held.users -= len(names)
                if not held.users:
                    _drop(table, None, held)
                    if len(self._spare) < SPARE_LOCKS:
                        self._spare.append(held)


#: what :meth:`KeyedLocks.run_all` returns when some name is in use
_BUSY = object()


def _drop(table: dict, name: Hashable, held: Any) -> None:
    """Remove the entry of ``name`` (held by ``held``), or of every name ``held`` stands for,
    from ``table``, whose guard the caller holds."""
    names = held.names
    if names is None:
        del table[name]
        return
    held.names = None
    for n in names:
        del table[n]


class _Holding:
    __slots__ = ("_locks", "_name", "_held")

    def __init__(self, locks: KeyedLocks, name: Hashable) -> None:
        self._locks, self._name = locks, name

    def __enter__(self) -> None:
        self._held = held = self._locks._join(self._name, _Held)
        try:
            held.lock.acquire()
        except BaseException:                # interrupted while waiting: not a user any more
            self._locks._leave(self._name, held)
            raise

    def __exit__(self, *exc: object) -> None:
        self._held.lock.release()
        self._locks._leave(self._name, self._held)


class _Modes:
    """The shared/exclusive lock of one name: the threads holding it shared (and how often), the
    thread holding it exclusively (and how often), the threads waiting for it exclusively and
    shared, the exclusive releases so far (``era``), the shared waiters a release let in that
    have not gone in yet (``admitted``), and the users. ``mutex`` guards the fields; ``cond``
    (over it) wakes waiters."""

    __slots__ = ("mutex", "cond", "shared", "owner", "depth", "waiting", "blocked", "era",
                 "admitted", "users", "names")

    def __init__(self) -> None:
        self.mutex = threading.Lock()
        self.cond = threading.Condition(self.mutex)
        self.shared: dict[int, int] = {}
        self.owner: int | None = None
        self.depth = 0
        self.waiting = 0
        self.blocked = 0
        self.era = 0
        self.admitted = 0
        self.users = 0
        self.names = None


class KeyedSharedLocks(_KeyedTable):
    """``with locks.shared(name):`` and ``with locks.exclusive(name):``: many threads may hold
    the lock of ``name`` shared at once, one thread exclusively, and no one shared then. A
    thread waiting for it exclusively goes before threads arriving for it shared, so a stream
    of shared holders never keeps it waiting; and the threads waiting for it shared when an
    exclusive holder lets it go go before the next exclusive holder, so a stream of exclusive
    holders never keeps them waiting either; a thread already holding the lock (either way)
    takes it again shared at once, and exclusively again if it holds it exclusively. One lock
    per name in use, dropped when its last user leaves; a forked child starts with none held."""

    def shared(self, name: Hashable) -> _ModeHolding:
        return _ModeHolding(self, name, False)

    def exclusive(self, name: Hashable) -> _ModeHolding:
        return _ModeHolding(self, name, True)


class _ModeHolding:
    __slots__ = ("_locks", "_name", "_exclusive", "_held")

    def __init__(self, locks: KeyedSharedLocks, name: Hashable, exclusive: bool) -> None:
        self._locks, self._name, self._exclusive = locks, name, exclusive

    def __enter__(self) -> None:
        self._held = held = self._locks._join(self._name, _Modes)
        me = threading.get_ident()
        try:
            with held.mutex:
                if self._exclusive:
                    if held.owner != me:
                        if held.owner is not None or held.shared or held.admitted:
                            held.waiting += 1
                            try:
                                while held.owner is not None or held.shared or held.admitted:
                                    held.cond.wait()
                            finally:
                                held.waiting -= 1
                                if held.blocked:    # given up (interrupted): they may go on
                                    held.cond.notify_all()
                        held.owner = me
                    held.depth += 1
                else:
                    if held.owner != me and me not in held.shared \
                            and (held.owner is not None or held.waiting):
                        held.blocked += 1
                        era = held.era
                        try:        # until free, or let in by an exclusive holder's release
                            while held.owner is not None or (held.waiting and held.era == era):
                                held.cond.wait()
                        finally:
                            held.blocked -= 1
                            if held.era != era:
                                held.admitted -= 1
                                if not held.admitted:
                                    held.cond.notify_all()
                    held.shared[me] = held.shared.get(me, 0) + 1
        except BaseException:                # interrupted while waiting: not a user any more
            self._locks._leave(self._name, held)
            raise

    def __exit__(self, *exc: object) -> None:
        held = self._held
        with held.mutex:
            if self._exclusive:
                held.depth -= 1
                if not held.depth:
                    held.owner = None
                    held.era += 1
                    held.admitted = held.blocked    # they go in before the next exclusive
            else:
                me = threading.get_ident()
                held.shared[me] -= 1
                if not held.shared[me]:
                    del held.shared[me]
            if held.waiting or held.blocked:
                held.cond.notify_all()
        self._locks._leave(self._name, held)


_objects = KeyedLocks()


def _identity(store: Store) -> object:
    """Stores that name the same objects share an identity (two LocalStores of one root, two
    stores over one backend object)."""
    shared = store.shared_identity
    if shared is not None:
        return shared
    root = getattr(store, "root", None)
    if isinstance(root, str):
        return (type(store).__name__, root)
    inner = getattr(store, "inner", None)
    if isinstance(inner, Store):
        return _identity(inner)
    return id(store)


def object_lock(store: Store, key: str) -> _Holding:
    """``with object_lock(store, key):`` holds the lock of that stored object."""
    return _objects((_identity(store), key))


def with_object_lock(store: Store, key: str, fn: Callable[..., R], *args: Any) -> R:
    """``fn(*args)`` holding the lock of the object ``key`` of ``store`` (as
    :func:`object_lock`)."""
    return _objects.run((_identity(store), key), fn, *args)


def with_objects_lock(store: Store, keys: list[str], fn: Callable[..., R], *args: Any) -> bool:
    """``fn(*args)`` holding the locks of all the objects ``keys`` of ``store`` at once (see
    :meth:`KeyedLocks.run_all`): True once done, False (``fn`` not called) when some of them
    are in use, to be taken one at a time with :func:`with_object_lock`."""
    ident = _identity(store)
    names = list(dict.fromkeys([(ident, k) for k in keys]))     # each object once
    return _objects.run_all(names, fn, *args) is not _BUSY


def held_objects() -> int:
    """How many objects have a lock now (for tests: none once every update has finished)."""
    return len(_objects)
