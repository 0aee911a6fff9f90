"""``ObjectStore``: S3, GCS, Azure, HTTP(S), memory and local files through obstore.

obstore (Rust's ``object_store``) runs requests without the GIL on its own runtime; its
asynchronous calls run on zarrx's one remote event loop, so a batch keeps many requests in
flight on one Python thread. zarrx does the retrying (obstore's own retries are switched off for
stores it builds from a URL) so that every backend retries the same way.

Conditional writes: on S3 a replace sends If-Match (obstore's ``conditional_put="etag"``,
which zarrx sets), a create sends If-None-Match ``*``, and a conditional delete sends a signed
DELETE with If-Match. They are on by default for S3 only; other backends need
``conditional_writes=True`` (their support is not verified by zarrx's tests).
"""
from __future__ import annotations

import asyncio
import datetime
import os
from collections.abc import Awaitable, Callable
from typing import Any

from zarrx import _fork
from zarrx.store.remote import base as remote_base
from zarrx.store.remote.base import Failure, Got, RemoteStore
from zarrx.store.remote.coalesce import UPLOAD_PARTS_IN_FLIGHT, upload_part_for
from zarrx.store.remote.common import (TRANSIENT, OnMeta, asked, body_limit, collected,
                                       first_line, gather_all, retry_delay, sent_if_match,
                                       status_kind, window)
from zarrx.store.remote.dir_listing import Children, DirListing
from zarrx.store.remote.lost_answers import WRITE_TAG
from zarrx.store.remote.obstore_children import SKIPS, Skipping, children_below, chunk_for
from zarrx.store.remote.obstore_delete import send_delete
from zarrx.store.remote.obstore_failures import failure_of
from zarrx.store.remote.obstore_listing import (Listed, names_below, resumes, root_client,
                                                without_folder_markers)
from zarrx.store.remote.options import RemoteOptions, duration_ms
from zarrx.store.remote.storage_options import (check_dict_options, checked_endpoint,
                                                move_client_keys, unknown_key_hint,
                                                without_values, wrong_client_setting)
from zarrx.store.remote.urls import (HTTP_SCHEMES, WEB_READ_ONLY, basic_credentials, bucket_problem,
                                     dot_segment, empty_segment, literal_path, redact, require,
                                     scheme_of, without_userinfo)

__all__ = ["ObjectStore"]

_KINDS = {"S3Store": "s3", "GCSStore": "gs", "AzureStore": "az", "HTTPStore": "https",
          "MemoryStore": "memory", "LocalStore": "file"}


def _obstore():  # type: ignore[no-untyped-def]
    return require("obstore", "obstore", "zarrx.store.ObjectStore", "remote")


