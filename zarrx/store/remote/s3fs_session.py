"""The HTTP session botocore runs the requests of an s3fs filesystem in, for an
:class:`~zarrx.store.remote.fsspecstore.FsspecStore` opened from an ``s3://`` URL: aiobotocore's
own, except that it reads at most ``ERROR_BODY`` bytes of the body of an error answer (botocore
would read all of it, however long a server makes it, to parse the error's code)."""
from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["ERROR_BODY", "session_class"]

#: the most bytes of an error answer's body read (an S3 error document is well under 1 KiB)
ERROR_BODY = 64 << 10

_CLASS: Any = None


def session_class() -> type | None:
    """aiobotocore's HTTP session class, reading at most ``ERROR_BODY`` bytes of an error
    answer's body (the rest is left unread and its connection closed); ``None`` with an
    aiobotocore whose configuration takes no session class (its own one is then used)."""
    global _CLASS
    if _CLASS is not None:
        return _CLASS
    import inspect

    import aiohttp
    try:
        from aiobotocore.config import AioConfig
        from aiobotocore.httpsession import AIOHTTPSession
    except ImportError:
        return None
    if "http_session_cls" not in inspect.signature(AioConfig.__init__).parameters:
        return None

    class BoundedErrorBodies(AIOHTTPSession):
        async def send(self, request: Any) -> Any:
            stream = request.stream_output
            request.stream_output = True                 # the body is read below
            try:
                response = await super().send(request)
            finally:
                request.stream_output = stream
            if response.status_code >= 300:
                raw = response.raw
                try:
                    response._content = await raw.content.read(ERROR_BODY)
                except (aiohttp.ClientError, asyncio.TimeoutError):
                    response._content = b""              # the status says what went wrong
                finally:
                    raw.close()
            elif not stream:
                await response.content
            return response

    _CLASS = BoundedErrorBodies
    return _CLASS
