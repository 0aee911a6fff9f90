"""The values remote stores pass around: classified failures, entity tags as generations,
GET answers, and the helpers over them that reads and writes share."""
from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
import random
from typing import Any

from zarrx.errors import (ConflictError, RemoteConnectionError, RemoteServerError,
                          RemoteThrottledError, RemoteTimeoutError)
from zarrx.store._values import Value
from zarrx.store.base import as_buffer

__all__ = ["Failure", "ETag", "Got", "TRANSIENT", "etag_generation", "if_match_of", "joined",
           "to_bytes", "as_view", "gather_all", "OnMeta", "retry_after_seconds", "asked",
           "window", "collected", "body_limit", "listed_once", "listed_twice", "listed_too_many",
           "status_kind", "retry_delay",
           "first_line", "sent_if_match", "answer_problem", "delete_failure", "kept_changing",
           "READ_ATTEMPTS", "FORBIDDEN_HINT", "CREDENTIAL_CODES",
           "forbidden_hint", "shown_text", "upload_view"]

Buffer = Any   # bytes, bytearray, memoryview or a backend's buffer object
OnMeta = Callable[[str | None, int | None], None]   # hears a GET's ETag and object size

#: said after a 403 to a read: it may be how the server says a key is missing
FORBIDDEN_HINT = ("; a server that answers 403 where a key is missing (S3 without list "
                  "permission, some web hosts) reads as missing keys with "
                  "forbidden_is_missing=True")

#: S3's error codes for credentials it refuses (an unknown access key, a wrong secret, an
#: expired session token): never a missing key, whatever forbidden_is_missing says
CREDENTIAL_CODES = frozenset(["InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken",
                              "InvalidToken", "TokenRefreshRequired"])


def forbidden_hint(code: str) -> str:
    """What to say after a 403 to a read answered with the error ``code``."""
    if code in CREDENTIAL_CODES:
        return ("; the server refused the credentials: check the access key and secret "
                "(storage_options access_key_id and secret_access_key, or key and secret), "
                "the session token and the AWS_* environment variables")
    return FORBIDDEN_HINT

TRANSIENT = {"throttled": RemoteThrottledError, "server": RemoteServerError,
             "timeout": RemoteTimeoutError, "connection": RemoteConnectionError}


class Failure(Exception):
    """A backend's failure, classified. ``kind`` is one of: missing, precondition, exists,
    range (HTTP 416), access, not_found (a bucket or path, not a key), throttled, server,
    timeout, connection, unsupported, bad_response (an answer that is not what was asked
    for: ``detail`` says how), config (a storage option the backend refused: ``detail``),
    invalid_path (a listed name the backend cannot take: ``detail``), other.
    ``retry_after``: the seconds the server asked the client to wait before trying again (its
    ``Retry-After`` header, when the backend shows it), or None. ``key``: the key read when a
    batch's read of it failed (None: not known). ``found``: for a failed condition, the ETag
    of the object found after it, in a 1-tuple (None inside: no object; None: not looked)."""

    def __init__(self, kind: str, status: int | None = None, detail: str = "",
                 retry_after: float | None = None) -> None:
        super().__init__(kind, status, detail)
        # what a server says, or a stored name, as messages show it
        self.kind, self.status, self.detail = kind, status, shown_text(detail)
        self.retry_after = retry_after
        self.key: str | None = None
        self.found: tuple[str | None] | None = None

    @property
    def says_all(self) -> bool:
        """Whether ``detail`` says all there is to say (a message shows it alone): for a bad
        response, a configuration refused, a name that cannot be taken, and a path not found
        that is no HTTP answer (the target of a reference)."""
        return self.kind in ("bad_response", "config", "invalid_path") or (
            self.kind == "not_found" and self.status is None and bool(self.detail))


#: how many times a read whose later parts found a newer version of an object is made
READ_ATTEMPTS = 8


def kept_changing(store: Any, key: str | None, n: int) -> ConflictError:
    """The error of ``store``'s reads (``n`` of them, in a batch) that found a newer version of
    an object ``READ_ATTEMPTS`` times, the last time reading ``key`` (None: not known)."""
    if key is None:
        return ConflictError(f"{store!r}: a batch of {n} reads kept finding newer versions "
                             "of its objects")
    return ConflictError(f"{store!r}: cannot read {key!r} ({store.address(key)}): it changed "
                         f"during each of {READ_ATTEMPTS} reads")


def status_kind(status: int, code: str) -> str:
    """The :class:`Failure` kind of an HTTP status (and the server's error code)."""
    if status in (401, 403):
        return "access"
    if status == 404:
        return "not_found" if code == "NoSuchBucket" else "missing"
    if status == 412:
        return "precondition"
    if status == 416:
        return "range"
    if status == 429 or (status == 503 and code == "SlowDown") \
            or (status == 409 and code == "ConditionalRequestConflict"):
        # (S3's 409 ConditionalRequestConflict: another conditional write of the key is under
        # way, try again)
        return "throttled"
    if status in (405, 501):
        return "unsupported"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    return "other"


