"""Opening a local path that holds no node says why when the path explains it: a file given
where Zarr data is a directory (a netCDF or HDF5 file), or a directory that is not there."""
from __future__ import annotations

import re

import pytest

import zarrx
from zarrx.errors import ArrayNotFoundError, GroupNotFoundError

OPENERS = {
    "open": (lambda p: zarrx.open(p, mode="r"), GroupNotFoundError, "open: no array or group"),
    "open_group": (lambda p: zarrx.open_group(p, mode="r"), GroupNotFoundError,
                   "open_group: no group"),
    "open_array": (lambda p: zarrx.open_array(p, mode="r"), ArrayNotFoundError,
                   "open_array: no array"),
}


@pytest.mark.parametrize("opener", OPENERS.values(), ids=list(OPENERS))
def test_a_file_is_named_as_a_file(tmp_path, opener):
    call, error, start = opener
    path = tmp_path / "data.nc"
    path.write_bytes(b"CDF\x01")
    with pytest.raises(error) as info:
        call(path)
    assert str(info.value) == (
        f"{start} at '/' in LocalStore({str(path)!r}, read_only=True) ({str(path)!r} is a "
        f"file, not a directory: Zarr data is a directory, or a zip archive whose name ends in "
        f".zip)")
    assert path.read_bytes() == b"CDF\x01"


@pytest.mark.parametrize("opener", OPENERS.values(), ids=list(OPENERS))
def test_a_missing_directory_is_named_as_missing(tmp_path, opener):
    call, error, start = opener
    path = tmp_path / "tmep.zarr"
    with pytest.raises(error, match=re.escape(f"(no such directory: {str(path)!r})") + "$"):
        call(path)
    assert not path.exists()


def test_an_existing_directory_without_a_node_gets_no_such_hint(tmp_path):
    with pytest.raises(GroupNotFoundError) as info:
        zarrx.open(tmp_path, mode="r")
    assert str(info.value) == f"open: no array or group at '/' in LocalStore({str(tmp_path)!r}, " \
                              f"read_only=True)"
