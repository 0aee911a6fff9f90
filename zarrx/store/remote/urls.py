"""URLs of remote stores: which backend a scheme gets, and addresses safe to print."""
from __future__ import annotations

import base64
import importlib
import re
from urllib.parse import unquote, urlsplit, urlunsplit

from zarrx.errors import MissingDependencyError

__all__ = ["redact", "redact_text", "scheme_of", "literal_path", "dot_segment", "empty_segment",
           "endpoint_problem", "OBSTORE_SCHEMES", "HTTP_SCHEMES", "require", "bucket_problem",
           "basic_credentials", "without_userinfo", "host_problem", "split_chain",
           "redact_urls", "WEB_READ_ONLY"]

# user info in a URL (``user:password@``, ``token@``); Azure's ``container@account`` is an
# address, not a secret
_USERINFO = re.compile(r"\b(?!abfss?://|az://|adl://|azure://)([a-zA-Z][\w+.-]*://)"
                       r"[^/@\s'\"]*@")

#: schemes obstore serves (the default backend for them when obstore is installed)
OBSTORE_SCHEMES = {"s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "adl", "http",
                   "https"}
HTTP_SCHEMES = {"http", "https"}
#: why a store of an http:// or https:// URL cannot be written, and where to write instead
WEB_READ_ONLY = ("an HTTP server is read-only (zarrx reads http:// and https:// URLs); to "
                 "write, use an object store URL (s3://, gs://, az://) or a "
                 "zarrx.store.ObjectStore or FsspecStore over a writable backend")
#: the extra that brings each scheme's packages
EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "remote", "azure": "remote",
          "abfs": "remote", "abfss": "remote", "adl": "remote", "http": "http", "https": "http"}


