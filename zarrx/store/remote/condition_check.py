"""Finding out a server that ignores the conditions of writes, before the first conditional
write of a store relies on them.

Some S3-compatible servers take ``If-Match`` / ``If-None-Match`` on a PUT and write anyway: a
create that must be new, or a replace of a version since replaced, then overwrites what
another writer stored, and the answer (200 with the new ETag) looks like success. Nothing in
that answer shows it, so before its first conditional write a store sends one PUT of an empty
object under a fresh name (``.zarrx-condition-probe-<random>``) conditioned on a version that
cannot exist (``If-Match``): a server keeping the condition refuses it (HTTP 412, or 404 for
the missing object) and nothing is written. One that writes it ignores conditions: the probe
object is deleted and the conditional write fails with a StoreError naming the URL, never a
write without its condition. Answers that say nothing either way (a refusal, a failure) leave
the question open for the next conditional write."""
from __future__ import annotations

import asyncio
import uuid
from typing import Any

from zarrx.errors import StoreError
from zarrx.store.remote.common import Failure

__all__ = ["check_conditions", "PROBE_PREFIX"]

PROBE_PREFIX = ".zarrx-condition-probe-"
#: the version the probe is conditioned on: no server gives it to an object
_NO_VERSION = '"zarrx-no-such-version"'


async def check_conditions(store: Any) -> None:
    """Once per store, before its first conditional write: StoreError when the server writes
    despite a failed ``If-Match`` (see the module docstring); the probes of concurrent writes
    are one request."""
    if store._conditions_kept:
        return
    pending = store._conditions_probe
    if pending is None or pending.get_loop() is not asyncio.get_running_loop():
        pending = store._conditions_probe = asyncio.ensure_future(_probe(store))
        pending.add_done_callback(lambda f: f.cancelled() or f.exception())
    try:
        await asyncio.shield(pending)
    finally:
        if pending.done() and store._conditions_probe is pending:
            store._conditions_probe = None


async def _probe(store: Any) -> None:
    key = PROBE_PREFIX + uuid.uuid4().hex
    try:
        await store._call("PUT", "write", key, lambda: store._put(key, memoryview(b""),
                                                                  _NO_VERSION))
    except Failure as fail:
        if fail.kind in ("precondition", "missing", "exists"):
            store._conditions_kept = True          # refused: the server keeps conditions
        return                                     # "unsupported": said by the write itself
    except StoreError:
        return                                     # a failure says nothing: asked again later
    try:
        await store._call("DELETE", "delete", key, lambda: store._delete([key]))
    except (Failure, StoreError):
        pass                                       # the error below names it
    raise StoreError(
        f"{store!r}: cannot write conditionally at {store._url('')}: the server ignores "
        f"the conditions of writes (a PUT of {key!r} with If-Match on a version that does "
        f"not exist was written, not refused), so a create or replace would silently "
        f"overwrite what another writer stored; open the store with conditional_writes=False "
        f"(partial writes of a shard then lock within this process only)")
