"""ZipStore: the store contract (no overwrite, no delete), reopening, refusals, interop."""
import os
import pickle
import re
import zipfile

import numpy as np
import pytest
from store_contract import TREE, StoreContract, fill

import zarrx
from zarrx.errors import ReadOnlyError, StoreError
from zarrx.store import ByteRange, ZipStore


class TestZipStore(StoreContract):
    snapshot_pins_version = True

    supports_delete = False
    supports_overwrite = False

    def make_store(self, tmp_path):
        return ZipStore(tmp_path / "data.zip", mode="w")

    def reopen_read_only(self, store, tmp_path):
        store.close()
        return ZipStore(tmp_path / "data.zip", mode="r")


class TestZipStoreAppend(TestZipStore):
    large_size = 2**20

    def make_store(self, tmp_path):
        return ZipStore(tmp_path / "data.zip", mode="a")


@pytest.fixture
def path(tmp_path):
    return tmp_path / "data.zip"


def test_reopen_reads_everything(path):
    with ZipStore(path, mode="w") as s:
        fill(s)
        s.set("big", bytes(range(256)) * 4096)
    r = ZipStore(path)
    assert r.read_only and r.mode == "r"
    assert sorted(r.list_prefix("")) == sorted([*TREE, "big"])
    assert {k: r.get(k) for k in TREE} == TREE
    assert r.get("big", ByteRange.slice(1000, 10)) == (bytes(range(256)) * 4096)[1000:1010]
    assert r.get("big", ByteRange.last(3)) == bytes([253, 254, 255])
    assert r.list_dir("c/") == ([], ["0", "1", "10"])
    with zipfile.ZipFile(path) as zf:                   # entries stored uncompressed
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
        assert zf.testzip() is None
    r.close()


def test_duplicate_entry_is_refused(path):
    s = ZipStore(path, mode="w")
    s.set("c/0", b"first")
    with pytest.raises(StoreError) as info:
        s.set("c/0", b"second")
    assert str(info.value) == (f"ZipStore({str(path)!r}, mode='w'): entry 'c/0' already exists; "
                               "zip entries cannot be overwritten (write the archive anew to "
                               "change it)")
    assert s.get("c/0") == b"first"
    s.close()
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["c/0"]


def test_duplicate_entry_is_refused_in_append_mode(path):
    with ZipStore(path, mode="w") as s:
        s.set("k", b"1")
    with ZipStore(path, mode="a") as s:
        with pytest.raises(StoreError, match="entry 'k' already exists"):
            s.set("k", b"2")
        s.set("k2", b"2")
    with ZipStore(path) as s:
        assert sorted(s.list_prefix("")) == ["k", "k2"] and s.get("k") == b"1"


def test_delete_of_existing_entry_is_refused(path):
    with ZipStore(path, mode="w") as s:
        s.set("k", b"1")
        s.delete("missing")                             # a missing key is a no-op
        with pytest.raises(StoreError) as info:
            s.delete("k")
        assert str(info.value) == (f"{s!r}: cannot delete entry 'k': zip entries cannot be "
                                   "removed (write the archive anew without it)")
        with pytest.raises(StoreError, match="cannot delete entry 'k'"):
            s.delete_prefix("")
        assert s.get("k") == b"1"


def test_read_only_refusal_message(path):
    ZipStore(path, mode="w").close()
    with ZipStore(path) as s, pytest.raises(ReadOnlyError) as info:
        s.set("k", b"v")
    assert str(info.value) == (f"ZipStore({str(path)!r}, mode='r'): cannot write 'k': "
                               "the store is read-only")


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
                         ids=["deflated", "bzip2", "lzma"])
def test_compressed_entries_and_ranges(path, method):
    data = np.arange(5000, dtype="<i4").tobytes()
    with ZipStore(path, mode="w", compression=method) as s:
        s.set("z", data)
        s.set("empty", b"")
    with ZipStore(path) as s:
        assert s.get("z") == data
        assert s.get("z", ByteRange.slice(400, 8)) == data[400:408]
        assert s.get("z", ByteRange.last(5)) == data[-5:]
        assert s.get("empty") == b""
    with ZipStore(path) as s:                    # a range first: the whole entry is checked
        assert s.get("z", ByteRange.slice(19000, 10)) == data[19000:19010]
    with zipfile.ZipFile(path) as zf:
        assert zf.getinfo("z").compress_type == method
        assert zf.read("z") == data


