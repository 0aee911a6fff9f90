"""The failures of the filesystems behind an :class:`~zarrx.store.remote.fsspecstore.FsspecStore`
classified: botocore's (s3fs) and aiohttp's errors by the HTTP status, error code and
``Retry-After`` header of their response, fsspec's by their exception class, botocore's
configuration errors without the values of secret storage options, and the entries zipfile
cannot read.
"""
from __future__ import annotations

import asyncio
import re
from typing import Any

from zarrx.store.remote.common import Failure, first_line, retry_after_seconds, status_kind
from zarrx.store.remote.references import bad_part, malformed_reference, unknown_protocol
from zarrx.store.remote.storage_options import without_values
from zarrx.store.remote.urls import redact_urls

__all__ = ["failure_of"]


def failure_of(exc: BaseException, fs: Any, storage_options: dict) -> Failure | None:
    """``exc``, raised by the filesystem ``fs`` (opened with ``storage_options``), classified;
    None when it is not the filesystem's (a bug: re-raised)."""
    if type(exc).__name__ == "ReferenceNotReachable" and exc.__cause__ is not None:
        return _unreachable(exc, fs, storage_options)
    if (malformed := malformed_reference(exc, fs)) is not None:
        return malformed
    if (answer := _gcs_answer(exc)) is not None:
        status, said = answer
        kind = status_kind(status, "")
        # a 4xx without a meaning of its own (400, 409, ...): the server's message says why
        said = without_values(redact_urls(said), _secrets(storage_options))
        return Failure("precondition", 412) if status == 412 else \
            Failure(kind, status, said if kind == "other" else "")
    status, code, headers = _response_of(exc)
    if status is not None:
        if status == 412 or code == "PreconditionFailed":
            return Failure("precondition", 412, code)
        return Failure(status_kind(status, code), status, code,
                       retry_after_seconds(_header(headers, "retry-after")))
    if isinstance(exc, (ValueError, RuntimeError, KeyError, TypeError)) \
            and _raised_in(exc, "botocore.parsers"):
        # botocore reading an answer it cannot parse (a Last-Modified that is no date, a
        # Content-Length that is no number): the server's fault, not a bug of the caller
        return Failure("bad_response", None, f"botocore cannot read the server's answer: "
                       f"{type(exc).__name__}: {first_line(exc)}")
    if isinstance(exc, FileNotFoundError):
        return Failure("missing", 404)
    if isinstance(exc, NotADirectoryError):
        # a key below a file (a local filesystem): no such key, as LocalStore reads it
        return Failure("missing", None, type(exc).__name__)
    if isinstance(exc, FileExistsError):
        # a filesystem's error, not an HTTP answer: no status to show
        return Failure("exists", None, type(exc).__name__)
    if isinstance(exc, PermissionError):
        return Failure("access", 403)
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return Failure("timeout")
    if isinstance(exc, ConnectionError) or type(exc).__name__ in (
            "EndpointConnectionError", "ConnectionClosedError", "ClientConnectorError",
            "ServerDisconnectedError", "ClientOSError", "ClientPayloadError",
            "ResponseStreamingError", "IncompleteReadError"):
        return Failure("connection", None, type(exc).__name__)
    if type(exc).__name__ in ("ReadTimeoutError", "ConnectTimeoutError", "ServerTimeoutError",
                              "SocketTimeoutError", "ConnectionTimeoutError"):
        return Failure("timeout", None, type(exc).__name__)
    if type(exc).__name__ == "TooManyRedirects":       # aiohttp's, status 0
        return Failure("bad_response", None, "the server's redirects cannot be "
                       "followed (a loop, or too many)")
    if isinstance(exc, OSError) or type(exc).__module__.startswith("aiohttp."):
        return Failure("other", None, type(exc).__name__)
    if isinstance(exc, TypeError) and "unexpected keyword argument" in str(exc):
        # a storage option the filesystem's client does not take (s3fs hands them on
        # when its first request opens a session)
        return Failure("config", None, f"storage_options: {exc}")
    if type(exc).__module__.startswith("botocore."):
        # what botocore finds wrong with the configuration when s3fs opens its session
        # (no or partial credentials, an unknown profile, an invalid region, ...)
        from botocore import exceptions as bex
        name = type(exc).__name__
        if isinstance(exc, (bex.ConnectionError, bex.HTTPClientError)):
            return Failure("connection", None, name)
        if name == "ParamValidationError":
            # a request botocore will not send (a bucket name it refuses): its report, not
            # its first line ("Parameter validation failed:"), and not the options' fault;
            # a bucket name's pattern is given without its long ARN alternative
            report = str(getattr(exc, "kwargs", {}).get("report") or exc).strip()
            report = report.splitlines()[0].split(" or be an ARN", 1)[0]
            return Failure("config", None, "botocore refused the request: "
                           + without_values(report, _secrets(storage_options)))
        text = without_values(f"{name}: {first_line(exc)}",
                               _secrets(storage_options))
        if name in ("NoCredentialsError", "PartialCredentialsError",
                    "CredentialRetrievalError", "UnauthorizedSSOTokenError",
                    "TokenRetrievalError"):
            return Failure("access", None, f"credentials: {text}")
        return Failure("config", None, f"storage_options: {text}")
    import zipfile
    if getattr(fs, "protocol", None) in ("zip", ("zip",)) and isinstance(
            exc, (zipfile.BadZipFile, NotImplementedError, RuntimeError)):
        # zipfile on an entry it cannot read: a CRC-32 mismatch, a compression method it
        # lacks, an encrypted entry
        return Failure("bad_response", None, f"the zip entry cannot be read: "
                       f"{type(exc).__name__}: {first_line(exc)}")
    return None


