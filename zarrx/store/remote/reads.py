"""The read side of remote stores: how a batch of reads becomes requests, and snapshots.

- A read of a whole object is its first part and, when larger, the remaining parts in parallel,
  conditioned on the first part's ETag; a large range is split the same way (``part_size``).
  The remaining parts go out as soon as the first part's response headers arrive (they give
  the size and the ETag), so every part streams at once.
- Nearby ranges of one object are coalesced (``coalesce_gap``, ``max_request``), and every
  request of a batch is in flight at once (up to the store's limit). A batch whose requests
  would leave some of that limit idle splits its ranges into smaller parts (down to
  ``min_part_size``), so its bytes stream over all of it.
- A snapshot starts with one suffix read of the object's tail (a shard's index, with no HEAD)
  and conditions every later read on the ETag it returned; reads of snapshots of one version
  that arrive together share coalesced requests.

:class:`RemoteReads` is a part of :class:`~zarrx.store.remote.base.RemoteStore`, which supplies
the requests (``_call``, ``_get``, ``_head``), the errors and the generations seen lately.
"""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


from zarrx.errors import StoreError
from zarrx.store.base import ByteRange, ObjectSnapshot, Request, conflict
from zarrx.store.remote.bucket_check import check_bucket
from zarrx.store.remote.common import (READ_ATTEMPTS, Buffer, Failure, Got, OnMeta,
                                       answer_problem, etag_generation, gather_all,
                                       if_match_of, kept_changing)
from zarrx.store.remote.coalesce import coalesce, part_for, split
from zarrx.store.remote.read_parts import _assembled, _buffer, _of_version, _placed
from zarrx.store.remote.shared_whole import Stretch, cut_from, reading, stretch_of

__all__ = ["RemoteReads", "RemoteSnapshot", "ReadBatch"]


