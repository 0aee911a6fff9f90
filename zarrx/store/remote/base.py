"""What every remote store shares: the Store API (with generations) over a few asynchronous
request primitives a backend implements.

A backend (:class:`~zarrx.store.remote.objectstore.ObjectStore`,
:class:`~zarrx.store.remote.fsspecstore.FsspecStore`) implements ``_get``, ``_head``, ``_put``,
``_delete``, ``_delete_if``, ``_list`` and ``_failure`` (its exceptions as a :class:`Failure`).
Everything else is here:

- **Requests.** A synchronous call runs one coroutine on an event loop; all the requests of a
  batch are issued concurrently, at most ``options.in_flight`` at a time for the store.
- **Reads.** Nearby ranges of one object are coalesced (``coalesce_gap``, ``max_request``);
  large reads are split into parallel parts (``part_size``); a whole object is read as its first
  part and, when larger, the remaining parts conditioned on the first part's ETag.
- **Generations** are ETags. Conditioned reads send If-Match; conditional writes send
  If-None-Match ``*`` (create) or If-Match (replace); HTTP 412 becomes ConflictError.
- **Failures.** Timeouts, dropped connections, HTTP 429 and 5xx are retried with backoff;
  everything else fails at once. Each error names the store, the key and its URL (never
  credentials). A missing key reads as None.
"""
from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from zarrx.errors import (ConflictError, RemoteAccessError, RemoteConnectionError, RemoteError,
                          RemoteNotFoundError, RemoteServerError, RemoteThrottledError,
                          RemoteTimeoutError, RemoteTransientError, StoreError)
from zarrx.store.base import (ABSENT, ByteRange, ObjectSnapshot, Request, Store, Versioned,
                              as_buffer, check_generation, check_path_key, conflict, is_absent,
                              key_problem,
                              sequence_of)
from zarrx.store.remote import aio
from zarrx.store.remote.coalesce import coalesce, split
from zarrx.store.remote.options import RemoteOptions

__all__ = ["RemoteStore", "Failure", "Got", "ETag"]

T = TypeVar("T")
Buffer = Any   # bytes, bytearray, memoryview or a backend's buffer object

TRANSIENT = {"throttled": RemoteThrottledError, "server": RemoteServerError,
             "timeout": RemoteTimeoutError, "connection": RemoteConnectionError}


class Failure(Exception):
    """A backend's failure, classified. ``kind`` is one of: missing, precondition, exists,
    range (HTTP 416), access, not_found (a bucket or path, not a key), throttled, server,
    timeout, connection, unsupported, other."""

    def __init__(self, kind: str, status: int | None = None, detail: str = "") -> None:
        super().__init__(kind, status, detail)
        self.kind, self.status, self.detail = kind, status, detail


