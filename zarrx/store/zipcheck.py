"""The end records of a zip archive checked against the file before any entry is read:
zipfile takes the central directory's offset, size and entry counts as they are, so a corrupt
field would surface later as a failed read at a negative or absurd offset. Each field found
wrong raises StoreError naming the record and the field, the value found and what fits."""
from __future__ import annotations

import os
import struct
import zipfile
from typing import BinaryIO

from zarrx.errors import StoreError
from zarrx.store.inputs import key_problem

__all__ = ["check_end_record", "check_entries", "check_counts", "check_entry", "name_problem",
           "check_name"]

#: the longest name a zip entry holds: its length is a 2-byte field of both headers
MAX_NAME_BYTES = 65535

_LOCAL_SIZE = 30                # local file header, up to the name
_END_SEARCH = 22 + 65535        # the end record and the longest comment: where zipfile looks


def size_of(fp: BinaryIO) -> int:
    """The size of the file open as ``fp``: from its descriptor when it has one, else the
    offset of its end (a file object without one; its position is left where it was)."""
    try:
        return os.fstat(fp.fileno()).st_size
    except (AttributeError, OSError, ValueError):   # io.UnsupportedOperation is both
        pass
    here = fp.tell()
    try:
        return fp.seek(0, os.SEEK_END)
    finally:
        fp.seek(here)


def _end_record(fp: BinaryIO) -> tuple[str, int, list]:
    """The name of the end record zipfile reads (its zip64 form if present), its offset and
    its fields."""
    end = zipfile._EndRecData(fp)   # type: ignore[attr-defined]  # what ZipFile itself reads
    if end is None:
        raise zipfile.BadZipFile(_no_end_record(fp))
    located = end[zipfile._ECD_LOCATION]        # type: ignore[attr-defined]
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:   # type: ignore
        located -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator  # type: ignore
        return "zip64 end of central directory record", located, end
    return "end of central directory record", located, end


def _no_end_record(fp: BinaryIO) -> str:
    """Why the file open as ``fp``, in which zipfile found no end record, is no archive: it is
    empty, or an archive cut short or never closed (its entries are there, not the central
    directory that ends an archive), or something else."""
    size = fp.seek(0, os.SEEK_END)
    if not size:
        return "the file is empty (0 bytes); expected a zip archive"
    fp.seek(0)
    head = fp.read(8)
    searched = min(size, _END_SEARCH)
    if head.startswith(b"PK\x03\x04"):
        return (f"no end of central directory record (b'PK\\x05\\x06') in its last {searched} "
                f"bytes, but it starts with a local file header (b'PK\\x03\\x04'): the "
                f"archive is truncated, or its writer did not close it (the central directory "
                f"is written last, when the archive is closed)")
    return (f"no end of central directory record (b'PK\\x05\\x06') in its last {searched} "
            f"bytes, and it starts with {head!r}: not a zip archive")


def check_end_record(fp: BinaryIO, path: str) -> None:
    """The end record of the archive open as ``fp`` places the central directory within the
    file, before the end record; BadZipFile naming the field otherwise."""
    file_size = size_of(fp)
    record, located, end = _end_record(fp)
    size = end[zipfile._ECD_SIZE]               # type: ignore[attr-defined]
    offset = end[zipfile._ECD_OFFSET]           # type: ignore[attr-defined]

    def bad(field: str, found: int, want: str) -> zipfile.BadZipFile:
        return zipfile.BadZipFile(f"{record} (at offset {located}): {field}: expected {want}, "
                                  f"found {found} (the archive is {file_size} bytes)")

    if size > located:
        raise bad("size of the central directory", size,
                  f"at most {located} (the bytes before the end record)")
    if size:
        fp.seek(located - size)
        head = fp.read(4)
        if head != b"PK\x01\x02":
            raise bad("size of the central directory", size,
                      f"the size of the entries before the end record, the first starting "
                      f"with b'PK\\x01\\x02' (offset {located - size} holds {head!r})")
    if offset > located - size:
        raise bad("offset of the central directory", offset,
                  f"at most {located - size} (the central directory's {size} bytes end where "
                  f"the end record starts, at offset {located})")


_CENTRAL = struct.Struct("<4s24xHHH12x")   # central directory entry: its lengths, at 28..33


