"""The GETs :class:`~zarrx.store.remote.fsspecstore.FsspecStore` makes itself rather than
through fsspec's calls: ranges of HTTP objects and of S3 objects (through s3fs's client), their
bodies read as they stream and no further than the bytes asked for."""
from __future__ import annotations

import re
from typing import Any

from zarrx.store.remote.common import (Buffer, Failure, Got, OnMeta, asked, body_limit,
                                       collected, sent_if_match, window)

__all__ = ["http_range", "content_range", "misplaced", "s3_get"]

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


async def http_range(fs: Any, path: str, start: int, stop: int | None,
                     into: memoryview | None = None
                     ) -> tuple[Buffer, bool | int, int | None, tuple[str, int] | None, bool]:
    """Bytes ``start`` (negative: from the end) to ``stop`` of an HTTP object, requested
    with the HTTP filesystem ``fs``'s session and options, whether the body went on past
    the range (then it is left unread: the object's size as its Content-Range says, or True),
    the first byte the answer's Content-Range says it holds (None: it has none), and the
    version the answer names, its ETag and the object's size (None: it names no ETag or no
    size, and a HEAD must say them); from a
    server that ignores the range, the range is taken from the whole body as it
    streams by and the rest is left unread, so the answer costs no more memory than the
    range, whatever size the server claims. The bytes go into ``into`` when given and the
    answer is partial. Last: whether the answer was the whole object (HTTP 200)."""
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {})
    headers["Range"] = await fs._process_limits(path, start, stop)
    session = await fs.set_session()
    async with session.get(fs.encode_url(path), headers=headers, **kw) as r:
        fs._raise_not_found_for_status(r, path)
        a, b = (start, stop) if start >= 0 else (None, None)
        suffix = -start if start < 0 else None
        if r.status == 200 and r.content_length is None:
            return await r.read(), False, None, None, True
        if r.status == 200:
            lo, hi = asked(a, b, suffix, r.content_length)
            return (await window(r.content.iter_chunked(1 << 20), 0, lo, hi), False, None, None,
                    True)
        first, last, size = content_range(r.headers.get("Content-Range"))
        data, more = await collected(r.content.iter_chunked(1 << 20),
                                     body_limit(a, b, suffix, last + 1 - first), into)
        if more and size is not None:
            return data, size, first, None, False
        # the version of these very bytes: a HEAD after them may find another one, or be
        # answered without the size (servers that answer HEAD with Content-Length: 0)
        etag = r.headers.get("ETag")
        return data, more, first, None if etag is None or size is None else (etag, size), False


def content_range(value: str | None) -> tuple[int, int, int | None]:
    """The first and last byte and the object's size (None: ``*``, unknown) that the
    Content-Range ``value`` of a partial answer (HTTP 206) names; a bad response when there is
    none or it names no range of the object's bytes (its bytes could be any)."""
    if value is None:
        raise Failure("bad_response", None, "the server sent a partial answer (HTTP 206) "
                      "without a Content-Range")
    m = _CONTENT_RANGE.fullmatch(value.strip())
    if m is not None:
        first, last = int(m.group(1)), int(m.group(2))
        size = None if m.group(3) == "*" else int(m.group(3))
        if first <= last and (size is None or last < size):
            return first, last, size
    raise Failure("bad_response", None, f"the server sent a Content-Range that is not a "
                  f"range of bytes: {value!r}")


def misplaced(first: int | None, n: int, begin: int, end: int) -> Failure | None:
    """The failure of an answer of ``n`` bytes whose Content-Range says they begin at byte
    ``first`` (None: it says nothing), to a request for bytes ``[begin, end)`` (resolved at
    the object's size); None when they are those bytes or the answer names no range. A
    server answering with bytes of another range of the same length (``bytes 0-999`` for
    ``bytes=100-1099``) must not have them taken for the range asked for."""
    if first is None or first == begin:
        return None
    return Failure("bad_response", None, f"the server sent bytes {first}-{first + n - 1} for "
                   f"bytes {begin}-{end - 1}")


async def s3_get(fs: Any, bucket: str, k: str, start: int | None, stop: int | None,
                 suffix: int | None, if_match: str | None, on_meta: OnMeta | None,
                 into: memoryview | None) -> Got:
    """Bytes ``[start, stop)`` (or the last ``suffix``; neither: all) of the object ``k`` of
    ``bucket``, through the S3 client of the s3fs filesystem ``fs``, read up to the length
    asked for whatever the server sends (into ``into`` when given); ``on_meta`` hears the
    ETag and object size once the headers give them."""
    kw: dict[str, Any] = {"Bucket": bucket, "Key": k}
    if suffix is not None:
        kw["Range"] = f"bytes=-{suffix}"
    elif stop is not None:
        kw["Range"] = f"bytes={start or 0}-{stop - 1}"
    elif start:
        kw["Range"] = f"bytes={start}-"
    if (cond := sent_if_match(if_match)) is not None:
        kw["IfMatch"] = cond
    resp = await fs._call_s3("get_object", **kw)
    body = resp["Body"]
    try:
        cr = None if resp.get("ContentRange") is None else content_range(resp["ContentRange"])
        if cr and on_meta is not None:
            on_meta(resp.get("ETag"), cr[2])
        claimed = cr[1] + 1 - cr[0] if cr else resp.get("ContentLength")
        data, more = await collected(body.iter_chunks(1 << 20),
                                     body_limit(start, stop, suffix, claimed), into)
    finally:
        body.close()
    if cr:
        begin, size = cr[0], cr[2]
    else:
        size, begin = len(data), 0
        if "Range" in kw and (start or suffix is not None
                              or stop is not None and (more or len(data) > stop)):
            raise Failure("not_partial")
    return Got(data, resp.get("ETag"), size, begin, more)
