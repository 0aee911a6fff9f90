"""File-system primitives of :class:`~zarrx.store.local.LocalStore`: contained directory walks,
temporary file names, whole-file reads, generations and per-object locks.

**Containment.** No symbolic link below the root is ever followed, however the tree changes
while zarrx works in it; a link is reported as :class:`LinkError`. The root itself may be a link
(the user chose it). On Linux 5.6+ a key is opened with one ``openat2`` call resolving
``<root>/<key>`` with ``RESOLVE_NO_SYMLINKS`` (the kernel refuses any link on the way); the root
is first used as given, and resolved with ``realpath`` only once a link refused it. Elsewhere, and to name the offending link, a key's directories are opened
one at a time, each relative to the one before (``openat``) with ``O_NOFOLLOW | O_DIRECTORY``,
starting from the root. Platforms without ``dir_fd`` support (Windows) check each component with
``lstat`` instead, which is not proof against a tree changed concurrently.

**Temporary files** are named ``.<name>.zarrx-tmp-<pid>-<random>`` in the key's own directory
(``name`` cut to 100 bytes), so a leftover file says which key and which process it belonged to.
Any name containing :data:`TMP_MARK` is reserved: never listed, never a key.
"""
from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager

from zarrx.store.localio import WRITE_PIECE, read_exact, write_all  # noqa: F401 (re-exported)
from zarrx.store.locks import KeyedLocks

try:
    import fcntl
except ImportError:                             # Windows: no flock
    fcntl = None  # type: ignore[assignment]

__all__ = ["TMP_MARK", "LinkError", "Dir", "Tree", "open_dir", "temp_name", "is_temp_name",
           "temp_owner", "create_temp", "generation_of", "stamp", "write_all", "read_exact",
           "scan", "thread_lock", "quietly", "open_how", "unlock"]

TMP_MARK = ".zarrx-tmp-"
DIRFD = (os.open in os.supports_dir_fd and os.scandir in os.supports_fd
         and hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY"))
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC
_ROOT_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC
FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0)


