"""Which store a URL or a foreign store object becomes.

Default backends: obstore (:class:`ObjectStore`) for ``s3://``, ``s3a://``, ``gs://``,
``az://`` (and the other Azure schemes) and ``http(s)://`` when it is installed, else fsspec;
fsspec (:class:`FsspecStore`) for every other protocol (``memory://``, ``gcs://``, ``abfs://``,
``ftp://``, ...). fsspec-style ``storage_options`` for S3 (``key``, ``secret``, ``token``,
``anon``, ``endpoint_url``, ``client_kwargs={"region_name": ...}``) are translated for obstore;
an ``s3://`` URL given options only s3fs understands (``profile``, ``requester_pays``,
``config_kwargs``, other ``client_kwargs``, ...) goes to fsspec instead. gcsfs's
``token="anon"`` and adlfs's ``anon`` and ``sas_token`` are translated too, and a ``gs://``
or Azure URL given options only gcsfs or adlfs understands (``project``, a ``token`` file,
``connection_string``, ...) goes to fsspec, and so does an
``http(s)://`` URL given any option but obstore's ``client_options`` (``headers``,
``client_kwargs``, ``block_size``, ... of fsspec's HTTP filesystem).
"""
from __future__ import annotations

import importlib.util
import sys
from typing import Any

from zarrx.errors import MissingDependencyError, StoreError
from zarrx.store.remote.storage_options import check_dict_options
from zarrx.store.remote.urls import (EXTRAS, HTTP_SCHEMES, OBSTORE_SCHEMES, bucket_problem,
                                     host_problem, redact, scheme_of)

__all__ = ["open_url", "wrap_foreign", "default_backend"]

_S3FS_TO_OBSTORE = {"key": "access_key_id", "secret": "secret_access_key",
                    "token": "session_token", "endpoint_url": "endpoint"}
_FSSPEC_PACKAGE = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs",
                   "azure": "adlfs", "abfs": "adlfs", "abfss": "adlfs", "http": "aiohttp",
                   "https": "aiohttp"}


