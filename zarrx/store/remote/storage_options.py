"""Checks of the storage options a remote store is opened with, made when the store is made:
settings that must be dicts, endpoint URLs, options a filesystem would silently ignore; and
configuration values masked in messages (a secret given under a wrong key stays secret)."""
from __future__ import annotations

import difflib
import importlib.util
import re
from typing import Any

from zarrx.errors import ArgumentTypeError, StoreError
from zarrx.store.remote.options import RemoteOptions
from zarrx.store.remote.urls import endpoint_problem, redact, require, scheme_of, split_chain

__all__ = ["DICT_OPTIONS", "check_dict_options", "endpoint_option", "check_s3fs_endpoints",
           "check_known_options", "without_values", "fsspec_options",
           "checked_endpoint", "check_s3fs_strings", "unknown_key_hint", "move_client_keys",
           "wrong_client_setting", "check_chain_options", "check_obstore_names"]

#: storage options that s3fs and obstore take as dicts of settings
DICT_OPTIONS = ("client_kwargs", "config_kwargs", "s3_additional_kwargs", "client_options",
                "retry_config")


def check_dict_options(owner: str, storage_options: dict) -> None:
    """The storage options that hold settings are dicts (an ArgumentTypeError naming the first
    that is not: the backend would fail later with a bare error, or ignore it)."""
    for name in DICT_OPTIONS:
        value = storage_options.get(name)
        if value is not None and not isinstance(value, dict):
            raise ArgumentTypeError(f"{owner}: storage_options {name}: expected a dict, found "
                                    f"{type(value).__name__}")


#: obstore's keys for the address of the server (S3's endpoint, GCS's base URL, Azure's
#: endpoint), any case
ENDPOINT_KEYS = ("endpoint", "aws_endpoint", "aws_endpoint_url", "base_url", "google_base_url",
                 "azure_storage_endpoint", "azure_endpoint")


def endpoint_option(so: dict) -> tuple[str, Any]:
    """The obstore storage option that names the server's address, and its value (``""`` for
    none): an ``http://`` one is allowed without TLS, and each is checked when the store is
    made."""
    for k, v in so.items():
        if isinstance(k, str) and k.lower() in ENDPOINT_KEYS and v:
            return ("endpoint" if k.lower().startswith(("endpoint", "aws_")) else k), v
    return "endpoint", ""


def check_s3fs_endpoints(url: str, so: dict) -> None:
    """s3fs's endpoint options are usable URLs (botocore would fail at the first request with a
    bare ValueError)."""
    ck = so.get("client_kwargs")
    for name, value in (("endpoint_url", so.get("endpoint_url")),
                        ("client_kwargs['endpoint_url']",
                         ck.get("endpoint_url") if isinstance(ck, dict) else None)):
        if value is not None and (problem := endpoint_problem(value)) is not None:
            raise StoreError(f"FsspecStore({redact(url)!r}): storage_options {name}: {problem}")


#: s3fs options (and botocore client arguments in ``client_kwargs``) that botocore takes as
#: strings only: another type failed deep inside its first request (while signing it) with a
#: bare TypeError or AttributeError
_S3FS_STRINGS = ("key", "secret", "token", "username", "password", "profile")
_BOTOCORE_STRINGS = ("region_name", "aws_access_key_id", "aws_secret_access_key",
                     "aws_session_token")


def check_s3fs_strings(url: str, so: dict) -> None:
    """s3fs's credentials, profile and region are strings (or None, not given): a StoreError
    naming the first that is not, without its value (it may be a secret)."""
    ck = so.get("client_kwargs")
    named = [(name, so.get(name)) for name in _S3FS_STRINGS]
    if isinstance(ck, dict):
        named += [(f"client_kwargs[{name!r}]", ck.get(name)) for name in _BOTOCORE_STRINGS]
    for name, value in named:
        if value is not None and not isinstance(value, str):
            raise StoreError(f"FsspecStore({redact(url)!r}): storage_options {name}: expected "
                             f"a str, found {type(value).__name__}")


#: options of the fsspec filesystems that take any keyword and ignore those they do not know
#: (every filesystem takes fsspec's instance and listings cache options)
_OWN_OPTIONS = {"MemoryFileSystem": {"global_store"}, "LocalFileSystem": {"auto_mkdir"}}
_CACHE_OPTIONS = {"skip_instance_cache", "use_listings_cache", "listings_expiry_time",
                  "max_paths"}


