"""Zip archives of a Zarr hierarchy made the ways users make them: Python's ``zipfile`` with each
method, written to a stream it cannot seek (data descriptors), with forced zip64 records,
directory entries and a comment; Info-ZIP's ``zip`` (``-0``, ``-9``, ``-D``, to a pipe, and of
the folder itself); ``shutil.make_archive``; libarchive's ``bsdtar`` (macOS's and Windows'
``tar``), whose names start with ``./``; Windows PowerShell 5.1's ``Compress-Archive``, whose
separators are backslashes; an archive of more than 65,535 entries. Each reads with the values
written."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import warnings
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import ZipStore

A = np.arange(600, dtype="<i4").reshape(20, 30)
B = np.arange(7) * 1.5
GROUP = "zarr.json"
GROUP_DOC = b'{"zarr_format": 3, "node_type": "group"}'
METHODS = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED,
           "bzip2": zipfile.ZIP_BZIP2, "lzma": zipfile.ZIP_LZMA}


def hierarchy(folder, layout):
    """A consolidated group holding ``a`` (sharded for ``v3-sharded``) and ``sub/b``."""
    fmt, shards = (2, None) if layout == "v2" else (3, (10, 30))
    g = zarrx.open_group(str(folder), mode="w", zarr_format=fmt, attributes={"title": "t"})
    g.create_array("a", shape=A.shape, chunks=(5, 10), shards=shards, dtype=A.dtype)[...] = A
    g.create_group("sub").create_array("b", shape=B.shape, chunks=(3,), dtype=B.dtype)[...] = B
    zarrx.consolidate_metadata(str(folder))
    return folder


def files(folder):
    for top, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            yield os.path.relpath(os.path.join(top, name), folder).replace(os.sep, "/"), \
                os.path.join(top, name)


def expect_values(where, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # nothing skipped, nothing replaced
        for consolidated in (False, True):
            g = zarrx.open_group(where, mode="r", use_consolidated=consolidated, **kwargs)
            assert g.attrs["title"] == "t"
            assert sorted(g.keys()) == ["a", "sub"]
            np.testing.assert_array_equal(g["a"][...], A)
            np.testing.assert_array_equal(g["a"][3:17, 4:29], A[3:17, 4:29])
            np.testing.assert_array_equal(g["sub/b"][...], B)


class Unseekable(io.RawIOBase):
    """A pipe, as zipfile sees it: it writes each entry's sizes and CRC-32 after its data."""

    def __init__(self):
        self.out = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.out += b
        return len(b)


def with_zipfile(folder, path, method, *, prefix=""):
    sink = Unseekable()
    with zipfile.ZipFile(sink, "w", compression=method) as zf:
        made = set()
        for rel, full in files(folder):
            parts = rel.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = prefix + "/".join(parts[:i]) + "/"
                if d not in made:
                    made.add(d)
                    zf.writestr(zipfile.ZipInfo(d), b"")
            with open(full, "rb") as f, zf.open(prefix + rel, "w", force_zip64=True) as w:
                w.write(f.read())
        zf.comment = b"made for a test \xff\x00"
    path.write_bytes(bytes(sink.out))
    return path


@pytest.fixture(params=["v2", "v3-sharded"])
def folder(request, tmp_path):
    return hierarchy(tmp_path / "data.zarr", request.param)


@pytest.mark.parametrize("method", METHODS.values(), ids=list(METHODS))
def test_zipfile_archives_written_to_a_stream_read(folder, tmp_path, method):
    path = with_zipfile(folder, tmp_path / "data.zip", method)
    with zipfile.ZipFile(path) as zf:         # the forms the test is about
        infos = zf.infolist()
        assert zf.comment and any(i.is_dir() for i in infos)
        assert all(i.flag_bits & 0x08 for i in infos if not i.is_dir())   # data descriptors
    expect_values(str(path))


def run(*args, cwd):
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True).stdout


@pytest.mark.skipif(shutil.which("zip") is None, reason="Info-ZIP's zip is not installed "
                    "(Debian package zip)")
@pytest.mark.parametrize("flags", [["-0"], ["-9"], ["-9", "-D"], ["-0", "-D"]],
                         ids=["0", "9", "9D", "0D"])
def test_archives_of_the_zip_command_read(folder, tmp_path, flags):
    inside = tmp_path / "inside.zip"
    run("zip", "-q", "-r", *flags, str(inside), ".", cwd=folder)
    expect_values(str(inside))
    piped = tmp_path / "piped.zip"          # to a pipe: data descriptors
    piped.write_bytes(run("zip", "-q", "-r", *flags, "-", ".", cwd=folder))
    expect_values(str(piped))
    outside = tmp_path / "outside.zip"      # zip -r data.zip data.zarr: one folder down
    run("zip", "-q", "-r", *flags, str(outside), folder.name, cwd=folder.parent)
    expect_values(str(outside), path=folder.name)
    expect_values(f"zip://{folder.name}::file://{outside}")


def test_archives_of_make_archive_read(folder, tmp_path):
    expect_values(shutil.make_archive(str(tmp_path / "root"), "zip", root_dir=folder))
    one_down = shutil.make_archive(str(tmp_path / "base"), "zip", root_dir=folder.parent,
                                   base_dir=folder.name)
    expect_values(one_down, path=folder.name)


