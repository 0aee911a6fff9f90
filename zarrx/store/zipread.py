"""Reading zip entries without trusting the archive: what :class:`~zarrx.store.zip.ZipStore`
serves goes through here.

- ``checked_entries`` keeps the entries whose names are path-safe keys (others are skipped with a
  warning; of entries sharing a name, the last one, as zipfile and zarr-python read it; names
  not flagged UTF-8 whose bytes are UTF-8 are read as UTF-8; a leading ``./`` is dropped;
  a warning names the entry as stored, and the key it is read as when that differs) and
  refuses a central directory that lies: entries that overlap each other or the central
  directory (the "overlapping files" zip bomb).
- ``Reader`` reads an entry's bytes: the local header must agree with the central directory,
  a stored entry's two sizes with each other (a damaged entry is refused when read, not taken
  for an absent key, which would read as the fill value);
  stored entries are read in place (ranges read only their bytes); compressed entries (deflate,
  bzip2, LZMA: the methods zipfile writes) are inflated 64 KiB of input at a time, never past
  the declared size (nor past a range's end once the entry is verified); an entry is refused
  unread when it declares more than its method can produce from its compressed size. Every
  entry's CRC-32 is checked the first time it is served (a stored entry's whole data is
  streamed once, in bounded blocks), after which the verified fact is remembered; the most
  recently inflated entries are kept in a bounded cache, so ranged reads of a compressed entry
  do not inflate it again; a deflated entry too large for it resumes from the last point before
  the range, a bzip2 or LZMA one is inflated whole once into a temporary file that later ranges
  are read from (:mod:`zarrx.store.zipinflate`).
"""
from __future__ import annotations

import lzma
import os
import stat
import struct
import warnings
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import BinaryIO

from zarrx.errors import StoreError, ZarrUserWarning
from zarrx.store.localcond import kind_of
from zarrx.store.zipcheck import (check_counts, check_end_record, check_entries, check_entry,
                                  name_problem)
from zarrx.store.zipinflate import (DECOMPRESSORS, MAX_BZIP2_RATIO, MAX_DEFLATE_RATIO,
                                    MAX_LZMA_RATIO, Points, Spills)

__all__ = ["open_archive", "checked_entries", "Reader", "MAX_DEFLATE_RATIO", "MAX_BZIP2_RATIO",
           "MAX_LZMA_RATIO", "INFLATE_CACHE_BYTES"]

_LOCAL = struct.Struct("<4sHHHHHIIIHH")       # local file header, up to the name
_LOCAL_MAGIC = b"PK\x03\x04"
BLOCK = 1 << 20                         # stored data streamed for its CRC-32, per read
INFLATE_STEP = 1 << 16                  # compressed bytes fed to the inflater per read
INFLATE_CACHE_BYTES = 64 << 20
_MSDOS = 0                              # "version made by": the host an entry was made on


def open_archive(path: str) -> zipfile.ZipFile:
    """The existing archive at ``path`` opened for reading, once it is known to be a file:
    zipfile's own open would wait forever on a named pipe, and read a device (``/dev/zero``)
    without end. OSError naming what is there otherwise."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
    finally:
        os.close(fd)
    if not stat.S_ISREG(mode):
        raise OSError(f"{path!r} is {kind_of(mode)}, not a zip archive")
    with open(path, "rb") as fp:
        check_end_record(fp, path)
        try:
            return zipfile.ZipFile(path, "r")
        except zipfile.BadZipFile:
            check_entries(fp)           # names the entry zipfile could not read, if it can
            raise


def _raw_name_len(info: zipfile.ZipInfo) -> int:
    if info.orig_filename.isascii():
        return len(info.orig_filename)
    enc = "utf-8" if info.flag_bits & 0x800 else "cp437"
    try:
        return len(info.orig_filename.encode(enc))
    except UnicodeEncodeError:
        return len(info.orig_filename.encode("utf-8"))


def _text(info: zipfile.ZipInfo) -> str:
    """An entry's name as stored, read as UTF-8 when its bytes are (see :func:`_key`)."""
    name = info.orig_filename
    if not (info.flag_bits & 0x800 or name.isascii()):
        try:
            return name.encode("cp437").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass
    return name


