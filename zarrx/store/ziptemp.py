"""The temporary archive a writing :class:`~zarrx.store.zip.ZipStore` builds beside its target,
the removal of those whose writer is gone, and the check that puts a mode-``a`` store's archive
in place only over the version it started from (``identity``, ``copy_version``,
``replace_if_unchanged``).

A writing store builds ``.<name>.zarrx-tmp-<pid>-<random>`` in the archive's folder and holds an
exclusive ``flock`` on it from the moment it creates it until the archive is in place (or
discarded). A writer that was killed, or a machine that lost power, leaves its temporary archive
behind with no lock on it. A store starting to write removes the temporaries of that
archive whose lock it can take, so leftovers do not pile up:

- **A live writer's temporary is never removed.** Its lock is held for as long as the file
  matters; the remover takes the lock (without waiting) before removing and removes while
  holding it, and only a name that still refers to the file it locked.
- **A temporary in the moment between its creation and its lock is not lost either**: once its
  writer holds the lock it checks that the name still refers to the file it created; if a
  remover took the lock first and removed the name, the writer makes another temporary.
- Temporaries named with this process's id are left alone (a file lock that is per process, as
  ``flock`` on some network file systems is, could not tell them apart from leftovers), and so
  is everything when the file system has no locks: nothing is removed that might be in use.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import warnings
import zipfile
from typing import BinaryIO

from zarrx.errors import StoreError, ZarrRuntimeWarning

from zarrx.store.localfs import TMP_MARK, temp_name, unlock

try:
    import fcntl
except ImportError:                             # Windows: no locks, so nothing is removed
    fcntl = None  # type: ignore[assignment]

__all__ = ["make_temp", "release", "remove_stale", "keep_owner_and_mode", "fsync_temp",
           "remove_temp", "Changed", "identity", "copy_version", "replace_if_unchanged",
           "Pending", "close_quietly"]

_OPEN = os.O_RDWR | getattr(os, "O_CLOEXEC", 0)
_PROBE = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_NONBLOCK", 0))      # a FIFO named like a temporary: no wait


def make_temp(path: str) -> tuple[str, int]:
    """A new, empty temporary archive for the archive at ``path``: its path and a descriptor
    holding the lock on it (close it with :func:`release` once the temporary is moved in place
    or removed). An archive at ``path`` this process may not write is refused
    (``PermissionError``), as ``zipfile`` refuses to open it for writing, though the folder would
    let a new file replace it."""
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, "the archive is read-only", path)
    folder, name = os.path.split(path)
    for _ in range(8):
        tmp = os.path.join(folder, temp_name(name))
        try:
            fd = os.open(tmp, _OPEN | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        _lock(fd, wait=True)
        if _names(tmp, fd):
            keep_owner_and_mode(tmp, path)      # before a byte of a private archive is in it
            return tmp, fd
        unlock(fd)                              # a remover took it first: make another
    raise FileExistsError(f"cannot make a temporary archive beside {path!r}")


def read_only_after_fork(fp: BinaryIO, tmp: str) -> None:
    """In a process forked from the writer of the temporary archive ``tmp``: ``fp`` (the
    writer's file, its position shared with the writer) reads ``tmp`` through a descriptor of
    its own and can no longer write, so nothing this process does or flushes (the bytes the
    writer had buffered at the fork) lands in the writer's archive."""
    try:
        fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        fd = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(fd, fp.fileno())
    finally:
        os.close(fd)


def release(fd: int | None) -> None:
    """Give up the lock of a temporary archive and close its descriptor."""
    if fd is not None:
        try:
            unlock(fd)
        except OSError:
            pass


def remove_stale(path: str) -> list[str]:
    """Remove the temporary archives of the archive at ``path`` whose writer is gone (no lock
    held on them); the paths removed."""
    folder, name = os.path.split(path)
    head = temp_name(name).split(TMP_MARK, 1)[0] + TMP_MARK
    mine = f"{head}{os.getpid()}-"
    removed = []
    try:
        entries = [e.name for e in os.scandir(folder or ".")
                   if e.name.startswith(head) and not e.name.startswith(mine)]
    except OSError:
        return removed
    for entry in entries:
        tmp = os.path.join(folder, entry)
        try:
            fd = os.open(tmp, _PROBE)
        except OSError:                         # gone meanwhile, or not a file we may open
            continue
        try:
            if _lock(fd, wait=False) and _names(tmp, fd):
                os.unlink(tmp)
                removed.append(tmp)
        except OSError:
            pass
        finally:
            unlock(fd)                          # after the removal
    return removed


def keep_owner_and_mode(tmp: str, path: str) -> None:
    """Give the temporary archive ``tmp`` the owner, group and permission bits of the archive at
    ``path`` it is about to replace, as ``zipfile`` writing in place keeps them: a private
    archive (``0o600``) stays private. Nothing to keep when there is no archive at ``path``;
    an owner or group this process may not give is left as it is."""
    try:
        st = os.stat(path)
    except OSError:
        return
    for uid in (st.st_uid, -1):                 # the owner only for root; the group if ours
        try:
            os.chown(tmp, uid, st.st_gid)
            break
        except (OSError, AttributeError):       # (no chown on Windows)
            continue
    with contextlib.suppress(OSError):          # after chown, which clears set-id bits
        os.chmod(tmp, stat.S_IMODE(st.st_mode))


def fsync_temp(path: str) -> None:
    """Make the finished temporary archive at ``path`` durable before it is moved in place."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_temp(path: str) -> None:
    """Remove a temporary archive this store made, if it is still there."""
    with contextlib.suppress(OSError):
        os.unlink(path)


def _lock(fd: int, *, wait: bool) -> bool:
    """Take the exclusive lock on ``fd``; False when another holder has it (``wait=False``)
    or the file system has no locks."""
    if fcntl is None:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


def _names(path: str, fd: int) -> bool:
    """``path`` still refers to the file open as ``fd``."""
    try:
        now = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


class Changed(Exception):
    """The archive at the path is not the version a mode-"a" store started from."""


def identity(st: os.stat_result) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def copy_version(src: BinaryIO, tmp: str, base: tuple | None, path: str) -> None:
    """Copy the open archive ``src`` (the version ``base``) to ``tmp``, a new, empty file. Its
    size and modification time must still be those of ``base`` (its change time is not: it
    changes when another writer renames its archive over this one)."""
    assert base is not None
    if identity(os.fstat(src.fileno()))[2:4] != base[2:4]:
        raise OSError(f"{path!r} was changed in place since it was opened; open it again")
    src.seek(0)
    with open(tmp, "r+b") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    if identity(os.fstat(src.fileno()))[2:4] != base[2:4]:    # changed while copied
        raise OSError(f"{path!r} changed while it was being read; try again")


def replace_if_unchanged(tmp: str, path: str, base: tuple) -> None:
    """Move ``tmp`` over ``path`` if ``path`` still holds the version ``base``, else raise
    Changed. The check and the rename happen under an exclusive ``flock`` on that version, so
    of two stores finishing at once from one version only the first succeeds: the second finds
    another file at the path."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise Changed("the archive was removed") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:                     # no flock here: the check alone
                pass
        try:
            now = os.stat(path)
        except FileNotFoundError:
            raise Changed("the archive was removed") from None
        held = os.fstat(fd)
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino) or identity(held) != base:
            raise Changed("the archive changed")
        os.replace(tmp, path)
    finally:
        unlock(fd)                              # after the rename


