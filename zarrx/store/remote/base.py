"""What every remote store shares: the Store API (with generations) over a few asynchronous
request primitives a backend implements.

A backend (:class:`~zarrx.store.remote.objectstore.ObjectStore`,
:class:`~zarrx.store.remote.fsspecstore.FsspecStore`) implements ``_get``, ``_head``, ``_put``,
``_delete``, ``_delete_if``, ``_list`` and ``_failure`` (its exceptions as a :class:`Failure`).
Everything else is here, or in the parts it is made of (:mod:`~zarrx.store.remote.reads`,
:mod:`~zarrx.store.remote.writes`, :mod:`~zarrx.store.remote.views`):

- **Requests.** A synchronous call runs one coroutine on an event loop; all the requests of a
  batch are issued concurrently, at most ``options.in_flight`` at a time for the store.
- **Reads** (planned in :mod:`zarrx.store.remote.reads`). Nearby ranges of one object are
  coalesced (``coalesce_gap``, ``max_request``); large reads are split into parallel parts
  (``part_size``); a whole object is read as its first part and, when larger, the remaining
  parts conditioned on the first part's ETag.
- **Generations** are ETags. Conditioned reads send If-Match; conditional writes send
  If-None-Match ``*`` (create) or If-Match (replace) (:mod:`zarrx.store.remote.writes`); HTTP
  412 becomes ConflictError.
- **Failures.** Timeouts, dropped connections, HTTP 429 and 5xx are retried with backoff
  (or after the wait a ``Retry-After`` header asks for, when the backend shows it);
  everything else fails at once. Each error names the store, the key and its URL (never
  credentials). A missing key reads as None.
"""
from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator
from typing import TypeVar

from zarrx import _fork
from zarrx.errors import (ConflictError, ListingUnsupportedError, RemoteAccessError, RemoteError,
                          RemoteNotFoundError, StoreError)
from zarrx.store.base import (ByteRange, ObjectSnapshot, Request, Store, Versioned,
                              check_generation, check_path_key, check_prefix, conflict,
                              key_problem, sequence_of)
from zarrx.store.remote import aio, probe_findings
from zarrx.store.remote.common import (CREDENTIAL_CODES, TRANSIENT, ETag, Failure, Got, OnMeta,
                                       asked, as_view, etag_generation, gather_all,
                                       if_match_of, kept_changing, READ_ATTEMPTS,
                                       forbidden_hint, retry_delay, to_bytes)
from zarrx.store.remote.options import RemoteOptions
from zarrx.store.remote.reads import ReadBatch, RemoteReads, RemoteSnapshot
from zarrx.store.remote.views import Views
from zarrx.store.remote.writes import RemoteWrites

__all__ = ["RemoteStore", "Failure", "Got", "ETag"]

T = TypeVar("T")


async def _pause(seconds: float) -> None:
    await asyncio.sleep(seconds)


