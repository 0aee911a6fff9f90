"""Conditional writes of :class:`~zarrx.store.local.LocalStore`: ``set_if`` and ``delete_if``.

The protocol (see also docs/RELIABILITY.md):

- **Replace-if-generation.** Open the current file and take an exclusive ``flock`` on it, then
  ``lstat`` the key's path. If the path still names the locked inode and its generation is the
  expected one, write a temporary file and rename it over the key *while holding the lock*. If
  the path names another inode, the locked version was replaced meanwhile: a conflict, unless the
  new one is the expected generation, which is then locked in turn. Every conditional writer
  modifies a key only while holding the lock on the inode the path names at that moment, and
  checks the generation under that lock, so two of them can never both succeed from one
  generation.
- **Create-if-absent.** Write a temporary file and ``link`` it to the key, which fails atomically
  when the key exists.
- **Delete-if-generation.** Lock and check as a replace does, then unlink.

Threads of one process also take an in-process lock per key, since network file systems may
emulate ``flock`` with per-process locks. Plain ``set``/``delete`` are ordered with conditional
writes the same way (:meth:`LocalStore._rename_ordered`, :meth:`LocalStore._unlink_ordered` and
the write kernel): a new file is linked in only while the name is free, an existing one is
replaced or removed only while holding an exclusive ``flock`` on it. A read-modify-write whose
generation check passed under that lock therefore never writes back over a plain write that
finished meanwhile.
"""
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Hashable

from zarrx.errors import StoreError
from zarrx.store.base import ABSENT, Store, as_buffer, conflict, is_absent
from zarrx.store.localfs import (DIRFD, FILE_FLAGS, Dir, LinkError, generation_of, quietly,
                                 stamp, thread_lock, unlock)
from zarrx.store.pieces import Pieces

try:
    import fcntl
except ImportError:                             # Windows: no conditional writes
    fcntl = None  # type: ignore[assignment]

__all__ = ["ConditionalFiles", "NotAFile", "kind_of", "not_a_file", "non_file",
           "CONDITIONAL", "lock_file", "NO_LINKS", "rename_ordered", "unlink_ordered"]

#: whether this platform can write conditionally (flock and dir_fd support)
CONDITIONAL = fcntl is not None and DIRFD
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_LOCK_RW = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | _NONBLOCK
_LOCK_RO = FILE_FLAGS | _NONBLOCK