def scheme_of(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


#: a ``%`` that starts no percent-escape
_LONE_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")


def literal_path(url: str) -> str:
    """``url`` for obstore's ``from_url`` with its path taken literally: a bucket URL
    (``s3://bucket/a%20b``, ``s3://bucket/v#1``, ``s3://bucket/q?r``) names the object key
    ``a%20b``, ``v#1``, ``q?r``, as s3fs, gcsfs and zarr-python read it, where obstore would
    percent-decode the path and drop a fragment or query; trailing slashes name no key (as
    in s3fs: ``s3://bucket/p//`` is ``s3://bucket/p``). HTTP(S) URLs are URLs, unchanged but
    for trailing slashes of their path (``https://host/p//`` is ``https://host/p``, as
    fsspec's HTTP filesystem reads it) and a ``%`` that starts no escape, which is the
    character itself (``https://host/100%.zarr`` names ``100%.zarr``, as fsspec
    sends it; obstore would send the ``%`` alone, which servers refuse)."""
    scheme = scheme_of(url)
    if scheme in HTTP_SCHEMES:
        parts = urlsplit(url)
        if not parts.path:
            return url
        path = _LONE_PERCENT.sub("%25", parts.path.rstrip("/"))
        return urlunsplit(parts._replace(path=path))
    if scheme not in OBSTORE_SCHEMES:
        return url
    head, rest = url.split("://", 1)
    bucket, sep, path = rest.partition("/")
    path = path.rstrip("/").replace("%", "%25").replace("#", "%23").replace("?", "%3F")
    return f"{head}://{bucket}{sep if path else ''}{path}"


def dot_segment(url: str) -> str | None:
    """The first ``.`` or ``..`` segment of the key path of a bucket URL (``s3://bucket/a/..``),
    or None. Such a key is named literally (as s3fs, gcsfs and zarr-python name it), but
    obstore resolves it as a URL path: ``s3://bucket/a/../b`` would address ``b``, and
    ``s3://bucket/..`` the whole bucket."""
    scheme = scheme_of(url)
    if scheme in HTTP_SCHEMES or scheme not in OBSTORE_SCHEMES:
        return None
    path = url.split("://", 1)[1].partition("/")[2]
    return next((seg for seg in path.split("/") if seg in (".", "..")), None)


def empty_segment(url: str) -> str | None:
    """The path of an obstore URL when it holds an empty segment before its trailing slashes
    (``s3://bucket/a//b``, ``s3://bucket//a``, ``https://host/a//b``), or None: obstore cannot
    address such a path (s3fs and fsspec's HTTP filesystem name it literally)."""
    scheme = scheme_of(url)
    if scheme in HTTP_SCHEMES:
        path = urlsplit(url).path.rstrip("/")
        return path if "//" in path else None
    if scheme not in OBSTORE_SCHEMES:
        return None
    path = url.split("://", 1)[1].partition("/")[2].rstrip("/")
    return path if path.startswith("/") or "//" in path else None


#: schemes whose URL names a bucket after ``://`` (Azure's ``container@account`` is an address)
BUCKET_SCHEMES = {"s3", "s3a", "gs", "gcs"}
#: how to give each bucket scheme's credentials instead
_CREDENTIALS_HOW = {
    "s3": "storage_options={'access_key_id': ..., 'secret_access_key': ...} (s3fs: 'key', "
          "'secret') or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
    "gs": "storage_options={'service_account_path': ...} (gcsfs: 'token') or set "
          "GOOGLE_APPLICATION_CREDENTIALS",
}


def bucket_problem(url: str) -> str | None:
    """What is wrong with a bucket URL (``s3://``, ``gs://``, ...) whose part before the first
    ``/`` is more than a bucket name: credentials (``key:secret@bucket``, which neither
    backend reads: obstore drops them, s3fs takes them for the bucket's name) or ``host:port``.
    Worded without quoting that part, which may hold a secret; None when the URL is fine."""
    scheme = scheme_of(url)
    if scheme not in BUCKET_SCHEMES:
        return None
    authority = url.split("://", 1)[1].partition("/")[0]
    how = _CREDENTIALS_HOW["s3" if scheme in ("s3", "s3a") else "gs"]
    if "@" in authority or ":" in authority:
        return (f"{scheme}:// URL: expected a bucket name after '{scheme}://', found user "
                f"information or ':' (not shown: it may hold a secret); credentials are not "
                f"read from URLs: pass them in {how}; an endpoint goes in "
                f"storage_options={{'endpoint': ...}}")
    return None


def host_problem(url: str) -> str | None:
    """What is wrong with the host and port of an http(s) URL that no client could connect to
    (``https://[::1``, ``http://[zz]/x``, ``http://host:port/``), said as "expected ...,
    found ..."; None when they parse (or the URL is not http(s))."""
    if scheme_of(url) not in HTTP_SCHEMES:
        return None
    try:
        parts = urlsplit(url)
        parts.port                                      # noqa: B018 (parsed when read)
    except ValueError as exc:
        return (f"{scheme_of(url)}:// URL: expected a host name or address and an optional "
                f"port from 0 to 65535, found {redact_text(url).split('?', 1)[0]!r} ({exc})")
    return None


def basic_credentials(url: str) -> str | None:
    """The ``Authorization: Basic`` value for the user name and password of an http(s) URL
    (``https://user:password@host/...``, percent-decoded, as browsers and aiohttp send them),
    or None when it has none."""
    if scheme_of(url) not in HTTP_SCHEMES:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.username is None:
        return None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


def without_userinfo(url: str) -> str:
    """``url`` without the ``user:password@`` of its authority (the rest unchanged)."""
    head, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    return f"{head}{sep}{authority.rpartition('@')[2]}{slash}{path}"


def endpoint_problem(endpoint: object) -> str | None:
    """What is wrong with the endpoint URL of an S3-compatible server (``endpoint`` of
    obstore, ``endpoint_url`` of s3fs), said as "expected ..., found ..."; None when it is an
    http:// or https:// URL naming a host (and a port in range, if any), with no query or
    fragment."""
    expected = "expected a URL starting with http:// or https://"
    if not isinstance(endpoint, str):
        return f"{expected}, found {type(endpoint).__name__} {endpoint!r}"
    if scheme_of(endpoint) not in HTTP_SCHEMES:
        if "://" not in endpoint and "@" in endpoint:
            # ``user:password@host``, written without a scheme: never shown
            return (f"{expected}, found '…@{endpoint.rpartition('@')[2]}' (the part before "
                    f"'@' not shown)")
        return f"{expected}, found {redact(endpoint)!r}"
    shown = redact_text(endpoint).split("?", 1)[0].split("#", 1)[0]
    if any(c.isspace() or ord(c) < 32 for c in endpoint):
        return f"{expected} and no spaces or control characters, found {shown!r}"
    try:
        parts = urlsplit(endpoint)
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        return f"{expected} and a valid host and port, found {shown!r} ({exc})"
    if not host:
        return f"{expected} and a host, found {shown!r}"
    if port == 0:
        return f"{expected} and a port from 1 to 65535, found {shown!r}"
    if "?" in endpoint or "#" in endpoint:
        # a server's address: botocore refused it at the first request, quoting it whole
        # (a signature or token in its query with it); obstore sent requests to it
        return f"{expected} and no query or fragment ('?…', '#…', not shown), found {shown!r}"
    return None


#: schemes whose URL path is an object key taken literally ('#' and '?' included)
LITERAL_SCHEMES = (OBSTORE_SCHEMES - HTTP_SCHEMES) | {"gcs", "memory", "file"}


#: where an fsspec chain (``zip://k::s3://bucket/a.zip``) joins two URLs: a ``::`` followed by
#: a scheme, not one inside an IPv6 address (``http://[::1]:8080/a``)
_CHAIN = re.compile(r"::(?=[a-zA-Z][\w+.-]*://)")


def split_chain(url: str) -> list[str]:
    """The links of an fsspec chain (``simplecache::zip://k::s3://bucket/a.zip``): ``url`` split
    at each ``::`` outside square brackets, so an IPv6 address (``http://[::1]:8080/a``) is
    one link; a URL that is no chain is one link."""
    links, depth, start, i = [], 0, 0, 0
    while i < len(url):
        ch = url[i]
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif ch == ":" and depth == 0 and url.startswith("::", i):
            links.append(url[start:i])
            start = i = i + 2
            continue
        i += 1
    links.append(url[start:])
    return links


def redact(url: str) -> str:
    """``url`` without user name, password, query string or fragment; a bucket URL, whose
    path is a key taken literally (``s3://bucket/v#1``), keeps its whole path. Each URL of an
    fsspec chain (``zip://k::s3://bucket/a.zip``) is redacted."""
    links = _CHAIN.split(url)
    if len(links) > 1:
        return "::".join(redact(part) for part in links)
    if scheme_of(url) in LITERAL_SCHEMES:
        return redact_text(url)
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:                 # an IPv6 address keeps its brackets
            host = f"[{host}]"
        if parts.port:
            host += f":{parts.port}"
    except ValueError:                  # a port that is not a number (fsspec chains: zip://k::)
        return "<unparsable URL>"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def redact_text(text: str) -> str:
    """``text`` with the user name and password of every URL in it taken out (reprs and
    messages of other libraries' stores and clients quote their URLs whole)."""
    return _USERINFO.sub(r"\1", text)


#: the query of a web address quoted in a text (an access token, a signature)
_WEB_QUERY = re.compile(r"(\bhttps?://[^\s'\"?#]*)[?#][^\s'\"]*", re.IGNORECASE)


def redact_urls(text: str) -> str:
    """``text`` (another library's message, which may quote the URLs it was given) with the
    user name and password of every URL in it and the query and fragment of every web
    address taken out."""
    return _WEB_QUERY.sub(r"\1", redact_text(text))


def require(module: str, package: str, why: str, extra: str | None = None):  # type: ignore[no-untyped-def]
    """``import module``, or a MissingDependencyError naming the package (and extra) to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = f"pip install {package}" + (f" (or pip install 'zarrx[{extra}]')" if extra else "")
        raise MissingDependencyError(f"{why} needs the package {package!r}, which is not "
                                     f"installed: {hint}") from exc
