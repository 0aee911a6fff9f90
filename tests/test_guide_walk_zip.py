"""zarr-python's storage guide opens a zip archive from an open binary file object
(``ZipStore(open("data.zip", "rb"))``, an fsspec file, an obstore reader): zarrx reads one so
too, in mode ``r``, and refuses the writing modes, pickling and what is not a zip archive with
errors naming them."""
from __future__ import annotations

import io
import os
import pickle
import threading
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreArgumentError, StoreError
from zarrx.storage import ZipStore


def _archive(path, compression=zipfile.ZIP_STORED):
    with ZipStore(str(path), mode="w", compression=compression) as store:
        g = zarrx.create_group(store)
        a = g.create_array("a", shape=(6, 4), chunks=(2, 2), dtype="f8")
        a[...] = np.arange(24.0).reshape(6, 4)
        g.create_array("b", shape=(3,), dtype="i4")[...] = [7, 8, 9]
    return path


def test_the_guides_example_runs(tmp_path, monkeypatch):
    """As the guide writes it: the array read through the file object, which the store leaves
    open (the caller closes it)."""
    monkeypatch.chdir(tmp_path)
    store = zarrx.storage.ZipStore("data.zip", mode="w")
    zarrx.create_array(store=store, shape=(2,), dtype="float64")[:] = [1.5, 2.5]
    store.close()
    f = open("data.zip", mode="rb")
    zs = zarrx.storage.ZipStore(f)
    array = zarrx.open_array(store=zs, mode="r")
    assert array[:].tolist() == [1.5, 2.5]
    assert zs.read_only and zs.path is None
    assert repr(zs) == f"ZipStore({f!r}, mode='r')"
    zs.close()
    assert not f.closed
    f.close()


class _Reader:
    """A reader that is not an io object, as obstore's: reads return a memoryview, and a read
    past the end raises rather than returning fewer bytes."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos, self.reads = data, 0, 0

    def read(self, n=-1):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("read past the end")
        self.reads += 1
        self.pos += n
        return memoryview(self.data)[self.pos - n:self.pos]

    def seek(self, pos, whence=0):
        self.pos = [pos, self.pos + pos, len(self.data) + pos][whence]
        return self.pos

    def tell(self):
        return self.pos


@pytest.mark.parametrize("kind", ["file", "bytesio", "reader", "fsspec"])
@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_every_kind_of_file_object_reads_the_hierarchy(tmp_path, kind, compression):
    path = _archive(tmp_path / "h.zip", compression)
    data = path.read_bytes()
    if kind == "fsspec":
        fsspec = pytest.importorskip("fsspec")
        fileobj = fsspec.open(f"file://{path}", "rb").open()
    else:
        fileobj = {"file": lambda: open(path, "rb"), "bytesio": lambda: io.BytesIO(data),
                   "reader": lambda: _Reader(data)}[kind]()
    g = zarrx.open_group(ZipStore(fileobj), mode="r")
    assert sorted(g.keys()) == ["a", "b"]
    assert g["a"][1:5, 1:3].tolist() == np.arange(24.0).reshape(6, 4)[1:5, 1:3].tolist()
    assert g["b"][...].tolist() == [7, 8, 9]
    assert g.store.get("b/c/0", zarrx.storage.ByteRange(0, 1)) is not None
    if kind == "reader":
        assert fileobj.reads > 0
    fileobj.close() if hasattr(fileobj, "close") else None


def test_an_archive_zarr_python_wrote_reads_from_a_file_object(tmp_path):
    zarr = pytest.importorskip("zarr")
    path = tmp_path / "zp.zip"
    store = zarr.storage.ZipStore(path, mode="w")
    zarr.create_array(store, name="x", shape=(5,), chunks=(2,), dtype="i2")[...] = np.arange(5)
    store.close()
    with open(path, "rb") as f:
        assert zarrx.open_array(ZipStore(f), path="x", mode="r")[...].tolist() == [0, 1, 2, 3, 4]


def test_threads_reading_one_file_object_get_their_own_bytes(tmp_path):
    """Reads of a file object without a descriptor seek and read it: under the store's lock,
    so that reads on several threads at once each get their own entry's bytes."""
    path = _archive(tmp_path / "h.zip", zipfile.ZIP_DEFLATED)
    a = zarrx.open_array(ZipStore(io.BytesIO(path.read_bytes())), path="a", mode="r")
    want = np.arange(24.0).reshape(6, 4)
    bad = []

    def read(i):
        for _ in range(30):
            if a[i % 6, :].tolist() != want[i % 6].tolist():
                bad.append(i)

    threads = [threading.Thread(target=read, args=(i,)) for i in range(6)]
    with zarrx.config.set(threads=4):
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert bad == []


@pytest.mark.parametrize("mode", ["w", "a", "x"])
def test_a_writing_mode_is_refused_and_nothing_is_written(mode):
    buf = io.BytesIO()
    with pytest.raises(StoreArgumentError) as info:
        ZipStore(buf, mode=mode)
    assert isinstance(info.value, TypeError)          # as zarr-python refuses a reader
    assert str(info.value).startswith(f"ZipStore({buf!r}, mode={mode!r}): mode {mode!r}: a zip "
                                      f"archive in a file object is only read (mode 'r')")
    assert buf.getvalue() == b""


def test_what_is_not_an_archive_is_refused_naming_it():
    buf = io.BytesIO(b"not a zip archive, only text")
    with pytest.raises(StoreError, match=r"cannot open in mode 'r': no end of central "
                                         r"directory record"):
        ZipStore(buf)
    with pytest.raises(StoreError, match="expected the path of a zip archive or an open binary "
                                         "file"):
        ZipStore(object())


def test_pickling_is_refused_and_identity_is_the_file_objects(tmp_path):
    data = _archive(tmp_path / "h.zip").read_bytes()
    buf = io.BytesIO(data)
    store = ZipStore(buf)
    with pytest.raises(StoreArgumentError, match="cannot be pickled"):
        pickle.dumps(store)
    assert store == ZipStore(buf) and hash(store) == hash(ZipStore(buf))
    assert store != ZipStore(io.BytesIO(data))
    assert store != ZipStore(str(tmp_path / "h.zip"))
    assert os.path.exists(tmp_path / "h.zip")
