"""The GETs :class:`~zarrx.store.remote.fsspecstore.FsspecStore` makes itself rather than
through fsspec's calls: ranges of HTTP objects and of S3 objects (through s3fs's client), their
bodies read as they stream and no further than the bytes asked for."""
from __future__ import annotations

import re
from typing import Any

from zarrx.store.remote.common import (Buffer, Failure, Got, OnMeta, asked, body_limit,
                                       collected, sent_if_match, window)

__all__ = ["http_range", "s3_get"]

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


async def http_range(fs: Any, path: str, start: int, stop: int | None,
                     into: memoryview | None = None) -> tuple[Buffer, bool | int]:
    """Bytes ``start`` (negative: from the end) to ``stop`` of an HTTP object, requested
    with the HTTP filesystem ``fs``'s session and options, and whether the body went on past
    the range (then it is left unread: the object's size as its Content-Range says, or True);
    from a server that ignores the range, the range is taken from the whole body as it
    streams by and the rest is left unread, so the answer costs no more memory than the
    range, whatever size the server claims. The bytes go into ``into`` when given and the
    answer is partial."""
    kw = dict(fs.kwargs)
    headers = dict(kw.pop("headers", None) or {})
    headers["Range"] = await fs._process_limits(path, start, stop)
    session = await fs.set_session()
    async with session.get(fs.encode_url(path), headers=headers, **kw) as r:
        fs._raise_not_found_for_status(r, path)
        a, b = (start, stop) if start >= 0 else (None, None)
        suffix = -start if start < 0 else None
        if r.status == 200 and r.content_length is None:
            return await r.read(), False
        if r.status == 200:
            lo, hi = asked(a, b, suffix, r.content_length)
            return await window(r.content.iter_chunked(1 << 20), 0, lo, hi), False
        m = _CONTENT_RANGE.match(r.headers.get("Content-Range") or "")
        claimed = int(m.group(2)) + 1 - int(m.group(1)) if m else r.content_length
        data, more = await collected(r.content.iter_chunked(1 << 20),
                                     body_limit(a, b, suffix, claimed), into)
        if more and m and m.group(3) != "*":
            return data, int(m.group(3))
        return data, more

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
    m = _CONTENT_RANGE.match(resp.get("ContentRange") or "")
    try:
        if m and on_meta is not None:
            on_meta(resp.get("ETag"), None if m.group(3) == "*" else int(m.group(3)))
        claimed = int(m.group(2)) + 1 - int(m.group(1)) if m else resp.get("ContentLength")
        data, more = await collected(body.iter_chunks(1 << 20),
                                     body_limit(start, stop, suffix, claimed), into)
    finally:
        body.close()
    if m:
        size = None if m.group(3) == "*" else int(m.group(3))
        begin = int(m.group(1))
    else:
        size, begin = len(data), 0
        if "Range" in kw and (start or suffix is not None
                              or stop is not None and (more or len(data) > stop)):
            raise Failure("not_partial")
    return Got(data, resp.get("ETag"), size, begin, more)