#: the HTTP status an S3 error code given for one key of a multi-object delete stands for
_DELETE_CODES = {"AccessDenied": 403, "NoSuchKey": 404, "SlowDown": 503, "InternalError": 500,
                 "ServiceUnavailable": 503}


def delete_failure(code: str, key: str) -> Failure:
    """The failure of an S3 multi-object delete that answered ``code`` for the object ``key``
    (its full name): a missing key for NoSuchKey, a refusal for AccessDenied, a transient
    failure (retried) for SlowDown and InternalError, else another failure, saying both."""
    status = _DELETE_CODES.get(code)
    kind = "other" if status is None else status_kind(status, code)
    return Failure(kind, status, f"{code} for {key!r}")


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message, at most 200 characters."""
    return str(exc).splitlines()[0][:200] if str(exc) else ""


def shown_text(text: str, limit: int = 300) -> str:
    """``text`` from a server or a stored name (an error code, an object's name) as an error
    message shows it: its control characters escaped (``\\x1b``, ``\\n``), so that it never
    sends escape sequences to a terminal or breaks the message's line, and at most ``limit``
    characters, so that a server cannot make a message of its whole answer."""
    if not text.isprintable():
        text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def retry_after_seconds(value: object, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds: a number of seconds, or an
    HTTP date (the wait until then, 0 when it is past); None when ``value`` is neither (a
    header a client cannot read is ignored, as HTTP says)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:         # HTTP dates are GMT; other text is not one
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


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


def etag_generation(etag: str | None) -> ETag | None:
    return None if etag is None else ETag(etag)


def sent_if_match(etag: str | None) -> str | None:
    """The If-Match header to send for a read of the version ``etag``: None for a weak ETag
    (``W/"..."``), which If-Match never matches (a server that follows HTTP answers 412
    whatever the object's state); the answer's ETag is compared with it instead."""
    return None if etag is None or etag.startswith("W/") else etag


def if_match_of(generation: object) -> str | None:
    """The If-Match value for a generation (None: not one of ours)."""
    return generation.value if isinstance(generation, ETag) else None


@dataclass(slots=True)
class Got:
    """A GET's answer: ``data`` starts at byte ``start`` of an object of ``size`` bytes (None:
    unknown) at ``etag`` (None: the backend gives none); ``more``: the body went on past
    ``data``, which holds all the bytes the request could ask for (the rest was left unread)."""

    data: Buffer
    etag: str | None
    size: int | None
    start: int
    more: bool = False


def asked(start: int | None, stop: int | None, suffix: int | None, size: int
          ) -> tuple[int, int]:
    """The bytes ``[lo, hi)`` of an object of ``size`` bytes that a GET of a range (``start``
    to ``stop``, or the last ``suffix`` bytes) asks for, clipped at its end."""
    if suffix is not None:
        return max(0, size - suffix), size
    lo = min(start or 0, size)
    return lo, size if stop is None else max(lo, min(stop, size))


async def window(pieces: AsyncIterator[Buffer], at: int, lo: int, hi: int) -> bytearray:
    """Bytes ``[lo, hi)`` of an object from a response body streamed as ``pieces``, whose
    first byte is the object's byte ``at``. The body is left unread once they have passed (the
    caller drops it, closing its connection). A body that ends before ``hi`` is a bad
    response. The buffer grows with the bytes that come: ``hi`` may be a size the server
    claims, which is never allocated up front."""
    out = bytearray()
    async for piece in pieces:
        view = memoryview(piece)
        a, b = max(lo - at, 0), min(hi - at, len(view))
        if a < b:
            out += view[a:b]
        at += len(view)
        if at >= hi:
            break
    filled = len(out)
    if filled != hi - lo:
        raise Failure("bad_response", None, f"the answer ended after {filled} of the "
                                            f"{hi - lo} bytes asked for")
    return out


def body_limit(start: int | None, stop: int | None, suffix: int | None,
               claimed: int | None) -> int | None:
    """The most bytes the body of an answer to a GET of ``[start, stop)`` (or of the last
    ``suffix`` bytes; neither: the whole object) may hold: the length asked for, or less when
    the answer's headers (``claimed``, None: none) say the range ends earlier."""
    want = suffix if suffix is not None else None if stop is None else max(0, stop - (start or 0))
    if want is None:
        return claimed
    return want if claimed is None else min(want, claimed)


