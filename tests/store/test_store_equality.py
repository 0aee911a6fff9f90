"""Store equality is zarr-python's: the same cases compare equal (or not) in both libraries,
so arrays and groups opened through equal stores compare equal too."""
from __future__ import annotations

import obstore.store
import pytest
import zarr.storage

import zarrx
import zarrx.storage as xs
from zarrx.store.zarrpy import ZarrPythonStore


def _pairs(tmp_path):
    """name -> (make a pair with zarr-python, make the same pair with zarrx)."""
    d = str(tmp_path)
    ob = obstore.store.LocalStore(d)
    return {
        "local-read-only": (lambda s: (s.LocalStore(d), s.LocalStore(d, read_only=True))),
        "local-other-root": (lambda s: (s.LocalStore(d), s.LocalStore(d + "/sub"))),
        "memory-empty": (lambda s: (s.MemoryStore(), s.MemoryStore())),
        "memory-same-content": (lambda s: (s.MemoryStore({"k": b"v" * 100_000}),
                                           s.MemoryStore({"k": b"v" * 100_000}))),
        "memory-other-content": (lambda s: (s.MemoryStore({"k": b"v"}),
                                            s.MemoryStore({"k": b"w"}))),
        "memory-read-only": (lambda s: (s.MemoryStore(), s.MemoryStore(read_only=True))),
        "fsspec-same-url": (lambda s: (s.FsspecStore.from_url("memory://eq"),
                                       s.FsspecStore.from_url("memory://eq"))),
        "fsspec-read-only": (lambda s: (s.FsspecStore.from_url("memory://eq"),
                                        s.FsspecStore.from_url("memory://eq", read_only=True))),
        "fsspec-other-path": (lambda s: (s.FsspecStore.from_url("memory://eq"),
                                         s.FsspecStore.from_url("memory://eq/sub"))),
        "obstore-same-config": (lambda s: (s.ObjectStore(obstore.store.LocalStore(d)),
                                           s.ObjectStore(obstore.store.LocalStore(d)))),
        "obstore-same-object": (lambda s: (s.ObjectStore(ob), s.ObjectStore(ob))),
        "obstore-read-only": (lambda s: (s.ObjectStore(ob), s.ObjectStore(ob, read_only=True))),
        "obstore-memory": (lambda s: (s.ObjectStore(obstore.store.MemoryStore()),
                                      s.ObjectStore(obstore.store.MemoryStore()))),
    }


CASES = ["local-read-only", "local-other-root", "memory-empty", "memory-same-content",
         "memory-other-content", "memory-read-only", "fsspec-same-url",
         "fsspec-read-only", "fsspec-other-path", "obstore-same-config", "obstore-same-object",
         "obstore-read-only", "obstore-memory"]


@pytest.mark.parametrize("case", CASES)
def test_equal_as_in_zarr_python(tmp_path, case) -> None:
    make = _pairs(tmp_path)[case]
    za, zb = make(zarr.storage)
    want = za == zb
    xa, xb = make(xs)
    assert (xa == xb) is want and (xb == xa) is want
    if want:
        assert hash(xa) == hash(xb)


def test_zip_stores_of_one_archive_are_equal_whatever_their_mode(tmp_path) -> None:
    path = str(tmp_path / "a.zip")
    with xs.ZipStore(path, mode="w") as w:
        w.set("k", b"v")
    assert zarr.storage.ZipStore(path, mode="r") == zarr.storage.ZipStore(path, mode="a")
    with xs.ZipStore(path, mode="r") as r, xs.ZipStore(path, mode="a") as a:
        assert r == a and a == r and hash(r) == hash(a)
        with xs.ZipStore(str(tmp_path / "b.zip"), mode="w") as other:
            assert r != other


def test_arrays_through_equal_stores_are_equal(tmp_path) -> None:
    zarrx.create_array(str(tmp_path), shape=(2,), dtype="i1")
    a = zarrx.open_array(xs.LocalStore(tmp_path), mode="r")
    b = zarrx.open_array(xs.LocalStore(tmp_path, read_only=True), mode="r")
    assert a == b
    m = zarr.storage.MemoryStore()
    zarr.create_array(m, shape=(2,), dtype="i1")
    assert zarrx.open_array(ZarrPythonStore(m)) == zarrx.open_array(ZarrPythonStore(m))


def test_dict_stores_equal_by_content() -> None:
    """A dict passed as a store compares as zarr-python's MemoryStore over it does."""
    d: dict = {}
    assert xs.DictStore(d) == xs.DictStore(d)
    assert xs.DictStore({"k": b"v"}) == xs.DictStore({"k": b"v"})
    assert xs.DictStore({"k": b"v"}) != xs.DictStore({"k": b"w"})
