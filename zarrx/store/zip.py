"""A zip archive as a store: one entry per key, stored uncompressed by default.

Zip entries cannot be replaced or removed in place, so the store refuses to write a key twice
and refuses to delete an existing key (deleting a missing key is a no-op, as for every store).
One lock serialises all access to the archive, so the store can be shared between threads.

- **Reads trust nothing** (:mod:`zarrx.store.zipread`): entry names that are not path-safe keys
  are skipped with a warning, a central directory that lies is refused, every entry's CRC-32 is
  checked once, and inflation never goes past an entry's declared size.
- **The previous archive survives.** A writable store writes a temporary archive next to the
  target (``.<name>.zarrx-tmp-<pid>-<random>``) and moves it over the target only when
  :meth:`ZipStore.close` has written the central directory. Mode ``a`` reads an existing archive
  in place and copies it to its temporary archive at its first write, so a store in mode ``a``
  that writes nothing (``zarrx.open("x.zip")`` to read) copies nothing and leaves the archive
  the very file it was. A write that fails (a full disk, say) leaves the previous archive
  untouched: the store then refuses further writes, and closing it discards the temporary
  archive. The writer holds a lock on its temporary archive; starting to write removes the
  temporaries nobody holds (left by a writer that was killed), see :mod:`zarrx.store.ziptemp`.
- **One writer at a time.** A store in mode ``a`` remembers the version of the archive it opened
  (device, inode, size, times), copies that version (from the descriptor it reads) and puts its
  own archive in place only if the path still holds that version, checked and renamed under an
  exclusive ``flock`` on it; otherwise ``close`` raises StoreError and keeps the other writer's
  archive. Two sessions adding to one archive at once never silently drop one's entries.
- **Read-only views.** ``with_read_only(True)`` of a writable store (what ``make_store`` hands
  out for one opened with mode ``r``) reads the same open archive, refuses writes, and leaves
  closing the archive to the store it views.
- **Generations** are ``(header offset, CRC-32, size)`` of an entry; entries are immutable while
  the archive is open, so snapshots never conflict. Conditional writes can create entries
  (``if_generation=ABSENT``) but, like ``set``, never replace or remove one.
"""
from __future__ import annotations

import numbers
import os
import pathlib
import stat
import threading
import time
import warnings
import weakref
import zipfile
from collections.abc import Hashable, Iterator, Sequence
from typing import BinaryIO

from zarrx import _fork
from zarrx.errors import StoreArgumentError, StoreError, StoreExistsError, StoreNotFoundError
from zarrx.store.base import (ABSENT, ByteRange, ObjectSnapshot, Store, Versioned, absolute_path,
                              as_buffer, check_generation, check_prefix, conflict, is_absent)
from zarrx.store.zipcheck import check_name, name_problem
from zarrx.store.zipfileobj import is_file_object, open_file_archive, positional, unreadable
from zarrx.store.keyindex import KeyIndex
from zarrx.store.zipread import Reader, checked_entries, open_archive
from zarrx.store.ziptemp import (Pending, close_quietly, copy_version, identity, make_temp,
                                 read_only_after_fork, release, remove_stale, remove_temp)

__all__ = ["ZipStore"]

MODES = ("r", "w", "a", "x")
#: the compression methods zipfile writes, by their constants
METHODS = {zipfile.ZIP_STORED: "ZIP_STORED", zipfile.ZIP_DEFLATED: "ZIP_DEFLATED",
           zipfile.ZIP_BZIP2: "ZIP_BZIP2", zipfile.ZIP_LZMA: "ZIP_LZMA"}