class ConditionalFiles(Store):
    """The conditional-write half of LocalStore (it relies on LocalStore's root, key, staging
    and pruning helpers: ``_root``, ``_parts``, ``_tree``, ``_stage``, ``_staged``, ``_stat``,
    ``_prune``, ``_fail``, ``_link_error``)."""

    supports_conditional_writes = CONDITIONAL

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        parts = self._parts(key)
        self._check_writable(key)
        data = value if type(value) is Pieces else as_buffer(value, key)
        if not self.supports_conditional_writes:
            return super().set_if(key, value, if_generation)
        with thread_lock(self._root, key):
            try:
                if is_absent(if_generation):
                    return self._create(key, parts, data)
                return self._replace_if(key, parts, data, if_generation)
            except LinkError as exc:
                raise self._link_error(key, exc) from None
            except StoreError:
                raise
            except OSError as exc:
                raise self._fail("conditionally write", key, exc) from exc

    def _create(self, key: str, parts: list[str], data: memoryview | Pieces) -> Hashable:
        for _ in range(7):
            try:
                return self._create_once(key, parts, data)
            except FileNotFoundError:   # the temporary file was swept by a concurrent delete of
                pass                    # the node (or its folder pruned): create it after that
        return self._create_once(key, parts, data)

    def _create_once(self, key: str, parts: list[str], data: memoryview | Pieces) -> Hashable:
        d, tmp, fd = self._staged(parts, data)
        try:
            try:
                d.link(tmp, parts[-1])          # fails atomically when the key exists
            except FileExistsError:
                found = d.lstat(parts[-1])
                if stat.S_ISLNK(found.st_mode):
                    raise LinkError(key) from None
                if not stat.S_ISREG(found.st_mode):     # no writer can ever replace it
                    raise not_a_file(self, key, found.st_mode) from None
                raise conflict(self, key, "conditionally write", ABSENT,
                               generation_of(found)) from None
            finally:
                quietly(d.unlink, tmp)
            gen = generation_of(os.fstat(fd))   # after the unlink, which changes st_ctime
            if self.fsync:
                d.fsync()
            return gen
        finally:
            os.close(fd)
            d.close()

    def _replace_if(self, key: str, parts: list[str], data: memoryview | Pieces,
                    expected: Hashable) -> Hashable:
        action = "conditionally write"
        try:
            d = self._tree.dir(parts[:-1])
        except (FileNotFoundError, NotADirectoryError):
            raise conflict(self, key, action, expected, None) from None
        try:
            held = self._lock_current(d, key, parts[-1], expected, action)
            try:
                old = os.fstat(held)
                try:
                    tmp, fd = self._stage(d, parts[-1], data, after=old.st_mtime_ns)
                except FileNotFoundError:       # the key and its folder were deleted meanwhile
                    raise conflict(self, key, action, expected, None) from None
                try:
                    d.replace(tmp, parts[-1])
                    gen = generation_of(os.fstat(fd))
                    if self.fsync:
                        d.fsync()
                except FileNotFoundError:       # swept by a concurrent delete of the node
                    quietly(d.unlink, tmp)
                    raise conflict(self, key, action, expected, None) from None
                except BaseException:
                    quietly(d.unlink, tmp)
                    raise
                finally:
                    os.close(fd)
                return gen
            finally:
                unlock(held)
        finally:
            d.close()

    def _lock_current(self, d: Dir, key: str, name: str, expected: Hashable,
                      action: str) -> int:
        """An fd of the file at ``name``, exclusively locked, whose inode the path still names
        and whose generation is ``expected``; a conflict otherwise."""
        for _ in range(100):
            try:
                fd = _open_for_lock(d, name)
            except FileNotFoundError:
                raise conflict(self, key, action, expected, None) from None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise LinkError(key) from None
                raise
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                held = os.fstat(fd)
                try:
                    now = d.lstat(name)
                except FileNotFoundError:
                    raise conflict(self, key, action, expected, None) from None
                found = generation_of(now)
                if found != expected:
                    raise conflict(self, key, action, expected, found)
                if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
                    return fd
            except BaseException:
                unlock(fd)
                raise
            unlock(fd)          # locked a version replaced since by the expected one: lock that
        raise StoreError(f"{self!r}: cannot {action} {key!r}: the file keeps changing")

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        parts = self._parts(key)
        self._check_writable(key)
        if not self.supports_conditional_writes:
            return super().delete_if(key, if_generation)
        action = "conditionally delete"
        with thread_lock(self._root, key):
            if is_absent(if_generation):
                st = self._stat(key, parts)
                if st is not None:
                    raise conflict(self, key, action, ABSENT, generation_of(st))
                return
            try:
                d = self._tree.dir(parts[:-1])
            except (FileNotFoundError, NotADirectoryError):
                raise conflict(self, key, action, if_generation, None) from None
            except LinkError as exc:
                raise self._link_error(key, exc) from None
            try:
                held = self._lock_current(d, key, parts[-1], if_generation, action)
                try:
                    d.unlink(parts[-1])
                finally:
                    unlock(held)
            except LinkError as exc:
                raise self._link_error(key, exc) from None
            except StoreError:
                raise
            except OSError as exc:
                raise self._fail(action, key, exc) from exc
            finally:
                d.close()
        self._prune(parts)


