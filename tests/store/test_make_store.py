"""make_store: what a user passes -> a Store."""
import pathlib

import pytest

from zarrx.errors import ArgumentTypeError, ReadOnlyError, StoreError
from zarrx.store import LocalStore, MemoryStore, ZipStore, make_store


@pytest.mark.parametrize("mode, read_only", [("r", True), ("r+", False), ("a", False),
                                             ("w", False), ("w-", False)])
def test_paths_are_local_stores(tmp_path, mode, read_only):
    for obj in (str(tmp_path / "d"), tmp_path / "d"):
        s = make_store(obj, mode)
        assert isinstance(s, LocalStore) and s.read_only == read_only
        assert s.root == tmp_path / "d"


def test_file_url_is_a_local_path(tmp_path):
    s = make_store(f"file://{tmp_path}", "r")
    assert s == LocalStore(tmp_path) and s.read_only


def test_zip_paths_are_zip_stores(tmp_path):
    with make_store(tmp_path / "a.zip", "w") as s:
        assert isinstance(s, ZipStore) and s.mode == "w"
        s.set("k", b"v")
    with make_store(str(tmp_path / "a.zip"), "r") as s:
        assert s.read_only and s.get("k") == b"v"
    with make_store(tmp_path / "a.zip", "a") as s:
        assert s.mode == "a"
    with pytest.raises(StoreError, match="cannot open in mode 'x'"):
        make_store(tmp_path / "a.zip", "w-")
    with pytest.raises(StoreError) as info:
        make_store(tmp_path / "b.zip", "r+")
    assert str(info.value) == (f"make_store: {str(tmp_path / 'b.zip')!r}: "
                               "mode 'r+' needs an existing archive")
    assert not (tmp_path / "b.zip").exists()


def test_stores_pass_through():
    m = MemoryStore()
    assert make_store(m, "w") is m
    ro = MemoryStore(read_only=True)
    assert make_store(ro, "r") is ro
    with pytest.raises(ReadOnlyError) as info:
        make_store(ro, "a")
    assert str(info.value) == f"make_store: {ro!r} is read-only, cannot open it with mode 'a'"


_KINDS = ("a path or URL, a zarrx Store, a dict, an fsspec mapper, an obstore store or a "
          "zarr-python store")


@pytest.mark.parametrize("obj, mode, error, message", [
    (42, "r", ArgumentTypeError, f"store: expected {_KINDS}, found int 42"),
    ({}, "r", ArgumentTypeError, f"store: expected {_KINDS}, found dict {{}}"),
    (b"/tmp/x", "r", ArgumentTypeError, f"store: expected {_KINDS}, found bytes b'/tmp/x'"),
    ("nosuch://bucket/x", "r", StoreError, "FsspecStore('nosuch://bucket/x'): cannot open the "
                                           "filesystem: ValueError: Protocol not known: nosuch"),
    ("x", "rw", StoreError, "make_store: mode: expected one of r, r+, a, w, w-, found 'rw'"),
], ids=["int", "dict", "bytes", "unknown-scheme", "bad-mode"])
def test_refusals(obj, mode, error, message):
    with pytest.raises(error) as info:
        make_store(obj, mode)
    assert str(info.value) == message


def test_pathlike_is_accepted(tmp_path):
    class P:
        def __fspath__(self):
            return str(tmp_path)
    assert make_store(P(), "r") == LocalStore(pathlib.Path(tmp_path), read_only=True)


@pytest.mark.parametrize("path, found", [
    ("", "an empty path (use '.' for the current directory)"),
    ("file://", "an empty path (use '.' for the current directory)"),
    ("d\x00e", "a path holding a NUL character"),
], ids=["empty", "empty-file-url", "nul"])
@pytest.mark.parametrize("mode", ["r", "a", "w"])
def test_an_empty_path_is_refused_not_taken_as_the_current_directory(tmp_path, monkeypatch,
                                                                     path, found, mode):
    """An empty path (a typo, an unset variable) must not open the current directory: mode
    "w" would delete everything in it."""
    import zarrx
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep").write_bytes(b"x")
    with pytest.raises(StoreError) as info:
        zarrx.open_group(path, mode=mode)
    assert str(info.value) == f"open_group: store: expected a path, found {found}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]


@pytest.mark.parametrize("url", ["file://{}", "FILE://{}"])
def test_a_local_store_takes_a_file_url_as_its_path(tmp_path, monkeypatch, url):
    """LocalStore("file:///data/a.zarr") is /data/a.zarr, as zarrx.open takes the URL; it is not
    a folder 'file:' below the current directory."""
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "a.zarr"
    store = LocalStore(url.format(root))
    assert store.root == root and store == LocalStore(root)
    import zarrx
    zarrx.create_array(store, shape=(2,), dtype="i1")[:] = 7
    assert zarrx.open_array(str(root), mode="r")[:].tolist() == [7, 7]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.zarr"]
    with pytest.raises(StoreError, match=r"found an empty path"):
        LocalStore("file://")
