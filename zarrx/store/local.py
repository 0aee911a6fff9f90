"""A directory on the local filesystem as a store: one file per key.

Writes are atomic: the value goes to a temporary file in the key's own directory, named with the
reserved prefix ``.zarrx-tmp-`` (never listed, never a valid key segment), and is then moved over
the key with ``os.replace``. A reader sees the old value or the new one, never a torn file, and a
failed write leaves the old value in place. With ``fsync=True`` the file and its directory are
flushed to disk before the call returns.
"""
from __future__ import annotations

import io
import os
import secrets
import stat
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from zarrx import config
from zarrx.errors import StoreError
from zarrx.store.base import (ByteRange, Request, Store, as_buffer, check_path_key, key_problem,
                              sequence_of)

__all__ = ["LocalStore", "TMP_PREFIX"]

TMP_PREFIX = ".zarrx-tmp-"
MODES = ("r", "r+", "a", "w", "w-")
POOL_THREADS = 8
_POOL_NAME = "zarrx-store-io"
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


class LocalStore(Store):
    """Keys are ``/``-separated paths of files below ``root``.

    ``read_only=True`` (or ``mode="r"``) refuses writes; the other modes only make the store
    writable (clearing for ``"w"`` is the caller's job). ``fsync=True`` makes every write durable
    before it returns. The root directory is created on the first write. Symbolic links to files
    read as their targets; links to directories are not followed.
    """

    def __init__(self, root: str | os.PathLike[str], *, read_only: bool = False,
                 fsync: bool = False, mode: str | None = None) -> None:
        if mode is not None and mode not in MODES:
            raise StoreError(f"LocalStore({os.fspath(root)!r}): mode: expected one of "
                             f"{', '.join(MODES)}, found {mode!r}")
        self.root = os.path.abspath(os.fspath(root))
        self.read_only = bool(read_only) or mode == "r"
        self.fsync = bool(fsync)

    # -- keys --------------------------------------------------------------------------------
    def _path(self, key: object) -> str:
        check_path_key(key, repr(self))
        assert isinstance(key, str)
        if any(seg.startswith(TMP_PREFIX) for seg in key.split("/")):
            raise StoreError(f"{self!r}: key {key!r}: found the reserved prefix {TMP_PREFIX!r}")
        return os.path.join(self.root, *key.split("/"))

    def _fail(self, action: str, key: str, exc: OSError) -> StoreError:
        return StoreError(f"{self!r}: cannot {action} {key!r}: {exc.strerror or exc}")

    # -- reads -------------------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        path = self._path(key)
        try:
            with open(path, "rb", buffering=0) as f:
                if byte_range is None or byte_range.is_full:
                    return f.readall()
                start, stop = byte_range.resolve(os.fstat(f.fileno()).st_size)
                return _read_at(f, start, stop - start)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except OSError as exc:
            raise self._fail("read", key, exc) from exc

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        """Like ``get`` per request, in request order; several requests run on a small pool
        (not with ``zarrx.config.set(threads=1)``, which keeps all work on the calling thread)."""
        reqs = sequence_of(requests)
        if len(reqs) < 2 or config.get("threads") == 1 \
                or threading.current_thread().name.startswith(_POOL_NAME):
            return [self.get(key, rng) for key, rng in reqs]
        step = -(-len(reqs) // min(POOL_THREADS, len(reqs)))
        batches = [reqs[i:i + step] for i in range(0, len(reqs), step)]
        futures = [_pool().submit(self._get_batch, b) for b in batches[1:]]
        out = self._get_batch(batches[0])       # the caller reads a batch too
        for fut in futures:
            out.extend(fut.result())
        return out

    def _get_batch(self, reqs: Sequence[Request]) -> list[bytes | None]:
        return [self.get(key, rng) for key, rng in reqs]

    def getsize(self, key: str) -> int | None:
        try:
            st = os.stat(self._path(key))
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise self._fail("read", key, exc) from exc
        return st.st_size if stat.S_ISREG(st.st_mode) else None

    def exists(self, key: str) -> bool:
        return os.path.isfile(self._path(key))

    # -- writes ------------------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        path = self._path(key)
        self._check_writable(key)
        data = as_buffer(value, key)
        folder = os.path.dirname(path)
        try:
            tmp = self._open_temp(folder)
        except OSError as exc:
            raise self._fail("write", key, exc) from exc
        try:
            with open(tmp[0], "wb", closefd=True) as f:
                f.write(data)
                if self.fsync:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp[1], path)
        except BaseException as exc:
            _remove_quietly(tmp[1])
            if isinstance(exc, OSError):
                raise self._fail("write", key, exc) from exc
            raise
        if self.fsync:
            _fsync_dir(folder)

    def _open_temp(self, folder: str) -> tuple[int, str]:
        """A new, exclusively created temporary file in ``folder`` (created as needed)."""
        for _ in range(8):
            tmp = os.path.join(folder, TMP_PREFIX + secrets.token_hex(8))
            try:
                return os.open(tmp, _CREATE_FLAGS, 0o666), tmp
            except FileNotFoundError:           # folder missing, or pruned by a concurrent delete
                os.makedirs(folder, exist_ok=True)
            except FileExistsError:
                continue
        raise StoreError(f"{self!r}: cannot create a temporary file in {folder!r}")

    def delete(self, key: str) -> None:
        path = self._path(key)
        self._check_writable(key)
        try:
            os.unlink(path)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        except PermissionError as exc:          # some systems say EPERM for a directory
            if os.path.isdir(path):
                return
            raise self._fail("delete", key, exc) from exc
        except OSError as exc:
            raise self._fail("delete", key, exc) from exc
        self._prune(os.path.dirname(path))

    def _prune(self, folder: str) -> None:
        """Remove empty directories from ``folder`` up to (not including) the root."""
        while len(folder) > len(self.root) and folder.startswith(self.root):
            try:
                os.rmdir(folder)
            except OSError:
                return
            folder = os.path.dirname(folder)

    # -- listing -----------------------------------------------------------------------------
    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix``; walks only the directory the prefix reaches."""
        folder, _, _ = prefix.rpartition("/")
        if folder and _prefix_dir_invalid(folder):
            return iter(())                     # no valid key can start with this prefix
        base = os.path.join(self.root, *folder.split("/")) if folder else self.root
        return (key for key in _walk(base, folder + "/" if folder else "")
                if key.startswith(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        folder = prefix[:-1] if prefix.endswith("/") else prefix
        if prefix and (not folder or _prefix_dir_invalid(folder)):
            return [], []
        keys: list[str] = []
        dirs: list[str] = []
        for entry in _scan(os.path.join(self.root, *folder.split("/")) if folder else self.root):
            kind = _kind(entry)
            if kind is not None:
                (dirs if kind == "dir" else keys).append(entry.name)
        return sorted(keys), sorted(dirs)

    # -- plumbing ----------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        return {"root": self.root, "read_only": self.read_only, "fsync": self.fsync}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["root"], read_only=state["read_only"], fsync=state["fsync"])

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LocalStore) and self.root == other.root
                and self.read_only == other.read_only)

    def __hash__(self) -> int:
        return hash((LocalStore, self.root, self.read_only))

    def __repr__(self) -> str:
        return f"LocalStore({self.root!r}{', read_only=True' if self.read_only else ''})"


def _prefix_dir_invalid(folder: str) -> bool:
    return key_problem(folder) is not None or any(
        seg.startswith(TMP_PREFIX) for seg in folder.split("/"))


def _scan(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise StoreError(f"cannot list directory {folder!r}: {exc.strerror or exc}") from exc


def _kind(entry: os.DirEntry[str]) -> str | None:
    """``"dir"``, ``"key"`` (a file, or a link to one) or None (temp files, links to folders,
    which could loop or leave the root, and entries that vanished)."""
    if entry.name.startswith(TMP_PREFIX):
        return None
    try:
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        return "key" if entry.is_file() else None
    except OSError:
        return None


def _walk(folder: str, key_prefix: str) -> Iterator[str]:
    for entry in _scan(folder):
        kind = _kind(entry)
        if kind == "dir":
            yield from _walk(entry.path, key_prefix + entry.name + "/")
        elif kind == "key":
            yield key_prefix + entry.name


def _read_at(f: io.FileIO, offset: int, n: int) -> bytes:
    """``n`` bytes at ``offset`` (fewer only if the file ends first), reading nothing else."""
    parts: list[bytes] = []
    while n > 0:
        if hasattr(os, "pread"):
            part = os.pread(f.fileno(), n, offset)
        else:
            f.seek(offset)
            part = f.read(n)
        if not part:
            break
        parts.append(part)
        offset += len(part)
        n -= len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_dir(folder: str) -> None:
    if os.name == "nt":                         # directories cannot be opened for fsync there
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the read pool: shared by all LocalStores, made lazily, forgotten in a forked child --------
_pool_lock = threading.Lock()
_pool_obj: ThreadPoolExecutor | None = None
_pool_pid = 0


def _pool() -> ThreadPoolExecutor:
    global _pool_obj, _pool_pid
    with _pool_lock:
        if _pool_obj is None or _pool_pid != os.getpid():
            _pool_obj = ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix=_POOL_NAME)
            _pool_pid = os.getpid()
        return _pool_obj


def _forget_pool_after_fork() -> None:
    global _pool_obj, _pool_lock
    _pool_obj, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool_after_fork)
