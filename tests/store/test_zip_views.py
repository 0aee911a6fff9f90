"""A writable ZipStore opened with mode "r" is read through a read-only view of itself over the
same open archive: the node's ``.store`` refuses writes with ReadOnlyError and says read_only
in its repr, the archive file is not opened again, entries the store writes later are read,
and closing the view leaves the archive to the store. Before, the writable store itself was
handed out (``node.store`` wrote into the archive). zarr-python 3.1 refuses to open a
writable ``ZipStore`` with mode "r" (its ZipStore has no ``with_read_only``)."""
from __future__ import annotations

import pickle

import pytest

import zarrx
from zarrx.store import ZipStore
from zarrx.store import zip as zip_module


@pytest.mark.parametrize("mode", ["w", "a"])
def test_a_writable_zip_store_opened_read_only_hands_out_a_view(tmp_path, mode, monkeypatch):
    path = tmp_path / "data.zip"
    if mode == "a":
        with ZipStore(path, mode="w") as first:
            zarrx.open_group(first, mode="w")
    store = ZipStore(path, mode=mode)
    zarrx.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i2")[...] = 7
    opened = []
    real = zip_module.open_archive
    monkeypatch.setattr(zip_module, "open_archive", lambda p: opened.append(p) or real(p))
    g = zarrx.open_group(store, mode="r")
    view = g.store
    assert view is not store and view.read_only and not store.read_only and opened == []
    assert repr(view) == f"ZipStore({str(path)!r}, mode={mode!r}, read_only=True)"
    with pytest.raises(zarrx.ReadOnlyError, match=r"read_only=True\): cannot write 'x'"):
        view.set("x", b"1")
    with pytest.raises(zarrx.ReadOnlyError):
        g["a"][...] = 1
    with pytest.raises(zarrx.ReadOnlyError, match="cannot open it with mode 'w'"):
        zarrx.open_group(view, mode="w")
    with pytest.raises(zarrx.StoreError, match="only a ZipStore opened in mode 'r'"):
        pickle.dumps(view)
    assert g["a"][...].tolist() == [7, 7, 7, 7]
    zarrx.create_array(store, name="b", shape=(2,), dtype="i1")[...] = 5   # written after
    assert g["b"][...].tolist() == [5, 5]
    assert view.with_read_only(False) is store and view.with_read_only(True).read_only
    view.close()                        # the archive is the store's to close
    assert g["a"][...].tolist() == [7, 7, 7, 7]
    store.close()
    with pytest.raises(zarrx.StoreError, match="read_only=True\\): the archive is closed"):
        view.get("a/zarr.json")
    with ZipStore(path, mode="r") as done:
        assert "b/zarr.json" in set(done.list_prefix("")) and done.get("x") is None


def test_the_view_keeps_the_store_writing_the_archive_alive(tmp_path):
    """The archive is finished once, by its store, whatever holds the view."""
    path = tmp_path / "data.zip"
    store = ZipStore(path, mode="w")
    zarrx.create_array(store, name="a", shape=(2,), dtype="i1")[...] = 3
    z = zarrx.open_array(store, path="a", mode="r")
    del store                           # only the view holds it now
    assert z[...].tolist() == [3, 3]
    assert not path.exists()            # not finished behind the reader's back
    z.store.with_read_only(False).close()
    assert zarrx.open_array(path, path="a", mode="r")[...].tolist() == [3, 3]


def test_an_archive_opened_to_read_has_no_writable_store(tmp_path):
    path = tmp_path / "data.zip"
    with ZipStore(path, mode="w") as w:
        zarrx.create_array(w, shape=(2,), dtype="i1")
    store = ZipStore(path, mode="r")
    assert store.with_read_only(True) is store
    assert zarrx.open_array(store, mode="r").store is store
    with pytest.raises(zarrx.StoreError, match="opened in mode 'r'; open it again in mode 'a'"):
        store.with_read_only(False)
    store.close()


def test_a_zip_store_subclass_opened_read_only_is_used_as_given(tmp_path):
    class Recording(ZipStore):
        def get(self, key, byte_range=None):  # type: ignore[no-untyped-def]
            self.__dict__.setdefault("asked", []).append(key)
            return super().get(key, byte_range)

    with Recording(tmp_path / "data.zip", mode="w") as store:
        zarrx.create_array(store, shape=(2,), dtype="i1")
        store.__dict__.pop("asked", None)
        z = zarrx.open_array(store, mode="r")
        assert z.store is store
        with pytest.raises(zarrx.ReadOnlyError):
            z[...] = 2


def test_a_view_made_before_the_first_write_of_mode_a_reads_on(tmp_path):
    """Mode "a" reads the archive in place until its first write copies it: the view follows
    the store to the copy."""
    path = tmp_path / "data.zip"
    with ZipStore(path, mode="w") as first:
        zarrx.create_array(first, name="x", shape=(2,), dtype="i1")[...] = 1
    with ZipStore(path, mode="a") as store:
        g = zarrx.open_group(store, mode="r")
        assert g["x"][...].tolist() == [1, 1]
        zarrx.create_array(store, name="y", shape=(2,), dtype="i1")[...] = 2
        assert g["x"][...].tolist() == [1, 1] and g["y"][...].tolist() == [2, 2]
    assert zarrx.open_array(path, path="y", mode="r")[...].tolist() == [2, 2]
