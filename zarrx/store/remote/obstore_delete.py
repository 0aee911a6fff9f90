"""The conditional DELETE of :class:`~zarrx.store.remote.objectstore.ObjectStore`: obstore has
none, so it is sent through a short-lived signed URL with urllib, configured from the obstore
client's ``client_options`` as obstore configures its own requests (reqwest's client):

- ``default_headers`` and ``user_agent`` are sent (``If-Match``, the condition, wins over a
  default header of that name);
- ``proxy_url``, except to the hosts of ``proxy_excludes``; with it, ``proxy_ca_certificate``
  (a PEM certificate) is trusted as a root certificate, as reqwest adds it to its client;
- ``allow_invalid_certificates`` skips the certificate checks;
- ``timeout`` bounds the request (the store's own timeout)."""
from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from typing import Any

from zarrx.store.remote.common import Failure

__all__ = ["send_delete"]


def _options(client: Any) -> dict:
    try:
        return dict(getattr(client, "client_options", None) or {})
    except Exception:  # noqa: BLE001 - a store without readable options: urllib's defaults
        return {}


def _text(value: Any) -> str:
    """A header value as obstore hands it back (bytes) or as given (str)."""
    return value.decode("latin-1") if isinstance(value, (bytes, bytearray)) else str(value)


def _flag(value: Any) -> bool:
    return str(value).lower() in ("true", "1")


def sender_like(client: Any) -> tuple[urllib.request.OpenerDirector, dict[str, str]]:
    """A urllib opener and the headers that send a request as the obstore store ``client``
    sends its own (see the module docstring); a ``Failure`` ("config") when its
    ``proxy_ca_certificate`` is no PEM certificate."""
    options = _options(client)
    headers = {str(k): _text(v) for k, v in dict(options.get("default_headers") or {}).items()}
    if options.get("user_agent"):
        headers = {k: v for k, v in headers.items() if k.lower() != "user-agent"}
        headers["User-Agent"] = _text(options["user_agent"])
    handlers: list[urllib.request.BaseHandler] = []
    context = None
    if proxy := options.get("proxy_url"):
        excludes = [h.strip() for h in str(options.get("proxy_excludes") or "").split(",")
                    if h.strip()]
        handlers.append(_ProxyHandler({"http": proxy, "https": proxy}, excludes))
        if ca := options.get("proxy_ca_certificate"):
            context = ssl.create_default_context()
            try:
                context.load_verify_locations(cadata=_text(ca))
            except (ssl.SSLError, ValueError):
                raise Failure("config", None, "client_options proxy_ca_certificate: expected "
                                              "a PEM certificate") from None
    if _flag(options.get("allow_invalid_certificates", "")):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    return urllib.request.build_opener(*handlers), headers


def send_delete(client: Any, url: str, etag: str, timeout: float) -> int:
    """The status of ``DELETE url`` with ``If-Match: etag``, sent as ``client`` sends its
    requests; ``timeout`` in seconds (0: no limit). A connection that fails is a Failure."""
    opener, headers = sender_like(client)
    headers = {k: v for k, v in headers.items() if k.lower() != "if-match"}
    headers["If-Match"] = etag
    req = urllib.request.Request(url, method="DELETE", headers=headers)
    try:
        with opener.open(req, timeout=timeout or None) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError as exc:
        raise Failure("connection", None, type(exc).__name__) from None


class _ProxyHandler(urllib.request.ProxyHandler):
    """urllib's proxy handler with obstore's ``proxy_excludes``: hosts reached directly."""

    def __init__(self, proxies: dict, excludes: list[str]) -> None:
        super().__init__(proxies)
        self.excludes = excludes

    def proxy_open(self, req, proxy, type):  # type: ignore[no-untyped-def]  # noqa: A002
        host = (req.host or "").rpartition("@")[2].split(":")[0]
        if any(host == e or host.endswith("." + e.lstrip(".")) for e in self.excludes):
            return None                                 # the next handler: direct
        return super().proxy_open(req, proxy, type)