class Pending:
    """What closing a store must do: finish the temporary archive and move it in place, or
    (after a failed write) discard it. Shared with the store's finalizer."""

    def __init__(self, zf: zipfile.ZipFile, tmp: str | None, path: str, mode: str,
                 where: str, base: tuple | None = None, held: int | None = None) -> None:
        self.zf, self.tmp, self.path, self.mode, self.where = zf, tmp, path, mode, where
        self.base = base            # mode "a": the archive's identity when copied (None: absent)
        self.held = held            # holds the temporary archive's lock until it is done with
        self.failed: str | None = None
        self.done = False
        self.pid = os.getpid()      # the process that finishes the archive

    def finish(self, quiet: bool) -> None:
        if self.done:
            return
        self.done = True
        if self.pid != os.getpid():     # a forked process: the archive stays its opener's
            self.zf._didModify = False  # (zipfile writes no central directory)
            close_quietly(self.zf)
            return
        try:
            self._finish(quiet)
        finally:
            release(self.held)      # the temporary is in place or removed: nothing to guard

    def _finish(self, quiet: bool) -> None:
        tmp = self.tmp
        try:
            if tmp is None or self.failed is not None:
                close_quietly(self.zf) if tmp is not None else self.zf.close()
                if tmp is not None:
                    remove_temp(tmp)
                return
            self.zf.close()                     # writes the central directory
            keep_owner_and_mode(tmp, self.path)
            fsync_temp(tmp)
            if self.mode == "x" or (self.mode == "a" and self.base is None):
                try:
                    os.link(tmp, self.path)     # fails if the target appeared meanwhile
                except FileExistsError:
                    if self.mode == "x":
                        raise
                    raise Changed("an archive was created at the path meanwhile") from None
                os.unlink(tmp)
            elif self.mode == "a":
                replace_if_unchanged(tmp, self.path, self.base)
            else:
                os.replace(tmp, self.path)
        except (OSError, ValueError, Changed) as exc:
            close_quietly(self.zf)
            if tmp is not None:
                remove_temp(tmp)
            if isinstance(exc, Changed):
                msg = (f"{self.where}: cannot finish the archive: another writer finished "
                       f"first ({exc} since this store opened it); the entries written "
                       f"through this store are not in it, and the archive is as that writer "
                       f"left it: open it again and write them again")
                if quiet:
                    warnings.warn(msg, ZarrRuntimeWarning, stacklevel=2)
                    return
                raise StoreError(msg) from None
            if not quiet:
                kept = "; the previous archive is unchanged" if tmp is not None else ""
                raise StoreError(f"{self.where}: cannot finish the archive: {exc}{kept}") from exc
        except BaseException:                   # Ctrl-C while finishing: no temporary left
            close_quietly(self.zf)
            if tmp is not None:
                remove_temp(tmp)            # (gone once moved in place)
            raise


def close_quietly(zf: zipfile.ZipFile) -> None:
    with contextlib.suppress(OSError, ValueError):
        zf.close()
