"""Where data is reached: ``file://`` URLs, kerchunk reference filesystems, fsspec wrappers and
archives, and the store objects the copy tools take, each checked against what zarr-python and
fsspec read at the same place."""
from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import re
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import (ArgumentTypeError, ContainsArrayError, ContainsGroupError, ReadOnlyError,
                          RemoteNotFoundError, ZarrError)
from zarrx.store import FsspecStore, LocalStore, make_store

from loopback import serving

fsspec = pytest.importorskip("fsspec")
zarr = pytest.importorskip("zarr")


def _arange_array(where, zarr_format=3, **kwargs):
    a = zarrx.create_array(where, shape=(5,), chunks=(2,), dtype="i4", zarr_format=zarr_format,
                           **kwargs)
    a[...] = np.arange(5)
    return a


# -- file:// URLs --------------------------------------------------------------------------------

def test_a_file_url_under_the_home_directory_is_written_there(tmp_path, monkeypatch):
    """``file://~/a.zarr`` is below the home directory, as fsspec's local filesystem (and so
    zarr-python, and zarrx with storage_options) reads it: not a folder '~' here."""
    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    _arange_array("file://~/a.zarr")
    assert (home / "a.zarr" / "zarr.json").is_file()
    assert not (here / "~").exists()
    assert fsspec.core.url_to_fs("file://~/a.zarr")[1] == str(home / "a.zarr")
    assert zarr.open_array("file://~/a.zarr", mode="r")[:].tolist() == [0, 1, 2, 3, 4]
    # with storage_options (fsspec's local filesystem) the same array
    b = zarrx.open_array("file://~/a.zarr", mode="r", storage_options={"auto_mkdir": False})
    assert isinstance(b.store, FsspecStore) and b[:].tolist() == [0, 1, 2, 3, 4]
    assert LocalStore("file://~/a.zarr").root == home / "a.zarr"


def test_a_file_url_is_a_local_store_in_any_case_of_its_scheme(tmp_path):
    store = make_store(f"FILE://{tmp_path}/x.zarr", "a")
    assert isinstance(store, LocalStore) and store.root == tmp_path / "x.zarr"


def test_percent_escapes_of_a_file_url_name_themselves_as_in_fsspec(tmp_path):
    """fsspec (and so zarr-python) takes the text of a file:// URL as written: zarrx too, with
    or without storage_options (both write the same folder)."""
    _arange_array(f"file://{tmp_path}/a%20b.zarr")
    assert (tmp_path / "a%20b.zarr" / "zarr.json").is_file()
    got = zarrx.open_array(f"file://{tmp_path}/a%20b.zarr", mode="r",
                           storage_options={"auto_mkdir": False})
    assert got[:].tolist() == [0, 1, 2, 3, 4]


def test_copy_takes_a_file_url_with_storage_options(tmp_path):
    _arange_array(tmp_path / "src.zarr")
    zarrx.copy(tmp_path / "src.zarr", f"file://{tmp_path}/dst.zarr",
               destination_storage_options={"auto_mkdir": True})
    assert zarr.open_array(tmp_path / "dst.zarr", mode="r")[:].tolist() == [0, 1, 2, 3, 4]


# -- kerchunk references -------------------------------------------------------------------------

def _references(tmp_path, *, missing: bool = False) -> tuple[str, dict]:
    """A kerchunk reference set (version 1) for a Zarr v2 group with an array ``arr`` whose
    three chunks are held inline (base64), as a range of a local file, and as a whole file."""
    src = tmp_path / "src.zarr"
    _arange_array(src, zarr_format=2, compressors=None)
    blob = tmp_path / "blob.bin"
    head = b"some other bytes"
    blob.write_bytes(head + (src / "1").read_bytes() + b"tail")
    whole = tmp_path / "whole.bin"
    whole.write_bytes((src / "2").read_bytes())
    refs = {
        ".zgroup": json.dumps({"zarr_format": 2}),
        "arr/.zarray": (src / ".zarray").read_text(),
        "arr/0": "base64:" + base64.b64encode((src / "0").read_bytes()).decode(),
        "arr/1": [str(blob), len(head), (src / "1").stat().st_size],
        "arr/2": [str(whole)],
    }
    if missing:
        refs["arr/2"] = [str(tmp_path / "gone.bin")]
    doc = {"version": 1, "refs": refs}
    path = tmp_path / "refs.json"
    path.write_text(json.dumps(doc))
    return str(path), doc