class ObjectStore(DirListing, RemoteStore):
    """A store over an obstore store, or over the URL of one.

    ``store``: a URL (``s3://bucket/prefix``, ``gs://...``, ``az://...``, ``https://...``,
    ``memory:///``, ``file:///...``) built with ``storage_options`` (obstore's configuration
    keys, such as ``region``, ``endpoint``, ``access_key_id``, ``client_options``), or an obstore
    store object (used as it is). ``options``/keyword overrides: :class:`RemoteOptions`.
    HTTP(S) stores are read-only.
    """

    _reads_into = True

    def __init__(self, store: Any, *, storage_options: dict | None = None,
                 read_only: bool = False, options: RemoteOptions | dict | None = None,
                 **overrides: Any) -> None:
        obs = _obstore()
        opts = RemoteOptions.make(options, **overrides)
        self._source = store
        self._storage_options = dict(storage_options or {})
        self._prefix = ""                   # below the client's own prefix (memory:// only)
        if isinstance(store, str):
            if (problem := bucket_problem(store)) is not None:
                from zarrx.errors import StoreError
                raise StoreError(f"ObjectStore: {problem}")
            check_dict_options(f"ObjectStore({redact(store)!r})", self._storage_options)
            self.kind = scheme_of(store) or "file"
            self._client = _from_url(obs, store, self._storage_options, opts)
            if self.kind == "memory":
                self._prefix = _memory_name_and_prefix(store)[1]
            self._display = redact(store).rstrip("/")
        else:
            if not type(store).__module__.startswith("obstore"):
                from zarrx.errors import StoreError
                raise StoreError(f"ObjectStore: expected a URL or an obstore store, found "
                                 f"{type(store).__name__}")
            if self._storage_options:
                from zarrx.errors import StoreError
                raise StoreError("ObjectStore: storage_options apply to URLs only; configure "
                                 "the obstore store object itself")
            self.kind = _KINDS.get(type(store).__name__, "obstore")
            self._client = store
            self._display = _describe(store, self.kind)
        if self.kind in ("http", "https"):
            read_only, self.read_only_reason = True, WEB_READ_ONLY
        # the store listings are asked of, and the prefix they list below (see _list)
        self._lister: tuple[Any, str, str] | None = None
        super().__init__(read_only=read_only, options=opts)

    @property
    def supports_conditional_writes(self) -> bool:  # type: ignore[override]
        cw = self.options.conditional_writes
        return (self.kind in ("s3", "s3a")) if cw is None else cw

    @property
    def has_buckets(self) -> bool:
        """Whether keys lie in a bucket or container, which may itself be missing."""
        return self.kind in ("s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "adl")

    def _run(self, coro):  # type: ignore[no-untyped-def]
        """Run ``coro``, unless this process was forked from one whose obstore requests ran:
        obstore's runtime (its threads) does not survive a fork, and every request of the
        child would wait for ever."""
        global _RUNTIME_PID
        pid = os.getpid()
        if _RUNTIME_PID is not None and _RUNTIME_PID != pid:
            coro.close()
            from zarrx.errors import StoreError
            raise StoreError(f"{self!r}: cannot send requests in this process: it was forked "
                             f"from a process that had used obstore, whose runtime does not "
                             f"survive a fork (the requests would wait for ever); start worker "
                             f"processes with the 'spawn' or 'forkserver' method "
                             f"(multiprocessing.get_context('spawn')), or use FsspecStore")
        _RUNTIME_PID = pid
        return super()._run(coro)

    @property
    def shared_identity(self) -> tuple:  # type: ignore[override]
        # one URL names the same objects whichever handle opened it; an obstore store given
        # as an object names its own
        if isinstance(self._source, str):
            return (type(self).__name__, self._display)
        return (type(self).__name__, id(self._client))

    def _cannot_write(self) -> str | None:
        return self.read_only_reason

    def _url(self, key: str) -> str:
        return f"{self._display}/{key}"

    # -- primitives ----------------------------------------------------------------------------
    async def _get(self, key: str, start: int | None, stop: int | None, suffix: int | None,
                   if_match: str | None, on_meta: OnMeta | None = None,
                   into: memoryview | None = None) -> Got:
        obs = _obstore()
        opts: dict[str, Any] = {}
        if suffix is not None:
            opts["range"] = {"suffix": suffix}
        elif stop is not None:
            opts["range"] = (start or 0, stop)
        elif start:
            opts["range"] = {"offset": start}
        if (cond := sent_if_match(if_match)) is not None:
            opts["if_match"] = cond
        res = await obs.get_async(self._client, self._prefix + key, options=opts)
        meta = res.meta
        if on_meta is not None:
            on_meta(_version(meta), meta.get("size"))
        begin, end = res.range
        # the body is read as it streams, up to the length asked for (obstore would read all
        # of it, up to the Content-Length the server claims, and allocate that length before
        # the body comes: a length it cannot allocate aborts the process)
        limit = body_limit(start, stop, suffix, end - begin)
        # a range asked for bounds the body: read into no buffer of ours, it comes as one
        # piece (gathered by obstore without the GIL) that is kept as it came; else, and into
        # a buffer, in pieces of at most 1 MiB (a bytearray growing piece by piece copied each
        # byte two or three times, more than the decoding that follows)
        whole = into is None and (suffix is not None or stop is not None)
        piece = limit if whole else min(limit, 1 << 20)
        data, more = await collected(res.stream(min_chunk_size=max(1, piece)), limit, into)
        return Got(data, _version(meta), meta.get("size"), begin, more)

    async def _get_whole_for(self, key: str, start: int | None, stop: int | None,
                             suffix: int | None, if_match: str | None) -> Got:
        # the range is taken from the body as it streams by and the rest is left unread: a
        # server ignoring ranges costs no more memory than the range, whatever size it claims
        cond = sent_if_match(if_match)
        res = await _obstore().get_async(self._client, self._prefix + key,
                                         options={} if cond is None else {"if_match": cond})
        begin, end = res.range
        lo, hi = asked(start, stop, suffix, end)
        # pieces no larger than what is needed: a body cut short after the range still gives it
        data = await window(res.stream(min_chunk_size=max(1, min(1 << 20, hi - begin))),
                            begin, lo, hi)
        return Got(data, _version(res.meta), end, lo)

    async def _head(self, key: str) -> tuple[str | None, int]:
        obs = _obstore()
        try:
            meta = await obs.head_async(self._client, self._prefix + key)
        except (FileNotFoundError, obs.exceptions.PermissionDeniedError) as exc:
            fail = self._failure(exc)
            if self.kind not in ("http", "https") or fail is None \
                    or fail.kind not in ("unsupported", "access"):
                raise
            # a web server that answers HEAD with 405 (obstore takes it for a missing object)
            # or forbids it (403, as servers of GET-only links do): the headers of a GET say
            # the same, and its body is not read
            meta = (await obs.get_async(self._client, self._prefix + key)).meta
        return _version(meta), meta["size"]

    async def _described(self, key: str) -> tuple[str | None, str | None, str | None]:
        res = await _obstore().get_async(self._client, self._prefix + key,
                                         options={"head": True})
        attrs = res.attributes or {}
        value, tag = attrs.get("Content-Type"), attrs.get(WRITE_TAG)
        return (value if isinstance(value, str) else None, res.meta.get("e_tag"),
                tag if isinstance(tag, str) else None)

    async def _put(self, key: str, data: memoryview, mode: str | None,
                   tag: str | None = None) -> str | None:
        opts = self.options
        kw: dict[str, Any] = {}
        if tag is not None and self.kind != "file":   # obstore keeps no metadata in files
            kw["attributes"] = {WRITE_TAG: tag}
        if mode == "create":
            kw["mode"] = "create"
        elif mode is not None:
            kw["mode"] = {"e_tag": mode}
        elif len(data) >= opts.multipart_threshold:
            kw.update(use_multipart=True, chunk_size=upload_part_for(len(data), opts),
                      max_concurrency=min(opts.in_flight, UPLOAD_PARTS_IN_FLIGHT))
        res = await _obstore().put_async(self._client, self._prefix + key, data, **kw)
        return res.get("e_tag")

    async def _delete(self, keys: list[str]) -> None:
        keys = [self._prefix + k for k in keys]
        await _obstore().delete_async(self._client, keys if len(keys) > 1 else keys[0])

    async def _delete_if(self, key: str, etag: str) -> None:
        """A DELETE with If-Match, sent through a short-lived signed URL (obstore has no
        conditional delete). The URL carries a signature: it is never shown."""
        if self.kind not in ("s3", "s3a", "gs", "az"):
            raise Failure("unsupported", None, f"{self.kind} stores cannot sign requests")
        url = await _obstore().sign_async(self._client, "DELETE", self._prefix + key,
                                          datetime.timedelta(minutes=5))
        timeout = duration_ms(self.options.timeout) / 1000     # 0: no limit, as for obstore
        status = await asyncio.to_thread(send_delete, self._client, url, etag, timeout)
        if status in (200, 202, 204):
            return
        raise Failure(status_kind(status, ""), status)

    def _root_lister(self) -> tuple[Any, str, str]:
        """The client listing from the bucket's root, made at the first listing (see
        :func:`root_client`)."""
        if self._lister is None:
            self._lister = root_client(self._client)
        return self._lister

    async def _list(self, prefix: str, state: dict) -> list[str]:
        lister, below, named = self._root_lister()
        full = (below + self._prefix + prefix).rstrip("/")
        obs = _obstore()

        def listing(after: str | None) -> Any:
            return obs.list(lister, prefix=full or None, offset=after)
        # a bucket's listing cut by a transient failure goes on after its last path: at
        # once when the attempt took paths, else after the store's retry wait (``_call``)
        resume = resumes(lister)
        listed = state.setdefault("listed", Listed()) if resume else Listed()
        while True:
            taken = len(listed.seen)
            try:
                found = await names_below(listing, named + self._prefix, prefix,
                                          self.options.max_listed, listed=listed,
                                          complete=type(lister).__name__ == "S3Store")
                break
            except Exception as exc:  # noqa: BLE001 - classified; re-raised unless resumed
                fail = exc if isinstance(exc, Failure) else self._failure(exc)
                if not resume or fail is None or fail.kind not in TRANSIENT \
                        or len(listed.seen) == taken:
                    raise
                await remote_base._pause(retry_delay(self.options, 0, fail.retry_after))
        return await self._keys_of(found, prefix)

    async def _keys_of(self, found: list[tuple[str, int]], folder: str) -> list[str]:
        """The names of ``found`` (``(name, size)`` listed below ``folder``) that are keys,
        without folder markers (see :func:`without_folder_markers`)."""
        names, doubtful = without_folder_markers(found, folder.rstrip("/"))
        if doubtful:
            # a name that may be a marker "name/" as well is a key only when it answers to
            # its name
            obs, limit = _obstore(), asyncio.Semaphore(16)

            async def is_key(name: str) -> bool:
                async with limit:
                    try:
                        await obs.head_async(self._client, self._prefix + name)
                    except FileNotFoundError:
                        return False
                    except Exception:  # noqa: BLE001 - unknown: listed, so taken as a key
                        return True
                    return True

            checked = sorted(doubtful)
            gone = {n for n, ok in zip(checked, await gather_all([is_key(n) for n in checked]))
                    if not ok}
            names = [n for n in names if n not in gone]
        return names

    def _dir_lister(self) -> Callable[[str, dict], Awaitable[Children]] | None:
        """S3 lists a folder's children skipping over the keys of each child folder (see
        :mod:`~zarrx.store.remote.obstore_children`); other backends list every key below."""
        return self._children if type(self._root_lister()[0]).__name__ in SKIPS else None

    async def _children(self, folder: str, state: dict) -> Children:
        lister, below, named = self._root_lister()
        full = (below + self._prefix + folder).rstrip("/")
        obs = _obstore()

        def listing(after: str | None) -> Any:
            return obs.list(lister, prefix=full or None, offset=after,
                            chunk_size=chunk_for(self.options.max_listed))
        taken = state.setdefault("skipping", Skipping())
        while True:
            before = (len(taken.seen), taken.after)
            try:
                await children_below(listing, named + self._prefix, folder,
                                     self.options.max_listed, taken)
                break
            except Exception as exc:  # noqa: BLE001 - classified; re-raised unless resumed
                fail = exc if isinstance(exc, Failure) else self._failure(exc)
                if fail is None or fail.kind not in TRANSIENT \
                        or (len(taken.seen), taken.after) == before:
                    raise
                await remote_base._pause(retry_delay(self.options, 0, fail.retry_after))
        dirs = list(taken.dirs)
        names = await self._keys_of(
            taken.found + [(f"{folder}{d}/", 1) for d in dirs], folder)
        return [n[len(folder):] for n in names if not n.endswith("/")], dirs

    def _failure(self, exc: BaseException) -> Failure | None:
        return failure_of(exc, _obstore().exceptions, self.kind in ("http", "https"))

    # -- plumbing ------------------------------------------------------------------------------
    def _config(self) -> dict:
        return {"store": self._source, "storage_options": self._storage_options,
                "read_only": self.read_only, "options": self.options}

    def __eq__(self, other: object) -> bool:
        """As zarr-python's: equal obstore stores (obstore compares their configuration), both
        read-only or both writable."""
        return isinstance(other, ObjectStore) and self.read_only == other.read_only \
            and self._client == other._client and self._prefix == other._prefix

    def __hash__(self) -> int:
        # obstore stores have no hash; equal ones are of one kind
        return hash((ObjectStore, self.kind, self.read_only))

    def __repr__(self) -> str:
        return f"ObjectStore({self._display!r}{', read_only=True' if self.read_only else ''})"


#: the process whose obstore requests ran (obstore's runtime is that process's)
_RUNTIME_PID: int | None = None

_MEMORY: dict[str, Any] = {}
_MEMORY_LOCK = _fork.lock()


def _from_url(obs: Any, url: str, storage_options: dict, opts: RemoteOptions) -> Any:
    """The obstore store for ``url``: zarrx's timeouts, no obstore retries (zarrx retries),
    HTTP allowed for ``http://`` endpoints, and If-Match puts on S3."""
    from zarrx.errors import StoreError

    so = dict(storage_options)
    client = dict(so.pop("client_options", None) or {})
    moved = move_client_keys(so, client) if scheme_of(url) not in HTTP_SCHEMES else {}
    # whole milliseconds: obstore reads neither "1e-09s" nor "1e+30s", and a duration of 0
    # would time every request out at once (0 is "no limit", as for FsspecStore)
    client.setdefault("timeout", f"{duration_ms(opts.timeout)}ms")
    client.setdefault("connect_timeout", f"{duration_ms(opts.connect_timeout)}ms")
    scheme = scheme_of(url)
    for key in [k for k in so if isinstance(k, str) and k.lower() == "endpoint_url"]:
        so["endpoint"] = so.pop(key)                 # s3fs's name, in any case
    endpoint = checked_endpoint(f"ObjectStore({redact(url)!r})", so)
    if scheme in ("s3", "s3a") and not endpoint:
        # obstore reads the endpoint from the environment too, but the client options given
        # here replace those it would read there (AWS_ALLOW_HTTP among them)
        endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or ""
    if scheme == "http" or scheme_of(str(endpoint)) == "http":
        client.setdefault("allow_http", True)
    if scheme in HTTP_SCHEMES:
        headers = dict(client.get("default_headers") or {})
        given = {str(k).lower() for k in headers}
        if "accept-encoding" not in given:
            # objects as stored: without the header, HTTP lets a server compress its answer,
            # which obstore would pass on compressed (as FsspecStore asks too)
            headers["Accept-Encoding"] = "identity"
        if (auth := basic_credentials(url)) is not None:
            # the user name and password of an http(s) URL, sent as browsers and fsspec's
            # HTTP filesystem send them (obstore would drop them); a header given wins
            if "authorization" not in given:
                headers["Authorization"] = auth
            url = without_userinfo(url)
        client["default_headers"] = headers
    given = {k.lower() for k in so if isinstance(k, str)}      # obstore reads any case
    if scheme in ("s3", "s3a") and not given & {"conditional_put", "aws_conditional_put"} \
            and opts.conditional_writes is not False:
        so["conditional_put"] = "etag"
    retry = so.pop("retry_config", None) or {
        "max_retries": 0,
        "retry_timeout": datetime.timedelta(milliseconds=duration_ms(opts.timeout))}
    if scheme == "memory":
        if storage_options:
            # obstore's memory store takes no configuration: an option would go unused
            raise StoreError(f"ObjectStore({redact(url)!r}): storage_options "
                             f"{', '.join(sorted(storage_options))}: a memory store takes no "
                             f"options")
        # one store per name in the process, as fsspec's memory filesystem: a pickled or
        # reopened memory:// store sees the same objects, and a path below the name is a prefix
        with _MEMORY_LOCK:
            return _MEMORY.setdefault(_memory_name_and_prefix(url)[0], obs.store.MemoryStore())
    if (dots := dot_segment(url)) is not None:
        raise StoreError(f"ObjectStore({redact(url)!r}): the path segment {dots!r}: keys are "
                         f"named literally, but obstore would resolve it and address other "
                         f"keys than the URL names; open keys with '.' or '..' segments with "
                         f"FsspecStore")
    if (path := empty_segment(url)) is not None:
        raise StoreError(f"ObjectStore({redact(url)!r}): the path {path!r} holds an empty "
                         f"segment ('//'), which obstore cannot address; write the URL with "
                         f"single slashes, or open keys with empty segments with FsspecStore")
    if scheme in HTTP_SCHEMES:
        if so:
            raise StoreError(f"ObjectStore({redact(url)!r}): storage_options "
                             f"{', '.join(sorted(map(str, so)))}: an HTTP(S) store takes only "
                             f"client_options")
        # a web address read with plain GETs, whatever its host: obstore's from_url would make
        # an https:// URL of an S3 or Azure host a store signing its requests, with
        # credentials it looks for (an instance metadata service), so public data read by
        # its web address (as zarr-python and fsspec read it) could not be read
        factory = obs.store.HTTPStore.from_url
    else:
        factory = obs.store.from_url
    try:
        return factory(literal_path(url), client_options=client, retry_config=retry, **so)
    except ImportError:
        raise
    except BaseException as exc:  # noqa: BLE001 - obstore raises several types for bad config
        if not isinstance(exc, Exception) and type(exc).__name__ != "PanicException":
            raise                                       # KeyboardInterrupt, SystemExit
        wrong = [k for k, v in so.items()
                 if not isinstance(v, (str, bool)) and k != "credential_provider"]
        if isinstance(exc, TypeError) and wrong:
            # obstore's message ("'int' object is not an instance of 'str'") names no option
            raise StoreError(f"ObjectStore({redact(url)!r}): storage_options {wrong[0]}: "
                             f"expected a str, found {type(so[wrong[0]]).__name__}") from None
        if isinstance(exc, TypeError) and (why := wrong_client_setting(client, moved)):
            raise StoreError(f"ObjectStore({redact(url)!r}): {why}") from None
        shown = without_values(first_line(exc), so, client)
        raise StoreError(f"ObjectStore({redact(url)!r}): cannot configure the store: "
                         f"{type(exc).__name__}: {shown}{unknown_key_hint(shown)}") from None


def _version(meta: dict) -> str | None:
    """The version an answer names: its ETag; from a server that sends none (a web server
    configured without them), a weak one made of the object's size and Last-Modified (the
    epoch when that is missing too), so that the object has a generation and a later answer
    of another version is found (weak: never sent as If-Match, compared with the answers)."""
    etag = meta.get("e_tag")
    if etag is not None:
        return etag
    modified = meta.get("last_modified")
    stamp = modified.isoformat() if isinstance(modified, datetime.datetime) else modified
    size = meta.get("size")
    return f'W/"zarrx-{size}-{stamp}"'


def _memory_name_and_prefix(url: str) -> tuple[str, str]:
    """``memory://name/a/b`` (or ``memory:///name/a/b``): the store's name and the key prefix
    ``a/b/`` below it."""
    name, _, rest = url.split("://", 1)[1].strip("/").partition("/")
    rest = rest.strip("/")
    return name, rest + "/" if rest else ""


def _describe(store: Any, kind: str) -> str:
    """A printable address of an obstore store object (its bucket/URL and prefix; never its
    credentials)."""
    prefix = getattr(store, "prefix", None) or ""
    cfg: dict = {}
    try:
        cfg = dict(getattr(store, "config", {}) or {})
    except Exception:  # noqa: BLE001 - the description is best effort
        cfg = {}
    if kind == "https":
        base = redact(str(getattr(store, "url", "") or cfg.get("url", "")))
    else:
        name = cfg.get("bucket") or cfg.get("container_name") or cfg.get("bucket_name") or ""
        base = f"{kind}://{name}"
    return f"{base}/{prefix}".rstrip("/") if prefix else base
