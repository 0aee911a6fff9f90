"""``FsspecStore``: any fsspec filesystem (s3fs, gcsfs, adlfs, http, memory, ...) as a store.

Asynchronous filesystems run their requests on fsspec's own event loop, concurrently (the
coroutines behind ``cat_ranges``: one ``_cat_file`` per coalesced range, a suffix range as a
negative start); synchronous ones (memory, local, ftp, sftp, ...) are called on a thread of
their own, one call at a time, so that a slow server never holds up the event loop.

Generations and conditions depend on the filesystem:

- **s3fs**: the ETag; reads send If-Match, writes If-Match / If-None-Match ``*``, deletes
  If-Match, all through s3fs's S3 client. Conditional writes are on by default.
- **any other filesystem**: the ETag from ``info()`` when it has one, else its size and
  modification time, asked after every read (one more request on a remote filesystem: prefer
  ObjectStore there). A conditioned read compares it after reading (it detects a replace that
  finished before the check, not one undone in between; bytes whose length does not fit the
  version asked after them were raced by a replace, and are read again), and conditional writes
  are not offered (``supports_conditional_writes`` is False: ``set_if`` raises StoreError and
  read-modify-write falls back to in-process locking, as for every such store).
"""
from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import quote, unquote

from zarrx.errors import MissingDependencyError, StoreError, ZarrError
from zarrx.store.base import ByteRange
from zarrx.store.remote.base import Failure, Got, RemoteStore
from zarrx.store.remote.coalesce import UPLOAD_PARTS_IN_FLIGHT, upload_part_for
from zarrx.store.remote.common import OnMeta, delete_failure, first_line
from zarrx.store.remote.dir_listing import Children, DirListing, s3_children
from zarrx.store.remote.fsspec_calls import (afind_within, blocking, file_version, find_within,
                                             forget_cached, inside_dir, is_async, lost_writes,
                                             read_only_fs, sized_info, sizeless, upload_body,
                                             zip_names_as_keys)
from zarrx.store.remote.fsspec_failures import failure_of
from zarrx.store.remote.fsspec_listing import http_filesystem, web_find
from zarrx.store.remote.fsspec_reads import http_range, misplaced, s3_get
from zarrx.store.remote.gcsfs_listing import gcs_children, lists_gcs_children
from zarrx.store.remote.references import (opening_failure, reference_options, short_target,
                                           whole_target_version, within_part)
from zarrx.store.remote.lost_answers import WRITE_TAG
from zarrx.store.remote.options import RemoteOptions
from zarrx.store.remote.s3fs_listing import s3_find
from zarrx.store.remote.storage_options import (check_chain_options, check_known_options,
                                                fsspec_options)
from zarrx.store.remote.urls import HTTP_SCHEMES, WEB_READ_ONLY, bucket_problem, redact, \
    require, scheme_of, split_chain

__all__ = ["FsspecStore"]

T = TypeVar("T")
_GLOB = re.compile(r"[*?[]")          # what fsspec's rm and expand_path take for a pattern
_REREADS = 8             # reads of an object that keeps changing before a failed condition


def _url_to_fs(fsspec: Any, url: str, options: dict[str, Any]) -> tuple[Any, str]:
    """fsspec's ``url_to_fs``, except that a URL whose ``::`` are all inside an IPv6 address
    (``http://[::1]:8080/a``), which fsspec would take for a chain, opens its own filesystem."""
    links = split_chain(url)
    if len(links) > 1 and any("::" in link for link in links):
        raise StoreError(f"FsspecStore({redact(url)!r}): cannot open a chain of URLs one of "
                         f"which has an IPv6 address: fsspec splits a chain at every '::'; "
                         f"open that URL on its own, or name its host")
    if "::" not in url or len(links) > 1:
        return fsspec.core.url_to_fs(url, **options)
    cls = fsspec.get_filesystem_class(fsspec.core.split_protocol(url)[0] or "file")
    return cls(**{**cls._get_kwargs_from_urls(url), **options}), cls._strip_protocol(url)