class ETag:
    """The generation of a remote object: its entity tag, as the server sent it."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ETag) and other.value == self.value

    def __hash__(self) -> int:
        return hash((ETag, self.value))

    def __repr__(self) -> str:
        return f"ETag({self.value!r})"

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (ETag, (self.value,))


def _gen(etag: str | None) -> ETag | None:
    return None if etag is None else ETag(etag)


def _match(generation: object) -> str | None:
    """The If-Match value for a generation (None: not one of ours)."""
    return generation.value if isinstance(generation, ETag) else None


@dataclass(slots=True)
class Got:
    """A GET's answer: ``data`` starts at byte ``start`` of an object of ``size`` bytes (None:
    unknown) at ``etag`` (None: the backend gives none)."""

    data: Buffer
    etag: str | None
    size: int | None
    start: int


class RemoteStore(Store):
    """The shared machinery of remote stores (see the module docstring)."""

    #: the URL scheme shown in messages (``s3``, ``https``, ...)
    options: RemoteOptions

    def __init__(self, *, read_only: bool, options: RemoteOptions) -> None:
        self.read_only = bool(read_only)
        self.options = options
        self.requests: Counter[str] = Counter()   # requests sent, by method (retries included)
        self.bytes_read = 0
        self.bytes_written = 0
        self._sems: dict[int, asyncio.Semaphore] = {}
        self._known: OrderedDict[str, tuple[str, int, float]] = OrderedDict()
        self._known_lock = threading.Lock()
        self._tails: dict[str, asyncio.Future] = {}
        self._batches: dict[tuple[str, str | None], _Batch] = {}

    # -- what a backend implements ------------------------------------------------------------
    def _url(self, key: str) -> str:
        """The address of ``key`` for messages: no credentials, no query string."""
        raise NotImplementedError

    def _loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the backend's client runs on (None: the shared one)."""
        return None

    async def _get(self, key: str, start: int | None, stop: int | None, suffix: int | None,
                   if_match: str | None) -> Got:
        raise NotImplementedError

    async def _head(self, key: str) -> tuple[str | None, int]:
        raise NotImplementedError

    async def _put(self, key: str, data: memoryview, mode: str | None) -> str | None:
        """Write; ``mode`` None (overwrite), ``"create"`` or an ETag to match. The new ETag."""
        raise NotImplementedError

    async def _delete(self, keys: list[str]) -> None:
        raise NotImplementedError

    async def _delete_if(self, key: str, etag: str) -> None:
        raise NotImplementedError

    async def _list(self, prefix: str) -> list[str]:
        """Keys below the folder ``prefix`` ("" or ending in "/"), relative to the store."""
        raise NotImplementedError

    def _failure(self, exc: BaseException) -> Failure | None:
        """``exc`` classified, or None when it is not the backend's (a bug: re-raised)."""
        raise NotImplementedError

    # -- running requests ---------------------------------------------------------------------
    def _run(self, coro: Awaitable[T]) -> T:
        return aio.run(coro, self._loop())  # type: ignore[arg-type]

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
            if fail.kind in ("missing", "precondition", "exists", "range", "unsupported",
                             "not_partial"):
                raise fail
            if fail.kind not in TRANSIENT or attempt == opts.retries:
                raise self._error(action, key, fail, attempt + 1) from None
            delay = min(opts.max_backoff, opts.backoff * 2 ** attempt)
            await asyncio.sleep(delay * (0.5 + random.random() / 2))
        raise AssertionError("unreachable")

    def _error(self, action: str, key: str, fail: Failure, attempts: int = 1) -> StoreError:
        what = f"HTTP {fail.status}" if fail.status else fail.kind
        if fail.detail:
            what += f" ({fail.detail})"
        if attempts > 1:
            what += f" after {attempts} attempts"
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
        return check_path_key(key, repr(self))

    # -- reads --------------------------------------------------------------------------------
    async def _fetch(self, key: str, start: int | None, stop: int | None, suffix: int | None,
                     if_match: str | None) -> Got | None:
        """One GET (None: missing). A range past the end reads as empty data."""
        try:
            got = await self._call("GET", "read", key,
                                   lambda: self._get(key, start, stop, suffix, if_match))
        except Failure as fail:
            if fail.kind == "missing":
                return None
            if fail.kind == "range":
                return await self._beyond_end(key, start or 0, if_match)
            if fail.kind == "not_partial":
                return await self._whole_then_slice(key, start, stop, suffix, if_match)
            if fail.kind == "precondition":
                raise
            raise self._error("read", key, fail) from None
        self.bytes_read += len(got.data)
        return got

    async def _whole_then_slice(self, key: str, start: int | None, stop: int | None,
                                suffix: int | None, if_match: str | None) -> Got | None:
        """A server that answered a range request with the whole object (as some do for an
        empty object, or when they ignore ranges): read it whole and cut the range here."""
        try:
            got = await self._call("GET", "read", key,
                                   lambda: self._get(key, None, None, None, if_match))
        except Failure as fail:
            if fail.kind == "missing":
                return None
            if fail.kind == "precondition":
                raise
            raise self._error("read", key, fail) from None
        self.bytes_read += len(got.data)
        size = len(got.data)
        rng = ByteRange(suffix=suffix) if suffix is not None else \
            ByteRange(offset=start or 0, length=None if stop is None else stop - (start or 0))
        a, b = rng.resolve(size)
        return Got(memoryview(got.data)[a:b], got.etag, size, a)

    async def _beyond_end(self, key: str, start: int, if_match: str | None) -> Got | None:
        """A range that starts at or past the end (HTTP 416): empty bytes of the object, whose
        state comes from a HEAD; an empty object read with a range is read whole."""
        head = await self._stat(key)
        if head is None:
            return None
        etag, size = head
        if if_match is not None and etag != if_match:
            raise Failure("precondition", 412)
        if size == 0 and start == 0:
            return Got(b"", etag, 0, 0)
        return Got(b"", etag, size, min(start, size))

    async def _stat(self, key: str) -> tuple[str | None, int] | None:
        try:
            return await self._call("HEAD", "read", key, lambda: self._head(key))
        except Failure as fail:
            if fail.kind == "missing":
                return None
            raise self._error("read", key, fail) from None

    async def _read_span(self, key: str, start: int, stop: int, if_match: str | None
                         ) -> Got | None:
        """``[start, stop)`` of ``key`` (clipped at its end), in parallel parts when large."""
        if stop <= start:
            head = await self._stat(key)
            if head is None:
                return None
            if if_match is not None and head[0] != if_match:
                raise Failure("precondition", 412)
            return Got(b"", head[0], head[1], start)
        parts = split(start, stop, self.options.part_size)
        if len(parts) == 1:
            return await self._fetch(key, start, stop, None, if_match)
        first = await self._fetch(key, *parts[0], None, if_match)
        if first is None or len(first.data) < parts[0][1] - parts[0][0]:
            return first                         # missing, or the object ends in part one
        cond = if_match or first.etag
        rest = await asyncio.gather(*(self._fetch(key, a, b, None, cond) for a, b in parts[1:]))
        return _joined(first, rest)

    async def _read_whole(self, key: str, if_match: str | None) -> Got | None:
        """The whole object: its first part, then (when larger) the rest in parallel parts,
        all from one version."""
        part = self.options.part_size
        first = await self._fetch(key, 0, part, None, if_match)
        if first is None or first.size is None or first.size <= len(first.data):
            return first
        cond = if_match or first.etag
        spans = split(len(first.data), first.size, part)
        rest = await asyncio.gather(*(self._fetch(key, a, b, None, cond) for a, b in spans))
        return _joined(first, rest)

    async def _read_one(self, key: str, rng: ByteRange | None, if_match: str | None
                        ) -> Got | None:
        if rng is None or rng.is_full:
            return await self._read_whole(key, if_match)
        if rng.suffix is not None:
            if rng.suffix == 0:
                return await self._read_span(key, 0, 0, if_match)
            return await self._fetch(key, None, None, rng.suffix, if_match)
        if rng.length is None:
            return await self._fetch(key, rng.offset, None, None, if_match)
        return await self._read_span(key, rng.offset, rng.offset + rng.length, if_match)

    async def _read_many(self, requests: Sequence[Request], if_match: str | None = None
                         ) -> list[tuple[Buffer | None, str | None]]:
        """``(bytes or None, etag)`` per request: slices of one object coalesced, everything
        in flight at once."""
        out: list[tuple[Buffer | None, str | None]] = [(None, None)] * len(requests)
        slices: dict[str, list[int]] = {}
        tasks: list[Awaitable[None]] = []

        async def single(i: int, key: str, rng: ByteRange | None) -> None:
            got = await self._read_one(key, rng, if_match)
            out[i] = (None, None) if got is None else (got.data, got.etag)

        async def span(key: str, start: int, stop: int, members: list[tuple[int, int, int]]
                       ) -> None:
            got = await self._read_span(key, start, stop, if_match)
            if got is None:
                return
            view = memoryview(got.data)
            for i, a, b in members:
                out[i] = (view[a - start:b - start], got.etag)

        for i, (key, rng) in enumerate(requests):
            key = self._key(key)
            if rng is not None and rng.suffix is None and rng.length and not rng.is_full:
                slices.setdefault(key, []).append(i)
            else:
                tasks.append(single(i, key, rng))
        opts = self.options
        for key, idx in slices.items():
            ranges = [(requests[i][1].offset, requests[i][1].offset + requests[i][1].length)
                      for i in idx]
            for sp in coalesce(ranges, opts.coalesce_gap, opts.max_request):
                members = [(idx[m], *ranges[m]) for m in sp.members]
                tasks.append(span(key, sp.start, sp.stop, members))
        if tasks:
            await _gather(tasks)
        return out

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        key = self._key(key)
        got = self._run(self._retry_whole(key, byte_range))
        return None if got is None else _to_bytes(got.data)

    async def _retry_whole(self, key: str, rng: ByteRange | None) -> Got | None:
        """An unconditioned read whose later parts found a newer version: read again."""
        for _ in range(8):
            try:
                return await self._read_one(key, rng, None)
            except Failure:
                continue
        raise ConflictError(f"{self!r}: cannot read {key!r} ({self._url(key)}): it changed "
                            "during each of 8 reads")

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        return [None if v is None else _to_bytes(v) for v in self.get_many_buffers(requests)]

    def get_many_buffers(self, requests: Iterable[Request]) -> list[bytes | memoryview | None]:
        reqs = sequence_of(requests)
        if not reqs:
            return []
        for _ in range(8):
            try:
                return [v for v, _ in self._run(self._read_many(reqs))]
            except Failure:                      # a split read found a newer version: again
                continue
        raise ConflictError(f"{self!r}: a batch of {len(reqs)} reads kept finding newer "
                            "versions of its objects")

    def getsize(self, key: str) -> int | None:
        head = self._run(self._stat(self._key(key)))
        return None if head is None else head[1]

    def exists(self, key: str) -> bool:
        return self._run(self._stat(self._key(key))) is not None

    # -- generations ----------------------------------------------------------------------------
    def generation(self, key: str) -> Hashable | None:
        head = self._run(self._stat(self._key(key)))
        return None if head is None else _gen(head[0])

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        key = self._key(key)
        cond = _match(if_generation)
        try:
            got = self._run(self._read_one(key, byte_range, cond))
        except Failure:                                   # If-Match failed: report the state
            raise conflict(self, key, "read", if_generation, self.generation(key)) from None
        if got is None:
            check_generation(self, key, if_generation, None, "read")
            return None
        gen = _gen(got.etag)
        check_generation(self, key, if_generation, gen, "read")
        return _to_bytes(got.data), gen

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

    async def _combined(self, key: str, etag: str | None, reqs: list[Request]
                        ) -> list[tuple[Buffer | None, str | None]]:
        """``_read_many(reqs, etag)``, combined with the reads of other snapshots of the same
        version that arrive within ``batch_delay`` seconds: threads reading neighbouring inner
        chunks of one shard share coalesced requests."""
        delay = self.options.batch_delay
        if delay <= 0:
            return await self._read_many(reqs, etag)
        slot = (key, etag)
        batch = self._batches.get(slot)
        if batch is not None:
            first = len(batch.requests)
            batch.requests.extend(reqs)
            got = await asyncio.shield(batch.done)
            return got[first:first + len(reqs)]
        batch = self._batches[slot] = _Batch(asyncio.get_running_loop().create_future())
        batch.requests.extend(reqs)
        try:
            await asyncio.sleep(delay)
        finally:
            del self._batches[slot]
        try:
            got = await self._read_many(batch.requests, etag)
        except BaseException as exc:
            batch.done.set_exception(exc)
            batch.done.exception()               # retrieved: nobody else may be waiting
            raise
        batch.done.set_result(got)
        return got[:len(reqs)]

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

    async def _open_tail(self, key: str) -> Got | None:
        """The tail read of a new snapshot; snapshots of one key opened while its tail is in
        flight share that request."""
        pending = self._tails.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._tails[key] = fut
        try:
            got = await self._read_tail(key)
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()                      # retrieved: nobody else may be waiting
            raise
        finally:
            self._tails.pop(key, None)
        fut.set_result(got)
        return got

    async def _read_tail(self, key: str) -> Got | None:
        n = self.options.tail_prefetch
        if n == 0:
            head = await self._stat(key)
            return None if head is None else Got(b"", head[0], head[1], head[1])
        got = await self._fetch(key, None, None, n, None)
        if got is not None and got.size is None:          # a backend that gives no size
            head = await self._stat(key)
            if head is None:
                return None
            got.size, got.start = head[1], head[1] - len(got.data)
        return got

    # -- writes -------------------------------------------------------------------------------
    async def _write(self, key: str, data: memoryview, mode: str | None) -> str | None:
        try:
            etag = await self._call("PUT", "write", key, lambda: self._put(key, data, mode))
        except Failure as fail:
            self._forget(key)
            if fail.kind in ("precondition", "exists", "missing"):
                raise
            if fail.kind == "unsupported":
                raise self._unsupported("conditionally write", key, fail) from None
            raise self._error("write", key, fail) from None
        self.bytes_written += len(data)
        if etag is None:
            self._forget(key)
        else:
            self._remember(key, etag, len(data))
        return etag

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        key = self._key(key)
        self._check_writable(key)
        self._run(self._write(key, as_buffer(value, key), None))

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        checked = []
        for key, value in items:
            key = self._key(key)
            self._check_writable(key)
            checked.append((key, as_buffer(value, key)))
        if checked:
            self._run(_gather([self._write(k, v, None) for k, v in checked]))

    def delete(self, key: str) -> None:
        self.delete_many([key])

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = [self._key(k) for k in keys]
        for k in keys[:1]:
            self._check_writable(k)
        for k in keys:
            self._forget(k)
        if keys:
            self._run(self._remove(keys))

    async def _remove(self, keys: list[str]) -> None:
        batches = [keys[i:i + 1000] for i in range(0, len(keys), 1000)]

        async def one(batch: list[str]) -> None:
            try:
                await self._call("DELETE", "delete", batch[0], lambda: self._delete(batch))
            except Failure as fail:
                if fail.kind != "missing":
                    raise self._error("delete", batch[0], fail) from None

        await _gather([one(b) for b in batches])

    def list_prefix(self, prefix: str) -> Iterator[str]:
        folder = prefix[:prefix.rfind("/") + 1]
        if folder and key_problem(folder[:-1]) is not None:
            return iter([])                      # no key lies below an unusable folder
        return iter([k for k in self._run(self._listing(folder)) if k.startswith(prefix)])

    async def _listing(self, folder: str) -> list[str]:
        try:
            return await self._call("LIST", "list", folder or "<root>",
                                    lambda: self._list(folder))
        except Failure as fail:
            if fail.kind == "missing":
                return []
            if fail.kind == "unsupported":
                raise StoreError(f"{self!r}: cannot list {folder or '<root>'!r}: the server "
                                 f"offers no listing ({fail.detail or fail.status}); open "
                                 "hierarchies with consolidated metadata there") from None
            raise self._error("list", folder or "<root>", fail) from None

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable(prefix or "<root>")
        self.delete_many(list(self.list_prefix(prefix)))

    # -- conditional writes ---------------------------------------------------------------------
    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        key = self._key(key)
        self._check_writable(key)
        data = as_buffer(value, key)
        if not self.supports_conditional_writes:
            return super().set_if(key, value, if_generation)
        expected: Hashable = ABSENT if is_absent(if_generation) else if_generation
        if expected is not ABSENT and _match(expected) is None:
            raise conflict(self, key, "conditionally write", expected, self.generation(key))
        mode = "create" if expected is ABSENT else _match(expected)
        try:
            etag = self._run(self._write(key, data, mode))  # type: ignore[arg-type]
        except Failure:
            raise conflict(self, key, "conditionally write", expected,
                           self.generation(key)) from None
        return _gen(etag) if etag is not None else self.generation(key)

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        key = self._key(key)
        self._check_writable(key)
        if not self.supports_conditional_writes:
            return super().delete_if(key, if_generation)
        found = self.generation(key)
        if is_absent(if_generation):
            if found is not None:
                raise conflict(self, key, "conditionally delete", ABSENT, found)
            return
        check_generation(self, key, if_generation, found, "conditionally delete")
        self._forget(key)
        try:
            self._run(self._call("DELETE", "delete", key,
                                 lambda: self._delete_if(key, _match(if_generation))))  # type: ignore[arg-type]
        except Failure as fail:
            if fail.kind == "unsupported":
                raise self._unsupported("conditionally delete", key, fail) from None
            if fail.kind == "missing":
                raise conflict(self, key, "conditionally delete", if_generation, None) from None
            if fail.kind != "precondition":
                raise self._error("delete", key, fail) from None
            raise conflict(self, key, "conditionally delete", if_generation,
                           self.generation(key)) from None

    # -- pickling: configuration only -----------------------------------------------------------
    def _config(self) -> dict:
        raise NotImplementedError

    def __getstate__(self) -> dict:
        return self._config()

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)  # type: ignore[misc]


