"""Configuration and stores on zarr-python and on zarrx: zarr-python's configuration keys and
aliases, read-only stores, ``with_read_only``, fsspec stores and storage options."""
from __future__ import annotations

import pytest

import zarrx

zarr = pytest.importorskip("zarr")

from parity_helpers import both, both_errors  # noqa: E402
from parity_helpers import _quiet  # noqa: E402, F401  (an autouse fixture)


def test_config_set_with_zarr_python_keys():
    def case(lib):
        out = []
        with lib.config.set({"array.write_empty_chunks": True}):
            a = lib.create_array({}, shape=(4,), dtype="i4", chunks=(2,))
            a[...] = 0
            out.append((lib.config.get("array.write_empty_chunks"), a.nchunks_initialized))
        b = lib.create_array({}, shape=(4,), dtype="i4", chunks=(2,))
        b[...] = 0
        out.append((lib.config.get("array.write_empty_chunks"), b.nchunks_initialized))
        return out
    got = both(case)
    assert got["zarrx"] == got["zarr"] == [(True, 2), (False, 0)]


def test_config_aliases_and_refusals():
    with zarrx.config.set({"threading.max_workers": 1}):
        assert zarrx.config.get("threads") == zarrx.config.get("async.concurrency") == 1
    with zarrx.config.set({"array": {"write_empty_chunks": True}}, consistency="none"):
        assert zarrx.config.write_empty_chunks is True and zarrx.config.consistency == "none"
    assert zarrx.config.write_empty_chunks is False and zarrx.config.consistency == "strict"
    with zarrx.config.set(threads=2):                    # the keyword form keeps working
        assert zarrx.config.threads == 2
    with pytest.raises(ValueError, match="'json_indent' is a zarr-python setting zarrx "
                                         "has no counterpart for"):
        zarrx.config.set({"json_indent": 2})
    with pytest.raises(ValueError, match="'threading.max_workers' and 'async.concurrency' both "
                                         "set 'threads', to 2 and 3"):
        zarrx.config.set({"threading.max_workers": 2, "async.concurrency": 3})
    assert zarrx.config.get("nope", 5) == 5


def test_leaving_a_config_block_restores_only_the_settings_it_changed():
    """A setting changed inside a ``with config.set(...)`` block by a plain ``set`` of another
    key, or by a block that another thread leaves later, keeps its value when the block ends
    (before, leaving a block put back every setting as it was when the block began)."""
    def case(lib):
        out = []
        before = lib.config.get("threading.max_workers")    # whatever earlier tests left
        workers = 7 if before != 7 else 5
        with lib.config.set({"threading.max_workers": workers}):
            lib.config.set({"array.write_empty_chunks": True})
        out.append(lib.config.get("array.write_empty_chunks"))
        lib.config.set({"array.write_empty_chunks": False})
        first = lib.config.set({"threading.max_workers": workers})
        first.__enter__()
        second = lib.config.set({"array.write_empty_chunks": True})
        second.__enter__()
        first.__exit__(None, None, None)                # left first, as by another thread
        out.append(lib.config.get("array.write_empty_chunks"))
        second.__exit__(None, None, None)
        out.append(lib.config.get("array.write_empty_chunks"))
        out.append(lib.config.get("threading.max_workers") == before)
        return out
    got = both(case)
    assert got["zarrx"] == got["zarr"] == [True, True, False, True]


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_read_only_zarr_python_stores_open_read_only_and_refuse_writing_modes(tmp_path, kind):
    """As zarr-python: open and open_array default to mode r on a read-only store; mode a on it
    is refused (ValueError)."""
    def store():
        if kind == "local":
            return zarr.storage.LocalStore(tmp_path, read_only=True)
        return zarr.storage.MemoryStore(data, read_only=True)
    data: dict = {}
    zarr.create_array(zarr.storage.MemoryStore(data) if kind == "memory" else tmp_path,
                      shape=(2,), dtype="i4", fill_value=3)
    got = both(lambda lib: [(n.read_only, n[...].tolist()) for n in (
        lib.open(store()), lib.open_array(store()))])
    assert got["zarrx"] == got["zarr"] == [(True, [3, 3])] * 2
    got = both(lambda lib: lib.open(store(), mode="a"))
    assert isinstance(got["zarr"], ValueError) and isinstance(got["zarrx"], zarrx.ReadOnlyError)
    assert "is read-only, cannot open it with mode 'a'" in str(got["zarrx"])


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_with_read_only_gives_a_store_over_the_same_objects(tmp_path, kind):
    def case(lib):
        root = tmp_path / lib.__name__
        store = (lib.storage.MemoryStore() if kind == "memory"
                 else lib.storage.LocalStore(str(root)))
        ro = store.with_read_only(True)
        a = lib.create_array(store, shape=(2,), dtype="i4")
        a[...] = 5                                     # written after the copy was made
        back = lib.open_array(ro, mode="r")
        refused = both_errors(lambda: lib.create_group(ro, path="x"))
        writable = ro.with_read_only()
        return (type(ro).__name__, ro.read_only, store.read_only, back[...].tolist(),
                back.read_only, writable.read_only, refused)
    got = both(case)
    assert got["zarr"][:6] == got["zarrx"][:6] == (
        "MemoryStore" if kind == "memory" else "LocalStore", True, False, [5, 5], True, False)
    assert got["zarr"][6] and got["zarr"][6] <= got["zarrx"][6]


def test_with_read_only_of_a_zip_store_is_a_view_where_zarr_python_has_none(tmp_path):
    """zarr-python 3.1's ZipStore has no with_read_only (so a writable one opened with mode
    "r" is refused); zarrx's reads the same open archive (tests/store/test_zip_views.py)."""
    with pytest.raises(NotImplementedError):
        zarr.storage.ZipStore(str(tmp_path / "z.zip"), mode="w").with_read_only(True)
    with zarrx.storage.ZipStore(str(tmp_path / "a.zip"), mode="w") as store:
        view = store.with_read_only(True)
        assert view.read_only and not store.read_only and view.with_read_only(False) is store


def test_storage_fsspec_store_from_url_and_from_mapper():
    """zarr-python's spellings of a store over an fsspec filesystem."""
    fsspec = pytest.importorskip("fsspec")

    def roundtrip(lib):
        url = f"memory://parity-from-url-{lib.__name__}"
        a = lib.create_array(lib.storage.FsspecStore.from_url(url), shape=(3,), dtype="i4")
        a[...] = [1, 2, 3]
        mapper = fsspec.get_mapper(url)
        again = lib.open_array(lib.storage.FsspecStore.from_mapper(mapper, read_only=True))
        out = again.read_only, again[...].tolist()
        fsspec.filesystem("memory").rm(url.split("://")[1], recursive=True)
        return out
    got = both(roundtrip)
    assert got["zarrx"] == got["zarr"] == (True, [1, 2, 3])
    assert zarrx.storage.ObjectStore is zarrx.store.remote.objectstore.ObjectStore


def test_group_takes_storage_options():
    got = both(lambda lib: lib.group("memory://parity-group-options", storage_options={},
                                     attributes={"a": 1}).attrs["a"])
    assert got == {"zarr": 1, "zarrx": 1}
    with pytest.raises(zarrx.ArgumentError, match="^storage_options: given without a store URL$"):
        zarrx.group(storage_options={"anon": True})