class FsspecStore(DirListing, RemoteStore):
    """A store below ``path`` of an fsspec filesystem.

    ``fs``: a URL (``s3://bucket/prefix``, ``memory://x``, ...; ``storage_options`` go to the
    filesystem), a local path (a ``str`` or ``pathlib`` path) or an ``AbstractFileSystem`` (then
    ``path`` is the root inside it).
    ``options``/keyword overrides: :class:`RemoteOptions`.
    """

    _reads_into = True

    #: fsspec uploads ``bytes``: a pooled Value would be copied into one, so values come as
    #: ``bytes`` (uploaded as they are, see :func:`upload_body`)
    keeps_values = False

    def __init__(self, fs: Any, path: str = "", *, storage_options: dict | None = None,
                 read_only: bool = False, options: RemoteOptions | dict | None = None,
                 **overrides: Any) -> None:
        fsspec = require("fsspec", "fsspec", "zarrx.store.FsspecStore", "remote")
        opts = RemoteOptions.make(options, **overrides)
        fs = os.fspath(fs) if isinstance(fs, os.PathLike) else fs   # a local path (pathlib)
        self._source, self._path_arg = fs, path
        self._storage_options = dict(storage_options or {})
        if isinstance(fs, str):
            if (problem := bucket_problem(fs)) is not None:
                raise StoreError(f"FsspecStore: {problem}")
            check_chain_options(fs, self._storage_options)
            so = reference_options(fs, fsspec_options(fs, self._storage_options, opts),
                                   f"FsspecStore({redact(fs)!r})")
            try:
                self.fs, root = _url_to_fs(fsspec, fs, so)
            except ImportError as exc:
                # fsspec names the package its filesystem needs ("Install gcsfs to ...")
                what = f"the package {exc.name!r}" if exc.name else first_line(exc)
                raise MissingDependencyError(f"FsspecStore({redact(fs)!r}): a package this "
                                             f"filesystem needs is not installed: {what}"
                                             ) from None
            except ZarrError:
                raise
            except Exception as exc:  # noqa: BLE001 - fsspec raises many types for bad URLs
                raise StoreError(f"FsspecStore({redact(fs)!r}): {opening_failure(so, exc)}"
                                 ) from None
            check_known_options(fs, type(self.fs).__name__, self._storage_options)
            root = inside_dir(self.fs, root)
            for s3 in (self.fs, getattr(self.fs, "fs", None)):   # simplecache::s3: its target
                if type(s3).__name__ == "S3FileSystem" and hasattr(s3, "retries"):
                    s3.retries = 1                   # one attempt per call: zarrx retries
        elif isinstance(fs, fsspec.AbstractFileSystem):
            if self._storage_options:
                raise StoreError("FsspecStore: storage_options apply to URLs only; configure "
                                 "the filesystem object itself")
            self.fs, root = fs, path
            sync = getattr(fs, "sync_fs", None)
            if isinstance(sync, fsspec.AbstractFileSystem):
                # fsspec's AsyncFileSystemWrapper (zarr-python wraps synchronous filesystems,
                # memory:// for one, in it): the wrapped filesystem is bound to no event loop
                self.fs = sync
            elif getattr(fs, "asynchronous", False):
                # bound to its owner's event loop (zarr-python's): make our own instance
                self.fs = type(fs)(**{**fs.storage_options, "asynchronous": False,
                                      "skip_instance_cache": True})
        else:
            raise StoreError(f"FsspecStore: expected a URL or an fsspec filesystem, found "
                             f"{type(fs).__name__}")
        self.root = str(root).rstrip("/")
        protocols = self.fs.protocol if isinstance(self.fs.protocol, (tuple, list)) \
            else (self.fs.protocol,)
        self.is_s3 = type(self.fs).__name__ == "S3FileSystem" or "s3" in protocols
        self._async = is_async(self.fs)
        self._http = any(p in ("http", "https") for p in protocols)
        # paths are web addresses: over fsspec's HTTP filesystem, or a filesystem in front of
        # it (simplecache::https://...), which hands them on as they are
        self._web = self._http or scheme_of(self.root) in HTTP_SCHEMES
        self._query = ""
        if self._web:
            # the query of a root URL (an access token, a signature) goes with every request,
            # after the key; a fragment is never sent
            root_url, _, query = self.root.partition("#")[0].partition("?")
            self.root, self._query = root_url.rstrip("/"), query
        self._display = redact(self.fs.unstrip_protocol(self.root or "/")).rstrip("/")
        # a chained URL (zip::file:///a.zip) names its outer filesystem only in the URL
        links = split_chain(fs) if isinstance(fs, str) else [fs]
        self._chain = redact("::".join(links[1:])) if len(links) > 1 else None
        if self._chain is not None:
            self._display = f"{protocols[0]}://{self._shown_root()}::{self._chain}"
        self._protocol = protocols[0]
        self.read_only_reason = lost_writes(self.fs, fs) or (WEB_READ_ONLY if self._web else None)
        read_only = read_only or read_only_fs(self.fs) or bool(self.read_only_reason)
        super().__init__(read_only=read_only, options=opts)
        zip_names_as_keys(self.fs, fs, repr(self))      # zip::file:///a.zip: as ZipStore reads

    def _cannot_write(self) -> str | None:
        return "its filesystem is read-only" if read_only_fs(self.fs) else self.read_only_reason

    @classmethod
    def from_url(cls, url: str | os.PathLike, storage_options: dict | None = None,
                 read_only: bool = False) -> FsspecStore:
        """zarr-python's spelling of ``FsspecStore(url, storage_options=...)``."""
        return cls(url, storage_options=storage_options, read_only=read_only)

    @classmethod
    def from_mapper(cls, fs_map: Any, read_only: bool = False) -> FsspecStore:
        """The store over an fsspec mapper's filesystem and root (zarr-python's spelling)."""
        return cls(fs_map.fs, fs_map.root, read_only=read_only)

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        cw = self.options.conditional_writes
        return self.is_s3 if cw is None else (cw and self.is_s3)

    @property
    def has_buckets(self) -> bool:
        """Whether keys lie in a bucket or container, which may itself be missing."""
        return self.is_s3 or self._protocol in ("gs", "gcs", "az", "abfs", "abfss", "adl")

    def _shown_root(self) -> str:
        """The root as messages show it: a web address without user name or password."""
        return redact(self.root) if "://" in self.root else self.root

    def _full(self, key: str) -> str:
        if self._web:
            # a key is a path below the root URL: percent-encoded, so that '%', '#', '?' and
            # the like name the object rather than an escape, a fragment or a query
            key = quote(key, safe="/") + (f"?{self._query}" if self._query else "")
        return f"{self.root}/{key}" if self.root else key

    def _url(self, key: str) -> str:
        if self._chain is not None:
            root = self._shown_root()
            return f"{self._protocol}://{root + '/' if root else ''}{key}::{self._chain}"
        return f"{self._display}/{key}"

    def _loop(self) -> asyncio.AbstractEventLoop | None:
        return self.fs.loop if self._async else None

    def _forked(self) -> None:
        super()._forked()
        if self._async:
            # an asynchronous filesystem is bound to the parent's event loop (fsspec raises
            # "not fork-safe"): the child makes its own, alike
            retries = getattr(self.fs, "retries", None)
            self.fs = type(self.fs)(**{**self.fs.storage_options, "skip_instance_cache": True})
            if retries is not None and hasattr(self.fs, "retries"):
                self.fs.retries = retries

    # -- primitives -----------------------------------------------------------------------------
    def _bucket_key(self, key: str) -> tuple[str, str]:
        bucket, _, k = self._full(key).partition("/")
        return bucket, k

    async def _blocking(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, a call of a synchronous filesystem, on its own thread."""
        return await blocking(self.fs, fn, *args, **kwargs)

    async def _bounded(self, aw: Awaitable[T]) -> T:
        """``await aw`` within ``options.timeout`` seconds in all: aiohttp and botocore bound
        each read from the socket, so a server sending a byte now and then would hold a
        request for ever."""
        timeout = self.options.timeout
        return await (asyncio.wait_for(aw, timeout) if timeout > 0 else aw)

    async def _get(self, key: str, start: int | None, stop: int | None, suffix: int | None,
                   if_match: str | None, on_meta: OnMeta | None = None,
                   into: memoryview | None = None) -> Got:
        if self.is_s3:
            return await self._bounded(s3_get(self.fs, *self._bucket_key(key), start, stop,
                                              suffix, if_match, on_meta, into))
        path = self._full(key)
        a = -suffix if suffix is not None else start
        rng = ByteRange(suffix=suffix) if suffix is not None else \
            ByteRange(offset=a or 0, length=None if stop is None else stop - (a or 0))
        seen, first = None, None
        for _ in range(_REREADS):
            if self._async:
                ranged = self._http and (a or stop is not None) and \
                    type(self.fs).__name__ == "HTTPFileSystem"
                data, more, first, version, whole = await self._bounded(
                    http_range(self.fs, path, a or 0, stop, into)) if ranged else \
                    (await self._bounded(self.fs._cat_file(
                        path, **within_part(self.fs, path, a, stop))), False, None, None, False)
                if more:
                    # longer than the range: a bad response (not a race), whose object size
                    # comes from its Content-Range (a HEAD could read a whole object)
                    size = more if more is not True else None
                    return Got(data, None, size, a if size is None else rng.resolve(size)[0],
                               True)
                # the version the answer names, else a HEAD's (checked after reading)
                etag, size = version or whole_target_version(self.fs, path, a, stop, len(data)) \
                    or await self._head(key)
                if whole and size > len(data):
                    self._ignores_ranges = True     # the parts of a read then share one GET
            else:
                # read and version in one call on the filesystem's thread: no write of this
                # process comes between them
                def read() -> tuple[bytes, tuple[str, int]]:
                    return self.fs.cat_file(path, start=a, end=stop), self._head_sync(path)

                data, (etag, size) = await self._blocking(read)
            if if_match is not None and etag != if_match:
                raise Failure("precondition", 412)
            begin, end = rng.resolve(size)
            if (short := short_target(self.fs, path, begin, end, len(data))) is not None:
                raise short                     # a target that ends before its reference
            if len(data) == end - begin or (a or stop is not None) and len(data) == size \
                    or seen == (etag, size):
                break          # the bytes fit the version, or a server that sends others
            # bytes of another length than the version asked after them says: the object was
            # replaced in between, and that version is not the bytes'; read again
            seen = (etag, size)
        else:
            raise Failure("precondition", None,
                          f"the object changed during each of {_REREADS} reads")
        if (a or stop is not None) and len(data) == size:
            # the whole object for a range: a server that ignores ranges (fsspec's HTTP
            # filesystem passes its answer on as it came); cut the range here
            return Got(memoryview(data)[begin:end], etag, size, begin)
        begin = size - len(data) if suffix is not None else min(a or 0, size)
        if (wrong := misplaced(first, len(data), begin, end)) is not None:
            raise wrong
        return Got(data, etag, size, begin)

    async def _get_whole_for(self, key: str, start: int | None, stop: int | None,
                             suffix: int | None, if_match: str | None) -> Got:
        if self._http and self._async and self._ignores_ranges:
            # a ranged GET of a server known to answer it whole: the range, as it streams by
            # (a server refusing ranges, with 416, is asked without one)
            return await self._get(key, start, stop, suffix, if_match)
        return await super()._get_whole_for(key, start, stop, suffix, if_match)

    async def _head(self, key: str) -> tuple[str | None, int]:
        path = self._full(key)
        if not self._async:
            return await self._blocking(self._head_sync, path)
        return await self._bounded(self._head_async(key, path))

    async def _head_async(self, key: str, path: str) -> tuple[str | None, int]:
        if self.is_s3:
            bucket, k = self._bucket_key(key)
            resp = await self.fs._call_s3("head_object", Bucket=bucket, Key=k)
            if resp.get("ContentLength") is None:
                raise Failure("bad_response", None, "the server's answer to a HEAD has no "
                              "Content-Length")
            return resp.get("ETag"), int(resp["ContentLength"])
        info = sized_info(self.fs, path, await self.fs._info(path))
        whole = await self.fs._cat_file(path) if sizeless(info) else None
        return file_version(info, whole, path)

    async def _described(self, key: str) -> tuple[str | None, str | None, str | None]:
        path = self._full(key)
        if self.is_s3:
            bucket, k = self._bucket_key(key)
            info = await self._bounded(self.fs._call_s3("head_object", Bucket=bucket, Key=k))
        elif self._async:
            info = await self._bounded(self.fs._info(path))
        else:
            info = await self._blocking(self.fs.info, path)
        value = info.get("ContentType") or info.get("mimetype") or info.get("content_type")
        tag, etag = (info.get("Metadata") or {}).get(WRITE_TAG), info.get("ETag")
        return value if isinstance(value, str) else None, etag, tag

    def _head_sync(self, path: str) -> tuple[str, int]:
        info = sized_info(self.fs, path, self.fs.info(path))
        return file_version(info, self.fs.cat_file(path) if sizeless(info) else None, path)

    async def _put(self, key: str, data: memoryview, mode: str | None,
                   tag: str | None = None) -> str | None:
        path = self._full(key)
        if self.is_s3 and (mode is not None or len(data) < self.options.multipart_threshold):
            bucket, k = self._bucket_key(key)
            kw: dict[str, Any] = {"Bucket": bucket, "Key": k, "Body": upload_body(data)}
            if tag is not None:
                kw["Metadata"] = {WRITE_TAG: tag}
            if mode == "create":
                kw["IfNoneMatch"] = "*"
            elif mode is not None:
                kw["IfMatch"] = mode
            resp = await self._bounded(self.fs._call_s3("put_object", **kw))
            self.fs.invalidate_cache(path)
            return resp.get("ETag")
        if mode is not None:
            raise Failure("unsupported", None, "the filesystem has no conditional writes")
        if self._async:
            opts = self.options
            kw2 = {"chunksize": upload_part_for(len(data), opts),
                   "max_concurrency": min(opts.in_flight, UPLOAD_PARTS_IN_FLIGHT)} \
                if self.is_s3 else {}
            await self.fs._pipe_file(path, upload_body(data), **kw2)
            forget_cached(self.fs, path)
        else:
            # a DirFileSystem's own root (dir::file:///new.zarr) is a folder to make too
            parent = path.rsplit("/", 1)[0] if "/" in path else \
                ("" if type(self.fs).__name__ != "DirFileSystem" else ".")

            def write() -> None:
                if parent:
                    self.fs.makedirs(parent, exist_ok=True)
                self.fs.pipe_file(path, upload_body(data))
                forget_cached(self.fs, path)

            await self._blocking(write)
        return None

    async def _delete(self, keys: list[str]) -> None:
        """Delete ``keys`` (at most 1000: one S3 DeleteObjects request) as they are named:
        fsspec's ``rm`` would read '*', '?' and '[' in a name as a glob pattern, deleting
        other keys that match it instead."""
        paths = [self._full(k) for k in keys]
        if self.is_s3:
            bucket = self._bucket_key(keys[0])[0]
            resp = await self.fs._call_s3("delete_objects", Bucket=bucket, Delete={
                "Objects": [{"Key": self._bucket_key(k)[1]} for k in keys], "Quiet": True})
            for p in paths:
                self.fs.invalidate_cache(p)
            for err in resp.get("Errors") or []:
                fail = delete_failure(str(err.get("Code", "")), str(err.get("Key")))
                if fail.kind != "missing":
                    raise fail
            return
        if self._async:
            literal = [p for p in paths if not _GLOB.search(p)]
            if literal:
                await self.fs._rm(literal)
            for p in paths:
                if _GLOB.search(p):
                    try:
                        await self.fs._rm_file(p)
                    except FileNotFoundError:
                        pass
            for p in paths:
                self.fs.invalidate_cache(p)
                forget_cached(self.fs, p)
            return
        def remove() -> None:
            for p in paths:
                forget_cached(self.fs, p)
                try:
                    self.fs.rm_file(p)
                except FileNotFoundError:
                    pass

        await self._blocking(remove)

    async def _delete_if(self, key: str, etag: str) -> None:
        if not self.is_s3:
            raise Failure("unsupported", None, "the filesystem has no conditional deletes")
        bucket, k = self._bucket_key(key)
        await self.fs._call_s3("delete_object", Bucket=bucket, Key=k, IfMatch=etag)
        self.fs.invalidate_cache(self._full(key))

    async def _list(self, prefix: str, state: dict) -> list[str]:
        if self._web:
            base = f"{self.root}/{quote(prefix.rstrip('/'), safe='/')}" if prefix else self.root
        else:
            base = self._full(prefix.rstrip("/")) if prefix else self.root
        # a web server's folders are walked by zarrx, within bounds (fsspec's walk has none:
        # a server linking ever deeper folders made it recurse until RecursionError)
        web = http_filesystem(self.fs) if self._web else None
        try:
            if web is self.fs:          # the root's query goes with every page too
                found = await web_find(web, base, self._query, self._bounded,
                                       self.options.max_listed)
            elif web is not None:       # behind a cache: on the HTTP filesystem's own loop
                from fsspec.asyn import sync
                found = await self._blocking(sync, web.loop, web_find, web, base,
                                             self._query, self._bounded,
                                             self.options.max_listed)
            elif self.is_s3 and self._async and hasattr(self.fs, "_iterdir"):
                found = await s3_find(self, base, state)
            elif self._async:
                found = await afind_within(self.fs, base or "", self.options.max_listed)
            else:
                found = await self._blocking(find_within, self.fs, base or "",
                                             self.options.max_listed)
        except FileNotFoundError as exc:
            fail = self._failure(exc)
            if fail is not None and fail.kind == "not_found":
                raise                  # s3fs's answer to a missing bucket: not an empty one
            return []
        except Exception as exc:  # noqa: BLE001 - classified below
            fail = self._failure(exc)
            if self._web and fail is not None and fail.kind == "access":
                # a web server that serves files forbids listing their folder (nginx without
                # autoindex): the server offers no listing, as a 405 says
                raise Failure("unsupported", fail.status) from None
            raise
        cut = len(self.root) + 1 if self.root else 0
        out = []
        for p in found:
            if p.endswith("/"):
                continue           # a folder marker (an empty "name/" object), not a key
            p = self.fs._strip_protocol(p).lstrip("/") if not self.root.startswith("/") \
                else self.fs._strip_protocol(p)
            if self.root and not p.startswith(self.root + "/"):
                continue
            # a server's directory listing links to names percent-encoded, as URLs
            out.append(unquote(p[cut:].partition("?")[0]) if self._web else p[cut:])
        return out

    def _failure(self, exc: BaseException) -> Failure | None:
        return failure_of(exc, self.fs, self._storage_options)

    def _dir_lister(self) -> Callable[[str, dict], Awaitable[Children]] | None:
        """S3 through s3fs and GCS through gcsfs list a folder's children with one delimiter
        listing (see :mod:`~zarrx.store.remote.dir_listing`); a listing of versions does not."""
        if self.is_s3 and self._async and not self._web and hasattr(self.fs, "_call_s3") \
                and not getattr(self.fs, "version_aware", False):
            return lambda folder, state: s3_children(self, folder, state)
        if self._async and not self._web and lists_gcs_children(self.fs):
            return lambda folder, state: gcs_children(self, folder, state)
        return None

    # -- plumbing -------------------------------------------------------------------------------
    def _config(self) -> dict:
        return {"fs": self._source, "path": self._path_arg,
                "storage_options": self._storage_options, "read_only": self.read_only,
                "options": self.options}

    def __eq__(self, other: object) -> bool:
        """As zarr-python's: the same path of equal filesystems, both read-only or not."""
        return isinstance(other, type(self)) and self.root == other.root \
            and self.read_only == other.read_only and self.fs == other.fs

    def __hash__(self) -> int:
        return hash((FsspecStore, self.root, self.read_only))
    def __repr__(self) -> str:
        return f"FsspecStore({self._display!r}{', read_only=True' if self.read_only else ''})"
