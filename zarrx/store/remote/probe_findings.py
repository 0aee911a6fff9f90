"""What a condition probe (:mod:`zarrx.store.remote.condition_check`) found, kept beyond the
store object that made it: in the store's pickle, and for the other stores of the process
opened with the same configuration.

A finding describes the server a configuration reaches, so it is keyed by that configuration
as a whole: the store's class, its URL (scheme, bucket, path), every storage option (endpoint,
region, client options, proxies; credentials too, hashed with the rest), its
:class:`RemoteOptions`, and the environment variables a backend reads its endpoint, region or
proxy from (``AWS_*``, ``AZURE_*``, ``GOOGLE_*``, ``STORAGE_*``, ``FSSPEC_*``, ``*_PROXY``;
those naming secrets are left out). The key is a SHA-256 digest, never shown.

- **Pickles.** A store that has probed (or whose configuration this process has probed)
  carries the findings and their key; the copy takes them only when its own key is the same
  (the same configuration, under the same endpoint environment), so a copy in a process whose
  environment names another endpoint probes again. A probe that has not run is not carried.
- **Within a process** the findings are shared between stores made from a URL with the same
  key. A store made from a filesystem or client object shares nothing and carries nothing:
  what that object reaches is not known from its configuration alone.
- Where findings disagree, a kind found ignored wins over a kind found kept.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from zarrx import _fork

__all__ = ["store_key", "key_of", "adopt", "record", "carried", "take_carried", "shared_probe",
           "set_shared_probe", "not_carried"]

#: the name under which a pickled store's state carries its findings
STATE_KEY = "_zarrx_condition_findings"

_PREFIXES = ("AWS_", "AZURE_", "GOOGLE_", "GCS_", "GCE_", "STORAGE_", "FSSPEC_",
             "OBJECT_STORE_")
_PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")
_SECRET = ("SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "KEY", "SAS", "SIGNATURE",
           "PRIVATE", "SESSION")

_lock = _fork.lock()
_found: dict[str, dict[str, str | None]] = {}     # key -> findings (kind -> problem or None)
_probes: dict[str, Any] = {}                       # key -> the probe under way (a future)
_plain = threading.local()                         # .on: pickles carry no findings


class _Unknowable(Exception):
    pass


def _canon(value: object) -> object:
    """``value`` as plain nested tuples, or _Unknowable for what has no plain form."""
    if value is None or isinstance(value, (str, bool, int, float, bytes)):
        return (type(value).__name__, value)
    if isinstance(value, dict):
        items = [(_canon(k), _canon(v)) for k, v in value.items()]
        return ("dict", tuple(sorted(items, key=repr)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_canon(v) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple((f.name, _canon(getattr(value, f.name)))
                                            for f in dataclasses.fields(value)))
    raise _Unknowable


def _environment() -> tuple:
    """The variables a backend may read its endpoint, region or proxy from (no secrets)."""
    from zarrx.store.remote.urls import redact
    out = []
    for name, value in os.environ.items():
        upper = name.upper()
        if upper in _PROXIES:
            out.append((name, redact(value) if "://" in value else value))
        elif upper.startswith(_PREFIXES) and not any(s in upper for s in _SECRET):
            out.append((name, value))
    return tuple(sorted(out))


def store_key(store: Any) -> str | None:
    """The key of ``store``'s findings: None for a store made from an object, or from options
    with no plain form (shared with no other store, carried by no pickle)."""
    config = dict(store._config())
    source = config.get("fs", config.get("store"))
    if not isinstance(source, str):
        return None
    config.pop("read_only", None)
    try:
        plain = _canon((type(store).__module__, type(store).__name__, config,
                        _environment()))
    except _Unknowable:
        return None
    return hashlib.sha256(repr(plain).encode()).hexdigest()


_UNSET = object()


def key_of(store: Any) -> str | None:
    """:func:`store_key`, worked out once per store (at its first probe, pickle or unpickle:
    the configuration its findings were found under)."""
    key = getattr(store, "_conditions_key", _UNSET)
    if key is _UNSET:
        key = store._conditions_key = store_key(store)
    return key


def _merge(a: dict | None, b: dict | None) -> dict:
    out = dict(a or {})
    for kind, problem in (b or {}).items():
        if out.get(kind) is None:
            out[kind] = problem                     # a kind found ignored is kept ignored
    return out


def adopt(store: Any, key: str | None) -> None:
    """Take into ``store`` what this process found for ``key``."""
    if key is None:
        return
    with _lock:
        shared = _found.get(key)
    if shared:
        store._conditions_found = _merge(store._conditions_found, shared)


def record(key: str | None, found: dict) -> None:
    """Keep ``found`` for the other stores of this process with ``key``."""
    if key is None or not found:
        return
    with _lock:
        _found[key] = _merge(_found.get(key), found)


def shared_probe(key: str) -> Any:
    with _lock:
        return _probes.get(key)


def set_shared_probe(key: str, pending: Any, done: bool = False) -> None:
    """Register the probe under way for ``key``; ``done``: forget ``pending`` if it is the one."""
    with _lock:
        if not done:
            _probes[key] = pending
        elif _probes.get(key) is pending:
            del _probes[key]


def carried(store: Any) -> tuple[str, dict] | None:
    """What a pickle of ``store`` carries: its key and findings (None: nothing found)."""
    if getattr(_plain, "on", False):
        return None
    key = key_of(store)
    if key is None:
        return None
    with _lock:
        found = _merge(store._conditions_found, _found.get(key))
    return (key, found) if found else None


def take_carried(store: Any, state: object) -> None:
    """In an unpickled ``store``: take the findings its pickle carried when its own key is
    the one they were found under."""
    if not (isinstance(state, tuple) and len(state) == 2 and isinstance(state[1], dict)):
        return
    key = key_of(store)
    if key is None or key != state[0]:
        return                                       # another configuration: probe again
    found = {k: v for k, v in state[1].items()
             if k in ("write", "delete") and (v is None or isinstance(v, str))}
    store._conditions_found = _merge(store._conditions_found, found)
    record(key, found)


@contextlib.contextmanager
def not_carried() -> Iterator[None]:
    """Pickles of stores made in this block carry no findings (a pickle naming a store, as a
    dask token, is the same before and after its probe)."""
    before = getattr(_plain, "on", False)
    _plain.on = True
    try:
        yield
    finally:
        _plain.on = before


@_fork.at_fork
def _after_fork() -> None:
    _probes.clear()          # futures of the parent's event loops; findings stay true