def check_known_options(url: str, fs_class: str, so: dict) -> None:
    """A storage option of a filesystem that would ignore it (a typo, an option of another
    filesystem) is a StoreError naming it."""
    own = _OWN_OPTIONS.get(fs_class)
    if own is None:
        return
    if unknown := sorted(set(so) - own - _CACHE_OPTIONS):
        raise StoreError(f"FsspecStore({redact(url)!r}): storage_options {', '.join(unknown)}: "
                         f"not options of {fs_class}, which would ignore them; it takes "
                         f"{', '.join(sorted(own | _CACHE_OPTIONS))}")


#: fsspec's filesystems that wrap another (its caches, ``dir::``, its archives) and take any
#: keyword, ignoring those they do not know; what each does with the one it wraps
_WRAPPERS = {"SimpleCacheFileSystem": "caches", "WholeFileCacheFileSystem": "caches",
             "CachingFileSystem": "caches", "DirFileSystem": "reads", "ZipFileSystem": "reads",
             "TarFileSystem": "reads", "LibArchiveFileSystem": "reads"}
#: the catch-all parameters of a filesystem's ``__init__``, named by no option
_CATCH_ALL = {"self", "args", "kwargs", "storage_options"}


def _own_options(cls: type) -> set[str]:
    """The keywords the ``__init__`` of fsspec filesystem class ``cls`` (and its bases) name."""
    import inspect
    own: set[str] = set()
    for base in cls.__mro__:
        if "__init__" in vars(base):
            try:
                own |= set(inspect.signature(base.__init__).parameters)
            except (TypeError, ValueError):
                continue
    return own - _CATCH_ALL


def check_chain_options(url: str, so: dict) -> None:
    """The storage options of a chain opening with a filesystem that wraps another
    (``simplecache::s3://...``, ``zip::s3://...``, ``dir::``, ``tar::``) that it would
    ignore (fsspec hands the options given flat to the chain's first link): a StoreError
    naming them, before anything is opened; the options of another link go under its
    protocol."""
    links = split_chain(url)
    if len(links) < 2:
        return
    import fsspec
    protocols = [scheme_of(link) or link.lower() for link in links]
    classes = []
    for protocol in protocols:
        try:
            classes.append(fsspec.get_filesystem_class(protocol or "file"))
        except (ImportError, ValueError):
            classes.append(None)         # opening names what is missing
    first = classes[0]
    if first is None or first.__name__ not in _WRAPPERS:
        return
    own = _own_options(first) | set(_CACHE_OPTIONS) | {"asynchronous", "loop"}
    if not (unknown := sorted(str(k) for k in so if k not in own and k not in protocols)):
        return
    # the link whose filesystem takes them all, else the last one read over the network
    inner = next((p for p, cls in zip(protocols[1:], classes[1:])
                  if cls is not None and set(unknown) <= _own_options(cls)), None) or \
        next((p for p in reversed(protocols[1:]) if p and p != "file"),
             "the inner filesystem")
    raise StoreError(f"FsspecStore({redact(url)!r}): storage_options {', '.join(unknown)}: "
                     f"not options of {first.__name__} ({protocols[0]}::), which would ignore "
                     f"them; options of the filesystem it {_WRAPPERS[first.__name__]} go under "
                     f"its protocol: storage_options={{{inner!r}: {{...}}}}, as fsspec takes "
                     f"them")


def without_values(text: str, *configs: dict) -> str:
    """``text`` with every configuration value of 4 characters or more masked: a secret
    given under the wrong key must not reach a message or a log."""
    for conf in configs:
        for v in conf.values():
            if isinstance(v, str) and len(v) >= 4:
                text = text.replace(v, "***")
    return text


#: the protocols whose filesystems get zarrx's options inside a chain or a reference set
_INNER = ("s3", "s3a", "http", "https")


#: obstore's names of S3 options (any case), and s3fs's for them
_OBSTORE_S3_NAMES = {
    "endpoint": "endpoint_url", "aws_endpoint": "endpoint_url",
    "aws_endpoint_url": "endpoint_url", "access_key_id": "key", "aws_access_key_id": "key",
    "secret_access_key": "secret", "aws_secret_access_key": "secret",
    "session_token": "token", "aws_session_token": "token",
    "region": "client_kwargs={'region_name': ...}",
    "aws_region": "client_kwargs={'region_name': ...}",
    "skip_signature": "anon", "aws_skip_signature": "anon"}


def check_obstore_names(owner: str, named: str, so: dict) -> None:
    """s3fs's options hold none of obstore's names for them (s3fs hands the keywords it does
    not know to its session, which fails on them at the first request): a StoreError naming
    the first and s3fs's name for it."""
    for key in so:
        if isinstance(key, str) and (name := _OBSTORE_S3_NAMES.get(key.lower())):
            raise StoreError(f"{owner}: {named} {key}: obstore's name, which s3fs does not "
                             f"take (it would fail at the first request); s3fs's is {name}")