class RemoteReads:
    """Read planning over a remote store's request primitives (see the module docstring)."""

    options: Any
    bytes_read: int
    _batches: dict
    _tails: dict
    #: whether the backend's ``_get`` reads a body into a buffer it is given (``into``)
    _reads_into = False
    #: whether the server answered a range with the whole object (or an unknown size) once:
    #: a read of several parts is then asked as one range, each part's request streaming the
    #: object from its start (the transfer grew with the square of the parts)
    _ignores_ranges = False
    #: whether the server answered a range with its bytes once: until then the parts of a read
    #: of a known version go out once the first part's headers show that it does (a server
    #: ignoring ranges answers the first with the whole object, which then serves them all)
    _ranges_seen = False

    # -- requests for reads --------------------------------------------------------------------
    async def _fetch(self, key: str, start: int | None, stop: int | None, suffix: int | None,
                     if_match: str | None, on_meta: OnMeta | None = None,
                     into: memoryview | None = None) -> Got | None:
        """One GET (None: missing). A range past the end reads as empty data. ``on_meta``
        hears the ETag and size as soon as the response headers give them (backends that
        stream the body). ``into``: a writable view of the bytes asked for, which the answer's
        data then views (read into it as it streams, where the backend can). A range of a
        stretch read together (see :mod:`~zarrx.store.remote.shared_whole`) comes from the
        stretch's one whole-object GET once a server ignoring ranges is met."""
        stretch = None if suffix is not None or stop is None else \
            stretch_of(key, start or 0, stop)
        if stretch is not None and (stretch.started() or self._ignores_ranges):
            return _placed(await self._shared(key, stretch, start or 0, stop, if_match), into)
        if into is not None and self._reads_into:
            def get() -> Awaitable[Got]:
                return self._get(key, start, stop, suffix, if_match, on_meta, into)
        else:
            def get() -> Awaitable[Got]:
                return self._get(key, start, stop, suffix, if_match, on_meta)
        try:
            got = await self._call("GET", "read", key, get)
        except Failure as fail:
            if fail.kind == "missing":
                return None
            if fail.kind == "range":
                if suffix is not None:
                    return _placed(await self._suffix_refused(key, suffix, if_match), into)
                return _placed(await self._beyond_end(key, start or 0, stop, if_match), into)
            if fail.kind == "not_partial":
                whole = await (self._whole_then_slice(key, start, stop, suffix, if_match)
                               if stretch is None else
                               self._shared(key, stretch, start or 0, stop, if_match))
                if whole is not None and whole.size:
                    self._ignores_ranges = True      # (some answer so for empty objects only)
                return _placed(whole, into)
            if fail.kind == "precondition":
                raise
            raise self._error("read", key, fail) from None
        problem = answer_problem(start, stop, suffix, got)
        if problem is not None:
            raise self._error("read", key, Failure("bad_response", None, problem))
        self.bytes_read += len(got.data)
        if (suffix is not None or stop is not None or start) and not self._ignores_ranges:
            self._ranges_seen = True
        return _placed(_of_version(got, if_match), into)

    async def _whole_then_slice(self, key: str, start: int | None, stop: int | None,
                                suffix: int | None, if_match: str | None) -> Got | None:
        """A server that answered a range request with the whole object (as some do for an
        empty object, or when they ignore ranges): the range is cut from a GET of the whole
        object (see ``_get_whole_for``)."""
        try:
            got = await self._call("GET", "read", key, lambda: self._get_whole_for(
                key, start, stop, suffix, if_match))
        except Failure as fail:
            if fail.kind == "missing":
                return None
            if fail.kind == "precondition":
                raise
            raise self._error("read", key, fail) from None
        self.bytes_read += len(got.data)
        return _of_version(got, if_match)

    async def _shared(self, key: str, stretch: Stretch, start: int, stop: int,
                      if_match: str | None) -> Got | None:
        """``[start, stop)`` of ``key`` from the one whole-object GET of ``stretch``."""
        whole = await stretch.got(
            lambda lo, hi: self._whole_then_slice(key, lo, hi, None, if_match))
        return None if whole is None else _of_version(cut_from(whole, start, stop), if_match)

    async def _beyond_end(self, key: str, start: int, stop: int | None, if_match: str | None
                          ) -> Got | None:
        """A range refused as unsatisfiable (HTTP 416): empty bytes of the object when it
        starts at or past the end, whose state comes from a HEAD; an empty object read with a
        range is read whole. A range the HEAD finds inside the object was refused by a server
        that refuses ranges: it is cut from a GET of the whole object (as from a server that
        ignores them), never read as empty bytes."""
        head = await self._stat_as_of(key, if_match)
        if head is None:
            return None
        etag, size = head
        if start < size:
            return await self._whole_then_slice(key, start, stop, None, if_match)
        return Got(b"", etag, size, min(start, size))

    async def _suffix_refused(self, key: str, suffix: int, if_match: str | None) -> Got | None:
        """The last ``suffix`` bytes of ``key`` from a server that answered their suffix range
        (``bytes=-N``) with HTTP 416. That range fits every object but an empty one, so such a
        server has no suffix ranges: the size comes from a HEAD, and the bytes from a range
        that names them, conditioned on the HEAD's version (an object replaced in between is a
        failed condition, as for the later parts of a split read)."""
        head = await self._stat_as_of(key, if_match)
        if head is None:
            return None
        etag, size = head
        if size == 0:
            return Got(b"", etag, 0, 0)
        got = await self._fetch(key, max(size - suffix, 0), size, None, if_match or etag)
        if got is not None and got.size is not None and got.size != size:
            raise Failure("precondition", 412)   # no ETag, but another length: replaced
        return got

    async def _stat_as_of(self, key: str, if_match: str | None) -> tuple[str | None, int] | None:
        """``_stat(key)``; a failed condition when ``if_match`` names another version."""
        head = await self._stat(key)
        if head is not None and if_match is not None and head[0] != if_match:
            raise Failure("precondition", 412)
        return head

    async def _stat(self, key: str) -> tuple[str | None, int] | None:
        try:
            return await self._call("HEAD", "read", key, lambda: self._head(key))
        except Failure as fail:
            if fail.kind != "missing":
                raise self._error("read", key, fail) from None
        return await check_bucket(self, key)    # None, unless the bucket itself is missing

    async def _read_span(self, key: str, start: int, stop: int, if_match: str | None,
                         part: int | None = None) -> Got | None:
        """``[start, stop)`` of ``key`` (clipped at its end), in parallel parts of ``part`` bytes
        (default ``part_size``) when large: all at once when ``if_match`` names the version
        and the server is known to answer ranges, else the first part, then the rest
        (conditioned on its ETag) once its headers came; parts meeting a server that ignores
        ranges share one GET."""
        if stop <= start:
            head = await self._stat(key)
            if head is None:
                return None
            if if_match is not None and head[0] != if_match:
                raise Failure("precondition", 412)
            return Got(b"", head[0], head[1], start)
        parts = split(start, stop, part or self.options.part_size)
        if len(parts) > 1 and stretch_of(key, start, stop) is None:
            with reading({key: [(start, stop)]}):    # parts meeting a server ignoring ranges
                return await self._read_span(key, start, stop, if_match, part)  # share a GET
        if self._ignores_ranges:                      # one pass, cut as it streams by
            parts = [(start, stop)]
        if len(parts) == 1:
            return await self._fetch(key, start, stop, None, if_match)
        if if_match is not None and self._ranges_seen:
            buf = _buffer(stop - start)
            got = await gather_all([self._fetch(
                key, a, b, None, if_match, into=None if buf is None else buf[a - start:b - start])
                for a, b in parts])
            first, rest = got[0], got[1:]
            if first is None or len(first.data) < parts[0][1] - parts[0][0]:
                return first                     # missing, or the object ends in part one
            return _assembled(first, rest, buf, parts)

        def rest_of(size: int | None) -> list[tuple[int, int]]:
            rest = parts[1:] if size is None else \
                [(a, min(b, size)) for a, b in parts[1:] if a < size]
            if rest and self._ignores_ranges:   # found out by the lead: one more read
                return [(rest[0][0], rest[-1][1])]
            return rest

        return await self._lead_then_rest(key, *parts[0], rest_of, if_match)

    async def _read_whole(self, key: str, if_match: str | None) -> Got | None:
        """The whole object: its first part, then (when larger) the rest in parallel parts,
        all from one version."""
        part = self.options.part_size
        if self._ignores_ranges:
            return await self._fetch(key, None, None, None, if_match)

        def rest_of(size: int | None) -> list[tuple[int, int]]:
            if size is None or size <= part:
                return []
            return [(part, size)] if self._ignores_ranges else split(part, size, part)

        with reading({key: [(0, 1 << 62)]}):       # the lead and the rest share a whole GET
            return await self._lead_then_rest(key, 0, part, rest_of, if_match)

    async def _lead_then_rest(self, key: str, start: int, stop: int,
                              rest_of: Callable[[int | None], list[tuple[int, int]]],
                              if_match: str | None = None) -> Got | None:
        """``[start, stop)`` of ``key`` (conditioned on ``if_match`` when given), then the spans
        ``rest_of(size)`` conditioned on its ETag, joined. The spans are requested once the
        lead's headers arrive (or, for backends that give them only with the body, once it is
        read); a lead whose retry found another version than the one the spans were
        conditioned on is a conflict (412)."""
        launched: list[tuple[str | None, list, memoryview | None, list[asyncio.Future]]] = []

        def on_meta(etag: str | None, size: int | None) -> None:
            if not launched:
                cond, spans = if_match or etag, [(start, stop), *rest_of(size)]
                # the spans are read into one buffer, where the lead is copied once it is read
                buf = _buffer(spans[-1][1] - start) if len(spans) > 1 else None
                launched.append((cond, spans, buf, [asyncio.ensure_future(self._fetch(
                    key, a, b, None, cond, into=None if buf is None else buf[a - start:b - start]))
                    for a, b in spans[1:]]))
        try:
            first = await self._fetch(key, start, stop, None, if_match, on_meta)
            if first is None or len(first.data) < stop - start:
                return first                     # missing, or the object ends in the lead
            on_meta(first.etag, first.size)
            cond, spans, buf, tasks = launched[0]
            if not tasks:
                return first
            rest = await asyncio.gather(*tasks)
            if if_match is None and first.etag != cond:
                raise Failure("precondition", 412)
            return _assembled(first, rest, buf, spans)
        finally:
            for *_, tasks in launched:       # after a failure, spans still in flight are dropped
                for t in tasks:
                    t.cancel()
                if tasks:
                    await asyncio.gather(*tasks, return_exceptions=True)

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
        part = part_for(rng.length, self.options.in_flight, self.options)
        return await self._read_span(key, rng.offset, rng.offset + rng.length, if_match, part)

    async def _read_many(self, requests: Sequence[Request], if_match: str | None = None,
                         sizes: list | None = None) -> list[tuple[Buffer | None, str | None]]:
        """``(bytes or None, etag)`` per request: slices of one object coalesced, everything
        in flight at once. ``sizes`` (a list as long as ``requests``): set to each object's
        whole size where the answer gives it."""
        out: list[tuple[Buffer | None, str | None]] = [(None, None)] * len(requests)
        slices: dict[str, list[int]] = {}
        tasks: list[Awaitable[None]] = []

        async def single(i: int, key: str, rng: ByteRange | None) -> None:
            got = await self._read_one(key, rng, if_match)
            out[i] = (None, None) if got is None else (got.data, got.etag)
            if sizes is not None and got is not None:
                sizes[i] = got.size

        async def span(key: str, start: int, stop: int, members: list[tuple[int, int, int]],
                       part: int) -> None:
            got = await self._read_span(key, start, stop, if_match, part)
            if got is None:
                return
            view = memoryview(got.data)
            for i, a, b in members:
                out[i] = (view[a - start:b - start], got.etag)
                if sizes is not None:
                    sizes[i] = got.size

        for i, (key, rng) in enumerate(requests):
            key = self._key(key)
            if rng is not None and rng.suffix is None and rng.length and not rng.is_full:
                slices.setdefault(key, []).append(i)
            else:
                tasks.append(self._naming(key, single(i, key, rng)))
        opts = self.options
        spans: list[tuple[str, int, int, list[tuple[int, int, int]]]] = []
        for key, idx in slices.items():
            ranges = [(requests[i][1].offset, requests[i][1].offset + requests[i][1].length)
                      for i in idx]
            for sp in coalesce(ranges, opts.coalesce_gap, opts.max_request):
                spans.append((key, sp.start, sp.stop, [(idx[m], *ranges[m]) for m in sp.members]))
        part = part_for(sum(b - a for _, a, b, _ in spans), opts.in_flight - len(tasks), opts)
        tasks.extend(self._naming(sp[0], span(*sp, part)) for sp in spans)
        # the spans of one object share one whole-object GET when they meet a server ignoring
        # ranges; those far apart (a gap past max_request) are kept apart, so such a GET keeps
        # no more than max_request bytes the read does not need
        stretches: dict[str, list[tuple[int, int]]] = {}
        for key, a, b, _ in spans:
            stretches.setdefault(key, []).append((a, b))
        stretches = {k: [(s.start, s.stop) for s in coalesce(v, opts.max_request, 1 << 62)]
                     for k, v in stretches.items()}
        if tasks:
            with reading(stretches):
                await gather_all(tasks)
        return out

    @staticmethod
    async def _naming(key: str, read: Awaitable[None]) -> None:
        """``await read``, a read of ``key``; a failed condition it raises names the key."""
        try:
            await read
        except Failure as fail:
            fail.key = fail.key or key
            raise

    async def _retry_whole(self, key: str, rng: ByteRange | None) -> Got | None:
        """An unconditioned read whose later parts found a newer version: read again."""
        for _ in range(READ_ATTEMPTS):
            try:
                return await self._read_one(key, rng, None)
            except Failure:
                continue
        raise kept_changing(self, key, 1)

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
        batch = self._batches[slot] = ReadBatch(asyncio.get_running_loop().create_future())
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
        try:
            got = await self._fetch(key, None, None, n, None)
        except Failure:
            # a backend that asks an object's version after reading it found the object
            # replaced in between on every read: the snapshot starts at the version seen
            # then, without the tail, and its conditioned reads find any later change
            head = await self._stat(key)
            return None if head is None else Got(b"", head[0], head[1], head[1])
        if got is not None and got.size is None:          # a backend that gives no size
            head = await self._stat(key)
            if head is None:
                return None
            got.size, got.start = head[1], head[1] - len(got.data)
        return got