class ZipStore(Store):
    """``ZipStore(path, mode)``: ``r`` reads, ``w`` creates (replacing an archive at ``path`` when
    closed), ``x`` creates a new archive, ``a`` adds entries to an existing (or new) archive.
    Call :meth:`close` (or use ``with``) after writing: that writes the archive's central
    directory and puts the archive in place."""

    supports_conditional_writes = True
    supports_deletes = False             # zip entries cannot be removed
    latency_bound = False                # a request reads a local file
    ranges_read_whole = True             # a compressed entry is inflated whole for its CRC
    parallel_writes = False              # one archive takes one write at a time

    def __init__(self, path: str | os.PathLike[str] | BinaryIO, mode: str = "r", *,
                 read_only: bool | None = None, compression: int = zipfile.ZIP_STORED,
                 allowZip64: bool = True) -> None:  # noqa: N803 - zipfile's name
        """``read_only`` (zarr-python's keyword) defaults to ``mode == "r"``; a read-only
        store needs mode ``r`` and a writable one a writing mode. ``path`` may also be an open
        binary file object (``read``, ``seek``, ``tell``) to read the archive from, in mode
        ``r``: see :mod:`zarrx.store.zipfileobj`."""
        name = os.fspath(path) if isinstance(path, os.PathLike) else path
        self._fileobj = path if is_file_object(name) else None
        if self._fileobj is not None:
            self._path = self._target = None
        elif not isinstance(name, str) or not name or "\x00" in name:
            found = f"a {type(name).__name__}" if not isinstance(name, str) else \
                "a path holding a NUL character" if name else "an empty path"
            raise StoreError(f"ZipStore({name!r}): path: expected the path of a zip archive "
                             f"or an open binary file (with read, seek and tell), found {found}")
        else:
            self._path = absolute_path(name)       # as a str, for the system calls
            # a symbolic link to an archive: written through, as zipfile writes, never replaced
            self._target = os.path.realpath(self._path)
        self.mode = mode
        self._origin: ZipStore | None = None    # a read-only view: the store it views
        if mode not in MODES:
            raise StoreError(f"{self!r}: mode: expected one of {', '.join(MODES)}, found {mode!r}")
        if self._fileobj is not None and mode != "r":
            raise StoreArgumentError(
                f"{self!r}: mode {mode!r}: a zip archive in a file object is only read (mode "
                f"'r'); to write one, give its path: zarrx writes a temporary archive next to it "
                f"and puts it in place when the store is closed")
        why = unreadable(self._fileobj) if self._fileobj is not None else None
        if why is not None:
            raise StoreArgumentError(f"{self!r}: cannot read a zip archive from this file "
                                     f"object: {why}")
        if read_only is not None and bool(read_only) != (mode == "r"):
            raise StoreError(f"{self!r}: read_only={read_only!r} does not fit mode {mode!r}: "
                             f"mode 'r' reads only, modes 'w', 'x' and 'a' write")
        self.read_only = mode == "r"
        if isinstance(compression, bool) or not isinstance(compression, numbers.Integral) or \
                int(compression) not in METHODS:
            raise StoreError(f"{self!r}: compression: expected one of " + ", ".join(
                f"zipfile.{n} ({v})" for v, n in METHODS.items()) + f", found {compression!r}")
        compression = int(compression)
        self.compression, self.allowZip64 = compression, allowZip64
        self._lock = threading.RLock()
        tmp = None
        held = None                     # the descriptor holding the temporary archive's lock
        base: tuple | None = None       # mode "a": the version of the archive it started from
        try:
            zf = None
            if mode == "a":                     # read in place until the first write
                zf, base = _open_existing(self._path)
            if zf is None and mode != "r":
                if mode == "x" and os.path.lexists(self._path):
                    raise FileExistsError(f"[Errno 17] File exists: {self._path!r}")
                remove_stale(self._target)      # temporaries of writers that are gone
                tmp, held = make_temp(self._target)
            if zf is None:
                zf = open_file_archive(self._fileobj) if self._fileobj is not None else \
                    open_archive(self._path) if mode == "r" else zipfile.ZipFile(
                    tmp, "w", compression=compression, allowZip64=allowZip64)
        except (OSError, zipfile.BadZipFile, NotImplementedError, ValueError) as exc:
            # NotImplementedError: a version or feature zipfile lacks; ValueError: a name flagged
            # UTF-8 that is not
            if tmp is not None:
                remove_temp(tmp)
            release(held)
            if isinstance(exc, FileNotFoundError) and mode != "r":   # as zarr-python raises
                raise StoreNotFoundError(f"{self!r}: cannot open in mode {mode!r}: the folder "
                                         f"{os.path.dirname(self._target)!r} does not exist "
                                         f"({exc.strerror})") from exc
            cls = StoreNotFoundError if isinstance(exc, FileNotFoundError) \
                else StoreExistsError if isinstance(exc, FileExistsError) and mode == "x" \
                else StoreError
            raise cls(f"{self!r}: cannot open in mode {mode!r}: {exc}") from exc
        self._zf: zipfile.ZipFile | None = zf
        self._pending = Pending(zf, tmp, self._target, mode, repr(self), base, held)
        # a store nobody closes (zarrx.open("x.zip", mode="w") hands out no handle to close)
        # still gets its archive finished, when collected or at interpreter exit
        self._finalizer = weakref.finalize(self, self._pending.finish, True)
        try:
            self._infos = checked_entries(zf, repr(self))
        except StoreError:
            self._finalizer()
            raise
        self._index = KeyIndex(self._infos)     # sorted names: listings cost what they return
        self._reader = Reader(repr(self))
        _fork.track(self)

    def _after_fork(self) -> None:
        _fork.reinit(self._lock)
        pending = self._pending
        _fork.reinit(pending.zf._lock)                   # zipfile's own, for writes
        if pending.tmp is not None and not pending.done and pending.zf.fp is not None:
            read_only_after_fork(pending.zf.fp, pending.tmp)  # the opener's to write and finish

    def _archive(self) -> zipfile.ZipFile:
        zf = self._zf if self._origin is None else self._origin._zf
        if zf is None:
            raise StoreError(f"{self!r}: the archive is closed")
        return zf

    # -- reads -------------------------------------------------------------------------------
    def _read(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo,
              ranges: Sequence[ByteRange | None]) -> list[bytes]:
        """The entry's bytes in each of ``ranges`` (a compressed entry inflated once for all)."""
        spans = [(0, info.file_size) if r is None else r.resolve(info.file_size) for r in ranges]
        assert zf.fp is not None
        end = getattr(zf, "start_dir", None)
        if end is None:
            end = os.fstat(zf.fp.fileno()).st_size
        todo = [(a, b) for a, b in spans if b > a]
        try:
            self._reader.check_sizes(info)      # also when no byte is asked for
            got = iter(self._reader.read_many(positional(zf.fp), info, todo, end) if todo else ())
        except MemoryError:
            raise StoreError(f"{self!r}: entry {info.orig_filename!r}: "
                             f"{sum(b - a for a, b in todo)} bytes do not fit in memory") from None
        except (OSError, RuntimeError, ValueError) as exc:
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"{self!r}: cannot read entry {info.orig_filename!r}: {exc}") from exc
        return [next(got) if b > a else b"" for a, b in spans]

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        check_name(key, repr(self))
        with self._lock:
            zf = self._archive()
            info = self._infos.get(key)
            return None if info is None else self._read(zf, info, [byte_range])[0]

    def getsize(self, key: str) -> int | None:
        check_name(key, repr(self))
        with self._lock:
            self._archive()
            info = self._infos.get(key)
        return None if info is None else info.file_size

    def stored_size(self, key: str) -> int | None:
        with self._lock:
            info = self._current(key)
        return None if info is None else info.compress_size

    def key_problem(self, key: str) -> str | None:
        return name_problem(key)

    def exists(self, key: str) -> bool:
        check_name(key, repr(self))
        with self._lock:
            self._archive()
            return key in self._infos

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """The keys starting with ``prefix``, sorted; O(log n + matches)."""
        check_prefix(prefix, self)
        with self._lock:
            self._archive()
            return iter(self._index.prefixed(prefix))

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        """As :meth:`Store.list_dir`, visiting only the children: a child folder costs one
        bisection of the index, whatever it holds."""
        check_prefix(prefix, self)
        if prefix and not prefix.endswith("/"):
            prefix += "/"
        with self._lock:
            self._archive()
            return self._index.children(prefix)

    # -- generations -------------------------------------------------------------------------
    def _current(self, key: str) -> zipfile.ZipInfo | None:
        check_name(key, repr(self))
        self._archive()
        return self._infos.get(key)

    def generation(self, key: str) -> Hashable | None:
        with self._lock:
            return _generation(self._current(key))

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        with self._lock:
            info = self._current(key)
            gen = _generation(info)
            check_generation(self, key, if_generation, gen, "read")
            if info is None:
                return None
            return self._read(self._archive(), info, [byte_range])[0], gen

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        with self._lock:
            info = self._current(key)
        return None if info is None else _EntrySnapshot(self, key, info)

    # -- writes ------------------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        check_name(key, repr(self))
        self._check_writable(key)
        with self._lock:
            self._add(key, as_buffer(value, key))

    def _add(self, key: str, data: memoryview) -> zipfile.ZipInfo:
        zf = self._archive()
        if self._pending.pid != os.getpid():
            raise StoreError(f"{self!r}: cannot write entry {key!r}: process {self._pending.pid} "
                             f"opened the archive for writing; a forked process only reads it")
        if self._pending.failed is not None:
            raise StoreError(f"{self!r}: cannot write entry {key!r}: an earlier write failed "
                             f"({self._pending.failed}); closing keeps the previous archive")
        if key in self._infos:
            raise StoreError(f"{self!r}: entry {key!r} already exists; zip entries cannot be "
                             "overwritten (write the archive anew to change it)")
        if self._pending.tmp is None:           # mode "a": the first write copies the archive
            zf = self._start_copy(zf, key)
        info = zipfile.ZipInfo(key, date_time=time.localtime()[:6])
        info.compress_type = self.compression
        info.external_attr = 0o644 << 16
        try:
            zf.writestr(info, data)
        except (OSError, ValueError, zipfile.LargeZipFile) as exc:
            self._pending.failed = str(exc)
            raise StoreError(f"{self!r}: cannot write entry {key!r}: {exc}") from exc
        except BaseException as exc:            # Ctrl-C: an entry cut short, the archive in doubt
            self._pending.failed = f"interrupted: {type(exc).__name__}"
            raise
        self._infos[key] = info
        self._index.add(key)
        self._reader.verified.add(key)          # written here: its CRC is ours
        return info

    def _start_copy(self, src: zipfile.ZipFile, key: str) -> zipfile.ZipFile:
        """Copy the archive opened (the version ``base``, from the descriptor that reads it, so
        a file put at the path meanwhile is not copied) to a new temporary archive, and write
        there from now on."""
        try:
            remove_stale(self._target)
            tmp, held = make_temp(self._target)
        except OSError as exc:
            raise StoreError(f"{self!r}: cannot write entry {key!r}: {exc}") from exc
        try:
            assert src.fp is not None
            copy_version(src.fp, tmp, self._pending.base, self._path)
            zf = zipfile.ZipFile(tmp, "a", compression=self.compression,
                                 allowZip64=self.allowZip64)
        except BaseException as exc:            # Ctrl-C during a long copy: no temporary left
            remove_temp(tmp)
            release(held)
            if isinstance(exc, (OSError, zipfile.BadZipFile, NotImplementedError, ValueError)):
                raise StoreError(f"{self!r}: cannot write entry {key!r}: {exc}") from exc
            raise
        self._pending.zf, self._pending.tmp, self._pending.held = zf, tmp, held
        self._zf = zf
        close_quietly(src)
        return zf

    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        check_name(key, repr(self))
        self._check_writable(key)
        data = as_buffer(value, key)
        with self._lock:
            found = _generation(self._current(key))
            if is_absent(if_generation):
                check_generation(self, key, ABSENT, found, "conditionally write")
                return _generation(self._add(key, data))
            check_generation(self, key, if_generation, found, "conditionally write")
            return self._add(key, data)         # exists: refused as by set

    def delete(self, key: str) -> None:
        """A missing key is a no-op; an existing one raises StoreError (zip cannot remove)."""
        check_name(key, repr(self))
        self._check_writable(key)
        if self.exists(key):
            raise StoreError(f"{self!r}: cannot delete entry {key!r}: zip entries cannot be "
                             "removed (write the archive anew without it)")

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        check_name(key, repr(self))
        self._check_writable(key)
        with self._lock:
            found = _generation(self._current(key))
            if is_absent(if_generation):
                if found is not None:
                    raise conflict(self, key, "conditionally delete", ABSENT, found)
                return
            check_generation(self, key, if_generation, found, "conditionally delete")
            self.delete(key)                    # exists: refused as by delete

    # -- plumbing ----------------------------------------------------------------------------
    def close(self) -> None:
        """Write the central directory and put the archive in place (writable modes), then close
        the file; idempotent. A read-only view (:meth:`with_read_only`) leaves the archive open:
        the store it views closes it."""
        with self._lock:
            if self._zf is not None and self._origin is None:
                self._zf = None
                self._finalizer.detach()
                self._reader.close()
                self._pending.finish(False)

    def discard(self) -> None:
        """Close without putting the archive in place: what was written since the store was
        opened is dropped and the archive at ``path`` (if any) stays as it was; idempotent (a
        read-only view: as :meth:`close`)."""
        with self._lock:
            if self._zf is not None and self._origin is None:
                if self._pending.failed is None:    # first: what finishes it now discards
                    self._pending.failed = "discarded"
                self._zf = None
                try:
                    self._finalizer.detach()
                    self._reader.close()
                finally:                            # a second Ctrl-C: no temporary left
                    self._pending.finish(True)

    @property
    def path(self) -> pathlib.Path | None:
        """The archive's path, absolute, as a :class:`pathlib.Path` (zarr-python's type); None
        for an archive read from a file object, as in zarr-python."""
        return None if self._path is None else pathlib.Path(self._path)

    def with_read_only(self, read_only: bool = False) -> ZipStore:
        """A read-only store over the same open archive (the file is not opened again): it
        reads what the store it views has written, refuses writes, and leaves closing the
        archive to that store (which it keeps alive). ``read_only=False``: the writable store
        a view views (an archive opened in mode ``r`` has none: StoreError)."""
        owner = self if self._origin is None else self._origin
        if not read_only:
            if owner.read_only:
                raise StoreError(f"{self!r}: with_read_only(False): the archive was opened in "
                                 f"mode 'r'; open it again in mode 'a' to add entries")
            return owner
        if owner.read_only:
            return owner
        view = object.__new__(type(self))
        view.__dict__.update(owner.__dict__)    # the archive, its entries, index and lock
        view.read_only, view._origin = True, owner
        view.shared_identity = id(owner)        # the objects' locks are the store's
        return view

    def __reduce__(self) -> tuple:
        if self._fileobj is not None:
            raise StoreArgumentError(f"{self!r}: a ZipStore reading a file object cannot be "
                                     f"pickled (the file is not); open it from the archive's "
                                     f"path to send it to another process")
        if not self.read_only or self._origin is not None:
            raise StoreError(f"{self!r}: only a ZipStore opened in mode 'r' can be pickled")
        return (ZipStore, (self._path, "r"))

    def __eq__(self, other: object) -> bool:
        """As zarr-python's: zip stores of one archive path are equal, whatever their mode."""
        return isinstance(other, type(self)) and self._path == other._path and \
            self._fileobj is other._fileobj     # (a file object: the same one)

    def __hash__(self) -> int:
        return hash((ZipStore, self._path, id(self._fileobj)))

    def __repr__(self) -> str:
        view = ", read_only=True" if self._origin is not None else ""
        where = self._path if self._fileobj is None else self._fileobj
        return f"ZipStore({where!r}, mode={self.mode!r}{view})"