@pytest.mark.parametrize("method, name", [(zipfile.ZIP_BZIP2, "bzip2"), (zipfile.ZIP_LZMA, "LZMA")])
def test_bzip2_and_lzma_archives_of_zarr_python_read_alike(tmp_path, method, name):
    """zarr-python reads (and writes) any compression zipfile knows; so does ZipStore."""
    zarr = pytest.importorskip("zarr")
    path = str(tmp_path / "a.zip")
    zs = zarr.storage.ZipStore(path, mode="w", compression=method)
    a = zarr.create_array(zs, shape=(40,), chunks=(10,), dtype="i4", zarr_format=3)
    a[:] = np.arange(40)
    zs.close()
    assert zarrx.open_array(path, mode="r")[:].tolist() == list(range(40))
    # a damaged stream is a StoreError naming the entry
    data = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("c/1")
    data[info.header_offset + 30 + len("c/1") + 12] ^= 0xFF
    open(path, "wb").write(data)
    with ZipStore(path) as s:
        with pytest.raises(StoreError, match=re.escape(f"entry 'c/1': corrupt {name} data")):
            s.get("c/1")


def test_closed_store_refuses_use(path):
    s = ZipStore(path, mode="w")
    s.close()
    msg = f"ZipStore({str(path)!r}, mode='w'): the archive is closed"
    for call in (lambda: s.get("k"), lambda: s.set("k", b"v"), lambda: list(s.list_prefix(""))):
        with pytest.raises(StoreError) as info:
            call()
        assert str(info.value) == msg


def test_discard_keeps_the_archive_as_it_was(path):
    with ZipStore(path, mode="w") as s:
        s.set("k", b"v")
    for mode in ("w", "a"):
        s = ZipStore(path, mode=mode)
        s.set("other", b"x")
        s.discard()
        s.close()                           # after a discard, nothing is left to finish
        with ZipStore(path) as r:
            assert list(r.list_prefix("")) == ["k"]
    s = ZipStore(path.with_name("new.zip"), mode="w")
    s.discard()
    assert not path.with_name("new.zip").exists()
    assert [p.name for p in path.parent.iterdir()] == ["data.zip"]


def test_bad_mode_and_missing_file(path):
    with pytest.raises(StoreError) as info:
        ZipStore(path, mode="rw")
    assert str(info.value) == (f"ZipStore({str(path)!r}, mode='rw'): mode: expected one of "
                               "r, w, a, x, found 'rw'")
    with pytest.raises(StoreError, match="cannot open in mode 'r'"):
        ZipStore(path)
    path.write_bytes(b"not a zip file")
    with pytest.raises(StoreError, match="cannot open in mode 'r': no end of central directory "
                                         "record .* starts with b'not a zi': not a zip archive"):
        ZipStore(path)


@pytest.mark.parametrize("key", ["../evil", "/abs", "a//b", "a\\b", "a/./b"],
                         ids=["dotdot", "absolute", "empty-segment", "backslash", "dot"])
def test_hostile_entry_names_are_refused(path, key):
    with ZipStore(path, mode="w") as s:
        with pytest.raises(StoreError, match="^ZipStore.*: key "):
            s.set(key, b"x")
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == []


def test_pickle(path):
    with ZipStore(path, mode="w") as s:
        s.set("k", b"v")
        with pytest.raises(StoreError, match="only a ZipStore opened in mode 'r' can be pickled"):
            pickle.dumps(s)
    with ZipStore(path) as s:
        t = pickle.loads(pickle.dumps(s))
        assert t.get("k") == b"v"
        t.close()


def test_zarr_python_reads_and_writes_our_archives(tmp_path):
    zarr = pytest.importorskip("zarr")
    theirs = tmp_path / "theirs.zip"
    a = np.arange(60, dtype="<i2").reshape(6, 10)
    zs = zarr.storage.ZipStore(str(theirs), mode="w")
    zarr.create_array(zs, shape=a.shape, dtype=a.dtype, chunks=(4, 4))[:] = a
    zs.close()
    ours = tmp_path / "ours.zip"
    with ZipStore(theirs) as src, ZipStore(ours, mode="w") as dst:
        keys = sorted(src.list_prefix(""))
        assert "zarr.json" in keys and "c/1/2" in keys
        for k in keys:
            dst.set(k, src.get(k))
    zs = zarr.storage.ZipStore(str(ours), mode="r")
    np.testing.assert_array_equal(zarr.open_array(zs, mode="r")[:], a)
    zs.close()


def test_unclosed_zip_is_finished_at_exit(tmp_path):
    import subprocess
    import sys
    import textwrap
    path = tmp_path / "a.zip"
    code = textwrap.dedent(f"""
        import numpy as np, zarrx
        z = zarrx.open({str(path)!r}, mode="w", shape=(6,), dtype="i2", chunks=(3,))
        z[...] = np.arange(6, dtype="i2")
    """)
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(tmp_path),
                   env={**__import__("os").environ,
                        "PYTHONPATH": str(__import__("pathlib").Path(__file__).parents[2])})
    import numpy as np
    import zarrx
    np.testing.assert_array_equal(zarrx.open_array(str(path), mode="r")[...], np.arange(6))


