"""URLs of remote stores: which backend a scheme gets, and addresses safe to print."""
from __future__ import annotations

import importlib
from urllib.parse import urlsplit, urlunsplit

from zarrx.errors import MissingDependencyError

__all__ = ["redact", "scheme_of", "OBSTORE_SCHEMES", "HTTP_SCHEMES", "require"]

#: schemes obstore serves (the default backend for them when obstore is installed)
OBSTORE_SCHEMES = {"s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "adl", "http",
                   "https"}
HTTP_SCHEMES = {"http", "https"}
#: the extra that brings each scheme's packages
EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "remote", "azure": "remote",
          "abfs": "remote", "abfss": "remote", "adl": "remote", "http": "http", "https": "http"}


def scheme_of(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def redact(url: str) -> str:
    """``url`` without user name, password, query string or fragment."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def require(module: str, package: str, why: str, extra: str | None = None):  # type: ignore[no-untyped-def]
    """``import module``, or a MissingDependencyError naming the package (and extra) to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = f"pip install {package}" + (f" (or pip install 'zarrx[{extra}]')" if extra else "")
        raise MissingDependencyError(f"{why} needs the package {package!r}, which is not "
                                     f"installed: {hint}") from exc