def test_names_starting_with_dot_slash_read_as_their_keys(folder, tmp_path):
    path = with_zipfile(folder, tmp_path / "data.zip", zipfile.ZIP_DEFLATED, prefix="./")
    names = [n for n in zipfile.ZipFile(path).namelist() if not n.endswith("/")]
    assert all(n.startswith("./") for n in names)
    expect_values(str(path))
    with ZipStore(path, mode="a") as store:     # the keys they stand for exist
        with pytest.raises(StoreError, match=f"entry '{names[0][2:]}' already exists"):
            store.set(names[0][2:], b"{}")
        store.set("notes/x", b"new")
    with ZipStore(path) as store:
        assert store.get("notes/x") == b"new"
        assert store.list_dir("") == (sorted(n[2:] for n in names if n.count("/") == 1),
                                      ["a", "notes", "sub"])
    expect_values(str(path))


@pytest.mark.skipif(shutil.which("bsdtar") is None, reason="libarchive's bsdtar is not "
                    "installed (Debian package libarchive-tools)")
def test_archives_of_bsdtar_read(folder, tmp_path):
    path = tmp_path / "data.zip"
    run("bsdtar", "-a", "-cf", str(path), ".", cwd=folder)
    assert all(n.startswith("./") for n in zipfile.ZipFile(path).namelist())
    expect_values(str(path))


def test_backslashes_of_archives_made_on_windows_are_separators(folder, tmp_path):
    """Windows PowerShell 5.1's Compress-Archive writes ``a\\zarr.json`` (host MS-DOS), which
    ``unzip`` and zipfile on Windows read as ``a/zarr.json``; made elsewhere, a backslash is
    part of a name no key has, and the entry is skipped."""
    path = tmp_path / "data.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for rel, full in files(folder):
            info = zipfile.ZipInfo(rel.replace("/", "\\"))
            info.create_system = 0                  # MS-DOS and Windows
            with open(full, "rb") as f:
                zf.writestr(info, f.read())
    names = zipfile.ZipFile(path).namelist()
    assert any("\\" in n for n in names) and not any("/" in n for n in names)
    expect_values(str(path))
    unix = tmp_path / "unix.zip"
    with zipfile.ZipFile(unix, "w") as zf:
        zf.writestr(GROUP, b'{"zarr_format": 3, "node_type": "group"}')
        info = zipfile.ZipInfo("notes\\x")
        info.create_system = 3
        zf.writestr(info, b"x")
    with pytest.warns(UserWarning, match=r"skipping zip entry 'notes\\\\x': found a backslash"):
        with ZipStore(unix) as store:
            assert list(store.list_prefix("")) == [GROUP]


def test_folder_entries_made_on_windows_are_folders_and_skipped_names_are_as_stored(tmp_path):
    """A folder entry made on MS-DOS or Windows (``sub\\``, as 7-Zip and .NET name an empty
    folder there) is a folder, skipped quietly as ``sub/`` is; an entry skipped for its name,
    or replaced, is named as stored (as ``unzip -l`` lists it) with the key it is read as."""
    path = tmp_path / "data.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in (("sub\\", b""), ("sub\\zarr.json", GROUP_DOC),
                           ("..\\x", b"1"), ("./zarr.json", b"{}"), (GROUP, GROUP_DOC)):
            info = zipfile.ZipInfo(name)
            info.create_system = 0
            zf.writestr(info, data)
    offsets = [i.header_offset for i in zipfile.ZipFile(path).infolist()]
    with pytest.warns(UserWarning) as caught:
        store = ZipStore(path)
    with store:
        assert list(store.list_prefix("")) == ["sub/zarr.json", GROUP]
    assert [str(w.message) for w in caught] == [
        f"{store!r}: skipping zip entry '..\\\\x' (read as '../x'): found a '..' segment; keys "
        f"may not step outside their directory",
        f"{store!r}: skipping zip entry './zarr.json' (read as 'zarr.json') at offset "
        f"{offsets[3]}: a later entry read as the same key, 'zarr.json' (at offset "
        f"{offsets[4]}) replaces it"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the two above, again
        assert sorted(zarrx.open_group(str(path), mode="r").group_keys()) == ["sub"]


def test_an_archive_of_more_than_65535_entries_reads(tmp_path):
    """Its entry count is in the zip64 end record (the classic one says 0xFFFF)."""
    n = 65_600
    path = tmp_path / "many.zip"
    zarrx.create_array(str(tmp_path / "meta"), shape=(n,), chunks=(1,), dtype="<u4",
                       compressors=None)
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(tmp_path / "meta" / "zarr.json", "zarr.json")
        for i in range(n):
            zf.writestr(f"c/{i}", i.to_bytes(4, "little"))
    blob = path.read_bytes()
    assert b"PK\x06\x06" in blob and blob[-22 + 10:-22 + 12] == b"\xff\xff"
    got = zarrx.open_array(str(path), mode="r")
    np.testing.assert_array_equal(got[...], np.arange(n, dtype="<u4"))
