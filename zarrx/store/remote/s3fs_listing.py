"""Listing an S3 bucket's keys for :class:`~zarrx.store.remote.fsspecstore.FsspecStore` over
s3fs, page by page (``list_objects_v2`` through s3fs's ``_call_s3``): a server that repeats
its pages, or goes on naming new keys past ``RemoteOptions.max_listed``, is an error, not a
listing that never ends; and a listing cut by a transient failure (throttling, a 5xx, a
dropped connection) goes on after the last key it took (S3's ``start-after``), so that each
page, not the whole listing, has the store's retries; the keys a server ignoring
``start-after`` sends again (not past the last taken) are left out, as a listing begun earlier
would have them."""
from __future__ import annotations

from typing import Any

from zarrx.store.remote import base as remote_base
from zarrx.store.remote.common import (TRANSIENT, Failure, first_line, listed_blank,
                                       listed_once, listed_too_many, retry_delay)

__all__ = ["s3_find"]


class _Listed:
    """What one listing has taken so far, kept across its attempts."""

    __slots__ = ("found", "seen", "last")

    def __init__(self) -> None:
        self.found: list[str] = []
        self.seen: set[str] = set()
        self.last: str | None = None       # the last key taken below the prefix


async def s3_find(store: Any, base: str, state: dict) -> list[str]:
    """The paths below ``base`` (``bucket/key``) in ``store``'s bucket, as ``fs._find``
    gives them. ``state`` is kept across the attempts of one listing: it resumes after the
    last key the attempts before took, at once when the failed attempt took keys (else after
    the store's retry wait)."""
    fs = store.fs
    bucket, _, key = base.partition("/")
    if getattr(fs, "version_aware", False):       # listed by versions: from the first page
        state.clear()
    listed = state.setdefault("s3", _Listed())
    while True:
        taken = len(listed.seen)
        try:
            await _pages(store, bucket, f"{key}/" if key else "", listed)
            return listed.found
        except Exception as exc:  # noqa: BLE001 - classified; re-raised unless resumed
            fail = exc if isinstance(exc, Failure) else store._failure(exc)
            if fail is None or fail.kind not in TRANSIENT or len(listed.seen) == taken \
                    or getattr(fs, "version_aware", False):
                raise
            await remote_base._pause(retry_delay(store.options, 0, fail.retry_after))


async def _pages(store: Any, bucket: str, prefix: str, listed: _Listed) -> None:
    fs = store.fs
    try:
        if getattr(fs, "version_aware", False):
            pages = ((info["name"], info["size"])
                     async for info in fs._iterdir(bucket, delimiter="", prefix=prefix))
        else:
            pages = _keys(fs, bucket, prefix, listed.last, store.options.max_listed)
        after = listed.last
        again: set[str] = set()     # keys at or before ``after``, sent by a server ignoring it
        most = store.options.max_listed
        async for name, _size in pages:
            shown = name.removeprefix(f"{store.root}/")
            if after is not None and name.partition("/")[2] <= after:
                listed_once(again, shown)       # taken by an earlier attempt: left out
                if len(again) > most:
                    raise listed_too_many(most)
                continue
            listed_once(listed.seen, shown)
            if len(listed.seen) > most:
                raise listed_too_many(most)
            listed.found.append(name)
            if name.partition("/")[2].startswith(prefix):
                listed.last = name.partition("/")[2]   # (outside: no place to go on after)
    except (KeyError, ValueError, TypeError) as exc:
        if type(exc).__module__.startswith(("botocore", "aiobotocore")):
            raise                   # botocore's own (its configuration): classified
        raise unreadable_page(exc) from None


async def _keys(fs: Any, bucket: str, prefix: str, after: str | None, most: int) -> Any:
    """``bucket/key`` and size of each key below ``prefix``, after ``after`` when given (an
    entry without either is a page that cannot be read, as for s3fs); more than ``most``
    pages naming no key, each saying the listing goes on, are a listing that never ends."""
    kwargs = dict(Bucket=bucket, Prefix=prefix, Delimiter="", **fs.req_kw)
    if after is not None:
        kwargs["StartAfter"] = after
    blank = 0
    while True:
        page = await fs._call_s3("list_objects_v2", **kwargs)
        items = page.get("Contents", [])
        for item in items:
            yield f"{bucket}/{item['Key']}", item["Size"]
        if not page.get("IsTruncated"):
            return
        blank += not items
        if blank > most:
            raise listed_blank(most)
        kwargs["ContinuationToken"] = page["NextContinuationToken"]


def unreadable_page(exc: Exception) -> Failure:
    """The failure of a listing page read without looking: a bare KeyError naming the field
    it lacks (NextContinuationToken for a page saying the listing goes on without one), or
    the ValueError of a Size or LastModified that is no number or date."""
    what = f"a field it lacks, {exc}" if isinstance(exc, KeyError) else first_line(exc)
    return Failure("bad_response", None, f"the server's listing cannot be read: {what}")
