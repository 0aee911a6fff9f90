"""ZipStore against archives with hostile names or that zipfile itself refuses: unsafe and
duplicate member names, names not flagged UTF-8, empty names, unsupported compression methods,
and paths that are no file."""
from __future__ import annotations

import os
import re
import warnings
import zipfile

import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import ZipStore

from .zip_archives import BAD_NAMES, GROUP, build, entry


def test_unsafe_member_names_are_skipped_with_a_warning(tmp_path):
    path = build(tmp_path / "a.zip", [entry("zarr.json", GROUP)] +
                 [entry(n, b"bad") for n in BAD_NAMES] + [entry("ok/zarr.json", GROUP)])
    with pytest.warns(UserWarning) as caught:
        store = ZipStore(path)
    where = f"ZipStore({str(path)!r}, mode='r')"
    assert [str(w.message) for w in caught] == [
        f"{where}: skipping zip entry {n.decode()!r}: {why}" for n, why in BAD_NAMES.items()]
    with store:
        assert sorted(store.list_prefix("")) == ["ok/zarr.json", "zarr.json"]
        assert store.list_dir("") == (["zarr.json"], ["ok"])
        assert store.get("x") is None
        g = zarrx.open_group(store, mode="r")
        assert [name for name, _ in g.members()] == ["ok"]


def test_duplicate_member_names_keep_the_last(tmp_path):
    # zipfile and zarr-python read the last entry of a name
    path = build(tmp_path / "a.zip", [entry("k", b"first"), entry("j", b"j"),
                                      entry("k", b"second")])
    with pytest.warns(UserWarning) as caught:
        store = ZipStore(path)
    assert [str(w.message) for w in caught] == [
        f"ZipStore({str(path)!r}, mode='r'): skipping zip entry 'k' at offset 0: a later entry "
        "of the same name (at offset 68) replaces it"]
    with store:
        assert store.get("k") == b"second"
        assert sorted(store.list_prefix("")) == ["j", "k"]
    with zipfile.ZipFile(path) as zf:
        assert zf.read("k") == b"second"


def test_metadata_zarr_python_updated_in_an_archive_reads_as_zarr_python_reads_it(tmp_path):
    # zarr-python's ZipStore writes a node's zarr.json again when its attributes change
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "a.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # zarr-python's "Duplicate name"
        zs = zarr.storage.ZipStore(path, mode="w")
        g = zarr.open_group(zs, mode="w", zarr_format=3)
        g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")[:] = [1, 2, 3, 4]
        g.attrs["title"] = "t"
        zs.close()
    with pytest.warns(UserWarning, match="skipping zip entry 'zarr.json' at offset 0"):
        g = zarrx.open_group(path, mode="r")
    assert dict(g.attrs) == {"title": "t"}
    assert g["a"][:].tolist() == [1, 2, 3, 4]


FUZZ_CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus", "fuzz_zip")


def _flag_utf8(path):
    blob = bytearray(path.read_bytes())
    at = blob.index(b"PK\x01\x02")
    blob[at + 9] |= 0x08                    # general purpose flag bit 11: the name is UTF-8
    path.write_bytes(bytes(blob))
    return path


def test_archives_zipfile_refuses_are_store_errors(tmp_path):
    """Regressions (fuzz/corpus/fuzz_zip/regression-*): zipfile's NotImplementedError (a
    version it does not support) and UnicodeDecodeError (a name flagged UTF-8 that is not)
    escaped ZipStore."""
    version = os.path.join(FUZZ_CORPUS, "regression-zip-version-unsupported")
    with pytest.raises(StoreError, match=re.escape("cannot open in mode 'r': zip file version "
                                                   "11.4")):
        ZipStore(version)
    path = _flag_utf8(build(tmp_path / "a.zip", [entry(b"\xffname", b"x")]))
    with pytest.raises(StoreError, match=re.escape("cannot open in mode 'r': 'utf-8' codec can't "
                                                   "decode byte 0xff in position 0")):
        ZipStore(path)


def test_an_empty_member_name_is_skipped(tmp_path):
    """Regression (fuzz/corpus/fuzz_zip/regression-zip-empty-name): zipfile's is_dir() raised
    IndexError on an entry with an empty name."""
    path = build(tmp_path / "a.zip", [entry(b"", b"x"), entry("zarr.json", GROUP)])
    with pytest.warns(UserWarning, match="skipping zip entry '': "):
        store = ZipStore(path)
    with store:
        assert list(store.list_prefix("")) == ["zarr.json"]


def test_an_unsupported_compression_method_names_the_entry(tmp_path):
    path = build(tmp_path / "a.zip", [entry("zarr.json", GROUP), entry("c/0", b"xx", method=93)])
    with ZipStore(path) as store:
        assert store.get("zarr.json") == GROUP
        with pytest.raises(StoreError) as info:
            store.get("c/0")
    assert str(info.value) == (f"ZipStore({str(path)!r}, mode='r'): entry 'c/0': compression "
                               "method 93 is not supported (stored, deflated, bzip2 and LZMA "
                               "are)")


def test_names_not_flagged_utf8_are_read_as_utf8_when_they_are(tmp_path):
    """Info-ZIP's zip (cd data.zarr && zip -r ../a.zip .) stores UTF-8 names without the UTF-8
    flag; names that are not UTF-8 stay CP437, as the zip format says."""
    path = build(tmp_path / "a.zip", [
        entry("zarr.json", GROUP),
        entry("donn\u00e9es/zarr.json".encode(), GROUP),
        entry(b"caf\x82/zarr.json", GROUP),             # CP437 for "café"
    ])
    with ZipStore(path) as store:
        assert sorted(store.list_prefix("")) == ["café/zarr.json", "données/zarr.json",
                                                 "zarr.json"]
        assert store.get("données/zarr.json") == GROUP
        assert sorted(zarrx.open_group(store, mode="r").keys()) == ["café", "données"]


@pytest.mark.parametrize("mode", ["r", "a"])
@pytest.mark.parametrize("what", ["a named pipe", "a character device", "a directory"])
def test_an_archive_path_that_is_no_file_is_refused_at_once(tmp_path, mode, what):
    """A named pipe at the archive's path made opening it wait forever, and a link to
    /dev/zero made it read without end: anything but a file is refused before zipfile reads."""
    path = str(tmp_path / "a.zip")
    {"a named pipe": os.mkfifo, "a character device": lambda p: os.symlink("/dev/zero", p),
     "a directory": os.mkdir}[what](path)
    with pytest.raises(StoreError) as info:
        ZipStore(path, mode=mode)
    assert str(info.value) == (f"ZipStore({path!r}, mode={mode!r}): cannot open in mode "
                               f"{mode!r}: {path!r} is {what}, not a zip archive")
    if what != "a directory":       # (zarrx.open: a directory store, as zarr-python's)
        with pytest.raises(StoreError, match=re.escape(f"{path!r} is {what}, not a zip archive")):
            zarrx.open(path, mode="r")