def fsspec_options(url: str, storage_options: dict, opts: RemoteOptions, *,
                   owner: str | None = None, named: str = "storage_options") -> dict:
    """The keyword arguments of the fsspec filesystem for ``url``, checked: for s3fs, zarrx's
    timeouts, one attempt per request (zarrx retries), a connection per request in flight and
    error answers read no further than their first few KiB;
    for fsspec's HTTP filesystem, zarrx's timeouts and answers as stored (not compressed);
    for gcsfs, zarrx's timeouts (gcsfs waits for an answer without limit by default).
    ``owner`` and ``named`` name the store and the options in errors (those of a chain's
    inner link: ``storage_options['s3']``)."""
    so = dict(storage_options)
    owner = owner or f"FsspecStore({redact(url)!r})"
    check_dict_options(owner, so)
    for link in split_chain(url)[1:]:
        # a chain's inner filesystem (the s3 of simplecache::s3://...) takes the options
        # given under its protocol's name, and gets zarrx's as it would alone: its own
        # instance (fsspec would share one another library made on its own event loop)
        inner = scheme_of(link)
        if inner in _INNER and isinstance(so.get(inner, {}), dict):
            so[inner] = fsspec_options(link, so.get(inner) or {}, opts, owner=owner,
                                       named=f"{named}[{inner!r}]")
    scheme = url.split("://", 1)[0]
    if scheme == "reference":
        # the filesystems of the references' targets, as the inner one of a chain
        remote, fss = so.get("remote_protocol"), so.get("fs")
        if remote in _INNER and isinstance(so.get("remote_options", {}), dict):
            so["remote_options"] = fsspec_options(
                f"{remote}://", so.get("remote_options") or {}, opts, owner=owner,
                named=f"{named}['remote_options']")
        if isinstance(fss, dict):
            so["fs"] = {k: fsspec_options(f"{k}://", v, opts, owner=owner,
                                          named=f"{named}['fs'][{k!r}]")
                        if k in _INNER and isinstance(v, dict) else v for k, v in fss.items()}
    if scheme in ("s3", "s3a"):
        require("s3fs", "s3fs", f"FsspecStore({redact(url)!r})", "s3")
        check_obstore_names(owner, named, so)
        check_s3fs_endpoints(url, so)
        check_s3fs_strings(url, so)
        cfg = dict(so.pop("config_kwargs", None) or {})
        cfg.setdefault("retries", {"total_max_attempts": 1, "mode": "standard"})
        cfg.setdefault("connect_timeout", opts.connect_timeout)
        cfg.setdefault("read_timeout", opts.timeout)
        # botocore keeps 10 connections by default: in_flight requests need as many
        cfg.setdefault("max_pool_connections", max(10, opts.in_flight))
        # an error answer's body is read up to a few KiB, not to its end
        from zarrx.store.remote.s3fs_session import session_class
        bounded = session_class()
        if bounded is not None:
            cfg.setdefault("http_session_cls", bounded)
        so["config_kwargs"] = cfg
        so.setdefault("skip_instance_cache", True)   # our own: FsspecStore sets its retries
    elif scheme in ("http", "https"):
        # aiohttp waits without limit by default: zarrx's timeouts apply
        aiohttp = require("aiohttp", "aiohttp", f"FsspecStore({redact(url)!r})", "http")
        ck = dict(so.get("client_kwargs") or {})
        ck.setdefault("timeout", aiohttp.ClientTimeout(
            total=None, connect=opts.connect_timeout, sock_read=opts.timeout))
        # objects are read as stored, as ObjectStore reads them: aiohttp would ask for
        # compressed answers and inflate them, a range of a compressed answer (which
        # names compressed bytes) to as much as a thousand times its size
        ck.setdefault("auto_decompress", False)
        headers = dict(ck.get("headers") or {})
        if not any(str(k).lower() == "accept-encoding" for k in headers):
            headers["Accept-Encoding"] = "identity"
        ck["headers"] = headers
        so["client_kwargs"] = ck
        so.setdefault("skip_instance_cache", True)
    elif scheme in ("gs", "gcs") and importlib.util.find_spec("aiohttp") is not None:
        # gcsfs hands its requests_timeout to aiohttp as each request's timeout: without one,
        # a server that takes the connection and never answers is waited for without limit
        # (without aiohttp there is no gcsfs: opening the filesystem names the package)
        import aiohttp
        so.setdefault("requests_timeout", aiohttp.ClientTimeout(
            total=None, sock_connect=opts.connect_timeout or None,
            sock_read=opts.timeout or None))
    return so


