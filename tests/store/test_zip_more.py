"""Zip archives read through fsspec's zip filesystem (``zip::file:///a.zip``): errors are
ZarrErrors naming the archive and the entry."""
from __future__ import annotations

import zipfile

import pytest

import zarrx
from zarrx.errors import GroupNotFoundError, StoreError
from zarrx.store.remote.urls import redact

GROUP = b'{"zarr_format": 3, "node_type": "group"}'

pytest.importorskip("fsspec")


def _archive(path, data=GROUP):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("zarr.json", data)
    return str(path)


def test_a_chained_zip_url_opens_and_names_the_archive(tmp_path):
    path = _archive(tmp_path / "a.zip")
    g = zarrx.open_group(f"zip::file://{path}", mode="r")
    assert repr(g.store) == f"FsspecStore('zip://::file://{path}', read_only=True)"


def test_a_chained_zip_url_naming_an_entry_is_a_zarr_error(tmp_path):
    # the URL's "zarr.json::file" once failed in redacting it, as a port that is not a number
    path = _archive(tmp_path / "a.zip")
    with pytest.raises(GroupNotFoundError) as info:
        zarrx.open_group(f"zip://zarr.json::file://{path}", mode="r")
    assert f"zip://zarr.json::file://{path}" in str(info.value)


def test_chained_urls_are_shown_without_credentials():
    assert redact("zip://a/b::s3://user:secret@bucket/x.zip") == "zip://a/b::s3://bucket/x.zip"
    assert redact("simplecache::https://user:secret@host/a.zip?sig=1") == \
        "simplecache::https://host/a.zip"


@pytest.mark.parametrize("damage, why", [
    ("encrypted", "RuntimeError: File 'zarr.json' is encrypted, password required for "
                  "extraction"),
    ("crc", "BadZipFile: Bad CRC-32 for file 'zarr.json'"),
])
def test_an_unreadable_entry_through_fsspec_is_a_store_error(tmp_path, damage, why):
    path = _archive(tmp_path / "a.zip")
    data = bytearray(open(path, "rb").read())
    if damage == "encrypted":
        data[data.find(b"PK\x03\x04") + 6] |= 1
        data[data.find(b"PK\x01\x02") + 8] |= 1
    else:
        data[data.find(b"group")] = ord("G")
    open(path, "wb").write(data)
    with pytest.raises(StoreError) as info:
        zarrx.open_group(f"zip::file://{path}", mode="r")
    assert str(info.value) == (
        f"FsspecStore('zip://::file://{path}', read_only=True): cannot read 'zarr.json' "
        f"(zip://zarr.json::file://{path}): the zip entry cannot be read: {why}")