def _add_array(path: str, name: str, bar, delay: float) -> None:
    import time

    zs = ZipStore(path, mode="a")
    bar.wait()
    zarrx.open_group(zs, mode="a").create_array(name, shape=(4,), chunks=(4,), dtype="i4")[:] = 1
    time.sleep(delay)
    try:
        zs.close()
    except StoreError as exc:
        assert "another writer finished first" in str(exc)
        raise SystemExit(3) from None


@pytest.mark.slow
def test_two_sessions_adding_to_one_archive_at_once_never_drop_one_silently(tmp_path):
    """Two processes open one archive in mode "a" at once and each adds an array: the first to
    close wins, the second's close raises StoreError and leaves the first's archive."""
    import multiprocessing as mp

    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zarrx.create_group(zs)
    ctx = mp.get_context("spawn")
    bar = ctx.Barrier(2)
    procs = [ctx.Process(target=_add_array, args=(path, n, bar, d))
             for n, d in (("x", 0.5), ("y", 0.0))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [3, 0]
    with ZipStore(path) as zs:
        assert sorted(zarrx.open_group(zs, mode="r").keys()) == ["y"]
    assert sorted(os.listdir(tmp_path)) == ["h.zip"]      # no temporary archive left


def test_a_session_adding_to_an_archive_replaced_meanwhile_refuses_to_close(tmp_path):
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zs.set("a", b"1")
    first = ZipStore(path, mode="a")
    first.set("b", b"2")
    with ZipStore(path, mode="a") as other:
        other.set("c", b"3")
    with pytest.raises(StoreError, match="another writer finished first"):
        first.close()
    with ZipStore(path) as zs:
        assert sorted(zs.list_prefix("")) == ["a", "c"]
    # a session that started when there was no archive refuses to replace one made meanwhile
    path2 = str(tmp_path / "new.zip")
    late = ZipStore(path2, mode="a")
    late.set("x", b"1")
    with ZipStore(path2, mode="a") as other:
        other.set("y", b"2")
    with pytest.raises(StoreError, match="created at the path meanwhile"):
        late.close()
    with ZipStore(path2) as zs:
        assert list(zs.list_prefix("")) == ["y"]
    # one session at a time still adds
    with ZipStore(path, mode="a") as zs:
        zs.set("d", b"4")
    with ZipStore(path) as zs:
        assert sorted(zs.list_prefix("")) == ["a", "c", "d"]


def _temps(folder):
    return sorted(n for n in os.listdir(folder) if ".zarrx-tmp-" in n)


def test_read_only_and_allow_zip64_as_zarr_python_names_them(tmp_path):
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w", read_only=False, allowZip64=False) as zs:
        assert not zs.read_only
        zs.set("a", b"1")
    with ZipStore(path, read_only=True) as zs:
        assert zs.read_only and zs.get("a") == b"1"
    for mode, read_only in (("w", True), ("a", True), ("r", False)):
        with pytest.raises(StoreError, match=re.escape(
                f"read_only={read_only} does not fit mode {mode!r}: mode 'r' reads only, "
                f"modes 'w', 'x' and 'a' write")):
            ZipStore(path, mode=mode, read_only=read_only)
    assert _temps(tmp_path) == []


@pytest.mark.parametrize("bad, found", [("", "an empty path"), (None, "a NoneType"),
                                        (5, "a int"), (b"a.zip", "a bytes")])
def test_a_path_that_is_not_a_file_name_is_refused(tmp_path, monkeypatch, bad, found):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError) as info:
        ZipStore(bad, mode="w")
    assert str(info.value) == (f"ZipStore({bad!r}): path: expected the path of a zip archive "
                               f"or an open binary file (with read, seek and tell), found {found}")
    assert list(tmp_path.iterdir()) == []