class RemoteSnapshot(ObjectSnapshot):
    """One version of a remote object: the tail read when it was opened, then reads
    conditioned on its ETag (If-Match); ConflictError once the object has changed."""

    def __init__(self, store: RemoteStore, key: str, tail: Got) -> None:
        self.store, self.key = store, key
        self.generation = _gen(tail.etag)
        self.size = tail.size
        self._tail = memoryview(tail.data)
        self._tail_start = tail.start
        self._open = True

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        if not self._open:
            raise StoreError(f"{self!r}: read after close")
        size = self.size
        assert size is not None
        out: list[Any] = [None] * len(ranges)
        fetch: list[tuple[int, Request]] = []
        for i, rng in enumerate(ranges):
            start, stop = (0, size) if rng is None else rng.resolve(size)
            if start >= self._tail_start or stop <= start:
                a = max(start - self._tail_start, 0)
                out[i] = self._tail[a:a + max(stop - start, 0)]
            else:
                fetch.append((i, (self.key, ByteRange.trusted(start, stop - start))))
        if fetch:
            cond = _match(self.generation)
            try:
                got = self.store._run(self.store._combined(self.key, cond,
                                                           [r for _, r in fetch]))
            except Failure:
                self.store._forget(self.key)
                raise conflict(self.store, self.key, "read a snapshot of", self.generation,
                               self.store.generation(self.key)) from None
            for (i, _), (data, etag) in zip(fetch, got):
                if data is None or _gen(etag) != self.generation:
                    self.store._forget(self.key)
                    raise conflict(self.store, self.key, "read a snapshot of",
                                   self.generation, _gen(etag) if data is not None else None)
                out[i] = data
        return out

    def close(self) -> None:
        self._open = False

    def __repr__(self) -> str:
        return f"<snapshot of {self.key!r} in {self.store!r} at {self.generation!r}>"


@dataclass(slots=True)
class _Batch:
    """Reads of one object version waiting to go out together."""

    done: asyncio.Future
    requests: list = field(default_factory=list)


def _joined(first: Got, rest: Sequence[Got | None]) -> Got:
    """Consecutive parts as one buffer (a conflict when a later part is gone)."""
    if any(r is None for r in rest):
        raise Failure("precondition", 412)
    total = len(first.data) + sum(len(r.data) for r in rest)  # type: ignore[union-attr]
    buf = bytearray(total)
    view = memoryview(buf)
    pos = 0
    for part in (first, *rest):
        n = len(part.data)  # type: ignore[union-attr]
        view[pos:pos + n] = memoryview(part.data).cast("B")  # type: ignore[union-attr]
        pos += n
    return Got(buf, first.etag, first.size, first.start)


def _to_bytes(data: Buffer) -> bytes:
    return data if type(data) is bytes else bytes(data)


async def _gather(aws: Sequence[Awaitable[Any]]) -> list[Any]:
    """``asyncio.gather`` that, on the first error, cancels the rest and waits for them."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