#: obstore's HTTP client settings (its ``client_options``)
CLIENT_KEYS = frozenset({
    "allow_http", "allow_invalid_certificates", "connect_timeout", "default_content_type",
    "default_headers", "http1_only", "http2_keep_alive_interval", "http2_keep_alive_timeout",
    "http2_keep_alive_while_idle", "http2_only", "pool_idle_timeout", "pool_max_idle_per_host",
    "proxy_url", "proxy_ca_certificate", "proxy_excludes", "root_certificate",
    "randomize_addresses", "read_timeout", "timeout", "user_agent"})
_PREFIXES = ("aws_", "google_", "azure_")


def move_client_keys(so: dict, client: dict) -> dict[str, str]:
    """Move the HTTP client settings given among an obstore store's own options
    (``aws_allow_http``, ``timeout``: object_store's names, as its environment variables
    ``AWS_ALLOW_HTTP``... give them) into its client options, where obstore takes them (it
    would fail on them there); one given in ``client_options`` itself wins. Returns the key
    each moved setting was given under, by its client option name."""
    moved: dict[str, str] = {}
    for key in list(so):
        if not isinstance(key, str):
            continue
        name = key.lower()
        for prefix in _PREFIXES:
            if name.startswith(prefix) and name[len(prefix):] in CLIENT_KEYS:
                name = name[len(prefix):]
        if name in CLIENT_KEYS:
            value = so.pop(key)
            if name not in client:
                client[name], moved[name] = value, key
    return moved


#: what obstore takes for each kind of client setting (others: a str)
_DURATIONS = ("connect_timeout", "http2_keep_alive_interval", "http2_keep_alive_timeout",
              "pool_idle_timeout", "read_timeout", "timeout")
_BOOLS = ("allow_http", "allow_invalid_certificates", "http1_only", "http2_keep_alive_while_idle",
          "http2_only", "randomize_addresses")


def wrong_client_setting(client: dict, moved: dict[str, str]) -> str | None:
    """Why obstore refused a client setting's type (it names none): the first of another
    type than it takes, named as it was given (``timeout``, ``client_options['timeout']``),
    or None."""
    import datetime
    for name, value in client.items():
        if name in _DURATIONS:
            ok, want = (str, datetime.timedelta), ("a str (a duration such as '30s') or a "
                                                   "datetime.timedelta")
        elif name in _BOOLS:
            ok, want = (bool, str), "a bool or a str ('true' or 'false')"
        elif name == "default_headers":
            ok, want = (dict,), "a dict"
        elif name == "root_certificate":
            ok, want = (str, bytes), "a str or bytes"
        else:
            ok, want = (str,), "a str"
        if value is not None and not isinstance(value, ok):
            where = moved.get(name) or f"client_options[{name!r}]"
            return f"storage_options {where}: expected {want}, found {type(value).__name__}"
    return None


def checked_endpoint(owner: str, so: dict) -> Any:
    """The obstore storage option that names the server's address, checked (``""``: none);
    obstore would only fail (or panic) at the first request."""
    named, endpoint = endpoint_option(so)
    if endpoint and (problem := endpoint_problem(endpoint)) is not None:
        raise StoreError(f"{owner}: storage_options {named}: {problem}")
    return endpoint


#: the S3 options a user most often means, by the names obstore and s3fs give them (a
#: misspelt one is matched against these to say which was meant)
_S3_NAMES = ("endpoint", "endpoint_url", "region", "access_key_id", "secret_access_key",
             "session_token", "skip_signature", "anon", "key", "secret", "token",
             "client_kwargs", "client_options", "virtual_hosted_style_request")
_UNKNOWN_KEY = re.compile(r"Configuration key: '([^']*)' is not valid for store 'S3'")


def unknown_key_hint(text: str) -> str:
    """For obstore's message refusing an unknown S3 option, which names no valid one: what
    the option may have been meant as (`` Did you mean 'endpoint_url'?``), or ``""``."""
    m = _UNKNOWN_KEY.search(text)
    if m is None:
        return ""
    if m.group(1).lower() in ("anonymous", "public", "unsigned", "no_sign_request"):
        return " For unsigned requests give anon=True (s3fs's name) or skip_signature=True."
    close = difflib.get_close_matches(m.group(1).lower(), _S3_NAMES, n=2, cutoff=0.6)
    return f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