def test_a_reference_filesystem_reads_as_zarr_python_reads_it(tmp_path):
    """Chunks held inline (``base64:``), whose size fsspec gives as their text's length,
    read at their decoded size."""
    fo, doc = _references(tmp_path)
    want = [0, 1, 2, 3, 4]
    assert zarr.open_array("reference://", path="arr", mode="r",
                           storage_options={"fo": fo})[:].tolist() == want
    for so in ({"fo": fo}, {"fo": doc}):
        assert zarrx.open_array("reference://", path="arr", mode="r",
                                storage_options=so)[:].tolist() == want
    assert zarrx.open_array(fsspec.get_mapper("reference://arr", fo=fo),
                            mode="r")[:].tolist() == want
    assert zarrx.load("reference://", path="arr", storage_options={"fo": fo}).tolist() == want
    assert list(zarrx.open_group("reference://", mode="r",
                                 storage_options={"fo": fo}).array_keys()) == ["arr"]


def test_a_reference_whose_target_is_gone_is_an_error_naming_it(tmp_path):
    """Not fsspec's ReferenceNotReachable, and never the fill value: the reference says the
    chunk holds data."""
    fo, _ = _references(tmp_path, missing=True)
    a = zarrx.open_array("reference://", path="arr", mode="r", storage_options={"fo": fo})
    assert a[:4].tolist() == [0, 1, 2, 3]
    with pytest.raises(RemoteNotFoundError) as info:
        a[4]
    msg = str(info.value)
    assert "'arr/2'" in msg and "gone.bin" in msg and "is missing" in msg


_LOST = ("writes to a reference filesystem opened from a URL would change only the references "
         "it holds in memory, and be lost when the process ends; write the data to a store of "
         "its own, or pass a ReferenceFileSystem object you hold (its save_json keeps what was "
         "written)")


def test_a_reference_url_refuses_writes_that_would_be_lost(tmp_path):
    """Writes through ``reference://`` went into fsspec's references in memory only and were
    lost when the process ended, with nothing said: a writing mode is refused now, naming
    why, and mode "a" (the default of ``zarrx.open``) opens it to read."""
    fo, doc = _references(tmp_path)
    before = open(fo).read()
    for so in ({"fo": fo}, {"fo": doc}):
        store = make_store("reference://", "r", storage_options=so)
        assert store.read_only and store.read_only_reason == _LOST
        for mode in ("w", "w-", "r+"):
            with pytest.raises(ReadOnlyError) as info:
                zarrx.open_group("reference://", mode=mode, storage_options=so)
            assert str(info.value) == (f"open_group: FsspecStore('reference:', read_only=True) "
                                       f"is read-only, cannot open it with mode {mode!r}: "
                                       f"{_LOST}")
        g = zarrx.open_group("reference://", mode="a", storage_options=so)
        assert g["arr"][:].tolist() == [0, 1, 2, 3, 4]
        with pytest.raises(ReadOnlyError) as info:
            g.create_array("x", shape=(2,), dtype="i4")
        assert str(info.value) == ("group '/': cannot create an array: the group is open "
                                   "read-only, in FsspecStore('reference:', read_only=True): "
                                   + _LOST)
        with pytest.raises(ReadOnlyError, match=re.escape(f"the store is read-only: {_LOST}")):
            store.set("arr/0", b"x")
    assert open(fo).read() == before


def test_a_reference_filesystem_object_stays_writable_for_its_owner(tmp_path):
    """Whoever passes the filesystem holds it, and can save what was written."""
    _, doc = _references(tmp_path)
    fs = fsspec.filesystem("reference", fo=doc, skip_instance_cache=True)
    g = zarrx.open_group(fs, mode="a")
    assert not g.store.read_only and g.store.read_only_reason is None
    g.attrs["note"] = "kept"
    fs.save_json(str(tmp_path / "saved.json"))
    again = zarrx.open_group("reference://", mode="r",
                             storage_options={"fo": str(tmp_path / "saved.json")})
    assert again.attrs["note"] == "kept" and again["arr"][:].tolist() == [0, 1, 2, 3, 4]


