"""A zip archive as a store: one entry per key, stored uncompressed by default.

Zip entries cannot be replaced or removed in place, so the store refuses to write a key twice
and refuses to delete an existing key (deleting a missing key is a no-op, as for every store).
Byte-range reads of uncompressed entries read only the requested bytes. One lock serialises all
access to the archive, so the store can be shared between threads.
"""
from __future__ import annotations

import os
import struct
import threading
import time
import weakref
import zipfile
from collections.abc import Iterator

from zarrx.errors import StoreError
from zarrx.store.base import ByteRange, Store, as_buffer, check_path_key

__all__ = ["ZipStore"]

MODES = ("r", "w", "a", "x")
_LOCAL_HEADER = struct.Struct("<4s22xHH")     # signature ... name length, extra length
_LOCAL_MAGIC = b"PK\x03\x04"


class ZipStore(Store):
    """``ZipStore(path, mode)``: ``r`` reads, ``w`` creates (truncating), ``x`` creates a new
    archive, ``a`` adds entries to an existing (or new) archive. Call :meth:`close` (or use
    ``with``) after writing: that writes the archive's central directory."""

    def __init__(self, path: str | os.PathLike[str], mode: str = "r", *,
                 compression: int = zipfile.ZIP_STORED) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.mode = mode
        if mode not in MODES:
            raise StoreError(f"{self!r}: mode: expected one of {', '.join(MODES)}, found {mode!r}")
        self.read_only = mode == "r"
        self.compression = compression
        self._lock = threading.RLock()
        self._data_start: dict[str, int] = {}
        try:
            self._zf: zipfile.ZipFile | None = zipfile.ZipFile(
                self.path, mode, compression=compression, allowZip64=True)
        except (OSError, zipfile.BadZipFile) as exc:
            raise StoreError(f"{self!r}: cannot open in mode {mode!r}: {exc}") from exc
        self._infos = {i.filename: i for i in self._zf.infolist() if not i.is_dir()}
        # a store nobody closes (zarrx.open("x.zip", mode="w") hands out no handle to close)
        # still gets its central directory written, when collected or at interpreter exit
        self._finalizer = weakref.finalize(self, _close_quietly, self._zf)

    def _archive(self) -> zipfile.ZipFile:
        if self._zf is None:
            raise StoreError(f"{self!r}: the archive is closed")
        return self._zf

    # -- reads -------------------------------------------------------------------------------
    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        check_path_key(key, repr(self))
        with self._lock:
            zf = self._archive()
            info = self._infos.get(key)
            if info is None:
                return None
            try:
                if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                    data = zf.read(info)
                    return data if byte_range is None else byte_range.apply(data)
                start, stop = (0, info.file_size) if byte_range is None else \
                    byte_range.resolve(info.file_size)
                if stop <= start:
                    return b""
                assert zf.fp is not None
                zf.fp.seek(self._entry_start(zf, info) + start)
                data = zf.fp.read(stop - start)
            except (OSError, RuntimeError, ValueError, zipfile.BadZipFile) as exc:
                raise StoreError(f"{self!r}: cannot read entry {key!r}: {exc}") from exc
        if len(data) != stop - start:
            raise StoreError(f"{self!r}: entry {key!r} is truncated: expected {stop - start} "
                             f"bytes at offset {start}, found {len(data)}")
        return data

    def _entry_start(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
        """File offset of an entry's data, from its local header (cached)."""
        start = self._data_start.get(info.filename)
        if start is None:
            assert zf.fp is not None
            zf.fp.seek(info.header_offset)
            head = zf.fp.read(_LOCAL_HEADER.size)
            if len(head) != _LOCAL_HEADER.size or head[:4] != _LOCAL_MAGIC:
                raise StoreError(f"{self!r}: entry {info.filename!r}: expected a local file header "
                                 f"at offset {info.header_offset}, found {head[:4]!r}")
            _, name_len, extra_len = _LOCAL_HEADER.unpack(head)
            start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
            self._data_start[info.filename] = start
        return start

    def getsize(self, key: str) -> int | None:
        check_path_key(key, repr(self))
        with self._lock:
            self._archive()
            info = self._infos.get(key)
        return None if info is None else info.file_size

    def exists(self, key: str) -> bool:
        check_path_key(key, repr(self))
        with self._lock:
            self._archive()
            return key in self._infos

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            self._archive()
            keys = list(self._infos)
        return (k for k in keys if k.startswith(prefix))

    # -- writes ------------------------------------------------------------------------------
    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        check_path_key(key, repr(self))
        self._check_writable(key)
        data = as_buffer(value, key)
        with self._lock:
            zf = self._archive()
            if key in self._infos:
                raise StoreError(f"{self!r}: entry {key!r} already exists; zip entries cannot be "
                                 "overwritten (write the archive anew to change it)")
            info = zipfile.ZipInfo(key, date_time=time.localtime()[:6])
            info.compress_type = self.compression
            info.external_attr = 0o644 << 16
            try:
                zf.writestr(info, data)
            except (OSError, ValueError, zipfile.LargeZipFile) as exc:
                raise StoreError(f"{self!r}: cannot write entry {key!r}: {exc}") from exc
            self._infos[key] = info

    def delete(self, key: str) -> None:
        """A missing key is a no-op; an existing one raises StoreError (zip cannot remove)."""
        check_path_key(key, repr(self))
        self._check_writable(key)
        if self.exists(key):
            raise StoreError(f"{self!r}: cannot delete entry {key!r}: zip entries cannot be "
                             "removed (write the archive anew without it)")

    # -- plumbing ----------------------------------------------------------------------------
    def close(self) -> None:
        """Write the central directory (writable modes) and close the file; idempotent."""
        with self._lock:
            if self._zf is not None:
                try:
                    self._zf.close()
                except OSError as exc:
                    raise StoreError(f"{self!r}: cannot finish the archive: {exc}") from exc
                finally:
                    self._zf = None
                    self._finalizer.detach()

    def __reduce__(self) -> tuple:
        if not self.read_only:
            raise StoreError(f"{self!r}: only a ZipStore opened in mode 'r' can be pickled")
        return (ZipStore, (self.path, "r"))

    def __repr__(self) -> str:
        return f"ZipStore({self.path!r}, mode={self.mode!r})"


def _close_quietly(zf: zipfile.ZipFile) -> None:
    try:
        zf.close()
    except (OSError, ValueError):
        pass
