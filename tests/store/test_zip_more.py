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


def _bsdtar_and_windows_names(tmp_path):
    """A group holding an array, zipped twice: its entries named ``./zarr.json`` (as
    ``bsdtar -a -cf x.zip .`` names them) and ``a\\zarr.json`` made on MS-DOS (as Windows
    PowerShell 5.1's ``Compress-Archive`` names them)."""
    import numpy as np
    folder = tmp_path / "src"
    g = zarrx.open_group(str(folder), mode="w")
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")[...] = np.arange(4)
    docs = {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}
    made = []
    for name, rename, system in (("dot.zip", lambda k: "./" + k, 3),
                                 ("windows.zip", lambda k: k.replace("/", "\\"), 0)):
        with zipfile.ZipFile(tmp_path / name, "w") as zf:
            if system == 3:
                zf.writestr("./", b"")
            for key, data in docs.items():
                info = zipfile.ZipInfo(rename(key))
                info.create_system = system
                zf.writestr(info, data)
        made.append(str(tmp_path / name))
    return made


def test_a_chained_zip_url_reads_entry_names_as_the_zip_store_reads_them(tmp_path):
    """``./`` names and MS-DOS backslash names stand for the same keys through fsspec's zip
    filesystem as through ZipStore (before: a chained URL found no group, or no member)."""
    for path in _bsdtar_and_windows_names(tmp_path):
        names = zipfile.ZipFile(path).namelist()
        assert all(n.startswith("./") for n in names) or all("/" not in n for n in names)
        for where in (path, f"zip::file://{path}"):
            g = zarrx.open_group(where, mode="r")
            assert list(g.keys()) == ["a"] and g["a"][...].tolist() == [0, 1, 2, 3]
            assert sorted(g.store.list_prefix("")) == ["a/c/0", "a/c/1", "a/zarr.json",
                                                       "zarr.json"]
            assert zarrx.load(where, path="a").tolist() == [0, 1, 2, 3]


def test_a_chained_zip_url_skips_unsafe_names_as_the_zip_store_does(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("zarr.json", GROUP)
        info = zipfile.ZipInfo("..\\x")
        info.create_system = 0
        zf.writestr(info, b"1")
    with pytest.warns(UserWarning, match=r"skipping zip entry '\.\.\\\\x' \(read as '\.\./x'\)"):
        store = zarrx.open_group(f"zip::file://{path}", mode="r").store
    assert list(store.list_prefix("")) == ["zarr.json"]
