"""The end records of a zip archive checked against the file before any entry is read:
zipfile takes the central directory's offset, size and entry counts as they are, so a corrupt
field would surface later as a failed read at a negative or absurd offset. Each field found
wrong raises StoreError naming the record and the field, the value found and what fits."""
from __future__ import annotations

import os
import zipfile
from typing import BinaryIO

from zarrx.errors import StoreError

__all__ = ["check_end_record", "check_counts", "check_entry"]

_LOCAL_SIZE = 30                # local file header, up to the name


def _end_record(fp: BinaryIO) -> tuple[str, int, list]:
    """The name of the end record zipfile reads (its zip64 form if present), its offset and
    its fields."""
    end = zipfile._EndRecData(fp)   # type: ignore[attr-defined]  # what ZipFile itself reads
    if end is None:
        raise zipfile.BadZipFile("File is not a zip file")
    located = end[zipfile._ECD_LOCATION]        # type: ignore[attr-defined]
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:   # type: ignore
        located -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator  # type: ignore
        return "zip64 end of central directory record", located, end
    return "end of central directory record", located, end


def check_end_record(fp: BinaryIO, path: str) -> None:
    """The end record of the archive open as ``fp`` places the central directory within the
    file, before the end record; BadZipFile naming the field otherwise."""
    file_size = os.fstat(fp.fileno()).st_size
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
