"""The failures of obstore classified: its exceptions by class, and by the HTTP status, S3
error code and cause its messages give (obstore shows no response headers)."""
from __future__ import annotations

import asyncio
import re
from typing import Any

from zarrx.store.remote.common import Failure, delete_failure, first_line, status_kind
from zarrx.store.remote.urls import redact_text

__all__ = ["failure_of"]

_STATUS = re.compile(r"status(?: code)?:? (\d{3})")
_CODE = re.compile(r"<Code>([A-Za-z]+)</Code>")
_HTTP_KIND = re.compile(r"HttpError \{\s*kind: (\w+)")
_UNEXPECTED_RANGE = re.compile(r"Requested (\d+)\.\.(\d+), got (\d+)\.\.(\d+)")
#: the store's own requests that obstore reports as generic errors (a listing: S3's list
#: request, WebDAV's PROPFIND); a 404 to any of its other requests is a NotFoundError
_OWN_GENERIC = re.compile(r"list request|PROPFIND")
_QUERY = re.compile(r"\?\S*")
_DELETE_ERROR = re.compile(r"DeleteObjects request failed for key (.*?): .*\(code: (\w+)\)")
_DELETE_RESULT_ERROR = re.compile(r"<DeleteResult.*?<Error>\s*<Key>([^<]*)</Key>\s*"
                                  r"<Code>(\w+)</Code>", re.S)
_CONTENT_RANGE = re.compile(r'Failed to parse value for CONTENT_RANGE header: "([^"\n]*)"')
_RANGE_OF_UNKNOWN_SIZE = re.compile(r"bytes (\d+)-(\d+)/\*")


def failure_of(exc: BaseException, ex: Any, web: bool = False) -> Failure | None:
    """``exc``, raised by an obstore call, classified (``ex``: ``obstore.exceptions``; ``web``:
    whether the store reads a web server, ``http(s)://``); None when it is not obstore's (a
    bug: re-raised)."""
    known = (ex.BaseError, FileNotFoundError, FileExistsError, PermissionError,
             NotImplementedError)
    if not isinstance(exc, known):
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
            return Failure("timeout")
        if isinstance(exc, ConnectionError):
            return Failure("connection", None, type(exc).__name__)
        return None
    text = str(exc)
    m = _STATUS.search(text)
    status = int(m.group(1)) if m else None
    c = _CODE.search(text)
    code = c.group(1) if c else ""
    if code == "ConditionalRequestConflict":
        # S3's 409 while another conditional write of the key is under way: obstore takes
        # it for a failed condition, but the server asks for the request again
        return Failure(status_kind(status or 409, code), status or 409, code)
    if isinstance(exc, (ex.NotFoundError, FileNotFoundError)) and status in (None, 404):
        return Failure("not_found" if code == "NoSuchBucket" else "missing", 404, code)
    if isinstance(exc, (ex.AlreadyExistsError, FileExistsError)):
        return Failure("exists", status or 412, code)
    if isinstance(exc, (ex.PreconditionError, ex.NotModifiedError)):
        return Failure("precondition", status or 412, code)
    if isinstance(exc, (ex.PermissionDeniedError, ex.UnauthenticatedError, PermissionError)):
        return Failure("access", status or 403, code)
    low = text.splitlines()[0].lower() if text else ""
    if (m := _DELETE_ERROR.search(text) or _DELETE_RESULT_ERROR.search(text)) is not None:
        # a multi-object delete whose answer names a failure for one of its keys (obstore
        # shows an InternalError or SlowDown there as the answer's body)
        return delete_failure(m.group(2), m.group(1))
    if "non-partial response" in low or "range request not supported" in low:
        return Failure("not_partial", None, "the server ignored the range")
    if "redirect without location" in low:
        # S3's 301 PermanentRedirect: the bucket lives in another region than the client's
        return Failure("config", 301, "the server redirected the request without saying "
                       "where (S3 does so when the bucket is in another region): set the "
                       "bucket's region in storage_options (region=...)")
    if (m := _CONTENT_RANGE.search(text)) is not None:
        if _RANGE_OF_UNKNOWN_SIZE.fullmatch(m.group(1)):
            # a range of an object of unknown length ("bytes 0-9/*", which HTTP allows):
            # obstore cannot read such an answer, so the range is cut from a GET of the
            # whole object, as for a server that ignores ranges
            return Failure("not_partial", None, "the server gave no object size")
        return Failure("bad_response", None, f"the server sent a Content-Range that is not "
                       f"a range of bytes: {m.group(1)!r}")
    if "content-range header not present in partial response" in low:
        return Failure("bad_response", None, "the server sent a partial answer (HTTP 206) "
                       "without a Content-Range")
    if "content-length header missing" in low:
        # FsspecStore reads a web server's answers without one (reading the object to know
        # its size), not an S3 server's: s3fs needs the size a HEAD gives
        return Failure("bad_response", None, "the server's answer has no Content-Length "
                       "header, which ObjectStore needs" + (" (FsspecStore reads such "
                                                           "servers)" if web else ""))
    if isinstance(exc, (ex.NotSupportedError, NotImplementedError)):
        return Failure("unsupported", status, "not supported by the backend")
    if (m := _UNEXPECTED_RANGE.search(text)) is not None:
        a, b, c, d = (int(g) for g in m.groups())
        return Failure("bad_response", None, f"the server sent bytes {c}-{d - 1} for "
                       f"bytes {a}-{b - 1}")
    if "error following redirect" in low:
        return Failure("bad_response", None, "the server's redirects cannot be "
                       "followed (a loop, or too many)")
    if isinstance(exc, ex.InvalidPathError):
        # a listed object whose name obstore cannot take as a path ("a//b", "a/./b", a
        # control character): the message quotes the name and says what is wrong with it
        # (all of it: a name may hold a line break; the store escapes what is not printable)
        said = text.split("\n\nDebug source:", 1)[0]
        return Failure("invalid_path", None, "obstore cannot read an object's name: "
                       + said.replace("Encountered object with invalid path: ", ""))
    if status == 404 and code != "NoSuchBucket" and not _OWN_GENERIC.search(text):
        # a 404 obstore does not raise as a NotFoundError answered a request other than the
        # store's own: one for its credentials (an instance metadata service without a role
        # answers 404), made before the request of the key. The key is not known missing;
        # taking it so would read every chunk as the fill value
        request = first_line(exc).partition(" error: ")[2] or first_line(exc)
        return Failure("other", 404, "a request other than the key's own failed: "
                       + redact_text(_QUERY.sub("", request)).rstrip(": "))
    if status is not None:
        return Failure(status_kind(status, code), status, code)
    kind = _HTTP_KIND.search(text)
    if kind is not None:
        k = kind.group(1)
        if k == "Timeout":
            return Failure("timeout", None, "timed out")
        if k in ("Connect", "Request", "Interrupted"):
            return Failure("connection", None, f"{k.lower()} error")
    if "timed out" in low or "timeout" in low:
        return Failure("timeout", None, "timed out")
    if "connect" in low or "error sending request" in low or "connection" in low:
        return Failure("connection", None, "connection failed")
    # obstore's first line says the cause after the request it failed ("Error performing
    # GET <url> in 1ms - HTTP error: builder error") or after the store ("Generic HTTP
    # error: Failed to parse value for CONTENT_RANGE header: ...")
    first = str(exc).splitlines()[0] if str(exc) else ""
    cause = (first.rpartition(" - ")[2] if " - " in first else first.partition(": ")[2])
    cause = cause[:200]
    return Failure("other", None, type(exc).__name__ + (
        f": {redact_text(cause)}" if cause else ""))