class RemoteSnapshot(ObjectSnapshot):
    """One version of a remote object: the tail read when it was opened, then reads
    conditioned on its ETag (If-Match); ConflictError once the object has changed."""

    def __init__(self, store: Any, key: str, tail: Got) -> None:
        self.store, self.key = store, key
        self.generation = etag_generation(tail.etag)
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
            cond = if_match_of(self.generation)
            try:
                got = self.store._run(self.store._combined(self.key, cond,
                                                           [r for _, r in fetch]))
            except Failure:
                self.store._forget(self.key)
                raise conflict(self.store, self.key, "read a snapshot of", self.generation,
                               self.store.generation(self.key)) from None
            for (i, _), (data, etag) in zip(fetch, got):
                if data is None or etag_generation(etag) != self.generation:
                    self.store._forget(self.key)
                    raise conflict(self.store, self.key, "read a snapshot of",
                                   self.generation, etag_generation(etag) if data is not None else None)
                out[i] = data
        return out

    def close(self) -> None:
        self._open = False

    def __repr__(self) -> str:
        return f"<snapshot of {self.key!r} in {self.store!r} at {self.generation!r}>"


@dataclass(slots=True)
class ReadBatch:
    """Reads of one object version waiting to go out together."""

    done: asyncio.Future
    requests: list = field(default_factory=list)
