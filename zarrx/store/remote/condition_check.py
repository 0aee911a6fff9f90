"""Finding out a server that ignores the conditions of writes or deletes, before the first
conditional write or delete of a store relies on them.

Some S3-compatible servers take ``If-Match`` / ``If-None-Match`` on a PUT, or ``If-Match`` on
a DELETE, and act anyway: a create that must be new, a replace of a version since replaced or
a delete of a version since replaced then overwrites or removes what another writer stored,
and the answer (200, 204) looks like success. A server may keep one condition and ignore
another (``If-Match`` kept, ``If-None-Match: *`` ignored). Nothing in those answers shows it,
so before its first conditional write or delete a store probes each condition once, on an
object of its own under a fresh name (``.zarrx-condition-probe-<random>``):

1. PUT it (no condition);
2. PUT it again with ``If-None-Match: *``: must be refused (it exists);
3. PUT it with ``If-Match`` on a version that cannot exist: must be refused;
4. DELETE it with ``If-Match`` on that version: must be refused;
5. DELETE it.

That is five requests per store, once. A server that acts on 2 or 3 ignores the conditions of
writes: ``set_if`` fails with a StoreError naming the URL (never a write without its
condition); one that acts on 4 ignores those of deletes: ``delete_if`` fails alike. Answers
that say nothing either way (a failure) leave the question open for the
next conditional write or delete of that kind (the probe is made again); a server that does
not implement a condition (HTTP 501) is told by the write or delete itself. What is found is
kept: a store probes a server once, and refuses each later conditional write or delete of a
kind found ignored without a request. The findings travel with the store when it is pickled
(a dask task's copy does not probe again) and are shared with the other stores of the process
opened with the same configuration: see :mod:`zarrx.store.remote.probe_findings`."""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

from zarrx.errors import StoreError
from zarrx.store.remote import probe_findings as findings
from zarrx.store.remote.common import Failure

__all__ = ["check_conditions", "PROBE_PREFIX", "PROBE_REQUESTS"]

PROBE_PREFIX = ".zarrx-condition-probe-"
#: the requests a probe makes of a server keeping every condition
PROBE_REQUESTS = 5
#: the version the probe is conditioned on: no server gives it to an object
_NO_VERSION = '"zarrx-no-such-version"'
#: the answers of a server refusing a request whose condition failed
_REFUSED = ("precondition", "missing", "exists")


async def check_conditions(store: Any, kind: str) -> None:
    """Once per store, before its first conditional write (``kind`` "write") or delete
    ("delete"): StoreError when the server acts despite a failed condition of that kind (see
    the module docstring); the probes of concurrent writes are one probe, and what a probe
    found for the store's configuration in this process, or what its pickle carried, is
    taken without a request (see :mod:`zarrx.store.remote.probe_findings`)."""
    if kind not in (store._conditions_found or {}):
        key = findings.key_of(store)
        findings.adopt(store, key)
        if kind not in (store._conditions_found or {}):
            loop = asyncio.get_running_loop()
            pending = store._conditions_probe if key is None else findings.shared_probe(key)
            if pending is None or pending.get_loop() is not loop:
                pending = asyncio.ensure_future(_probe(store, key))
                pending.add_done_callback(lambda f: f.cancelled() or f.exception())
                if key is None:
                    store._conditions_probe = pending
                else:
                    findings.set_shared_probe(key, pending)
            try:
                await asyncio.shield(pending)
            finally:
                if pending.done():
                    if key is None and store._conditions_probe is pending:
                        store._conditions_probe = None
                    elif key is not None:
                        findings.set_shared_probe(key, pending, done=True)
            findings.adopt(store, key)
    problem = (store._conditions_found or {}).get(kind)
    if problem is not None:
        raise StoreError(problem)


async def _attempt(store: Any, method: str, action: str, key: str, send: Any) -> str:
    """What became of one probe request: "done", "refused", "unsupported" or "unknown"."""
    try:
        await store._call(method, action, key, send)
    except Failure as fail:
        if fail.kind in _REFUSED:
            return "refused"
        return "unsupported" if fail.kind == "unsupported" else "unknown"
    except StoreError:
        return "unknown"                           # a failure says nothing: asked again later
    except Exception:  # noqa: BLE001 - a client that cannot send it (an old botocore without
        return "unknown"   # DeleteObject's IfMatch): the write or delete itself raises it
    return "done"


async def _probe(store: Any, where: str | None = None) -> None:
    key = PROBE_PREFIX + uuid.uuid4().hex
    empty = memoryview(b"")

    def put(mode: str | None) -> Any:
        return lambda: store._put(key, empty, mode)

    if await _attempt(store, "PUT", "write", key, put(None)) != "done":
        return                                     # nothing to probe on: asked again later
    try:
        create = await _attempt(store, "PUT", "write", key, put("create"))
        replace = await _attempt(store, "PUT", "write", key, put(_NO_VERSION))
        delete = await _attempt(store, "DELETE", "delete", key,
                                lambda: store._delete_if(key, _NO_VERSION))
    finally:
        try:
            await store._call("DELETE", "delete", key, lambda: store._delete([key]))
        except (Failure, StoreError):
            pass                                   # an error below names it
    found = dict(store._conditions_found or {})
    url = store._url("")
    if "done" in (create, replace):
        what = f"a PUT of {key!r} with If-None-Match: * over the object was written" \
            if create == "done" else \
            f"a PUT of {key!r} with If-Match on a version that does not exist was written"
        found["write"] = (
            f"{store!r}: cannot write conditionally at {url}: the server ignores the "
            f"conditions of writes ({what}, not refused), so a create or replace would "
            f"silently overwrite what another writer stored; open the store with "
            f"conditional_writes=False (partial writes of a shard then lock within this "
            f"process only)")
    elif "unknown" not in (create, replace):
        found["write"] = None                      # kept (or not offered: the write says)
    if delete == "done":
        found["delete"] = (
            f"{store!r}: cannot delete conditionally at {url}: the server ignores the "
            f"conditions of deletes (a DELETE of {key!r} with If-Match on a version that "
            f"does not exist removed it, not refused), so a delete would silently remove "
            f"what another writer stored since; open the store with "
            f"conditional_writes=False (partial writes of a shard then lock within this "
            f"process only)")
    elif delete != "unknown":
        found["delete"] = None
    store._conditions_found = found
    findings.record(where, found)
