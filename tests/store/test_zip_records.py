"""Corrupt fields of a zip archive's end record and central directory entries: each refused
with a StoreError naming the record, the field, the value found and what fits."""
from __future__ import annotations

import re
import struct
import zipfile

import pytest

from zarrx.errors import StoreError
from zarrx.store.zip import ZipStore


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("zarr.json", '{"zarr_format":3,"node_type":"group"}')
        zf.writestr("x", b"abc")
    return path


def corrupt(path, magic: bytes, offset: int, fmt: str, value: int) -> None:
    raw = bytearray(path.read_bytes())
    at = raw.rfind(magic) if magic == b"PK\x05\x06" else raw.find(magic)
    struct.pack_into(fmt, raw, at + offset, value)
    path.write_bytes(bytes(raw))


END = "end of central directory record (at offset 212)"


@pytest.mark.parametrize("offset,fmt,value,message", [
    (16, "<I", 0xFFFFFF00, f"{END}: offset of the central directory: expected at most 110 (the "
     "central directory's 102 bytes end where the end record starts, at offset 212), found "
     "4294967040 (the archive is 234 bytes)"),
    (12, "<I", 0xFFFFFF00, f"{END}: size of the central directory: expected at most 212 (the "
     "bytes before the end record), found 4294967040 (the archive is 234 bytes)"),
    (12, "<I", 10, f"{END}: size of the central directory: expected the size of the entries "
     "before the end record, the first starting with b'PK\\x01\\x02' (offset 202 holds "
     "b'\\x00\\x00\\x00\\x80'), found 10 (the archive is 234 bytes)"),
    (10, "<H", 7, f"{END}: total number of entries: expected 2 (the entries the central "
     "directory's 102 bytes hold), found 7"),
    (8, "<H", 0, f"{END}: number of entries on this disk: expected 2 (the entries the central "
     "directory's 102 bytes hold), found 0"),
], ids=["cd-offset", "cd-size", "cd-size-short", "total", "this-disk"])
def test_end_record_field(archive, offset, fmt, value, message):
    corrupt(archive, b"PK\x05\x06", offset, fmt, value)
    with pytest.raises(StoreError, match=re.escape(message)):
        ZipStore(archive, mode="r")


@pytest.mark.parametrize("offset,message", [
    (42, "central directory entry 'zarr.json': offset of the local header: expected 0 to 80 (a "
     "30-byte local header before the central directory at offset 110), found 4294967040"),
    (20, "central directory entry 'zarr.json': compressed size: expected at most 80 (the bytes "
     "between the entry's local header at offset 0 and the central directory at offset 110), "
     "found 4294967040"),
], ids=["header-offset", "compressed-size"])
def test_central_directory_entry_field(archive, offset, message):
    corrupt(archive, b"PK\x01\x02", offset, "<I", 0xFFFFFF00)
    with pytest.raises(StoreError, match=re.escape(message)):
        ZipStore(archive, mode="r")


def test_append_mode_checks_the_end_record(archive):
    corrupt(archive, b"PK\x05\x06", 16, "<I", 0xFFFFFF00)
    with pytest.raises(StoreError, match="offset of the central directory: expected at most 110"):
        ZipStore(archive, mode="a")


def test_prepended_bytes_still_read(archive):
    """Bytes before the archive (a self-extracting stub) move every offset; zipfile reads
    through that, and so does the check."""
    archive.write_bytes(b"#!stub\n" * 10 + archive.read_bytes())
    with ZipStore(archive, mode="r") as store:
        assert store.get("x") == b"abc"


def test_central_directory_entry_lengths(archive):
    """A name, extra field and comment running past the central directory, which zipfile
    reports without naming the entry."""
    corrupt(archive, b"PK\x01\x02", 30, "<H", 0xFFF0)
    message = ("central directory entry 0 (at offset 110) named b'zarr.json': its name, extra "
               "field and comment lengths (9, 65520, 0) run 65473 bytes past the central "
               "directory's end at offset 212")
    with pytest.raises(StoreError, match=re.escape(message)):
        ZipStore(archive, mode="r")
