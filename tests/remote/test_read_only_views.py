"""An ObjectStore or FsspecStore opened with mode "r" is read through a read-only view of
itself, as zarr-python 3.1 opens its FsspecStore and ObjectStore (``store.with_read_only(True)``
over the same filesystem or obstore store): the node's ``.store`` refuses writes with
ReadOnlyError and says read_only in its repr, shares the store's client (no new connection or
HTTP client is made) and its request counters, and reads what the store writes later. Before,
the writable store itself was handed out: ``node.store`` wrote."""
from __future__ import annotations

import pytest

import zarrx

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")
pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402
from zarrx.store.remote import objectstore as objectstore_module  # noqa: E402


def _client(store):
    return store._client if isinstance(store, ObjectStore) else store.fs


def _make(kind, s3):
    url = s3.url()
    if kind == "obstore":
        return ObjectStore(url, storage_options=s3.options)
    return FsspecStore(url, storage_options=s3.fsspec_options)


@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_a_remote_store_opened_read_only_hands_out_a_view_over_its_client(s3_server, kind,
                                                                          monkeypatch):
    store = _make(kind, s3_server)
    zarrx.create_array(store, name="a", shape=(4,), chunks=(2,), dtype="i2")[...] = 7
    made = []
    real = objectstore_module._from_url
    monkeypatch.setattr(objectstore_module, "_from_url",
                        lambda *a, **k: made.append(a) or real(*a, **k))
    g = zarrx.open_group(store, mode="r")
    view = g.store
    assert view is not store and view.read_only and not store.read_only
    assert _client(view) is _client(store) and made == []      # no new client
    assert repr(view) == repr(store)[:-1] + ", read_only=True)"
    with pytest.raises(zarrx.ReadOnlyError, match=r"read_only=True\): cannot write 'x'"):
        view.set("x", b"1")
    with pytest.raises(zarrx.ReadOnlyError):
        g["a"][...] = 1
    with pytest.raises(zarrx.ReadOnlyError, match="cannot open it with mode 'w'"):
        zarrx.open_group(view, mode="w")
    assert store.get("x") is None
    before = store.requests["GET"]
    assert g["a"][...].tolist() == [7, 7, 7, 7]
    assert store.requests["GET"] > before and store.bytes_read == view.bytes_read > 0
    zarrx.open_array(store, path="a", mode="r+")[...] = 3      # the writer's change: seen
    assert g["a"][...].tolist() == [3, 3, 3, 3]
    assert view.with_read_only(False).read_only is False


@pytest.mark.parametrize("kind", ["obstore", "fsspec"])
def test_a_remote_store_subclass_opened_read_only_is_used_as_given(s3_server, kind):
    base = ObjectStore if kind == "obstore" else FsspecStore

    class Recording(base):  # type: ignore[misc, valid-type]
        def get_many_sized(self, requests, arena=None):  # type: ignore[no-untyped-def]
            requests = list(requests)
            self.__dict__.setdefault("asked", []).extend(r[0] for r in requests)
            return super().get_many_sized(requests, arena)

    url = s3_server.url()
    opts = s3_server.options if kind == "obstore" else s3_server.fsspec_options
    store = Recording(url, storage_options=opts)
    zarrx.create_array(store, shape=(2,), dtype="i1")
    store.__dict__.pop("asked", None)
    z = zarrx.open_array(store, mode="r")
    assert z.store is store and "zarr.json" in store.__dict__["asked"]
    with pytest.raises(zarrx.ReadOnlyError):
        z[...] = 2


def test_memory_backed_remote_stores_give_views_too():
    obs = pytest.importorskip("obstore.store")
    import fsspec
    for store in (ObjectStore(obs.MemoryStore()), FsspecStore(fsspec.filesystem("memory"),
                                                              "/views-test")):
        zarrx.create_array(store, shape=(2,), dtype="i1")[...] = 1
        z = zarrx.open_array(store, mode="r")
        assert z.store.read_only and _client(z.store) is _client(store)
        assert z[...].tolist() == [1, 1]
        with pytest.raises(zarrx.ReadOnlyError):
            z.store.delete("zarr.json")
        assert store.get("zarr.json") is not None


def test_an_http_store_has_no_writable_view():
    store = ObjectStore("https://example.org/data.zarr")
    assert store.with_read_only(True).read_only
    with pytest.raises(zarrx.StoreError, match="an HTTP server is read-only"):
        store.with_read_only(False)
    web = FsspecStore("https://example.org/data.zarr")
    with pytest.raises(zarrx.StoreError, match="an HTTP server is read-only"):
        web.with_read_only(False)
