"""A directory on the local filesystem as a store: one file per key.

- **Atomic writes.** A value goes to a temporary file in the key's own directory (named
  ``.<name>.zarrx-tmp-<pid>-<random>``, never listed, never a valid key) and is then moved over the
  key with ``rename``. A reader sees the old value or the new one, never a torn file, and a failed
  write leaves the old value in place. With ``fsync=True`` the file and its directory are flushed
  to disk before the call returns. Temporary files of killed writers are removed by
  :meth:`LocalStore.sweep` and by every prefix delete (deleting or overwriting a node).
- **Containment.** Every operation walks a key's directories from the root without following
  symbolic links (:mod:`zarrx.store.localfs`): a link below the root is never listed, and reading
  through one raises StoreError. Writing or deleting a key whose last component is a link replaces
  or removes the link itself.
- **Generations.** A file's generation is ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``.
  Every write creates a new file (a new inode) stamped with the nanosecond clock, so a version is
  never mistaken for another. An open file descriptor is a snapshot: files are only ever replaced,
  never changed in place, so snapshot reads never conflict.
- **Conditional writes**: :mod:`zarrx.store.localcond` (the protocol is described there and in
  docs/RELIABILITY.md).
- **Listing and sweeping**: :mod:`zarrx.store.locallist`.
"""
from __future__ import annotations

import errno
import os
import pathlib
import stat
from collections.abc import Callable, Hashable, Iterable, Sequence

from zarrx._pool import IO_THREADS, map_io
from zarrx.errors import StoreError
from zarrx.store.base import (ByteRange, ObjectSnapshot, Request, Versioned, absolute_path,
                              as_buffer, check_generation, check_path_key, check_prefix,
                              key_problem, sequence_of)
from zarrx.store.localcond import (ConditionalFiles, NotAFile, non_file, not_a_file,
                                   rename_ordered, unlink_ordered)
from zarrx.store.localfs import (TMP_MARK, Dir, LinkError, Tree,
                                 create_temp, generation_of, quietly, read_exact,
                                 stamp, write_all)
from zarrx.store._localread import Arena, absent_keys, plain_key, read_whole
from zarrx.store._localstat import generations
from zarrx.store._localwrite import flock_orders_threads, put
from zarrx.store.localbatch import get_versioned_many, head_limit, set_if_many
from zarrx.store.localboxes import READ_FLAGS, RESOLVE, BoxReader, BoxWriter, kernel_paths
from zarrx.store.locallist import FileListing
from zarrx.store.localsnap import FileSnapshot, held_generation
from zarrx.store.pieces import Pieces
from zarrx.store.inputs import file_url_path

__all__ = ["LocalStore", "TMP_MARK"]

MODES = ("r", "r+", "a", "w", "w-")
POOL_MIN = 32       # get_many reads fewer requests on the calling thread
_SLOW = object()            # read_whole's answer for a key the Python path must handle


