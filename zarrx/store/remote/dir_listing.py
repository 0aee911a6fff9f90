"""The immediate children of a folder (``Store.list_dir``) from one delimiter listing, where
a backend offers a bounded one: S3 through s3fs (``list_objects_v2`` with ``Delimiter="/"``,
page by page through s3fs's ``_call_s3``), whose answer names each key of the folder and each
folder below it once (S3's ``CommonPrefixes``), however many keys lie deeper. Opening a group
without consolidated metadata lists its children: one request, where the listing of every key
below it (every chunk of its arrays) took one request per 1000 keys.

The listing keeps the protections of the full one (:mod:`zarrx.store.remote.s3fs_listing`):
a server that repeats its pages, or goes on naming new entries past
``RemoteOptions.max_listed``, is an error, not a listing that never ends; an entry outside
the folder asked for is left out; a page that cannot be read is a bad response naming what it
lacks; a listing cut by a transient failure goes on after the last entry it took (S3's
``start-after``; the folder named by that entry, which the server names again, is not taken
twice), so that each page, not the whole listing, has the store's retries. A server that
ignores the delimiter lists every key below the folder: its children are read from them, as
from the full listing.

``ObjectStore`` over S3 skips over each child folder's keys
(:mod:`zarrx.store.remote.obstore_children`). Other backends list the folder's keys below it
and keep its children's names (``Store.list_dir``): obstore's delimiter listing takes every
page itself, with no bound on their number and no way to go on after a page cut without a
token, and a web server's folder pages are walked by zarrx."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from zarrx.store.base import check_prefix, key_problem
from zarrx.store.remote import base as remote_base
from zarrx.store.remote.common import (TRANSIENT, Failure, listed_blank, listed_once,
                                       listed_too_many, listed_twice, retry_delay)
from zarrx.store.remote.s3fs_listing import unreadable_page

__all__ = ["Children", "DirListing", "s3_children"]

Children = tuple[list[str], list[str]]


class DirListing:
    """``list_dir`` from the backend's delimiter listing, when ``_dir_lister()`` gives one
    (``lister(folder, state)``: the ``(keys, dirs)`` of ``folder``, run as ``_list`` is);
    else ``Store.list_dir`` (the names of the keys below the folder)."""

    def _dir_lister(self) -> Callable[[str, dict], Awaitable[Children]] | None:
        return None

    def list_dir(self, prefix: str) -> Children:
        lister = self._dir_lister()
        if lister is None:
            return super().list_dir(prefix)  # type: ignore[misc]
        check_prefix(prefix, self)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        if prefix and key_problem(prefix[:-1]) is not None:
            return [], []                   # no key lies below an unusable folder
        got = self._run(self._listing(prefix, lister))  # type: ignore[attr-defined]
        keys, dirs = got or ([], [])     # a missing folder (see ``RemoteStore._listing``)
        return sorted(set(keys)), sorted(set(dirs))


class _Taken:
    """What one listing has taken so far, kept across its attempts."""

    __slots__ = ("keys", "dirs", "seen", "last")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.dirs: list[str] = []
        self.seen: set[str] = set()
        self.last: str | None = None       # the greatest entry taken in the folder


async def s3_children(store: Any, folder: str, state: dict) -> Children:
    """The ``(keys, dirs)`` directly below the store's ``folder`` ("" or ending in "/") in
    its S3 bucket. ``state`` is kept across the attempts of one listing: it resumes after
    the last entry the attempts before took, at once when the failed attempt took entries
    (else after the store's retry wait)."""
    base = store._full(folder.rstrip("/")) if folder else store.root
    bucket, _, key = base.partition("/")
    prefix = f"{key}/" if key else ""
    taken = state.setdefault("dirs", _Taken())
    while True:
        before = len(taken.seen)
        try:
            await _pages(store, bucket, prefix, taken)
            return taken.keys, taken.dirs
        except FileNotFoundError as exc:
            fail = store._failure(exc)
            if fail is not None and fail.kind == "not_found":
                raise                  # s3fs's answer to a missing bucket: not an empty one
            return [], []
        except Exception as exc:  # noqa: BLE001 - classified; re-raised unless resumed
            fail = exc if isinstance(exc, Failure) else store._failure(exc)
            if fail is not None and fail.kind == "missing":
                return [], []          # a 404 naming no missing bucket: no such folder
            if fail is None or fail.kind not in TRANSIENT or len(taken.seen) == before:
                raise
            await remote_base._pause(retry_delay(store.options, 0, fail.retry_after))


async def _pages(store: Any, bucket: str, prefix: str, taken: _Taken) -> None:
    fs, most, after = store.fs, store.options.max_listed, taken.last
    again: set[str] = set()     # entries at or before ``after``, named again after the cut
    blank = 0                   # pages naming nothing new that said the listing goes on
    kwargs = dict(Bucket=bucket, Prefix=prefix, Delimiter="/", **fs.req_kw)
    if after is not None:
        kwargs["StartAfter"] = after
    try:
        while True:
            page = await fs._call_s3("list_objects_v2", **kwargs)
            entries = [(item["Key"], False) for item in page.get("Contents", [])]
            entries += [(item["Prefix"], True) for item in page.get("CommonPrefixes", [])]
            named = len(taken.seen) + len(again)
            for name, is_dir in entries:
                if not isinstance(name, str):
                    raise TypeError(f"a listed name is {type(name).__name__}, not text")
                inside = name.startswith(prefix)
                shown = name[len(prefix):] if inside else name
                if after is not None and name <= after:
                    # taken before the cut (the folder it was in, named again): left out,
                    # once; a server sending them again and again repeats itself
                    listed_once(again, shown)
                    if len(again) > most:
                        raise listed_too_many(most)
                    continue
                if name in taken.seen:
                    raise listed_twice(shown)
                taken.seen.add(name)
                if len(taken.seen) > most:
                    raise listed_too_many(most)
                if inside and (taken.last is None or name > taken.last):
                    taken.last = name  # an entry outside the folder is no place to go on
                _take(taken, shown if inside else None, is_dir)
            if not page.get("IsTruncated"):
                return
            if len(taken.seen) + len(again) == named:
                blank += 1
                if blank > most:
                    raise listed_blank(most)
            kwargs["ContinuationToken"] = page["NextContinuationToken"]
    except (KeyError, ValueError, TypeError) as exc:
        if type(exc).__module__.startswith(("botocore", "aiobotocore")):
            raise                   # botocore's own (its configuration): classified
        raise unreadable_page(exc) from None


def _take(taken: _Taken, rest: str | None, is_dir: bool) -> None:
    """Record the entry named ``rest`` below the folder (None: outside it, left out): a key,
    or the first folder of a name that goes on below it. A folder's own marker (an empty
    ``folder/`` object) is no key."""
    if not rest:
        return
    head, sep, _ = rest.partition("/")
    if sep:
        taken.dirs.append(head)
    elif not is_dir:
        taken.keys.append(head)