# -- fsspec wrappers and archives ----------------------------------------------------------------

def test_a_dir_filesystem_over_a_local_filesystem(tmp_path):
    from fsspec.implementations.dirfs import DirFileSystem
    dfs = DirFileSystem(path=str(tmp_path), fs=fsspec.filesystem("file"))
    _arange_array(fsspec.FSMap("data.zarr", dfs))
    assert zarr.open_array(tmp_path / "data.zarr", mode="r")[:].tolist() == [0, 1, 2, 3, 4]
    assert zarrx.open_array(dfs, path="data.zarr", mode="r")[1:3].tolist() == [1, 2]
    assert zarrx.open_array(fsspec.FSMap("data.zarr", dfs), mode="r")[4] == 4


def test_a_zip_chain_is_read_only(tmp_path):
    """fsspec opens a zip archive to read: writing through it is refused before anything is
    read or written (zarr-python fails with a bare NotImplementedError)."""
    src = tmp_path / "src.zarr"
    _arange_array(src, zarr_format=2)
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name in sorted(os.listdir(src)):
            zf.write(src / name, name)
    before = archive.read_bytes()
    url = f"zip::file://{archive}"
    assert zarrx.open_array(url, mode="r")[:].tolist() == [0, 1, 2, 3, 4]
    assert zarrx.open(url)[:].tolist() == [0, 1, 2, 3, 4]        # mode "a" reads
    assert make_store(url, "r").read_only
    for mode in ("w", "w-", "r+"):
        with pytest.raises(ReadOnlyError, match="is read-only"):
            zarrx.open_array(url, mode=mode, shape=(2,), dtype="i4")
    with pytest.raises(ReadOnlyError):
        zarrx.create_group(url, path="g")
    assert archive.read_bytes() == before


# -- the copy tools take what the open functions take --------------------------------------------

def test_copy_and_convert_take_store_objects(tmp_path):
    _arange_array(tmp_path / "src.zarr")
    into = zarr.storage.MemoryStore()
    zarrx.copy(tmp_path / "src.zarr", into)
    assert zarr.open_array(into, mode="r")[:].tolist() == [0, 1, 2, 3, 4]
    d: dict = {}
    zarrx.copy(tmp_path / "src.zarr", d)
    assert "zarr.json" in d and zarrx.open_array(d, mode="r")[:].tolist() == [0, 1, 2, 3, 4]
    mapper = fsspec.get_mapper(f"file://{tmp_path}/src.zarr")
    zarrx.convert(mapper, tmp_path / "v2.zarr", zarr_format=2)
    assert zarr.open_array(tmp_path / "v2.zarr", mode="r")[:].tolist() == [0, 1, 2, 3, 4]
    report = zarrx.check(mapper)
    assert report.arrays == 1 and not report.findings
    with pytest.raises(ArgumentTypeError, match="found int"):
        zarrx.copy(tmp_path / "src.zarr", 3)


class _Counting(http.server.SimpleHTTPRequestHandler):
    seen: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.seen.append(self.path)
        super().do_GET()

    def do_HEAD(self):
        self.seen.append(self.path)
        super().do_HEAD()


def test_copy_to_a_web_address_is_refused_before_any_request(tmp_path):
    _arange_array(tmp_path / "src.zarr")
    _Counting.seen = []
    with serving(functools.partial(_Counting, directory=str(tmp_path))) as base:
        for tool in (zarrx.copy, zarrx.convert):
            with pytest.raises(ReadOnlyError, match="destination .* is read-only"):
                tool(tmp_path / "src.zarr", f"{base}/dst.zarr")
    assert _Counting.seen == []