class RemoteStore(RemoteReads, RemoteWrites, Views, Store):
    """The shared machinery of remote stores (see the module docstring); the read planning is
    :class:`~zarrx.store.remote.reads.RemoteReads`, the writes and deletes (plain and
    conditional) :class:`~zarrx.store.remote.writes.RemoteWrites`, the read-only views
    :class:`~zarrx.store.remote.views.Views`."""

    #: the URL scheme shown in messages (``s3``, ``https``, ...)
    options: RemoteOptions
    #: a pooled Value given is sealed and uploaded from as it is, then released when the upload
    #: is done: its block goes back to the pool, so the chunks a long write gathers after the
    #: first batch of uploads land in memory whose pages are already faulted in
    keeps_values = True

    def __init__(self, *, read_only: bool, options: RemoteOptions) -> None:
        self.read_only = bool(read_only)
        self.options = options
        self.requests: Counter[str] = Counter()   # requests sent, by method (retries included)
        self._tally = [0, 0]     # bytes_read, bytes_written (shared with read-only views)
        self._sems: dict[int, asyncio.Semaphore] = {}
        self._known: OrderedDict[str, tuple[str, int, float]] = OrderedDict()
        self._known_lock = threading.Lock()
        self._tails: dict[str, asyncio.Future] = {}
        self._batches: dict[tuple[str, str | None], ReadBatch] = {}
        self._pid = os.getpid()
        self._conditions_found, self._conditions_probe = None, None   # see condition_check

    # -- what a backend implements ------------------------------------------------------------
    def _url(self, key: str) -> str:
        """The address of ``key`` for messages: no credentials, no query string."""
        raise NotImplementedError

    def _loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the backend's client runs on (None: the shared one)."""
        return None

    async def _get(self, key: str, start: int | None, stop: int | None, suffix: int | None,
                   if_match: str | None, on_meta: OnMeta | None = None) -> Got:
        """One GET. A backend that has the response headers before the body calls
        ``on_meta(etag, object size)`` then, before reading the body. One whose
        ``_reads_into`` is True takes ``into`` too: a writable view of the bytes asked for,
        which it reads the body into (the answer's data then views it)."""
        raise NotImplementedError

    async def _get_whole_for(self, key: str, start: int | None, stop: int | None,
                             suffix: int | None, if_match: str | None) -> Got:
        """The bytes a range asks for, from a GET without a range (for a server that answers
        range requests with the whole object). This reads the whole body and cuts the range
        from it; a backend that streams bodies keeps only the range."""
        got = await self._get(key, None, None, None, if_match)
        size = len(got.data)
        lo, hi = asked(start, stop, suffix, size)
        return Got(memoryview(got.data)[lo:hi], got.etag, size, lo)

    async def _head(self, key: str) -> tuple[str | None, int]:
        raise NotImplementedError

    async def _put(self, key: str, data: memoryview, mode: str | None,
                   tag: str | None = None) -> str | None:
        """Write; ``mode`` None (overwrite), ``"create"`` or an ETag to match; ``tag``, when
        given, stored as the object's ``WRITE_TAG`` user metadata. The new ETag."""
        raise NotImplementedError

    async def _delete(self, keys: list[str]) -> None:
        raise NotImplementedError

    async def _delete_if(self, key: str, etag: str) -> None:
        raise NotImplementedError

    async def _list(self, prefix: str, state: dict) -> list[str]:
        """Keys below the folder ``prefix`` ("" or ending in "/"), relative to the store;
        ``state`` is kept across the attempts of one listing (to resume it)."""
        raise NotImplementedError

    def _failure(self, exc: BaseException) -> Failure | None:
        """``exc`` classified, or None when it is not the backend's (a bug: re-raised)."""
        raise NotImplementedError

    async def _described(self, key: str) -> tuple[str | None, str | None, str | None]:
        """One HEAD: the object's Content-Type as the server records it, its ETag and its
        ``WRITE_TAG`` user metadata (each None: none)."""
        return None, None, None

    # -- running requests ---------------------------------------------------------------------
    def _run(self, coro: Awaitable[T]) -> T:
        if self._pid != os.getpid():
            try:
                self._forked()
            except BaseException:
                coro.close()  # type: ignore[attr-defined]
                raise
            self._pid = os.getpid()
        return aio.run(coro, self._loop())  # type: ignore[arg-type]

    def _forked(self) -> None:
        """In a forked child, before its first request: the parent's requests in flight, event
        loops and locks are not the child's."""
        self._sems.clear()
        self._tails.clear()
        self._batches.clear()
        self._conditions_probe = None
        _fork.reinit(self._known_lock)      # in place: read-only views share it

    def _sem(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._sems.get(id(loop))
        if sem is None:
            sem = self._sems[id(loop)] = asyncio.Semaphore(self.options.in_flight)
        return sem

    async def _call(self, method: str, action: str, key: str,
                    fn: Callable[[], Awaitable[T]]) -> T:
        """``await fn()`` within the in-flight limit, retrying transient failures; a
        :class:`Failure` of kind missing/precondition/exists/range/unsupported is re-raised
        as it is, any other becomes the public error."""
        opts = self.options
        for attempt in range(opts.retries + 1):
            async with self._sem():
                self.requests[method] += 1
                try:
                    return await fn()
                except Exception as exc:  # noqa: BLE001 - classified below
                    fail = exc if isinstance(exc, Failure) else self._failure(exc)
                    if fail is None:
                        raise
            if fail.kind == "access" and fail.status == 403 and opts.forbidden_is_missing \
                    and method in ("GET", "HEAD") and fail.detail not in CREDENTIAL_CODES:
                fail = Failure("missing", 403)      # a server hiding which keys exist
            if fail.kind in ("missing", "precondition", "exists", "range", "unsupported",
                             "not_partial"):
                raise fail
            if fail.kind not in TRANSIENT or attempt == opts.retries:
                raise self._error(action, key, fail, attempt + 1) from None
            await _pause(retry_delay(opts, attempt, fail.retry_after))
        raise AssertionError("unreachable")

    def _error(self, action: str, key: str, fail: Failure, attempts: int = 1) -> StoreError:
        what = f"HTTP {fail.status}" if fail.status else fail.kind
        if fail.says_all:
            what = fail.detail
        elif fail.detail and fail.detail != str(fail.status):
            what += f" ({fail.detail})"     # botocore names an error without a code by status
        if attempts > 1:
            what += f" after {attempts} attempts"
        if fail.kind == "access" and fail.status == 403 and action == "read":
            what += forbidden_hint(fail.detail)
        msg = f"{self!r}: cannot {action} {key!r} ({self._url(key)}): {what}"
        cls = {"access": RemoteAccessError, "not_found": RemoteNotFoundError,
               "precondition": ConflictError, "exists": ConflictError,
               **TRANSIENT}.get(fail.kind, RemoteError)
        err = cls(msg)
        if isinstance(err, RemoteError):
            err.url, err.status = self._url(key), fail.status
        return err

    def _unsupported(self, action: str, key: str, fail: Failure) -> StoreError:
        return StoreError(f"{self!r}: cannot {action} {key!r} ({self._url(key)}): the server "
                          f"does not support it ({fail.detail or fail.status}); open the store "
                          "with conditional_writes=False to write without conditions")

    def _key(self, key: object) -> str:
        return check_path_key(key, repr(self), files=False)

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        key = self._key(key)
        got = self._run(self._retry_whole(key, byte_range))
        return None if got is None else to_bytes(got.data)

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        return [None if v is None else to_bytes(v) for v in self.get_many_buffers(requests)]

    def get_many_buffers(self, requests: Iterable[Request]) -> list[bytes | memoryview | None]:
        return self.get_many_sized(requests)[0]

    def get_many_sized(self, requests: Iterable[Request], arena: object | None = None,
                       ) -> tuple[list[bytes | memoryview | None], list[int | None]]:
        """``get_many_buffers``, and each object's size as the answers give it (a ranged GET's
        ``Content-Range``), with no request of its own."""
        reqs = sequence_of(requests)
        for _ in range(READ_ATTEMPTS):
            sizes: list[int | None] = [None] * len(reqs)
            try:
                got = self._run(self._read_many(reqs, None, sizes)) if reqs else []
            except Failure as fail:              # a split read found a newer version: again
                last = fail
                continue
            return [v for v, _ in got], sizes
        raise kept_changing(self, last.key, len(reqs))

    def getsize(self, key: str) -> int | None:
        head = self._run(self._stat(self._key(key)))
        return None if head is None else head[1]

    def getsize_many(self, keys: Iterable[str]) -> list[int | None]:
        keys = [self._key(k) for k in keys]
        if not keys:
            return []
        heads = self._run(gather_all([self._stat(k) for k in keys]))
        return [None if h is None else h[1] for h in heads]

    def exists(self, key: str) -> bool:
        return self._run(self._stat(self._key(key))) is not None

    def address(self, key: str) -> str | None:
        return self._url(key)

    def key_problem(self, key: str) -> str | None:
        return key_problem(key, files=False)

    def content_type(self, key: str) -> str | None:
        """The object's Content-Type (one request); None when the server sends none, or the
        request fails (it only explains another error)."""
        key = self._key(key)
        try:
            return self._run(self._call("HEAD", "read", key, lambda: self._described(key)))[0]
        except Exception:  # noqa: BLE001 - unknown: the error it would explain is raised
            return None

    # -- generations ----------------------------------------------------------------------------
    def generation(self, key: str) -> Hashable | None:
        head = self._run(self._stat(self._key(key)))
        return None if head is None else etag_generation(head[0])

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        key = self._key(key)
        cond = if_match_of(if_generation)
        try:
            # unconditioned, a read in parts that finds a newer version is read again
            got = self._run(self._read_one(key, byte_range, cond) if cond is not None
                            else self._retry_whole(key, byte_range))
        except Failure:                                   # If-Match failed: report the state
            raise conflict(self, key, "read", if_generation, self.generation(key)) from None
        if got is None:
            check_generation(self, key, if_generation, None, "read")
            return None
        gen = etag_generation(got.etag)
        check_generation(self, key, if_generation, gen, "read")
        return as_view(got.data), gen          # no copy: a shard rewritten holds it throughout

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        """A snapshot whose first request reads the object's last ``tail_prefetch`` bytes (a
        shard's trailing index, without a HEAD); every later read is conditioned on the ETag
        that request returned. An object this store read or wrote less than
        ``revalidate_after`` seconds ago starts at the generation seen then, without a request
        (its reads are still conditioned on it)."""
        key = self._key(key)
        known = self._recall(key)
        if known is not None:
            return RemoteSnapshot(self, key, Got(b"", known[0], known[1], known[1]))
        got = self._run(self._open_tail(key))
        if got is None:
            self._forget(key)
            return None
        if got.etag is not None and got.size is not None:
            self._remember(key, got.etag, got.size)
        return RemoteSnapshot(self, key, got)

    # -- generations seen lately (see ``snapshot``) ----------------------------------------------
    def _recall(self, key: str) -> tuple[str, int] | None:
        ttl = self.options.revalidate_after
        if ttl <= 0:
            return None
        with self._known_lock:
            got = self._known.get(key)
            if got is None or time.monotonic() - got[2] > ttl:
                return None
            return got[0], got[1]

    def _remember(self, key: str, etag: str | None, size: int) -> None:
        if etag is None or self.options.revalidate_after <= 0:
            return
        with self._known_lock:
            self._known[key] = (etag, size, time.monotonic())
            self._known.move_to_end(key)
            while len(self._known) > 4096:
                self._known.popitem(last=False)

    def _forget(self, key: str) -> None:
        with self._known_lock:
            self._known.pop(key, None)

    # -- listing -------------------------------------------------------------------------------
    def list_prefix(self, prefix: str) -> Iterator[str]:
        folder = check_prefix(prefix, self)[:prefix.rfind("/") + 1]
        if folder and key_problem(folder[:-1]) is not None:
            return iter([])                      # no key lies below an unusable folder
        return iter([k for k in self._run(self._listing(folder)) if k.startswith(prefix)])

    async def _listing(self, folder: str,
                       lister: Callable[[str, dict], Awaitable[T]] | None = None) -> T:
        state: dict = {}    # ``lister``: the backend's listing to run (``_list``, by default)
        try:
            return await self._call("LIST", "list", folder or "<root>",
                                    lambda: (lister or self._list)(folder, state))
        except Failure as fail:
            if fail.kind == "missing":
                return []
            if fail.kind == "unsupported":
                raise ListingUnsupportedError(
                    f"{self!r}: cannot list {folder or '<root>'!r}: the server offers no "
                    f"listing ({fail.detail or fail.status}); open hierarchies with "
                    "consolidated metadata there") from None
            raise self._error("list", folder or "<root>", fail) from None

    # -- pickling: configuration only -----------------------------------------------------------
    def _config(self) -> dict:
        raise NotImplementedError

    def __getstate__(self) -> dict:
        config = self._config()
        source = config.get("fs", config.get("store"))
        if source is not None and not isinstance(source, str):
            import pickle
            try:
                pickle.dumps(source)
            except Exception as exc:  # noqa: BLE001 - whatever the object's pickling raises
                raise StoreError(f"{self!r}: cannot be pickled: the {type(source).__name__} "
                                 f"it was made from cannot ({type(exc).__name__}: {exc}); "
                                 f"make the store from a URL and storage_options, which "
                                 f"pickle") from None
        found = probe_findings.carried(self)       # what the condition probe found, if run
        return config if found is None else {**config, probe_findings.STATE_KEY: found}

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        found = state.pop(probe_findings.STATE_KEY, None)
        self.__init__(**state)  # type: ignore[misc]
        probe_findings.take_carried(self, found)