def check_entries(fp: BinaryIO) -> None:
    """The central directory of the archive open as ``fp`` (whose end record
    :func:`check_end_record` accepted) walked entry by entry: each starts with its signature
    and its name, extra field and comment end within the central directory; BadZipFile naming
    the first entry that does not. Called once zipfile has refused the archive, to say where."""
    _, located, end = _end_record(fp)
    start = located - end[zipfile._ECD_SIZE]   # type: ignore[attr-defined]
    fp.seek(start)
    data = fp.read(located - start)
    pos, index = 0, 0
    while pos < len(data):
        where = f"central directory entry {index} (at offset {start + pos})"
        if len(data) - pos < _CENTRAL.size:
            raise zipfile.BadZipFile(f"{where}: expected a {_CENTRAL.size}-byte entry header, "
                                     f"found {len(data) - pos} bytes before the end record")
        sig, name_len, extra_len, comment_len = _CENTRAL.unpack_from(data, pos)
        if sig != b"PK\x01\x02":
            raise zipfile.BadZipFile(f"{where}: expected the signature b'PK\\x01\\x02', "
                                     f"found {sig!r}")
        name = data[pos + _CENTRAL.size:pos + _CENTRAL.size + min(name_len, 80)]
        stop = pos + _CENTRAL.size + name_len + extra_len + comment_len
        if stop > len(data):
            raise zipfile.BadZipFile(
                f"{where} named {name!r}: its name, extra field and comment lengths ({name_len}, "
                f"{extra_len}, {comment_len}) run {stop - len(data)} bytes past the central "
                f"directory's end at offset {located}")
        pos, index = stop, index + 1


def check_counts(zf: zipfile.ZipFile, where: str) -> None:
    """The entry counts of the end record of ``zf`` (open for reading) match the entries its
    central directory holds."""
    assert zf.fp is not None
    record, located, end = _end_record(zf.fp)
    count = len(zf.infolist())
    want = f"{count} (the entries the central directory's {end[zipfile._ECD_SIZE]} bytes hold)"  # type: ignore
    for field, index in (("total number of entries", zipfile._ECD_ENTRIES_TOTAL),  # type: ignore
                         ("number of entries on this disk", zipfile._ECD_ENTRIES_THIS_DISK)):  # type: ignore
        if end[index] != count:
            raise StoreError(f"{where}: {record} (at offset {located}): {field}: expected "
                             f"{want}, found {end[index]}")


def check_entry(info: zipfile.ZipInfo, start_dir: int, name: str, where: str) -> None:
    """The offset and compressed size a central directory entry gives fit before the central
    directory (at ``start_dir``); ``name`` is the entry's name as shown."""
    def bad(field: str, found: int, want: str) -> StoreError:
        return StoreError(f"{where}: central directory entry {name!r}: {field}: expected "
                          f"{want}, found {found}")

    if not 0 <= info.header_offset <= start_dir - _LOCAL_SIZE:
        raise bad("offset of the local header", info.header_offset,
                  f"0 to {start_dir - _LOCAL_SIZE} (a {_LOCAL_SIZE}-byte local header before "
                  f"the central directory at offset {start_dir})")
    room = start_dir - info.header_offset - _LOCAL_SIZE
    if info.compress_size > room:
        raise bad("compressed size", info.compress_size,
                  f"at most {room} (the bytes between the entry's local header at offset "
                  f"{info.header_offset} and the central directory at offset {start_dir})")


def name_problem(key: str) -> str | None:
    """Why ``key`` cannot name a zip entry, or None if it can: a path-safe key (see
    :func:`~zarrx.store.inputs.key_problem`) of at most 65,535 bytes of UTF-8. A segment may be
    longer than the 255 bytes a file system's name takes: the zip format has no such limit, and
    zarr-python's ``ZipStore`` writes such entries (an array named with 300 characters)."""
    problem = key_problem(key, files=False)
    if problem is None and len(key) > MAX_NAME_BYTES // 4 \
            and (n := len(key.encode("utf-8"))) > MAX_NAME_BYTES:
        problem = (f"found a key of {n} bytes; a zip entry's name holds at most "
                   f"{MAX_NAME_BYTES} bytes")
    return problem


def check_name(key: object, where: str) -> str:
    """``key`` if it can name a zip entry (see :func:`name_problem`), else a StoreError."""
    if not isinstance(key, str):
        raise StoreError(f"{where}: key {key!r}: expected str, found {type(key).__name__}")
    if (problem := name_problem(key)) is not None:
        raise StoreError(f"{where}: key {key[:200]!r}{'...' if len(key) > 200 else ''}: "
                         f"{problem}")
    return key