def _generation(info: zipfile.ZipInfo | None) -> Hashable | None:
    return None if info is None else (info.header_offset, info.CRC, info.file_size)


class _EntrySnapshot(ObjectSnapshot):
    """Entries do not change while the archive is open: the entry is the snapshot."""

    def __init__(self, store: ZipStore, key: str, info: zipfile.ZipInfo) -> None:
        self.key = key
        self.generation = _generation(info)
        self.size = info.file_size
        self._store: ZipStore | None = store
        self._info = info

    def read(self, ranges: Sequence[ByteRange | None]) -> list[bytes | bytearray | memoryview]:
        store = self._store
        if store is None:
            raise StoreError(f"snapshot of {self.key!r}: read after close")
        with store._lock:
            zf = store._archive()
            return store._read(zf, self._info, ranges)

    def close(self) -> None:
        self._store = None


def _open_existing(path: str) -> tuple[zipfile.ZipFile | None, tuple | None]:
    """The archive at ``path`` opened for reading and the identity of the version opened, or
    ``(None, None)`` when there is none. An empty file is an empty archive, as zipfile's mode
    "a" takes it (``tempfile.NamedTemporaryFile(suffix=".zip")``): ``(None, its identity)``,
    so the archive written replaces it only if it is still that empty file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, None
    if stat.S_ISREG(st.st_mode) and st.st_size == 0:
        return None, identity(st)
    try:
        zf = open_archive(path)
    except FileNotFoundError:
        return None, None
    assert zf.fp is not None
    return zf, identity(os.fstat(zf.fp.fileno()))
