"""The immediate children of a folder (``Store.list_dir``) from one delimiter listing, where
a backend offers a bounded one: S3 through s3fs (``list_objects_v2`` with ``Delimiter="/"``,
page by page through s3fs's ``_call_s3``) and GCS through gcsfs (``objects.list`` with
``delimiter=/``: :mod:`zarrx.store.remote.gcsfs_listing`), whose answer names each key of the
folder and each folder below it once (S3's ``CommonPrefixes``, GCS's ``prefixes``), however
many keys lie deeper. Opening a group without consolidated metadata lists its children: one
request, where the listing of every key below it (every chunk of its arrays) took one request
per 1000 keys.

One walk (:func:`children`) serves both and keeps the protections of the full listing
(:mod:`zarrx.store.remote.s3fs_listing`): a server that repeats its pages, or goes on naming
new entries past ``RemoteOptions.max_listed`` (or more than that many pages naming nothing
new), is an error, not a listing that never ends; an entry outside the folder asked for is
left out; a page that cannot be read is a bad response naming what it lacks; a listing cut by
a transient failure goes on where it was cut, so that each page, not the whole listing, has
the store's retries: on S3 after the last entry it took (``start-after``; the folder named by
that entry, which the server names again, is not taken twice), on GCS from the token of the
page it was cut at. A server that ignores the delimiter lists every key below the folder: its
children are read from them, as from the full listing (folder markers skipped).

``ObjectStore`` over S3 skips over each child folder's keys
(:mod:`zarrx.store.remote.obstore_children`). Other backends list the folder's keys below it
and keep its children's names (``Store.list_dir``): obstore's delimiter listing takes every
page itself, with no bound on their number and no way to go on after a page cut without a
token, and a web server's folder pages are walked by zarrx."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from zarrx.store.base import check_prefix, key_problem
from zarrx.store.remote import base as remote_base
from zarrx.store.remote.common import (TRANSIENT, Failure, listed_blank, listed_once,
                                       listed_too_many, listed_twice, retry_delay)
from zarrx.store.remote.s3fs_listing import unreadable_page

__all__ = ["Children", "DirListing", "Pages", "children", "s3_children"]

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

    __slots__ = ("keys", "dirs", "seen", "last", "token")

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.dirs: list[str] = []
        self.seen: set[str] = set()
        self.last: str | None = None       # the greatest entry taken in the folder
        self.token: str | None = None      # the next page's token (pages resumed by token)


class Pages(Protocol):
    """A backend's delimiter listing of one folder (``prefix``: "" or ending in "/").
    ``fetch(after, token)`` asks for a page (after the entry ``after``, or the page of
    ``token``; both None: the first), its failures raised as the backend raises them;
    ``read(page)`` gives its ``(name, is_dir)`` entries and the next page's token (None: the
    last page), raising KeyError, ValueError or TypeError for a page it cannot read. With
    ``by_token`` a cut listing asks again for the page it was cut at (by its token), else
    after the last entry taken (``start-after``)."""

    by_token: bool

    async def fetch(self, after: str | None, token: str | None) -> Any: ...

    def read(self, page: Any) -> tuple[list[tuple[str, bool]], str | None]: ...


async def s3_children(store: Any, folder: str, state: dict) -> Children:
    """The ``(keys, dirs)`` directly below the store's ``folder`` ("" or ending in "/") in
    its S3 bucket (see :func:`children`)."""
    return await children(store, folder, state, _S3Pages)


async def children(store: Any, folder: str, state: dict,
                   pages: Callable[[Any, str, str], Pages]) -> Children:
    """The ``(keys, dirs)`` directly below the store's ``folder`` ("" or ending in "/") in
    its bucket, from the delimiter listing ``pages(store, bucket, prefix)``. ``state`` is
    kept across the attempts of one listing: it resumes where the attempts before stopped,
    at once when the failed attempt took entries (else after the store's retry wait)."""
    base = store._full(folder.rstrip("/")) if folder else store.root
    bucket, _, key = base.partition("/")
    prefix = f"{key}/" if key else ""
    taken = state.setdefault("dirs", _Taken())
    source = pages(store, bucket, prefix)
    while True:
        before = len(taken.seen)
        try:
            await _walk(store, source, prefix, taken)
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


async def _walk(store: Any, source: Pages, prefix: str, taken: _Taken) -> None:
    most = store.options.max_listed
    after = None if source.by_token else taken.last
    token = taken.token if source.by_token else None
    again: set[str] = set()     # entries at or before ``after``, named again after the cut
    blank = 0                   # pages naming nothing new that said the listing goes on
    while True:
        page = await source.fetch(after, token)
        try:
            entries, token = source.read(page)
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
        except (KeyError, ValueError, TypeError) as exc:
            raise unreadable_page(exc) from None
        if token is None:
            return
        if source.by_token:
            taken.token = token        # this page is taken: a cut listing asks for the next
        if len(taken.seen) + len(again) == named:
            blank += 1
            if blank > most:
                raise listed_blank(most)


class _S3Pages:
    """S3's delimiter listing through s3fs (``list_objects_v2`` through ``_call_s3``)."""

    by_token = False

    def __init__(self, store: Any, bucket: str, prefix: str) -> None:
        self.fs = store.fs
        self.kwargs = dict(Bucket=bucket, Prefix=prefix, Delimiter="/", **self.fs.req_kw)

    async def fetch(self, after: str | None, token: str | None) -> Any:
        kwargs = dict(self.kwargs)
        if after is not None:
            kwargs["StartAfter"] = after
        if token is not None:
            kwargs["ContinuationToken"] = token
        return await self.fs._call_s3("list_objects_v2", **kwargs)

    @staticmethod
    def read(page: Any) -> tuple[list[tuple[str, bool]], str | None]:
        entries = [(item["Key"], False) for item in page.get("Contents", [])]
        entries += [(item["Prefix"], True) for item in page.get("CommonPrefixes", [])]
        return entries, page["NextContinuationToken"] if page.get("IsTruncated") else None


def _take(taken: _Taken, rest: str | None, is_dir: bool) -> None:
    """Record the entry named ``rest`` below the folder (None: outside it, left out): a key,
    or the first folder of a name that goes on below it (a server ignoring the delimiter
    names every key below the folder). A folder marker (an empty ``name/`` object) is no key,
    and names no folder unless the server names it as one: the listing of every key skips
    it."""
    if not rest:
        return
    head, sep, _ = rest.partition("/")
    if is_dir:
        taken.dirs.append(head)
    elif not rest.endswith("/"):               # (a marker of a folder below: no key)
        (taken.dirs if sep else taken.keys).append(head)