class LinkError(Exception):
    """A symbolic link at ``path`` (relative to the root) where a key's file or folder should be."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.path = path


class Dir:
    """An open directory below the root: ``fd`` (``None`` without dir_fd support, where ``path``
    is used) plus ``rel``, its path relative to the root (for messages)."""

    __slots__ = ("fd", "path", "rel")

    def __init__(self, fd: int | None, path: str, rel: str) -> None:
        self.fd, self.path, self.rel = fd, path, rel

    def _at(self, name: str) -> tuple[str, int | None]:
        return (name, self.fd) if self.fd is not None else (os.path.join(self.path, name), None)

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        n, d = self._at(name)
        return os.open(n, flags, mode, dir_fd=d)

    def lstat(self, name: str) -> os.stat_result:
        n, d = self._at(name)
        return os.stat(n, dir_fd=d, follow_symlinks=False)

    def unlink(self, name: str) -> None:
        n, d = self._at(name)
        os.unlink(n, dir_fd=d)

    def rmdir(self, name: str) -> None:
        n, d = self._at(name)
        os.rmdir(n, dir_fd=d)

    def replace(self, src: str, dst: str) -> None:
        s, d = self._at(src)
        t, _ = self._at(dst)
        os.replace(s, t, src_dir_fd=d, dst_dir_fd=d)

    def link(self, src: str, dst: str) -> None:
        s, d = self._at(src)
        t, _ = self._at(dst)
        os.link(s, t, src_dir_fd=d, dst_dir_fd=d, follow_symlinks=False)

    def scandir(self) -> list[os.DirEntry]:
        with os.scandir(self.fd if self.fd is not None else self.path) as it:
            return list(it)

    def child(self, name: str) -> Dir:
        """The sub-directory ``name`` (never through a link)."""
        rel = f"{self.rel}/{name}" if self.rel else name
        if self.fd is None:
            path = os.path.join(self.path, name)
            if os.path.islink(path):
                raise LinkError(rel)
            if not os.path.isdir(path):
                raise (NotADirectoryError if os.path.lexists(path) else FileNotFoundError)(
                    errno.ENOENT, "No such directory", rel)
            return Dir(None, path, rel)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=self.fd)
        except FileNotFoundError:
            raise
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            if stat.S_ISLNK(os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode):
                raise LinkError(rel) from None
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", rel) from None
        return Dir(fd, os.path.join(self.path, name), rel)

    def mkdir_child(self, name: str) -> Dir:
        """The sub-directory ``name``, created when missing."""
        try:
            return self.child(name)
        except FileNotFoundError:
            pass
        n, d = self._at(name)
        try:
            os.mkdir(n, 0o777, dir_fd=d)
        except FileExistsError:
            pass
        return self.child(name)

    def fsync(self) -> None:
        if self.fd is not None:
            os.fsync(self.fd)
        elif os.name != "nt":                   # directories cannot be opened for fsync there
            fd = os.open(self.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def close(self) -> None:
        if self.fd is not None and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1                        # closed: any later use fails with EBADF

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_root(root: str, create: bool) -> Dir:
    """The root directory (created when ``create``); FileNotFoundError when it is missing."""
    if not DIRFD:
        if create:
            os.makedirs(root, exist_ok=True)
        if not os.path.isdir(root):
            raise FileNotFoundError(errno.ENOENT, "No such directory", root)
        return Dir(None, root, "")
    try:
        return Dir(os.open(root, _ROOT_FLAGS), root, "")
    except FileNotFoundError:
        if not create:
            raise
    os.makedirs(root, exist_ok=True)
    return Dir(os.open(root, _ROOT_FLAGS), root, "")


def open_dir(root: str, parts: Sequence[str], create: bool = False) -> Dir:
    """The directory ``root/parts[0]/.../parts[-1]``, walked without following any link below
    ``root`` and made as needed when ``create``. Raises FileNotFoundError / NotADirectoryError
    when it is missing (not ``create``) and LinkError at a link."""
    return descend(open_root(root, create), parts, create)


def descend(d: Dir, names: Sequence[str], create: bool) -> Dir:
    """The folder ``names`` below ``d``, each opened from the one above it (made first when
    ``create``); ``d`` and the folders between are closed, also on an error."""
    try:
        for name in names:
            nxt = d.mkdir_child(name) if create else d.child(name)
            d.close()
            d = nxt
    except BaseException:
        d.close()
        raise
    return d


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


_SYS_OPENAT2 = 437                      # the same number on every Linux architecture
_AT_FDCWD = -100
_RESOLVE = 0x02 | 0x04                  # RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS
# a link on the way (ELOOP; ENOTDIR for a link as the last part of a directory path: the walk
# names it), a path too long for one call, a rename race
_FALLBACK = {errno.ELOOP, errno.ENOTDIR, errno.ENAMETOOLONG, errno.EAGAIN, errno.EXDEV}
_PATH_FLAGS = getattr(os, "O_PATH", 0) | _NOFOLLOW | _CLOEXEC


def _load_openat2():  # type: ignore[no-untyped-def]
    """``openat2(AT_FDCWD, path, flags, RESOLVE_NO_SYMLINKS)`` as a function, or None when the
    kernel (or a sandbox) does not offer it."""
    if not sys.platform.startswith("linux") or not DIRFD or not hasattr(os, "O_PATH"):
        return None
    try:
        call = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    call.restype = ctypes.c_long
    call.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p,
                     ctypes.c_size_t]
    size = ctypes.sizeof(_OpenHow)

    def openat2(path: bytes, flags: int, dir_fd: int = _AT_FDCWD) -> int:
        how = _OpenHow(flags, 0, _RESOLVE)
        fd = call(_SYS_OPENAT2, dir_fd, path, ctypes.byref(how), size)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), os.fsdecode(path))
        return fd

    try:
        os.close(openat2(b"/", _PATH_FLAGS | os.O_DIRECTORY))
    except OSError:
        return None
    return openat2


_openat2 = _load_openat2()


#: the longest path one ``openat2`` takes is PATH_MAX (4096 bytes with its NUL): a longer one
#: is opened a piece of folders at a time, each piece relative to the folder before it
_PIECE = 4000


def _open_in_pieces(path: bytes, flags: int) -> int:
    """``openat2`` of ``path`` (absolute, longer than one call takes): the folders in pieces of
    under :data:`_PIECE` bytes, each opened relative to the one before (every piece resolved
    with the same ``RESOLVE_NO_SYMLINKS``), then the last piece with ``flags``. A few calls
    where a walk from the root would open every folder on the way. A segment longer than a
    piece fails as one call would (ENAMETOOLONG, so the caller walks and names it)."""
    fd, start, end = _AT_FDCWD, 0, len(path)
    try:
        while True:
            cut = end if end - start < _PIECE else path.rfind(b"/", start + 1, start + _PIECE)
            if cut <= start:
                cut = path.find(b"/", start + 1)        # one segment too long for a piece
                cut = end if cut < 0 else cut
            last = cut == end
            opened = _openat2(path[start:cut], flags if last else _DIR_FLAGS, fd)
            if fd != _AT_FDCWD:
                os.close(fd)
            fd = opened
            if last:
                return fd
            start = cut + 1
    except BaseException:
        if fd != _AT_FDCWD:
            os.close(fd)
        raise


def open_how() -> int:
    """The ``resolve`` flags every ``openat2`` of a key uses (kernels that open keys take them
    from here)."""
    return _RESOLVE


class Tree:
    """Opens keys (lists of segments) below ``root`` without following any link below it."""

    __slots__ = ("root", "_real", "_resolve")

    def __init__(self, root: str) -> None:
        self.root = root
        self._real: bytes | None = None
        self._resolve = False

    def real_root(self) -> bytes | None:
        """The root for ``openat2`` paths (see :func:`open_how`); None without ``openat2``,
        where every open walks. First the absolute root as given: when none of its parts is a
        link (the usual case) that is the real path, and ``RESOLVE_NO_SYMLINKS`` refuses it
        otherwise. After a refusal the root is resolved with ``realpath``."""
        if _openat2 is None:
            return None
        real = self._real
        if real is None:
            real = self._real = os.fsencode(os.path.realpath(self.root) if self._resolve
                                            else self.root)
            self._resolve = True
        return real

    def _fast(self, parts: Sequence[str], flags: int) -> int | None:
        """``openat2`` of ``<real root>/<parts>``; None when the caller must walk instead (no
        openat2; a link, to be named; a path too long for one call)."""
        real = self.real_root()
        if real is None:
            return None
        path = real + b"/" + os.fsencode("/".join(parts)) if parts else real
        try:
            if len(path) < _PIECE:
                return _openat2(path, flags)
            return _open_in_pieces(path, flags)
        except OSError as exc:
            if exc.errno not in _FALLBACK:
                raise
            self._real = None                   # the root may have moved: resolve it again
            return None

    def open(self, parts: Sequence[str], flags: int) -> int:
        """An fd of the file ``parts`` (a link as the last part fails with ELOOP)."""
        fd = self._fast(parts, flags)
        if fd is not None:
            return fd
        with open_dir(self.root, parts[:-1]) as d:
            return d.open(parts[-1], flags)

    def lstat(self, parts: Sequence[str]) -> os.stat_result:
        """The stat of ``parts`` itself (a link is reported as a link)."""
        fd = self._fast(parts, _PATH_FLAGS)
        if fd is None:
            with open_dir(self.root, parts[:-1]) as d:
                return d.lstat(parts[-1])
        try:
            return os.fstat(fd)
        finally:
            os.close(fd)

    def dir(self, parts: Sequence[str], create: bool = False) -> Dir:
        """The directory ``parts`` (made as needed when ``create``)."""
        try:
            fd = self._fast(parts, _DIR_FLAGS)
        except FileNotFoundError:
            if not create:
                raise
            fd = None
        if fd is not None:
            return Dir(fd, os.path.join(self.root, *parts), "/".join(parts))
        if create and parts and _openat2 is not None:
            d = self._make_below_deepest(parts)
            if d is not None:
                return d
        return open_dir(self.root, parts, create)

    def _make_below_deepest(self, parts: Sequence[str]) -> Dir | None:
        """The missing directory ``parts``, made below the deepest one that exists, found with
        ``openat2`` (the parent first, then by bisection): a few calls however deep the key,
        where a walk from the root would open every folder on the way. None when the caller
        must walk instead (see :meth:`_fast`; the root itself missing)."""
        have, lo, hi = None, 0, len(parts)      # parts[:hi] is missing; have: parts[:lo - 1]
        probe = hi - 1
        try:
            while lo < hi:
                try:
                    fd = self._fast(parts[:probe], _DIR_FLAGS)
                except FileNotFoundError:
                    hi = probe
                else:
                    if fd is None:
                        return None
                    if have is not None:
                        os.close(have)
                    have, lo = fd, probe + 1
                probe = (lo + hi) // 2
            if have is None:
                return None                     # not even the root: the walk makes it
            top = parts[:hi - 1]                # the deepest that exists
            d = Dir(have, os.path.join(self.root, *top), "/".join(top))
            have = None
        finally:
            if have is not None:
                os.close(have)
        return descend(d, parts[hi - 1:], True)


def temp_name(name: str) -> str:
    """A fresh temporary name for a value of key segment ``name``."""
    short = name.encode("utf-8")[:100].decode("utf-8", "ignore")
    return f".{short}{TMP_MARK}{os.getpid()}-{secrets.token_hex(8)}"


def is_temp_name(name: str) -> bool:
    return TMP_MARK in name


def temp_owner(name: str) -> str:
    """The key segment a temporary name was made for ("" for unrecognised shapes)."""
    head = name.split(TMP_MARK, 1)[0]
    return head[1:] if head.startswith(".") else ""


def create_temp(d: Dir, name: str) -> tuple[str, int]:
    for _ in range(8):
        tmp = temp_name(name)
        try:
            return tmp, d.open(tmp, _CREATE_FLAGS, 0o666)
        except FileExistsError:
            continue
        except BaseException:       # Ctrl-C as the file was made: it is not left behind
            quietly(d.unlink, tmp)
            raise
    raise FileExistsError(errno.EEXIST, "cannot make a unique temporary name", name)


def quietly(fn, *args) -> None:  # type: ignore[no-untyped-def]
    """``fn(*args)``, ignoring an OSError (cleaning up after a failure)."""
    try:
        fn(*args)
    except OSError:
        pass


def unlock(fd: int) -> None:
    """Release the ``flock`` held on ``fd``, then close it. Closing alone would not release it
    while a process forked meanwhile (a pool worker) holds its copy of the descriptor: the lock
    belongs to the open file they share, so every writer of the file, this process too, would
    wait for that process to end."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError:
            pass
    os.close(fd)