def test_a_session_in_mode_a_that_writes_nothing_leaves_the_archive_as_it_was(tmp_path):
    """zarrx.open("x.zip") opens in mode "a": a session that only reads keeps the very file, so
    a writer that opened the archive before it finishes can still finish."""
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zarrx.create_group(zs)
    before = os.stat(path)
    writer = ZipStore(path, mode="a")
    g = zarrx.open(path)
    assert g.store.mode == "a"
    assert list(g.keys()) == []
    g.store.close()
    now = os.stat(path)
    assert (now.st_ino, now.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    writer.set("k", b"v")
    writer.close()
    with ZipStore(path) as zs:
        assert zs.get("k") == b"v"
    assert sorted(os.listdir(tmp_path)) == ["h.zip"]


def test_a_session_in_mode_a_without_an_archive_still_creates_an_empty_one(tmp_path):
    path = str(tmp_path / "new.zip")
    ZipStore(path, mode="a").close()
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == []


def test_mode_a_copies_the_archive_only_at_its_first_write(tmp_path, monkeypatch):
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zs.set("a", b"1")
    copies = []
    real = zarrx.store.ziptemp.shutil.copyfileobj
    monkeypatch.setattr(zarrx.store.ziptemp.shutil, "copyfileobj",
                        lambda *a, **k: copies.append(1) or real(*a, **k))
    with ZipStore(path, mode="a") as zs:
        assert zs.get("a") == b"1"
        assert os.listdir(tmp_path) == ["h.zip"] and copies == []
        zs.set("b", b"2")
        assert len(os.listdir(tmp_path)) == 2 and copies == [1]
        assert zs.get("a") == b"1" and zs.get("b") == b"2"
        zs.set("c", b"3")
        assert copies == [1]
    with ZipStore(path) as zs:
        assert sorted(zs.list_prefix("")) == ["a", "b", "c"]


def test_mode_a_copies_the_version_it_opened(tmp_path):
    """A store in mode "a" that writes after another writer finished copies the archive it
    opened (and read from), not the other writer's, and refuses to close."""
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zs.set("a", b"1")
    late = ZipStore(path, mode="a")
    with ZipStore(path, mode="a") as other:
        other.set("o", b"o")
    assert late.exists("o") is False
    late.set("b", b"2")
    assert late.exists("o") is False
    with pytest.raises(StoreError, match="another writer finished first"):
        late.close()
    with ZipStore(path) as zs:
        assert sorted(zs.list_prefix("")) == ["a", "o"]


def test_mode_a_refuses_a_file_that_is_not_an_archive(tmp_path):
    # zipfile's mode "a" would append an archive to it
    path = tmp_path / "notes.zip"
    path.write_bytes(b"not a zip archive")
    with pytest.raises(StoreError) as info:
        ZipStore(path, mode="a")
    assert str(info.value) == (f"ZipStore({str(path)!r}, mode='a'): cannot open in mode 'a': "
                               "no end of central directory record (b'PK\\x05\\x06') in its "
                               "last 17 bytes, and it starts with b'not a zi': not a zip archive")
    assert path.read_bytes() == b"not a zip archive"
    assert os.listdir(tmp_path) == ["notes.zip"]


@pytest.mark.parametrize("mode", ["w", "a"])
def test_an_archive_opened_through_a_symbolic_link_is_written_through_it(tmp_path, mode):
    """As zipfile (and zarr-python) write: the link stays, the archive it points to changes."""
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "a.zip"
    with ZipStore(real, mode="w") as zs:
        zs.set("k", b"1")
    link = tmp_path / "link.zip"
    link.symlink_to(real)
    with ZipStore(link, mode=mode) as zs:
        zs.set("k2", b"2")
    assert link.is_symlink()
    with ZipStore(real) as zs:
        assert sorted(zs.list_prefix("")) == (["k", "k2"] if mode == "a" else ["k2"])
    assert sorted(os.listdir(tmp_path)) == ["link.zip", "real"]
    assert os.listdir(tmp_path / "real") == ["a.zip"]


def test_a_missing_or_existing_archive_raises_the_builtin_zarr_python_raises(tmp_path):
    from zarrx.errors import StoreExistsError, StoreNotFoundError
    missing = str(tmp_path / "missing.zip")
    with pytest.raises(FileNotFoundError) as info:
        ZipStore(missing)
    assert isinstance(info.value, StoreNotFoundError)
    assert str(info.value) == (f"ZipStore({missing!r}, mode='r'): cannot open in mode 'r': "
                               f"[Errno 2] No such file or directory: {missing!r}")
    with pytest.raises(FileNotFoundError):
        zarrx.open(missing, mode="r")
    with pytest.raises(StoreNotFoundError, match="mode 'r\\+' needs an existing archive"):
        zarrx.open(missing, mode="r+")
    path = str(tmp_path / "a.zip")
    ZipStore(path, mode="w").close()
    with pytest.raises(FileExistsError) as info:
        ZipStore(path, mode="x")
    assert isinstance(info.value, StoreExistsError)
    assert str(info.value) == (f"ZipStore({path!r}, mode='x'): cannot open in mode 'x': "
                               f"[Errno 17] File exists: {path!r}")