#: errnos of ``link`` on a file system without hard links
NO_LINKS = frozenset(e for e in (getattr(errno, n, None) for n in
                                 ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"))
                     if e is not None)


def lock_file(d: Dir, name: str) -> int | None | bool:
    """An fd of the file ``name`` in ``d`` holding an exclusive ``flock`` (the caller checks that
    the path still names it, and closes it), None when there is no such file, or False when it
    cannot be locked (a link, a directory, a file system refusing ``flock``): plain writes then
    stay unordered, as they were."""
    try:
        fd = _open_for_lock(d, name)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return False
    return fd


def _open_for_lock(d: Dir, name: str) -> int:
    try:
        return d.open(name, _LOCK_RW)           # network file systems lock writable files only
    except PermissionError:
        return d.open(name, _LOCK_RO)


class NotAFile(OSError):
    """A write found something other than a regular file at its key (``mode``: its type)."""

    def __init__(self, mode: int) -> None:
        super().__init__(errno.EEXIST, f"{kind_of(mode)} is there, not a file")
        self.mode = mode


def not_a_file(store: Store, key: str, mode: int) -> StoreError:
    """The error of a write of ``key`` where an entry of type ``mode`` that is not a file (a
    directory, a named pipe, a socket, a device) is: no write replaces one, as no read sees
    one (reads take it for a missing key, listings leave it out)."""
    return StoreError(f"{store!r}: cannot write {key!r}: {kind_of(mode)} is there, not a "
                      f"file; remove it")


def non_file(d: Dir, name: str) -> int | None:
    """The type (``st_mode``) of ``name`` in ``d`` when it is there and is neither a regular
    file nor a link (a link is the caller's to refuse or replace); else None."""
    try:
        mode = d.lstat(name).st_mode
    except FileNotFoundError:
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISLNK(mode) else mode


def kind_of(mode: int) -> str:
    """What a non-regular directory entry is, in words."""
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return what
    return "something other than a file"


def rename_ordered(d: Dir, tmp: str, fd: int, name: str) -> None:
    """Move ``tmp`` (open as ``fd``) to ``name``, ordered with conditional writers (as the write
    kernel does): a new file is linked in only while the name is free; an existing one is replaced
    only while holding an exclusive ``flock`` on it, with ``tmp`` stamped later than it. A
    read-modify-write that checked its generation under that lock can then never write a
    merge of the replaced version back over ours. Without ``flock`` or hard links
    (Windows, some mounts) it is a plain rename (last writer wins). Used by stores with
    conditional writes."""
    for _ in range(100):
        held = lock_file(d, name)
        if held is None:                    # missing: link ours in only if still free
            try:
                d.link(tmp, name)
            except FileExistsError:
                continue                    # made meanwhile: lock that version
            except OSError as exc:
                if exc.errno not in NO_LINKS:
                    raise
                d.replace(tmp, name)        # no hard links here: a plain rename
                return
            quietly(d.unlink, tmp)
            return
        if held is False:                   # not lockable (a link, a socket, ...): as before,
            if (mode := non_file(d, name)) is not None:    # unless it is no file at all
                raise NotAFile(mode)
            d.replace(tmp, name)
            return
        try:
            old = os.fstat(held)
            if not stat.S_ISREG(old.st_mode):
                raise NotAFile(old.st_mode)
            try:
                now = d.lstat(name)
            except FileNotFoundError:
                continue                    # removed while we waited: start again
            if (now.st_dev, now.st_ino) == (old.st_dev, old.st_ino):
                if os.fstat(fd).st_mtime_ns <= old.st_mtime_ns:
                    stamp(fd, old.st_mtime_ns)
                d.replace(tmp, name)
                return
        finally:
            unlock(held)                    # after the rename
    raise OSError(errno.EAGAIN, "the file keeps changing")


def unlink_ordered(d: Dir, name: str) -> bool:
    """Remove ``name``, ordered with conditional writers as :func:`rename_ordered` is: an
    existing file is unlinked only while holding an exclusive ``flock`` on it, so that a
    read-modify-write that checked its generation under that lock never writes a merge of
    the removed version back. False when there was nothing to remove: something that is not
    a file (a named pipe, a socket, a device) is no key, as reads and listings have it, and
    stays."""
    for _ in range(100):
        held = lock_file(d, name)
        if held is None:
            return False
        if held is False:                   # not lockable (a link, a directory, ...)
            if non_file(d, name) is not None:
                return False
            d.unlink(name)
            return True
        try:
            old = os.fstat(held)
            if not stat.S_ISREG(old.st_mode):
                return False
            try:
                now = d.lstat(name)
            except FileNotFoundError:
                return False                # removed by another writer meanwhile
            if (now.st_dev, now.st_ino) == (old.st_dev, old.st_ino):
                d.unlink(name)
                return True
        finally:
            unlock(held)                    # after the unlink
    raise OSError(errno.EAGAIN, "the file keeps changing")