def generation_of(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """A file's generation: ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``. Every write
    makes a new file (a new inode) and stamps its mtime with the nanosecond clock."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def stamp(fd: int, after: int = 0) -> None:
    """Set a new file's mtime (and atime) to now in nanoseconds, and later than ``after``: two
    versions of one key then differ in mtime even when the file system reuses an inode within
    one tick of its coarse clock."""
    ns = max(time.time_ns(), after + 1)
    try:
        os.utime(fd, ns=(ns, ns))
    except (NotImplementedError, TypeError):    # no futimens: keep the file system's stamp
        pass


def scan(d: Dir) -> Iterator[tuple[str, str]]:
    """``(kind, name)`` of the entries of ``d``: kind ``"dir"``, ``"key"``, ``"temp"`` or
    ``"other"`` (a symbolic link, a named pipe, a socket or a device: never listed or read)."""
    for entry in d.scandir():
        name = entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                kind = "dir"
            elif entry.is_file(follow_symlinks=False):
                kind = "temp" if is_temp_name(name) else "key"
            else:
                kind = "other"
        except OSError:                         # vanished while listing
            continue
        if kind == "dir" and is_temp_name(name):
            continue
        yield kind, name


# -- in-process exclusion of conditional writers -------------------------------------------
# flock() excludes open file descriptions, so threads that each open the file exclude each other
# on local file systems; network file systems may emulate it with per-process locks, so threads
# of one process also take the lock of the file.
_files = KeyedLocks()


def thread_lock(root: str, key: str) -> AbstractContextManager[None]:
    """``with thread_lock(root, key):`` excludes the other threads of this process that write
    that file conditionally."""
    return _files((root, key))