def _key(info: zipfile.ZipInfo) -> str:
    """The key an entry's name stands for. A name not flagged UTF-8 is CP437 by the zip format,
    but zip tools on Unix (Info-ZIP's ``zip`` among them) store the file system's UTF-8 bytes
    without the flag: a name whose bytes are valid UTF-8 is read as UTF-8, as ``unzip`` shows
    it (CP437 text of two or more non-ASCII characters is rarely valid UTF-8). Leading ``./``
    segments are dropped: ``bsdtar -a -cf data.zip .`` (the ``tar`` of macOS and Windows) names
    its entries ``./zarr.json``, which ``unzip`` and ``zipfile`` extract as ``zarr.json``. In an
    entry made on MS-DOS or Windows (whose names hold no backslash), a backslash is a separator:
    Windows PowerShell 5.1's ``Compress-Archive`` writes ``a\\zarr.json``, which ``unzip`` and
    zipfile on Windows read as ``a/zarr.json``."""
    name = _text(info)
    if info.create_system == _MSDOS and "\\" in name:
        name = name.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    return name


def checked_entries(zf: zipfile.ZipFile, where: str) -> dict[str, zipfile.ZipInfo]:
    """``{key: info}`` of the archive's file entries whose names are path-safe keys."""
    archive_end = getattr(zf, "start_dir", None)
    if zf.mode == "r":
        check_counts(zf, where)
        if archive_end is not None:
            for info in zf.infolist():
                check_entry(info, archive_end, info.orig_filename, where)
    infos = [i for i in zf.infolist() if not i.filename.endswith("/")]   # is_dir() fails on ""
    spans = sorted((i.header_offset, _LOCAL.size + _raw_name_len(i) + i.compress_size, i.orig_filename)
                   for i in zf.infolist())
    for (start, n, name), nxt in zip(spans, spans[1:] + [(archive_end, 0, None)]):
        end = nxt[0]
        if end is not None and start + n > end:
            other = f"entry {nxt[2]!r}" if nxt[2] is not None else "the central directory"
            raise StoreError(f"{where}: the central directory lies: entry {name!r} "
                             f"({n} bytes or more at offset {start}) overlaps {other} at offset "
                             f"{end}")
    out: dict[str, zipfile.ZipInfo] = {}
    unsafe = _Skipped(where, "unsafe or damaged")
    replaced = _Skipped(where, "replaced by a later entry of their name")
    for info in infos:
        name = _key(info)
        if name.endswith("/"):          # a folder named as MS-DOS names it ("a\\")
            continue
        problem = name_problem(name)
        if problem is not None:
            unsafe.add(lambda: f"{where}: skipping zip entry {_shown(info, name)}: {problem}")
            continue
        if name in out:                 # as zipfile and zarr-python read it: the last one
            old, first, later = out[name], out[name].header_offset, info.header_offset
            same = "of the same name" if old.orig_filename == info.orig_filename else \
                f"read as the same key, {_text(info)!r}"
            replaced.add(lambda: f"{where}: skipping zip entry {_shown(old, name)} at offset "
                                 f"{first}: a later entry {same} (at offset {later}) replaces it")
        out[name] = info
    unsafe.finish()
    replaced.finish()
    return out


def _shown(info: zipfile.ZipInfo, key: str) -> str:
    """An entry's name as stored (as ``unzip -l`` lists it), and the key it is read as when
    that differs (``'./zarr.json' (read as 'zarr.json')``)."""
    text = _text(info)
    return repr(key) if text == key else f"{text!r} (read as {key!r})"


class _Skipped:
    """The warnings for entries skipped for one reason: the first few each name their entry,
    and one more counts the rest, so an archive zarr-python updated many times (each rewritten
    chunk a new entry) warns in a few lines, not one line per entry."""

    SHOWN = 10

    def __init__(self, where: str, why: str) -> None:
        self.where, self.why, self.count = where, why, 0

    def add(self, message: Callable[[], str]) -> None:
        self.count += 1
        if self.count <= self.SHOWN:
            warnings.warn(message(), ZarrUserWarning, stacklevel=4)

    def finish(self) -> None:
        if self.count > self.SHOWN:
            warnings.warn(f"{self.where}: skipping {self.count - self.SHOWN} more zip entries "
                          f"{self.why}", ZarrUserWarning, stacklevel=4)


