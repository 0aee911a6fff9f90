"""File objects a ZipStore is given to read an archive from that are not plain binary files:
one open in text mode or whose ``read`` returns ``str`` is refused naming why (before: a
``UnicodeDecodeError`` or a bare ``TypeError``), one that cannot seek is refused naming that,
and one whose ``read`` returns fewer bytes than asked (a raw reader, a network stream) is read
in full (before: reported as a damaged archive)."""
from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreArgumentError
from zarrx.storage import ZipStore

_A = np.arange(24.0).reshape(6, 4)


@pytest.fixture
def archive(tmp_path):
    path = tmp_path / "data.zip"
    with ZipStore(str(path), mode="w", compression=zipfile.ZIP_DEFLATED) as store:
        zarrx.create_array(store, name="a", shape=(6, 4), chunks=(2, 2), dtype="f8")[...] = _A
    return path


class _Trickle(io.RawIOBase):
    """A raw reader giving at most 7 bytes a read, as a raw stream may."""

    def __init__(self, data: bytes) -> None:
        self._b = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._b.seek(pos, whence)

    def tell(self) -> int:
        return self._b.tell()

    def readinto(self, buf) -> int:
        got = self._b.read(min(len(buf), 7))
        buf[:len(got)] = got
        return len(got)


class _TrickleReader:
    """Not an io object: read, seek and tell only, at most 7 bytes a read."""

    def __init__(self, data: bytes) -> None:
        self._b = io.BytesIO(data)

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._b.seek(pos, whence)

    def tell(self) -> int:
        return self._b.tell()

    def read(self, n: int = -1) -> bytes:
        return self._b.read(7 if n is None or n < 0 else min(n, 7))


class _Stream(_Trickle):
    def seekable(self) -> bool:
        return False


class _TextReader(_TrickleReader):
    def read(self, n: int = -1) -> str:
        return super().read(n).decode("latin-1")


@pytest.mark.parametrize("kind", [_Trickle, _TrickleReader])
def test_short_reads_are_read_in_full(archive, kind):
    store = ZipStore(kind(archive.read_bytes()))
    np.testing.assert_array_equal(zarrx.open_array(store, path="a", mode="r")[...], _A)


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_text_mode_file_refused(archive, encoding):
    with open(archive, encoding=encoding) as f:
        with pytest.raises(StoreArgumentError, match=r"cannot read a zip archive from this "
                           r"file object: the file is open in text mode \(TextIOWrapper\); "
                           r"expected a binary file: open it with mode 'rb'"):
            ZipStore(f)


def test_reader_returning_str_refused(archive):
    with pytest.raises(StoreArgumentError, match=r"its read returns str; expected a binary "
                       r"file, whose read returns bytes"):
        ZipStore(_TextReader(archive.read_bytes()))


def test_unseekable_file_refused(archive):
    with pytest.raises(StoreArgumentError, match=r"the file cannot seek \(seekable\(\) is "
                       r"False\); a zip archive is read from its end"):
        ZipStore(_Stream(archive.read_bytes()))
