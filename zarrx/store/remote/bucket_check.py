"""Telling a missing key from a missing bucket after a HEAD: a HEAD's answer has no body, so
S3's 404 to one says neither ``NoSuchKey`` nor ``NoSuchBucket``, and ``exists`` or
``generation`` would answer "absent" where a read of the same key raises
:class:`~zarrx.errors.RemoteNotFoundError`. The first HEAD of a store answered 404 is followed
by a GET of one byte of that key, whose answer names the error; once it shows the bucket is
there, the store remembers it and no HEAD is followed again. A HEAD of a key that exists is
never followed."""
from __future__ import annotations

from typing import Any

from zarrx.errors import RemoteNotFoundError, StoreError
from zarrx.store.remote.common import Failure

__all__ = ["check_bucket"]


async def check_bucket(store: Any, key: str) -> None:
    """After a HEAD of ``key`` answered 404: RemoteNotFoundError (naming ``key``) when the
    store's bucket or container is missing, as a read of ``key`` raises it; nothing when it is
    there (then remembered) or when the answer does not tell (a refusal, a failure)."""
    if not getattr(store, "has_buckets", False) or getattr(store, "_bucket_seen", False):
        return
    try:
        await store._call("GET", "read", key, lambda: store._get(key, 0, 1, None, None))
    except Failure as fail:
        if fail.kind not in ("missing", "range"):   # a 416: an empty object written since
            return
    except RemoteNotFoundError:
        raise
    except StoreError:
        return
    store._bucket_seen = True
