"""How :class:`~zarrx.store.remote.fsspecstore.FsspecStore` calls a filesystem: a synchronous
one on a thread of its own, uploads as ``bytes``, and a file's version from its ``info()``."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import os
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from zarrx import _fork
from zarrx.store.remote.common import listed_too_many

__all__ = ["forget_cached", "inside_dir", "blocking", "upload_body", "sizeless", "file_version", "find_within",
           "afind_within", "sized_info", "is_async", "read_only_fs", "lost_writes",
           "zip_names_as_keys"]

T = TypeVar("T")


# the thread that makes the calls of each synchronous filesystem (ftp, sftp, memory, ...): on
# the event loop every remote store shares, a call that waits for its server would hold up all
# of them; one thread per filesystem, as such clients (an FTP session) are not thread-safe
_SYNC_THREADS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SYNC_GUARD = threading.Lock()


def _sync_thread(fs: Any) -> ThreadPoolExecutor:
    with _SYNC_GUARD:
        pool = _SYNC_THREADS.get(fs)
        if pool is None:
            pool = _SYNC_THREADS[fs] = ThreadPoolExecutor(
                1, thread_name_prefix="zarrx-fsspec-sync")
        return pool


def _forget_sync_threads() -> None:
    global _SYNC_GUARD
    _SYNC_THREADS.clear()              # their threads do not exist in a forked child
    _SYNC_GUARD = threading.Lock()


_fork.at_fork(_forget_sync_threads)


def upload_body(data: memoryview) -> bytes:
    """The ``bytes`` to upload for ``data``: the object it views when that is a whole
    ``bytes`` (no copy), else a copy."""
    obj = data.obj
    if type(obj) is bytes and data.nbytes == len(obj):
        return obj
    return bytes(data)


async def blocking(fs: Any, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, a call of the synchronous filesystem ``fs``, on its own thread
    (see ``_sync_thread``)."""
    try:
        pool = _sync_thread(fs)
    except TypeError:                       # a filesystem that cannot be a weak key
        return await asyncio.to_thread(fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(
        pool, functools.partial(fn, *args, **kwargs))


def sizeless(info: dict) -> bool:
    """Whether ``info`` (of a file) gives no size: a web server's answer streamed without
    Content-Length."""
    return info.get("size") is None and info.get("type") != "directory"


def file_version(info: dict, whole: bytes | None, path: str) -> tuple[str, int]:
    """The generation (ETag, else size and modification time) and size of the file ``info``
    describes; ``whole``: its bytes, read when ``info`` gives no size (their digest then
    stands for a missing version)."""
    if info.get("type") == "directory":
        raise FileNotFoundError(path)
    tag = info.get("ETag") or info.get("etag")
    # fsspec's HTTP filesystem gives a web server's Last-Modified under its header's name
    stamp = info.get("mtime") or info.get("LastModified") or info.get("Last-Modified") \
        or info.get("created")
    size = info.get("size")
    if size is None:
        size = len(whole or b"")
        if tag is None and stamp is None:
            tag = "blake2b-" + hashlib.blake2b(whole or b"", digest_size=16).hexdigest()
    if tag is None:
        tag = f"{size}-{stamp}"
    return str(tag), int(size)



# -- listings within RemoteOptions.max_listed --------------------------------------------------
# fsspec's own ``find`` walks every folder and returns all it found at the end: a filesystem
# naming ever more files or folders (a broken server, a cyclic link) is listed until memory or
# the stack runs out, and a filesystem's own ``find`` (gcsfs, adlfs: one flat paginated
# listing) returns only once it has taken every page. So zarrx lists within the bound as the
# listing comes: gcsfs through its flat listing told to stop after ``most + 1`` entries (its
# pages stop there: the same requests as its ``find``); any other filesystem by walking it
# folder by folder (``ls``), counting the files and folders as each folder's listing comes and
# stopping past ``most``. A ``find`` of fsspec's own filesystems (memory, zip, reference, dir)
# is kept: their listing is held in memory, or is their own walk.

def _counted(entries: int, most: int) -> None:
    if entries > most:
        raise listed_too_many(most)


def _keeps_find(method: Any, base: Any) -> bool:
    """Whether a filesystem's ``find`` (``method``; fsspec's walk is ``base``) is taken as it
    is: fsspec's own walk, or the ``find`` of one of fsspec's own filesystems."""
    return method is base or getattr(method, "__module__", "").startswith("fsspec.")


def find_within(fs: Any, path: str, most: int) -> list[str]:
    """The files below ``path`` of the synchronous filesystem ``fs``, as ``fs.find`` gives
    them; a listing of more than ``most`` entries fails (``RemoteOptions.max_listed``) as soon
    as the folder listing that passes it comes (see above)."""
    from fsspec import AbstractFileSystem
    own = type(fs).find
    if own is not AbstractFileSystem.find and _keeps_find(own, AbstractFileSystem.find):
        found = fs.find(path)
        _counted(len(found), most)
        return found
    out: list[str] = []
    entries = 0
    for _, dirs, files in fs.walk(path, detail=True):
        entries += len(dirs) + len(files)
        _counted(entries, most)
        out.extend(info["name"] for info in files.values())
    return sorted(out)


async def afind_within(fs: Any, path: str, most: int) -> list[str]:
    """:func:`find_within` for an asynchronous filesystem (``fs._find``)."""
    from fsspec.asyn import AsyncFileSystem
    # the class's, or what the filesystem hands it to: a caching filesystem
    # (simplecache::s3://...) has none of its own and passes it to its target's
    own = getattr(fs._find, "__func__", fs._find)
    if _gcs_paged(fs):
        items, _ = await fs._do_list_objects(path, max_results=most + 1, delimiter="")
        _counted(len(items), most)
        below = path.rstrip("/") + "/"
        return [o["name"] for o in items if o["name"].startswith(below)]
    if own is not AsyncFileSystem._find and _keeps_find(own, AsyncFileSystem._find):
        found = await fs._find(path)
        _counted(len(found), most)
        return found
    out: list[str] = []
    entries = 0
    async for _, dirs, files in fs._walk(path, detail=True):
        entries += len(dirs) + len(files)
        _counted(entries, most)
        out.extend(info["name"] for info in files.values())
    return sorted(out)


def _gcs_paged(fs: Any) -> bool:
    """Whether ``fs`` is gcsfs with its flat listing that stops after a number of entries
    (``_do_list_objects(path, max_results=, delimiter="")``, which its ``find`` calls)."""
    if not type(fs).__module__.startswith("gcsfs."):
        return False
    import inspect
    try:
        return "max_results" in inspect.signature(fs._do_list_objects).parameters
    except (AttributeError, TypeError, ValueError):
        return False


def is_async(fs: Any) -> bool:
    """Whether ``fs`` serves fsspec's coroutines (``_cat_file``, ``_info``, ...): an
    ``AsyncFileSystem``, but a ``DirFileSystem`` (one itself) only over an asynchronous
    filesystem; over a synchronous one (local, memory) it has none of them to call."""
    if not getattr(fs, "async_impl", False):
        return False
    inner = getattr(fs, "fs", None) if type(fs).__name__ == "DirFileSystem" else None
    return inner is None or is_async(inner)


def read_only_fs(fs: Any) -> bool:
    """Whether ``fs`` is a filesystem that cannot be written: an archive opened to read
    (``zip::``, fsspec's default mode ``"r"``; ``tar::`` and ``libarchive::`` always), whose
    writes fail with a bare ``NotImplementedError`` or are lost."""
    name = type(fs).__name__
    if name in ("TarFileSystem", "LibArchiveFileSystem"):
        return True
    return name == "ZipFileSystem" and getattr(fs, "mode", "r") == "r"


def zip_names_as_keys(fs: Any, url: object, where: str) -> None:
    """Name the entries of fsspec's zip filesystem ``fs``, opened to read, by the keys
    :class:`~zarrx.store.ZipStore` reads them as (:func:`~zarrx.store.zipread.checked_entries`:
    ``./zarr.json`` is ``zarr.json``, an MS-DOS ``a\\zarr.json`` is ``a/zarr.json``, unsafe
    names are skipped with a warning naming ``where``). For a filesystem zarrx made from a
    URL only (``url`` a str): it is nobody else's (fsspec caches no zip filesystem)."""
    if not isinstance(url, str) or not read_only_fs(fs) or type(fs).__name__ != "ZipFileSystem":
        return
    from zarrx.store.zipread import checked_entries
    entries = checked_entries(fs.zip, where)
    for key, info in entries.items():
        info.filename = key         # zipfile checks the local header against orig_filename
    fs.zip.filelist, fs.zip.NameToInfo = list(entries.values()), entries
    fs.dir_cache = None


def lost_writes(fs: Any, url: object) -> str | None:
    """Why writes through ``fs``, made by zarrx from ``url``, would be lost (None: they are
    not): fsspec's reference filesystem (kerchunk, ``reference://``) writes into the
    references it holds in memory, and the filesystem made from a URL is nobody else's, so
    nothing could save them."""
    if not isinstance(url, str):
        return None           # a filesystem object: its owner can save what it holds
    links = [link.split("://", 1)[0].lower() for link in url.split("::")]
    if type(fs).__name__ != "ReferenceFileSystem" and "reference" not in links:
        return None
    return ("writes to a reference filesystem opened from a URL would change only the "
            "references it holds in memory, and be lost when the process ends; write the "
            "data to a store of its own, or pass a ReferenceFileSystem object you hold (its "
            "save_json keeps what was written)")


def sized_info(fs: Any, path: str, info: dict) -> dict:
    """``info`` of ``path`` with no size when it gives a wrong one: a kerchunk reference held
    inline (text, or ``base64:`` bytes), whose size fsspec's reference filesystem gives as
    the length of its text rather than of its bytes; such a file is sized by reading it."""
    if type(fs).__name__ != "ReferenceFileSystem":
        return info
    try:
        ref = fs.references.get(fs._strip_protocol(path))
    except Exception:  # noqa: BLE001 - a lazily loaded reference set that cannot say
        return info
    return {**info, "size": None} if isinstance(ref, (str, bytes)) else info


def inside_dir(fs: Any, root: str) -> str:
    """The root of a ``dir::`` chain (``dir::file:///data/x.zarr``) inside its
    ``DirFileSystem``: fsspec roots that filesystem at the URL's path and hands back the same
    path, which it would then read below itself (``/data/x.zarr/data/x.zarr``)."""
    if type(fs).__name__ != "DirFileSystem" or not isinstance(getattr(fs, "path", None), str):
        return root
    base = fs.path.rstrip("/")
    if root.rstrip("/") == base:
        return ""
    return root[len(base) + 1:] if root.startswith(base + "/") else root


#: fsspec's caching filesystems (simplecache::, filecache::, blockcache::)
_CACHING = ("SimpleCacheFileSystem", "WholeFileCacheFileSystem", "CachingFileSystem")


def forget_cached(fs: Any, path: str) -> None:
    """Drop the cached copy of ``path``, just written or deleted, from a caching filesystem
    (``simplecache::s3://...``): it would serve the old bytes to later reads (a chunk
    updated in part twice lost the first update)."""
    name = type(fs).__name__
    if name not in _CACHING:
        return
    if name == "SimpleCacheFileSystem":            # no metadata: the file named by the path
        fn = fs._check_file(path)
        if fn:
            with contextlib.suppress(FileNotFoundError):
                os.remove(fn)
    else:
        fs.pop_from_cache(path)