def _has(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


# s3fs options obstore has no equivalent for: a URL given them goes to fsspec (s3fs)
_S3FS_ONLY = frozenset({
    "profile", "use_ssl", "config_kwargs", "requester_pays", "s3_additional_kwargs",
    "version_aware", "skip_instance_cache", "use_listings_cache", "listings_expiry_time",
    "max_paths", "default_block_size", "default_fill_cache", "default_cache_type",
    "cache_regions", "asynchronous", "loop", "max_concurrency", "fixed_upload_size",
    "session", "username", "password"})
_OBSTORE_CLIENT_KWARGS = frozenset({"region_name", "endpoint_url"})
# options of the fsspec filesystems every fsspec filesystem takes (instance caching, listings)
_FSSPEC_COMMON = frozenset({
    "skip_instance_cache", "use_listings_cache", "listings_expiry_time", "max_paths",
    "asynchronous", "loop", "version_aware", "default_fill_cache", "default_cache_type"})
# gcsfs options obstore has no equivalent for (``token`` other than "anon" and
# "google_default": a file, a dict, a credentials object, "cache", "browser", ...)
_GCSFS_ONLY = _FSSPEC_COMMON | frozenset({
    "project", "access", "consistency", "cache_timeout", "secure_serialize",
    "check_connection", "requests_timeout", "requester_pays", "session_kwargs",
    "endpoint_url", "default_location", "timeout", "block_size"})
# adlfs options obstore has no equivalent for
_ADLFS_ONLY = _FSSPEC_COMMON | frozenset({
    "connection_string", "credential", "request_session", "socket_timeout", "blocksize",
    "location_mode", "assume_container_exists", "max_concurrency", "timeout",
    "connection_timeout", "read_timeout", "account_host"})
_AZURE_SCHEMES = frozenset({"az", "azure", "abfs", "abfss", "adl"})


def _s3fs_only(scheme: str, so: dict) -> list[str]:
    """The storage options (s3fs, gcsfs or adlfs names, or fsspec's HTTP filesystem's for an
    http(s) URL) that only the fsspec backend understands."""
    if scheme in HTTP_SCHEMES:
        # obstore's HTTP store takes client_options only; ``headers``, ``client_kwargs``,
        # ``block_size``, ... are the HTTP filesystem's, as zarr-python passes them on
        return sorted(k for k, v in so.items() if k != "client_options" and v is not None)
    if scheme == "gs":
        token = so.get("token")
        return sorted(k for k, v in so.items() if v is not None and (
            k in _GCSFS_ONLY or k == "token" and not (
                isinstance(token, str) and token in ("anon", "google_default"))))
    if scheme in _AZURE_SCHEMES:
        return sorted(k for k, v in so.items() if k in _ADLFS_ONLY and v is not None)
    if scheme not in ("s3", "s3a"):
        return []
    out = sorted(k for k, v in so.items() if k in _S3FS_ONLY and v is not None)
    ck = so.get("client_kwargs")
    if isinstance(ck, dict):
        out += [f"client_kwargs[{k!r}]" for k in sorted(ck)
                if k not in _OBSTORE_CLIENT_KWARGS and ck[k] is not None]
    return out


def default_backend(scheme: str) -> str:
    """``"obstore"`` or ``"fsspec"``: what :func:`open_url` uses for ``scheme``."""
    if scheme in OBSTORE_SCHEMES and (_has("obstore") or not _has("fsspec")):
        return "obstore"
    return "fsspec"


def _obstore_options(scheme: str, so: dict) -> dict:
    """storage_options for obstore, translating the usual fsspec (s3fs) names. An option set
    to None is not given, as s3fs reads it (``token=os.environ.get(...)``)."""
    out = {k: v for k, v in so.items() if v is not None}
    if scheme in ("s3", "s3a"):
        for old, new in _S3FS_TO_OBSTORE.items():
            if old in out:
                out.setdefault(new, out.pop(old))
        if out.pop("anon", False):
            out["skip_signature"] = True
        ck = out.pop("client_kwargs", None)
        if isinstance(ck, dict):
            if ck.get("region_name") is not None:
                out.setdefault("region", ck["region_name"])
            if ck.get("endpoint_url") is not None:
                out.setdefault("endpoint", ck["endpoint_url"])
    elif scheme == "gs":
        # gcsfs: token="anon" reads public data unsigned; "google_default" is the default
        if out.pop("token", None) == "anon":
            out["skip_signature"] = True
    elif scheme in _AZURE_SCHEMES:
        if out.pop("anon", False):                      # adlfs: anonymous access
            out["skip_signature"] = True
        if "sas_token" in out:
            out.setdefault("sas_key", out.pop("sas_token"))
    return out


def open_url(url: str, *, read_only: bool, storage_options: dict | None = None) -> Any:
    scheme = scheme_of(url)
    if not scheme:
        raise StoreError(f"open_url: {url!r} is not a URL")
    url = scheme + url[url.index("://"):]        # S3://: fsspec knows lower-case protocols
    if (problem := bucket_problem(url) or host_problem(url)) is not None:
        raise StoreError(problem)
    if storage_options is not None and not isinstance(storage_options, dict):
        from zarrx.errors import ArgumentTypeError
        raise ArgumentTypeError(f"{redact(url)!r}: storage_options: expected a dict, found "
                                f"{type(storage_options).__name__}")
    so = dict(storage_options or {})
    check_dict_options(repr(redact(url)), so)        # before they are translated or routed
    read_only = read_only or scheme in HTTP_SCHEMES
    fsspec_only = _s3fs_only(scheme, so)
    package = _FSSPEC_PACKAGE.get(scheme, "fsspec")
    if fsspec_only and not (_has("fsspec") and _has(package)):
        owner = "fsspec HTTP filesystem" if package == "aiohttp" else package
        raise MissingDependencyError(
            f"{redact(url)!r}: the storage options {', '.join(fsspec_only)} are {owner} "
            f"options, which need the packages 'fsspec' and {package!r}: pip install fsspec "
            f"{package}")
    if default_backend(scheme) == "obstore" and not fsspec_only:
        if not _has("obstore"):
            extra = EXTRAS.get(scheme, "remote")
            raise MissingDependencyError(
                f"{redact(url)!r}: {scheme}:// URLs need the package 'obstore' (or 'fsspec' with "
                f"{_FSSPEC_PACKAGE.get(scheme, 'its filesystem')}), and neither is installed: "
                f"pip install 'zarrx[{extra}]'")
        from zarrx.store.remote.objectstore import ObjectStore
        return ObjectStore(url, storage_options=_obstore_options(scheme, so),
                           read_only=read_only)
    if not _has("fsspec"):
        pkg = _FSSPEC_PACKAGE.get(scheme)
        raise MissingDependencyError(
            f"{redact(url)!r}: {scheme}:// URLs need the package 'fsspec'"
            + (f" and {pkg!r}" if pkg else "") + ", which is not installed: pip install fsspec"
            + (f" {pkg}" if pkg else ""))
    from zarrx.store.remote.fsspecstore import FsspecStore
    return FsspecStore(url, storage_options=so, read_only=read_only)


def wrap_foreign(obj: Any, *, read_only: bool) -> Any:
    """A zarrx store for an fsspec mapper or filesystem, an obstore store, or zarr-python's
    FsspecStore/ObjectStore; None for anything else."""
    mod = type(obj).__module__ or ""
    name = type(obj).__name__
    if mod.startswith("obstore"):
        from zarrx.store.remote.objectstore import ObjectStore
        return ObjectStore(obj, read_only=read_only)
    if mod.startswith("zarr.") and name == "ObjectStore" and hasattr(obj, "store"):
        from zarrx.store.remote.objectstore import ObjectStore
        return ObjectStore(obj.store, read_only=read_only or bool(obj.read_only))
    if mod.startswith("zarr.") and name == "FsspecStore" and hasattr(obj, "fs"):
        from zarrx.store.remote.fsspecstore import FsspecStore
        return FsspecStore(obj.fs, obj.path, read_only=read_only or bool(obj.read_only))
    if "fsspec" in mod or mod.split(".")[0] in ("s3fs", "gcsfs", "adlfs"):
        import fsspec

        from zarrx.store.remote.fsspecstore import FsspecStore
        if isinstance(obj, fsspec.mapping.FSMap):
            return FsspecStore(obj.fs, obj.root, read_only=read_only or bool(getattr(obj, "readonly", False)))
        if isinstance(obj, fsspec.AbstractFileSystem):
            return FsspecStore(obj, "", read_only=read_only)
    return None