async def collected(pieces: AsyncIterator[Buffer], limit: int | None,
                    into: memoryview | None = None) -> tuple[Buffer, bool]:
    """A response body streamed as ``pieces`` that should hold at most ``limit`` bytes (None:
    no bound), and whether it went on past them. The bytes go into ``into`` (a writable view of
    at least ``limit`` bytes) when given, else a body of one piece is kept as it came, and a
    longer one goes into a buffer that grows with the bytes that come (``limit`` may be a
    length the server's headers claim, which is never allocated up front). Reading stops at the first piece past ``limit``: the rest of the body is left
    unread (the caller drops it, closing its connection), so a server sending more than it
    was asked for costs the bytes asked for and a piece."""
    out: Any = None                  # the pieces read so far (not into), once there are two
    first: Any = b""                 # the one piece read so far (not into): kept as it came
    n = 0
    more = False
    async for piece in pieces:
        view = memoryview(piece).cast("B")
        room = len(view) if limit is None else min(len(view), limit - n)
        if into is not None:
            into[n:n + room] = view[:room]
        elif n == 0:
            first = view[:room]
        else:
            if out is None:
                out = bytearray(first)
            out += view[:room]
        n += room
        if room < len(view):
            more = True
            break
    return (into[:n] if into is not None else out if out is not None else first), more


def listed_once(seen: set[str], name: str) -> None:
    """Record ``name``, a key a listing gave; a key given twice is a bad response: a server
    that repeats its pages (one that ignores the continuation token it sent) would make the
    listing go on for ever."""
    if name in seen:
        raise listed_twice(name)
    seen.add(name)


def listed_too_many(most: int) -> Failure:
    """The failure of a listing that gave more than ``most`` keys (``RemoteOptions.max_listed``):
    a server naming new keys behind every continuation token would be listed for ever."""
    return Failure("bad_response", None, f"the server listed more than {most} keys (a listing "
                   f"that never ends?); a store holding more sets RemoteOptions.max_listed")


def listed_blank(most: int) -> Failure:
    """The failure of a listing whose server answered more than ``most`` pages naming no new
    entry, each saying the listing goes on: without a bound it would never end."""
    return Failure("bad_response", None, f"the server answered more than {most} pages naming "
                   "nothing new, each saying the listing goes on (a listing that never ends?)")


def listed_twice(name: str) -> Failure:
    """The failure of a listing that gave the key ``name`` twice (see ``listed_once``)."""
    return Failure("bad_response", None, f"the server listed {name!r} twice (a listing that "
                   "repeats itself would never end)")


def joined(first: Got, rest: Sequence[Got | None]) -> Got:
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


def to_bytes(data: Buffer) -> bytes:
    return data if type(data) is bytes else bytes(data)


def as_view(data: Buffer) -> bytes | memoryview:
    """``data`` without a copy: as it is when ``bytes``, else a read-only view of it."""
    return data if type(data) is bytes else memoryview(data).toreadonly()


async def gather_all(aws: Sequence[Awaitable[Any]]) -> list[Any]:
    """``asyncio.gather`` that, on the first error, cancels the rest and waits for them."""
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def answer_problem(start: int | None, stop: int | None, suffix: int | None, got: Got
                   ) -> str | None:
    """What is wrong with ``got`` as the answer to a GET of ``[start, stop)`` (or of the last
    ``suffix`` bytes; neither: the whole object), or None. The body must be the range asked
    for, clipped at the object's end, and begin where the range begins: a server that sends
    fewer or more bytes, or other ones, must not shift the bytes of the parts and slices cut
    from the answer."""
    n = len(got.data)
    sent = f"more than {n}" if got.more else f"{n}"
    if got.size is None:                 # the end is unknown: only a longer body is wrong
        want = suffix if suffix is not None else None if stop is None else stop - (start or 0)
        if want is not None and (n > want or got.more):
            return f"the server sent {sent} bytes for a range of {want} bytes"
        return None
    size = got.size
    if suffix is not None:
        a, b, asked = max(size - suffix, 0), size, f"the last {suffix} bytes"
    else:
        a = min(start or 0, size)
        b = size if stop is None else max(min(stop, size), a)
        asked = "the object" if not start and stop is None else \
            f"bytes {start or 0}-{'' if stop is None else stop - 1}"
    if n == b - a and got.start == a and not got.more:
        return None
    at = "" if got.start == a else f" from byte {got.start}"
    return (f"the server sent {sent} bytes{at} for {asked} of a {size}-byte object, "
            f"expected {b - a} bytes from byte {a}")


def retry_delay(opts: Any, attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before retry number ``attempt + 1``: the server's ``Retry-After`` when
    it sent one, else ``backoff * 2**attempt`` with jitter; at most ``max_backoff`` either way."""
    if retry_after is not None:
        return min(opts.max_backoff, retry_after)
    delay = min(opts.max_backoff, opts.backoff * 2 ** min(attempt, 64))   # no float overflow
    return delay * (0.5 + random.random() / 2)


def upload_view(value: object, key: str) -> memoryview:
    """A flat view of a value to upload; a pooled :class:`Value` is sealed first (remote stores
    take them: see ``RemoteStore.keeps_values``)."""
    if type(value) is Value:
        value.seal()                                 # type: ignore[attr-defined]
    return as_buffer(value, key)