class Reader:
    """Reads entries of one open archive file (the caller holds the store's lock)."""

    def __init__(self, where: str) -> None:
        self.where = where
        self._data_start: dict[str, int] = {}
        self.verified: set[str] = set()         # entries whose CRC-32 has been checked
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._points = Points()                 # where large deflated entries resume
        self._spills = Spills()                 # large bzip2 and LZMA entries, inflated
        self._cached_bytes = 0

    def close(self) -> None:
        """Drop the inflated copies kept on disk."""
        self._spills.close()

    def _fail(self, info: zipfile.ZipInfo, what: str) -> StoreError:
        return StoreError(f"{self.where}: entry {info.orig_filename!r}: {what}")

    def check_sizes(self, info: zipfile.ZipInfo) -> None:
        """Refuse an entry that cannot be read whatever is asked of it, even nothing (a range
        of no bytes, an entry declaring none): an encrypted one, a stored one whose two sizes
        differ, one declaring no bytes whose CRC-32 is not that of none."""
        if info.flag_bits & 0x1:
            raise self._fail(info, "encrypted entries are not supported")
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise self._fail(info, f"stored entry declares {info.file_size} bytes but holds "
                                   f"{info.compress_size}")
        if info.file_size == 0 and info.CRC != 0:
            raise self._fail(info, f"CRC-32 mismatch: expected {info.CRC:#010x}, found "
                                   f"0x00000000 (the entry declares no bytes)")

    def data_start(self, fp: BinaryIO, info: zipfile.ZipInfo, archive_end: int) -> int:
        """File offset of an entry's data, from its local header (which must agree with the
        central directory; cached)."""
        start = self._data_start.get(info.orig_filename)
        if start is not None:
            return start
        fp.seek(info.header_offset)
        head = fp.read(_LOCAL.size)
        if len(head) != _LOCAL.size or head[:4] != _LOCAL_MAGIC:
            raise self._fail(info, f"expected a local file header at offset "
                                   f"{info.header_offset}, found {head[:4]!r}")
        fields = _LOCAL.unpack(head)
        method, name_len, extra_len = fields[3], fields[9], fields[10]
        raw = fp.read(name_len)
        local_name = raw.decode("utf-8" if fields[2] & 0x800 else "cp437", "replace")
        if local_name != info.orig_filename:
            raise self._fail(info, f"the local header names {local_name[:80]!r}: the central "
                                   "directory lies")
        if method != info.compress_type:
            raise self._fail(info, f"the local header says compression {method}, the central "
                                   f"directory {info.compress_type}")
        start = info.header_offset + _LOCAL.size + name_len + extra_len
        if start + info.compress_size > archive_end:
            raise self._fail(info, f"{info.compress_size} bytes at offset {start} run past the "
                                   f"entries' end at offset {archive_end}")
        self._data_start[info.orig_filename] = start
        return start

    def read(self, fp: BinaryIO, info: zipfile.ZipInfo, start: int, stop: int,
             archive_end: int) -> bytes:
        """Bytes ``[start, stop)`` of the entry's data (already clipped to its size)."""
        name = info.orig_filename
        self.check_sizes(info)
        cached = self._cache.get(name)
        if cached is not None:
            self._cache.move_to_end(name)
            return cached[start:stop]
        begin = self.data_start(fp, info, archive_end)
        if info.compress_type == zipfile.ZIP_STORED:
            return self._read_stored(fp, info, begin, start, stop)
        declared = self._declared(info)
        if (start, stop) != (0, declared) and declared > INFLATE_CACHE_BYTES:
            return self._ranges(fp, info, begin, [(start, stop)])[0]   # too large to keep
        data = self._inflate(fp, info, begin, declared)
        self._check_crc(info, data)
        if len(data) <= INFLATE_CACHE_BYTES:
            self._remember(name, data)
        return data[start:stop] if (start, stop) != (0, len(data)) else data

    def read_many(self, fp: BinaryIO, info: zipfile.ZipInfo, spans: list[tuple[int, int]],
                  archive_end: int) -> list[bytes]:
        """Bytes ``[start, stop)`` of the entry for each of ``spans`` (clipped to its size): a
        compressed entry too large to keep is inflated once for all of them, up to the last
        one's end (all of it, for its CRC-32, the first time), never once per span."""
        if len(spans) < 2 or info.compress_type not in DECOMPRESSORS or info.flag_bits & 0x1 \
                or info.file_size <= INFLATE_CACHE_BYTES or (0, info.file_size) in spans:
            return [self.read(fp, info, start, stop, archive_end) for start, stop in spans]
        begin = self.data_start(fp, info, archive_end)
        self._declared(info)
        return self._ranges(fp, info, begin, spans)

    def _ranges(self, fp: BinaryIO, info: zipfile.ZipInfo, begin: int,
                spans: list[tuple[int, int]]) -> list[bytes]:
        """Bytes ``[start, stop)`` of an entry too large for the cache, for each of ``spans``.
        A deflated entry is inflated up to the last span's end (from the last resume point
        before the first); a bzip2 or LZMA entry, whose inflater cannot be copied, is inflated
        whole once into a temporary file, which this and later reads read the spans from (when
        the file cannot be written, a full disk, inflated up to the last span's end)."""
        name = info.orig_filename
        if hasattr(DECOMPRESSORS[info.compress_type], "copy"):
            return self._inflate_spans(fp, info, begin, spans)
        try:
            if name not in self._spills:
                self._spill(fp, info, begin)
            return [self._spills.read(name, start, stop) for start, stop in spans]
        except OSError as exc:
            if isinstance(exc, StoreError):
                raise
            return self._inflate_spans(fp, info, begin, spans)

    def _spill(self, fp: BinaryIO, info: zipfile.ZipInfo, begin: int) -> None:
        """Inflate the whole entry, checking its size and CRC-32, into a temporary file kept by
        :class:`~zarrx.store.zipinflate.Spills`."""
        f = Spills.start()
        try:
            crc, pos = 0, 0
            for block in self._blocks(fp, info, begin, info.file_size + 1, BLOCK):
                pos += len(block)
                self._check_length(info, pos, None)
                crc = zlib.crc32(block, crc)
                f.write(block)
            self._check_length(info, pos, crc)
            f.flush()
        except BaseException:
            f.close()
            raise
        self.verified.add(info.orig_filename)
        self._spills.keep(info.orig_filename, f)

    def _check_length(self, info: zipfile.ZipInfo, pos: int, crc: int | None) -> None:
        """Refuse an entry inflating past its declared size (``pos`` bytes so far), or, at its
        end (``crc`` given), to fewer bytes or another CRC-32."""
        declared = info.file_size
        if pos > declared:
            raise self._fail(info, f"inflates to more than its declared {declared} bytes")
        if crc is not None and pos < declared:
            raise self._fail(info, f"inflates to {pos} bytes, declared {declared}")
        if crc is not None and crc != info.CRC:
            raise self._fail(info, f"CRC-32 mismatch: expected {info.CRC:#010x}, found "
                                   f"{crc:#010x}")

    def _declared(self, info: zipfile.ZipInfo) -> int:
        """The size a compressed entry declares, once it is known to be one its method can
        produce from its compressed size."""
        if info.compress_type not in DECOMPRESSORS:
            raise self._fail(info, f"compression method {info.compress_type} is not supported "
                                   "(stored, deflated, bzip2 and LZMA are)")
        method = DECOMPRESSORS[info.compress_type]
        if info.file_size > method.max_ratio * info.compress_size + 64:
            raise self._fail(info, f"declares {info.file_size} bytes from {info.compress_size} "
                                   f"compressed bytes, more than {method.name} can produce")
        return info.file_size

    def _read_stored(self, fp: BinaryIO, info: zipfile.ZipInfo, begin: int, start: int,
                     stop: int) -> bytes:
        if info.orig_filename in self.verified or (start, stop) == (0, info.file_size):
            fp.seek(begin + start)
            data = _read_n(fp, stop - start)
            if len(data) != stop - start:
                raise self._fail(info, f"truncated: expected {stop - start} bytes at offset "
                                       f"{start}, found {len(data)}")
            if info.orig_filename not in self.verified:
                self._check_crc(info, data)
            return data
        crc, pos, want = 0, 0, []               # stream the whole entry once for its CRC-32
        fp.seek(begin)
        while pos < info.file_size:
            block = fp.read(min(BLOCK, info.file_size - pos))
            if not block:
                raise self._fail(info, f"truncated: expected {info.file_size} bytes, found {pos}")
            crc = zlib.crc32(block, crc)
            if pos < stop and pos + len(block) > start:
                want.append(block[max(start - pos, 0):stop - pos])
            pos += len(block)
        if crc != info.CRC:
            raise self._fail(info, f"CRC-32 mismatch: expected {info.CRC:#010x}, found {crc:#010x}")
        self.verified.add(info.orig_filename)
        return want[0] if len(want) == 1 else b"".join(want)     # (appending: quadratic)

    def _blocks(self, fp: BinaryIO, info: zipfile.ZipInfo, begin: int, limit: int,
                step: int, resume: tuple[int, int, object] | None = None) -> Iterator[bytes]:
        """The entry's inflated bytes, in blocks of at most ``step``, until ``limit`` bytes,
        the end of the compressed stream or the end of its compressed bytes: ``INFLATE_STEP``
        compressed bytes are read at a time. ``resume``: a point of :class:`Points` to start
        from (its inflated bytes are not given again). An entry too large for the cache leaves
        resume points behind, if its decompressor can be copied."""
        made, consumed, d = resume if resume is not None else \
            (0, 0, DECOMPRESSORS[info.compress_type]())
        left, pos = info.compress_size - consumed, begin + consumed
        spacing = Points.spacing(info.file_size)
        mark = made // spacing * spacing + spacing if hasattr(d, "copy") and \
            info.file_size > INFLATE_CACHE_BYTES else None
        while made < limit and not d.eof:   # type: ignore[attr-defined]
            chunk = b""
            if d.needs_input:               # type: ignore[attr-defined]
                if not left:
                    return
                fp.seek(pos)
                chunk = fp.read(min(INFLATE_STEP, left))
                if not chunk:
                    raise self._fail(info, f"truncated: {left} compressed bytes missing")
                pos += len(chunk)
                left -= len(chunk)
            try:
                block = d.decompress(chunk, min(step, limit - made))  # type: ignore[attr-defined]
            except (zlib.error, OSError, EOFError, ValueError, lzma.LZMAError) as exc:
                # bz2 says OSError, lzma LZMAError; ValueError: LZMA properties out of range
                raise self._fail(info, f"corrupt {d.name} data: {exc}") from None  # type: ignore
            made += len(block)
            if mark is not None and made >= mark:
                self._points.add(info.orig_filename, made, pos - begin, d)
                mark = made // spacing * spacing + spacing
            yield block

    def _inflate(self, fp: BinaryIO, info: zipfile.ZipInfo, begin: int, want: int) -> bytes:
        """The first ``want`` inflated bytes; with ``want == file_size`` the stream must end
        there exactly."""
        declared = info.file_size
        limit = declared + 1 if want == declared else want
        out = bytearray()
        try:
            for block in self._blocks(fp, info, begin, limit, limit):
                out += block
        except MemoryError:
            raise self._fail(info, f"{declared} inflated bytes do not fit in memory") from None
        if len(out) > declared:
            raise self._fail(info, f"inflates to more than its declared {declared} bytes")
        if len(out) < want:
            raise self._fail(info, f"inflates to {len(out)} bytes, declared {declared}")
        return bytes(out)

    def _inflate_spans(self, fp: BinaryIO, info: zipfile.ZipInfo, begin: int,
                       spans: list[tuple[int, int]]) -> list[bytes]:
        """Bytes ``[start, stop)`` of the entry for each of ``spans``, inflated ``BLOCK`` bytes
        at a time keeping only the spans (memory bounded by them, not by the size the entry
        declares): up to the last span's end once the entry is verified, otherwise all of it,
        once, for its CRC-32."""
        declared = info.file_size
        verify = info.orig_filename not in self.verified
        limit = declared + 1 if verify else max(stop for _, stop in spans)
        outs = [bytearray() for _ in spans]
        resume = None if verify else self._points.best(info.orig_filename,
                                                       min(start for start, _ in spans))
        crc, pos = 0, 0 if resume is None else resume[0]
        for block in self._blocks(fp, info, begin, limit, BLOCK, resume):
            end = pos + len(block)
            self._check_length(info, end, None)
            if verify:
                crc = zlib.crc32(block, crc)
            for (start, stop), out in zip(spans, outs):
                if start < end and stop > pos:
                    out += block[max(start - pos, 0):stop - pos]
            pos = end
        if pos < min(limit, declared):
            raise self._fail(info, f"inflates to {pos} bytes, declared {declared}")
        if verify:
            self._check_length(info, pos, crc)
            self.verified.add(info.orig_filename)
        return [bytes(out) for out in outs]

    def _check_crc(self, info: zipfile.ZipInfo, data: bytes) -> None:
        crc = zlib.crc32(data)
        if crc != info.CRC:
            raise self._fail(info, f"CRC-32 mismatch: expected {info.CRC:#010x}, found {crc:#010x}")
        self.verified.add(info.orig_filename)

    def _remember(self, name: str, data: bytes) -> None:
        self._cache[name] = data
        self._cached_bytes += len(data)
        while self._cached_bytes > INFLATE_CACHE_BYTES:
            _, old = self._cache.popitem(last=False)
            self._cached_bytes -= len(old)


def _read_n(fp: BinaryIO, n: int) -> bytes:
    parts, left = [], n
    while left > 0:
        part = fp.read(left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)