def test_a_zarr_python_store_path_is_refused_naming_its_path(tmp_path):
    sp = zarr.storage.StorePath(zarr.storage.MemoryStore(), "sub")
    with pytest.raises(ArgumentTypeError, match=r"StorePath is not taken; pass its store and "
                                                r"its path instead \(store=\.\.\., path='sub'\)"):
        zarrx.open_group(sp, mode="a")
    assert isinstance(ArgumentTypeError("x"), ZarrError)


def test_credentials_in_a_reference_address_are_not_shown(tmp_path):
    """fsspec's message quotes the address of the references it cannot open, whole."""
    fo = "http://someone:pw-12345@127.0.0.1:9/refs.json"
    with pytest.raises(ZarrError) as info:
        zarrx.open_group("reference://", mode="r", storage_options={"fo": fo})
    assert "pw-12345" not in str(info.value) and "127.0.0.1:9/refs.json" in str(info.value)


def test_credentials_in_a_foreign_stores_repr_are_not_shown():
    """obstore's HTTPStore quotes its URL whole in its repr; the refusal of storage_options
    given with it (and with zarr-python's ObjectStore over it) does not."""
    obstore = pytest.importorskip("obstore")
    inner = obstore.store.HTTPStore.from_url("http://someone:pw-12345@127.0.0.1:9/x?sig=s-777")
    for store in (inner, zarr.storage.ObjectStore(inner)):
        with pytest.raises(ZarrError, match="storage_options apply to URLs") as info:
            zarrx.open(store, mode="r", storage_options={"anon": True})
        assert "pw-12345" not in str(info.value) and "s-777" not in str(info.value)
        assert "127.0.0.1:9/x" in str(info.value)


# -- a zip archive named by its path keeps the nodes a call does not replace ---------------------

def _archive_with_a_member(tmp_path):
    path = tmp_path / "data.zip"
    g = zarrx.open_group(path, mode="w")
    g.create_array("keep", shape=(2,), dtype="i4")[...] = [1, 2]
    g.store.close()
    return path


def _names(path):
    import gc
    gc.collect()                    # archives opened by a call are finished when collected
    return sorted(zipfile.ZipFile(path).namelist())


@pytest.mark.parametrize("call", [
    lambda p: zarrx.create_array(p, name="new", shape=(2,), dtype="i4"),
    lambda p: zarrx.create_group(p, path="new"),
    lambda p: zarrx.save(p, np.arange(2), path="new"),
    lambda p: zarrx.save_group(p, np.arange(2), path="new"),
    lambda p: zarrx.array(np.arange(2), store=p, path="new"),
    lambda p: zarrx.create(shape=(2,), store=p, path="new"),
    lambda p: zarrx.from_array(p, data=np.arange(2), name="new"),
    lambda p: zarrx.open_group(p, mode="w", path="new"),
    lambda p: zarrx.open_array(p, mode="w", path="new", shape=(2,), dtype="i4"),
], ids=["create_array", "create_group", "save", "save_group", "array", "create", "from_array",
        "open_group-w", "open_array-w"])
def test_creating_a_node_in_an_archive_keeps_the_others(tmp_path, call):
    """A zip archive opened to write is written anew: a node created below its root was the
    only one left in it (before: ``create_array("data.zip", name="new")`` dropped ``keep``)."""
    path = _archive_with_a_member(tmp_path)
    node = call(path)
    if node is not None:
        node.store.close()
    names = _names(path)
    assert "keep/zarr.json" in names and "new/zarr.json" in names
    assert zarrx.open_array(path, path="keep", mode="r")[:].tolist() == [1, 2]


def test_a_node_in_an_archive_is_refused_or_replaced_as_in_a_directory(tmp_path):
    path = _archive_with_a_member(tmp_path)
    with pytest.raises(ContainsGroupError):           # the root group is there
        zarrx.save(path, np.arange(2))
    with pytest.raises(ContainsArrayError):
        zarrx.create_array(path, name="keep", shape=(2,), dtype="i4")
    assert "keep/c/0" in _names(path)
    # replacing the root replaces the whole archive, as mode "w" did
    zarrx.save_array(path, np.arange(3), mode="w")
    assert _names(path) == ["c/0", "zarr.json"]
    assert zarrx.open_array(path, mode="r")[:].tolist() == [0, 1, 2]