def _unreachable(exc: BaseException, fs: Any, storage_options: dict) -> Failure:
    """The failure of a kerchunk reference (fsspec's reference filesystem) whose target
    cannot be read, classified by why (a server that failed is asked again), naming the
    target without credentials. A missing target is no missing key (the reference says the
    key holds data, which a read of its fill value would lose): an error naming it."""
    from zarrx.store.remote.urls import redact, redact_urls
    target = redact(str(getattr(exc, "target", "")))
    cause = exc.__cause__
    if fs is not None and (bad := bad_part(exc, fs)) is not None:
        return bad
    if cause is not None and (why := unknown_protocol(cause, target, fs)) is not None:
        return Failure("config", None, f"the target of its reference, {target!r}: {why}")
    if "{{" in target:
        return Failure("config", None, f"the target of its reference, {target!r}, names a "
                       f"template the reference set does not define")
    fail = failure_of(cause, None, storage_options) if cause is not None else None
    if fail is None:
        return Failure("other", None, f"the target of its reference, {target!r}, cannot be "
                       f"read: {type(cause).__name__}: {redact_urls(first_line(cause))}")
    if fail.kind in ("missing", "not_found", "range"):
        return Failure("not_found", None, f"the target of its reference, {target!r}, is "
                       f"missing")
    fail.detail = f"the target of its reference, {target!r}: {fail.detail or fail.kind}"
    return fail


_SECRET_NAME = re.compile(r"key|secret|token|password|credential", re.IGNORECASE)


def _secrets(so: dict) -> dict:
    """The storage options (nested dicts included) whose names say they may hold a secret."""
    out: dict = {}
    for name, value in so.items():
        if isinstance(value, dict):
            out.update({f"{name}.{k}": v for k, v in _secrets(value).items()})
        elif _SECRET_NAME.search(str(name)):
            out[name] = value
    return out


def _response_of(exc: BaseException) -> tuple[int | None, str, Any]:
    """HTTP status, error code and response headers (None: unknown) of a botocore, aiohttp or
    gcsfs error in ``exc`` or its causes."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 5:
        resp = getattr(cur, "response", None)
        if isinstance(resp, dict) and "Error" in resp:
            meta = resp.get("ResponseMetadata") or {}
            status = meta.get("HTTPStatusCode")
            code = str(resp["Error"].get("Code", ""))
            if status is None and code.isdigit():
                status = int(code)
            return (int(status) if status else None), code, meta.get("HTTPHeaders")
        st = getattr(cur, "status", None)             # aiohttp's ClientResponseError
        if type(cur).__name__ == "HttpError" and type(cur).__module__.startswith("gcsfs"):
            st = getattr(cur, "code", None)           # gcsfs's answer of a status it names
        if isinstance(st, int) and 100 <= st < 600:
            return st, "", getattr(cur, "headers", None)
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return None, "", None


def _gcs_answer(exc: BaseException) -> tuple[int, str] | None:
    """The HTTP status and the server's message (``""``: none) of the GCS error answer gcsfs
    raised ``exc`` (or one of its causes) for, as its ``validate_response`` read them: gcsfs
    keeps no status in some of what it raises (a 403 as an ``OSError``, a 502 as requests'
    ``ProxyError``, a 400 whose message says "invalid" as a ``ValueError``), and an
    ``HttpError``'s ``code`` is the one the answer's body names, whatever it is."""
    cur: BaseException | None = exc
    for _ in range(5):
        if cur is None:
            break
        tb = cur.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_name == "validate_response" \
                    and frame.f_globals.get("__name__") == "gcsfs.retry":
                status, said = frame.f_locals.get("status"), frame.f_locals.get("msg")
                if isinstance(status, int) and 100 <= status < 600:
                    said = said.strip().splitlines()[0][:200] \
                        if isinstance(said, str) and said.strip() else ""
                    return status, said
            tb = tb.tb_next
        cur = cur.__cause__ or cur.__context__
    return None


def _header(headers: Any, name: str) -> str | None:
    """The value of the header ``name`` (any case) in a mapping of headers, or None."""
    if not hasattr(headers, "items"):
        return None
    return next((v for k, v in headers.items() if str(k).lower() == name), None)


def _raised_in(exc: BaseException, module: str) -> bool:
    """Whether ``exc`` was raised in (or below a call from) the module ``module``."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == module:
            return True
        tb = tb.tb_next
    return False
