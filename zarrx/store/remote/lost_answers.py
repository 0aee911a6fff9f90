"""Conditional writes whose answer was lost.

A conditional PUT whose fate is unknown (a timeout, a dropped connection, HTTP 5xx: the
server may have written the object before the answer went astray) is sent again, by the
store's retries or by the HTTP client's own (aiohttp sends a request again at once when a
kept-alive connection drops), and that try then finds its own write there and fails its
condition: HTTP 412 for If-Match (the ETag moved on to the object just written) and for
If-None-Match ``*`` (the object now exists). Taken for another writer's change, that made a
read-modify-write apply its change twice (``append`` claimed its rows again, leaving the
first rows it claimed at the fill value) and a creation refuse a node it had just made.

So each conditional PUT carries a random tag as user metadata (``x-amz-meta-zarrxwrite``
on S3; a name of letters only, as Azure takes only C# identifiers there and some proxies drop
header names holding ``_``), and a failed condition looks at the object (one HEAD, which
the conflict's message needed anyway, so it costs no request): when it holds this write's
tag, the write was made and succeeds with the object's ETag (or, from a server whose HEAD
sends none, with the generation ``set_if`` asks for). Otherwise the failure stands, with the
ETag found (if the lost write was made, another writer has built on it since; the caller's
retry sees the object as it is now).
"""
from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from zarrx.store.remote.common import Failure

if TYPE_CHECKING:
    from zarrx.store.remote.base import RemoteStore

__all__ = ["WRITE_TAG", "put"]

#: the user metadata naming a conditional write (``x-amz-meta-zarrxwrite`` on S3,
#: ``x-goog-meta-`` on GCS, ``x-ms-meta-`` on Azure)
WRITE_TAG = "zarrxwrite"


async def put(store: RemoteStore, key: str, data: memoryview, mode: str | None) -> str | None:
    """``store._put(key, data, mode)`` with the store's retries; a conditional one (``mode``
    not None) carries a tag, and a failed condition is this write's success when the object
    holds its tag (else the Failure, its ``found`` set). The new ETag."""
    if mode is None:
        return await store._call("PUT", "write", key, lambda: store._put(key, data, None))
    tag = secrets.token_hex(12)
    try:
        return await store._call("PUT", "write", key, lambda: store._put(key, data, mode, tag))
    except Failure as fail:
        if fail.kind not in ("precondition", "exists"):
            raise
        try:
            _, etag, found = await store._call("HEAD", "read", key,
                                               lambda: store._described(key))
        except Failure as gone:           # missing: deleted since
            fail.found = (None,) if gone.kind == "missing" else None
            raise fail from None
        if found == tag:                  # made (no ETag from the server: set_if asks)
            return etag
        if etag is None:                  # a server sending none: set_if asks again
            raise
        fail.found = (etag,)
        raise