class LocalStore(ConditionalFiles, FileListing):
    """Keys are ``/``-separated paths of files below ``root``.

    ``read_only=True`` (or ``mode="r"``) refuses writes; the other modes only make the store
    writable (clearing for ``"w"`` is the caller's job). ``fsync=True`` makes every write durable
    before it returns. The root directory is created on the first write; the root itself may be a
    symbolic link, but no link below it is followed. A ``file://`` URL is taken as its path.
    """

    copies_values = True                 # a write copies the value into a new file
    writes_pieces = True                 # ... piece by piece
    _flock_local: bool | None = None     # see _flock_orders_threads
    _put = staticmethod(put)             # the write kernel (None: every write in Python)
    latency_bound = False                # a request is a few system calls
    removes_unnamable = True             # see delete_prefix

    def __init__(self, root: str | os.PathLike[str], *, read_only: bool = False,
                 fsync: bool = False, mode: str | None = None) -> None:
        path = os.fspath(root) if isinstance(root, os.PathLike) else root
        if isinstance(path, str) and (local := file_url_path(path)) is not None:
            path = local                    # not a folder 'file:' below the current one
        if mode is not None and mode not in MODES:
            raise StoreError(f"LocalStore({path!r}): mode: expected one of "
                             f"{', '.join(MODES)}, found {mode!r}")
        if not isinstance(path, str) or not path or "\x00" in path:
            found = f"a {type(path).__name__}" if not isinstance(path, str) else \
                "an empty path (use '.' for the current directory)" if not path else \
                "a path holding a NUL character"
            raise StoreError(f"LocalStore({path!r}): root: expected the path of a directory, "
                             f"found {found}")
        self._root = absolute_path(path)       # as a str, for the system calls
        self.read_only = bool(read_only) or mode == "r"
        self.fsync = bool(fsync)
        self._tree = Tree(self._root)

    @property
    def root(self) -> pathlib.Path:
        """The directory, absolute, as a :class:`pathlib.Path` (zarr-python's type)."""
        return pathlib.Path(self._root)

    @property
    def shared_identity(self) -> tuple:  # type: ignore[override]
        """Local stores of one root name the same objects (and share their locks)."""
        return (type(self).__name__, self._root)

    # -- keys --------------------------------------------------------------------------------
    def _parts(self, key: object) -> list[str]:
        check_path_key(key, repr(self))
        assert isinstance(key, str)
        if TMP_MARK in key:             # in a segment: the marker holds no "/"
            raise StoreError(f"{self!r}: key {key!r}: found the reserved marker {TMP_MARK!r}")
        return key.split("/")

    def _path(self, key: object) -> str:
        """The file path of ``key`` (for messages and tools; operations walk with dir fds)."""
        return os.path.join(self._root, *self._parts(key))

    def _fail(self, action: str, key: str, exc: OSError) -> StoreError:
        return StoreError(f"{self!r}: cannot {action} {key!r}: {exc.strerror or exc}")

    def _link_error(self, key: str, exc: LinkError) -> StoreError:
        return StoreError(f"{self!r}: key {key!r}: {exc.path!r} is a symbolic link; links below "
                          "the root are not followed")

    def _open(self, key: str, parts: list[str]) -> tuple[int, os.stat_result] | None:
        """A read-only fd and the fstat of the regular file at ``key``; None when missing."""
        try:
            fd = self._tree.open(parts, READ_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except LinkError as exc:
            raise self._link_error(key, exc) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._link_error(key, LinkError(key)) from None
            if exc.errno == errno.ENXIO:    # a socket (or a device gone): not a regular file
                return None
            raise self._fail("read", key, exc) from exc
        try:
            st = os.fstat(fd)
        except OSError as exc:
            os.close(fd)
            raise self._fail("read", key, exc) from exc
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            return None
        return fd, st

    def _stat(self, key: str, parts: list[str]) -> os.stat_result | None:
        try:
            st = self._tree.lstat(parts)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except LinkError as exc:
            raise self._link_error(key, exc) from None
        except OSError as exc:
            raise self._fail("read", key, exc) from exc
        if stat.S_ISLNK(st.st_mode):
            raise self._link_error(key, LinkError(key))
        return st if stat.S_ISREG(st.st_mode) else None

    def _read(self, key: str, fd: int, st: os.stat_result, rng: ByteRange | None) -> bytes:
        start, stop = (0, st.st_size) if rng is None else rng.resolve(st.st_size)
        try:
            data = read_exact(fd, start, stop - start)
        except (MemoryError, OverflowError):    # OverflowError: more than a bytes object holds
            raise StoreError(f"{self!r}: cannot read {key!r}: {stop - start} bytes do not fit "
                             "in memory") from None
        except OSError as exc:
            raise self._fail("read", key, exc) from exc
        return data if type(data) is bytes else bytes(data)

    # -- reads -------------------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        limit = head_limit(byte_range)
        if limit is not None:
            got = self._whole([key], None, None if limit < 0 else [limit])[0]
            if got is not _SLOW:
                return got
        return self._get(key, byte_range)

    def _whole(self, keys: list, arena: Arena | None = None, limits: list | None = None) -> list:
        """Whole files of ``keys`` (or their first ``limits[i]`` bytes) read by the kernel (one
        openat2, fstat, pread and close per key; into ``arena`` when given); ``_SLOW`` where
        the Python path must read instead."""
        real = self._tree.real_root()
        if real is None:
            return [_SLOW] * len(keys)
        return read_whole(real, keys, READ_FLAGS, RESOLVE, _SLOW, arena, limits)

    def _get(self, key: str, byte_range: ByteRange | None) -> bytes | None:
        opened = self._open(key, self._parts(key))
        if opened is None:
            return None
        fd, st = opened
        try:
            return self._read(key, fd, st, byte_range)
        finally:
            os.close(fd)

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        """Like ``get`` per request, in request order. ``POOL_MIN`` or more requests are read
        in batches on the pool's I/O threads (``zarrx._pool.map_io``; not with
        ``zarrx.config.set(threads=1)``); fewer are read on the calling thread, since the
        kernel reads a small file in a few microseconds and a hand-off to the pool costs more."""
        reqs = sequence_of(requests)
        if len(reqs) < POOL_MIN:
            return self._get_batch(reqs)
        step = -(-len(reqs) // IO_THREADS)
        batches = [reqs[i:i + step] for i in range(0, len(reqs), step)]
        return [value for part in map_io(self._get_batch, batches) for value in part]

    def new_arena(self) -> Arena:
        return Arena()

    def get_many_buffers(self, requests: Iterable[Request],
                         arena: Arena | None = None) -> list[bytes | memoryview | None]:
        """``get_many``; with ``arena`` (from :meth:`new_arena`), on the calling thread and
        with whole files read into the arena (views valid until its next use)."""
        if arena is None:
            return self.get_many(requests)  # type: ignore[return-value]
        arena.reset()
        return self._get_batch(sequence_of(requests), arena)

    def known_absent(self, keys: Sequence[str]) -> list[bool]:
        """Keys found absent by one open (a folder not there) or listing of their folder where
        16 or more consecutive keys share it (:func:`~zarrx.store._localread.absent_keys`)."""
        real = self._tree.real_root()
        return [False] * len(keys) if real is None else absent_keys(real, list(keys), RESOLVE)

    def box_reader(self, head: str, sep: str) -> Callable[..., list[int]] | None:
        """``reader(out, start, chunk, fill, scratch, lo, hi)``: chunks ``lo`` to ``hi`` (C
        order over those a box touches) of raw chunk files ``head`` + coordinates joined by
        ``sep`` read straight into ``out`` by the kernel (:mod:`zarrx.store._localbox`),
        without the GIL, with ``scratch`` (``reader.scratch_size(chunk, out.shape, itemsize)``
        bytes: what a chunk's part inside the box spans) for the chunks it must copy from;
        it returns the indices of chunks the general path must read (an error to word). None
        where the kernel cannot open paths (no ``openat2``) or the keys are not plain."""
        real = self._tree.real_root()
        if real is None or not plain_key(head + "0"):
            return None
        base = real + b"/" + head.encode()
        return BoxReader(base, sep)

    def box_writer(self, head: str, sep: str) -> BoxWriter | None:
        """A writer of the raw chunks a box covers whole, as files ``head`` + coordinates joined
        by ``sep``, straight from the value by the kernel (:func:`_localboxwrite.write_box`),
        without the GIL (see :class:`BoxWriter`). None for a read-only store, where the kernel
        cannot open paths or write (no ``openat2``, or writes in Python), or when the keys are
        not plain."""
        if self.read_only or self._put is None:
            return None
        real = self._tree.real_root()
        if real is None or not plain_key(head + "0") or not self._flock_orders_threads(real):
            return None
        return BoxWriter(self, real + b"/" + head.encode(), head, sep)

    def _flock_orders_threads(self, real: bytes) -> bool:
        """Whether the root's file system orders ``flock`` between threads (a local one): the
        box writer orders its replaces with conditional writers by it, without the in-process
        object locks (checked once the root exists)."""
        known = self._flock_local
        if known is None:
            if not os.path.isdir(real):
                return flock_orders_threads(os.path.dirname(real) or b"/")
            known = self._flock_local = flock_orders_threads(real)
        return known

    def _get_batch(self, reqs: Sequence[Request], arena: Arena | None = None) -> list:
        """Whole files through the kernel (into ``arena`` when given), the rest in Python."""
        rngs = [rng for _, rng in reqs]
        one = rngs[0] if rngs else None
        if rngs and all([rng is one for rng in rngs]):     # one range for all: worked out once
            limits = [head_limit(one)] * len(rngs)
        else:
            limits = [head_limit(rng) for rng in rngs]
        keys = [None if lim is None else key for lim, (key, _) in zip(limits, reqs)]
        got = self._whole(keys, arena,
                          None if all(lim == -1 for lim in limits) else
                          [-1 if lim is None else lim for lim in limits])
        return [self._get(key, rng) if g is _SLOW else g for g, (key, rng) in zip(got, reqs)]

    def getsize(self, key: str) -> int | None:
        st = self._stat(key, self._parts(key))
        return None if st is None else st.st_size

    def exists(self, key: str) -> bool:
        return self._stat(key, self._parts(key)) is not None

    def key_problem(self, key: str) -> str | None:
        return key_problem(key)

    # -- generations -------------------------------------------------------------------------
    def generation(self, key: str) -> Hashable | None:
        st = self._stat(key, self._parts(key))
        return None if st is None else generation_of(st)

    def generations(self, keys: Sequence[str]) -> list[Hashable | None]:
        real = self._tree.real_root()       # (plain keys: one call, _localstat.generations)
        got = generations(real, list(keys), RESOLVE, _SLOW) if real else [_SLOW] * len(keys)
        return [self.generation(key) if g is _SLOW else g for g, key in zip(got, keys)]

    def get_versioned(self, key: str, byte_range: ByteRange | None = None, *,
                      if_generation: Hashable | None = None) -> Versioned | None:
        opened = self._open(key, self._parts(key))
        if opened is None:
            check_generation(self, key, if_generation, None, "read")
            return None
        fd, st = opened
        try:
            gen = held_generation(st)
            check_generation(self, key, if_generation, gen, "read")
            return self._read(key, fd, st, byte_range), gen
        finally:
            os.close(fd)

    # one call for many keys (zarrx.store.localbatch), set here: see batched_as_single
    get_versioned_many = get_versioned_many
    set_if_many = set_if_many
    kernel_paths = kernel_paths         # shards' indexes and chunks read by a kernel

    def snapshot(self, key: str) -> ObjectSnapshot | None:
        opened = self._open(key, self._parts(key))
        return None if opened is None else FileSnapshot(self, key, *opened)

    # -- writes ------------------------------------------------------------------------------
    def _stage(self, d: Dir, name: str, data: memoryview | Pieces, after: int = 0) -> tuple[str, int]:
        """A temporary file in ``d`` holding ``data`` (stamped later than ``after``)."""
        tmp, fd = create_temp(d, name)
        try:
            write_all(fd, data)
            stamp(fd, after)
            if self.fsync:
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            quietly(d.unlink, tmp)
            raise
        return tmp, fd

    def _staged(self, parts: list[str], data: memoryview | Pieces) -> tuple[Dir, str, int]:
        """The key's directory (made as needed) and a temporary file in it holding ``data``."""
        for _ in range(8):
            try:                                # a folder on the way (or the key's own) may be
                d = self._tree.dir(parts[:-1], create=True)     # pruned by a concurrent delete
            except FileNotFoundError:
                continue
            try:
                return (d, *self._stage(d, parts[-1], data))
            except FileNotFoundError:
                d.close()
            except BaseException:
                d.close()
                raise
        raise FileNotFoundError(errno.ENOENT, "the directory keeps vanishing")

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        kernel, t = self._put, type(value)
        if kernel is not None and type(key) is str and not self.read_only \
                and (t is bytes or t is bytearray or t is memoryview):
            real = self._tree.real_root()
            if real is not None:                # the kernel, for a plain key; else as below
                data = value if t is bytes else as_buffer(value, key)
                if kernel(real, key, data, RESOLVE, self.fsync) == 0:
                    return
        parts = self._parts(key)
        self._check_writable(key)
        data = value if type(value) is Pieces else as_buffer(value, key)
        for attempt in range(8):
            try:
                d, tmp, fd = self._staged(parts, data)
            except LinkError as exc:
                raise self._link_error(key, exc) from None
            except OSError as exc:
                raise self._fail("write", key, exc) from exc
            try:
                self._rename_ordered(d, tmp, fd, parts[-1])
                if self.fsync:
                    d.fsync()
                return
            except FileNotFoundError as exc:
                # the temporary file (or its folder) was swept by a concurrent delete of the
                # node: write it again, after that delete
                quietly(d.unlink, tmp)
                if attempt == 7:
                    raise self._fail("write", key, exc) from exc
            except BaseException as exc:
                quietly(d.unlink, tmp)
                if isinstance(exc, LinkError):
                    raise self._link_error(key, exc) from None
                if isinstance(exc, NotAFile):
                    raise not_a_file(self, key, exc.mode) from None
                if isinstance(exc, OSError):
                    raise self._fail("write", key, exc) from exc
                raise
            finally:
                os.close(fd)
                d.close()

    def _rename_ordered(self, d: Dir, tmp: str, fd: int, name: str) -> None:
        """Move ``tmp`` to ``name`` ordered with conditional writers (see
        :func:`~zarrx.store.localcond.rename_ordered`); a plain rename without them."""
        if not self.supports_conditional_writes:
            if (mode := non_file(d, name)) is not None:
                raise NotAFile(mode)
            d.replace(tmp, name)
        else:
            rename_ordered(d, tmp, fd, name)

    def delete(self, key: str) -> None:
        parts = self._parts(key)
        self._check_writable(key)
        self._remove(key, parts)

    def _remove(self, key: str, parts: list[str]) -> None:
        """Remove the file ``parts`` (of ``key``) and the folders that leaves empty."""
        try:
            d = self._tree.dir(parts[:-1])
        except (FileNotFoundError, NotADirectoryError):
            return
        except LinkError as exc:
            raise self._link_error(key, exc) from None
        except OSError as exc:
            raise self._fail("delete", key, exc) from exc
        with d:
            try:
                if not self._unlink_ordered(d, parts[-1]):
                    return
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                return
            except PermissionError as exc:      # some systems say EPERM for a directory
                if not _is_dir(d, parts[-1]):
                    raise self._fail("delete", key, exc) from exc
                return
            except OSError as exc:
                raise self._fail("delete", key, exc) from exc
        self._prune(parts)

    def _unlink_ordered(self, d: Dir, name: str) -> bool:
        """Remove ``name`` ordered with conditional writers (see
        :func:`~zarrx.store.localcond.unlink_ordered`); False when there was nothing to remove."""
        if not self.supports_conditional_writes:
            d.unlink(name)
            return True
        return unlink_ordered(d, name)

    def _prune(self, parts: list[str]) -> None:
        """Remove the folders of ``parts`` a delete left empty, deepest first, never the root."""
        for i in range(len(parts) - 1, 0, -1):
            try:
                with self._tree.dir(parts[:i - 1]) as up:
                    up.rmdir(parts[i - 1])
            except (OSError, LinkError):
                return

    def delete_prefix(self, prefix: str) -> None:
        """Remove every key starting with ``prefix``, every temporary file below it, and every
        file there whose name another tool made against the key rules (listed, with a
        ``key_problem``): the listing names it by the directory entries it found, which stay
        below the root, so it is removed by those names as ``shutil.rmtree`` would. Links,
        named pipes, sockets and devices there go too, as ``rmtree`` removes them (a link
        itself, never what it points to)."""
        self._check_writable(check_prefix(prefix, self))
        named: list[str] = []
        unnamable: list[str] = []
        for key in self.list_prefix(prefix):
            (named if key_problem(key) is None else unnamable).append(key)
        self.delete_many(named)
        for key in unnamable:
            self._remove(key, key.split("/"))
        self._sweep_below(prefix, None, True)      # temporary files, links, pipes, ...

    # -- plumbing ----------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        return {"root": self._root, "read_only": self.read_only, "fsync": self.fsync}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["root"], read_only=state["read_only"], fsync=state["fsync"])

    def with_read_only(self, read_only: bool = False) -> LocalStore:
        """The same directory, read-only or not."""
        return LocalStore(self._root, read_only=read_only, fsync=self.fsync)

    def __eq__(self, other: object) -> bool:
        """As zarr-python's: local stores of the same root are equal, read-only or not."""
        return isinstance(other, type(self)) and self._root == other._root

    def __hash__(self) -> int:
        return hash((LocalStore, self._root))

    def __repr__(self) -> str:
        return f"LocalStore({self._root!r}{', read_only=True' if self.read_only else ''})"


def _is_dir(d: Dir, name: str) -> bool:
    try:
        return stat.S_ISDIR(d.lstat(name).st_mode)
    except OSError:
        return False
