"""The store and generation contracts of FsspecStore: over s3fs against a real S3 server
(moto), and over fsspec's in-memory filesystem (no conditional writes)."""
from __future__ import annotations

import uuid

import pytest
from store_contract import StoreContract

pytest.importorskip("fsspec", reason="fsspec is not installed (pip install 'zarrx[remote]')")

from zarrx.errors import ConflictError  # noqa: E402
from zarrx.store import ByteRange  # noqa: E402
from zarrx.store.remote import FsspecStore  # noqa: E402

from .conftest import Variant  # noqa: E402


class TestFsspecS3(StoreContract):
    generations_per_write = False      # an S3 ETag is a digest of the bytes
    snapshot_pins_version = True       # small objects come whole with the snapshot's tail

    @pytest.fixture
    def store(self, s3_server, tmp_path):
        pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
        self.s3 = s3_server
        s = self.make_store(tmp_path)
        yield s
        s.close()

    def make_store(self, tmp_path):
        self.url = self.s3.url()
        return FsspecStore(self.url, storage_options=self.s3.fsspec_options,
                           revalidate_after=0)

    def reopen_read_only(self, store, tmp_path):
        return FsspecStore(self.url, storage_options=self.s3.fsspec_options, read_only=True)


class TestFsspecS3Conditioned(Variant, TestFsspecS3):
    """No tail prefetch and small parts: snapshot reads are If-Match requests through s3fs."""

    snapshot_pins_version = False

    def make_store(self, tmp_path):
        self.url = self.s3.url()
        return FsspecStore(self.url, storage_options=self.s3.fsspec_options, tail_prefetch=0,
                           part_size=64 << 10)


class TestFsspecMemory(StoreContract):
    snapshot_pins_version = True

    def make_store(self, tmp_path):
        self.url = f"memory://zarrx-{uuid.uuid4().hex}"
        return FsspecStore(self.url, revalidate_after=0)

    def reopen_read_only(self, store, tmp_path):
        return FsspecStore(self.url, read_only=True)


@pytest.mark.parametrize("backend", ["fsspec", "obstore"])
def test_names_with_glob_characters_delete_exactly_their_keys(s3_server, backend):
    """'*', '?' and '[' in a node name are characters, not a pattern: deleting the node
    removes its keys and no one else's (a sibling 'xyz' matches the pattern 'x*')."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    import zarrx
    url = s3_server.url()
    if backend == "fsspec":
        store = FsspecStore(url, storage_options=s3_server.fsspec_options)
    else:
        from zarrx.store.remote import ObjectStore
        store = ObjectStore(url, storage_options=s3_server.options)
    g = zarrx.open_group(store, mode="w")
    names = ["x*", "xyz", "q?", "qz", "b[1]", "b1"]
    for name in names:
        g.create_array(name, shape=(4,), chunks=(2,), dtype="i1")[...] = 1
    for name in ("x*", "q?", "b[1]"):
        del g[name]
    assert sorted(g.keys()) == ["b1", "qz", "xyz"]
    assert sorted(store.list_prefix("")) == sorted(
        ["zarr.json"] + [f"{n}/{k}" for n in ("b1", "qz", "xyz")
                         for k in ("zarr.json", "c/0", "c/1")])
    zarrx.create_array(store, name="b1", shape=(2,), dtype="i1", overwrite=True)
    zarrx.open_group(url + "/xyz", mode="w", storage_options=s3_server.options)
    assert sorted(store.list_prefix("")) == ["b1/zarr.json", "qz/c/0", "qz/c/1", "qz/zarr.json",
                                             "xyz/zarr.json", "zarr.json"]


def _put_raw(s3_server, key: str, body: bytes) -> None:
    """An object put by another S3 client (keys ending in '/' included, as the AWS console's
    'Create folder' makes them)."""
    boto3 = pytest.importorskip("boto3", reason="boto3 is not installed")
    from zarrx.bench.servers import S3_KEYS
    boto3.client("s3", endpoint_url=s3_server.endpoint, region_name=S3_KEYS["region"],
                 aws_access_key_id=S3_KEYS["access_key_id"],
                 aws_secret_access_key=S3_KEYS["secret_access_key"]).put_object(
        Bucket=s3_server.bucket, Key=key, Body=body)


@pytest.mark.parametrize("backend", ["fsspec", "obstore"])
def test_folder_markers_are_neither_keys_nor_nodes(s3_server, backend):
    """Empty 'name/' objects (folder markers) are not listed as keys: a hierarchy written into
    a folder made in the AWS console can be overwritten (mode='w' deleted the key '' once),
    listed, consolidated and deleted; a real empty object is still a key."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    import zarrx
    prefix = s3_server.fresh()
    url = s3_server.url(prefix)
    for marker in ("", "x/", "x/c/", "sub/", "empty/"):
        _put_raw(s3_server, f"{prefix}/{marker}", b"")
    if backend == "fsspec":
        store = FsspecStore(url, storage_options=s3_server.fsspec_options)
    else:
        from zarrx.store.remote import ObjectStore
        store = ObjectStore(url, storage_options=s3_server.options)
    g = zarrx.open_group(store, mode="w")
    g.create_array("x", shape=(4,), chunks=(2,), dtype="i1")[...] = 1
    g.create_group("sub")
    store.set("sub/blank", b"")
    assert sorted(store.list_prefix("")) == ["sub/blank", "sub/zarr.json", "x/c/0", "x/c/1",
                                             "x/zarr.json", "zarr.json"]
    # FsspecStore over S3 asks for the children alone: S3 names a folder holding only its
    # marker ("empty/") as one (as zarr-python lists it); it holds no node
    dirs = ["empty", "sub", "x"] if backend == "fsspec" else ["sub", "x"]
    assert tuple(store.list_dir("")) == (["zarr.json"], dirs)
    assert sorted(name for name, _ in g.members()) == ["sub", "x"]
    zarrx.consolidate_metadata(store)
    assert sorted(zarrx.open_consolidated(store).keys()) == ["sub", "x"]
    del g["x"]
    assert sorted(store.list_prefix("")) == ["sub/blank", "sub/zarr.json", "zarr.json"]
    zarrx.open_group(store, mode="w")
    assert list(store.list_prefix("")) == ["zarr.json"]


@pytest.mark.parametrize("backend", ["fsspec", "obstore"])
def test_a_marker_beside_an_object_of_its_name_or_with_content_is_no_key(s3_server, backend):
    """obstore lists a marker 'name/' as 'name': beside an object 'name' (another tool's
    'a' and 'a/'; 'a.txt' sorts between them) ObjectStore's listing failed ("the server listed
    'a' twice (a listing that repeats itself would never end)"), and a marker holding bytes
    ('c/') was listed as a key 'c' that cannot be read. Both stores now list the same keys."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    prefix = s3_server.fresh()
    url = s3_server.url(prefix)
    for key, body in [("a", b"A"), ("a.txt", b"T"), ("a/", b""), ("a/b", b"AB"),
                      ("c/", b"not empty"), ("c/d", b"CD"), ("h", b"H"), ("h/", b"")]:
        _put_raw(s3_server, f"{prefix}/{key}", body)
    if backend == "fsspec":
        store = FsspecStore(url, storage_options=s3_server.fsspec_options)
    else:
        from zarrx.store.remote import ObjectStore
        store = ObjectStore(url, storage_options=s3_server.options)
    assert sorted(store.list_prefix("")) == ["a", "a.txt", "a/b", "c/d", "h"]
    dirs = ["a", "c", "h"] if backend == "fsspec" else ["a", "c"]   # "h/": see above
    assert tuple(store.list_dir("")) == (["a", "a.txt", "h"], dirs)
    assert store.get("a") == b"A" and store.get("c") is None


def test_a_waiting_synchronous_filesystem_holds_up_no_other_store():
    """The calls of a synchronous filesystem (ftp, sftp, ...) ran on the event loop every
    remote store shares: one waiting for its server held up the requests of all the others.
    Here a read of another store completes while the filesystem's read waits for it."""
    fsspec = pytest.importorskip("fsspec")
    import threading

    from fsspec.implementations.memory import MemoryFileSystem

    entered, other_done = threading.Event(), threading.Event()

    class WaitingFS(MemoryFileSystem):
        protocol = "zarrxwaitingfs"
        store: dict = {}
        pseudo_dirs = [""]

        def cat_file(self, path, start=None, end=None, **kwargs):
            entered.set()
            other_done.wait(10)                # released once the other store has answered
            return super().cat_file(path, start=start, end=end, **kwargs)

    fsspec.register_implementation("zarrxwaitingfs", WaitingFS, clobber=True)
    waiting = FsspecStore("zarrxwaitingfs://d")
    waiting.set("k", b"v")
    other = FsspecStore(f"memory://zarrx-{uuid.uuid4().hex}")
    other.set("k", b"w")
    got = {}
    reader = threading.Thread(target=lambda: got.setdefault("waiting", waiting.get("k")))
    reader.start()
    entered.wait(10)
    got["other"] = other.get("k")
    answered_first = not got.get("waiting")
    other_done.set()
    reader.join()
    assert answered_first and got == {"other": b"w", "waiting": b"v"}


def test_an_object_replaced_between_its_read_and_its_version_is_read_again():
    """A filesystem without conditioned reads (gcsfs, adlfs, ...) gives an object's bytes and
    its version (ETag, size) in separate requests: a replace between them paired one version's
    bytes with the other's size (a RemoteError, or a snapshot holding bytes of another version
    than its own). The read is made again, and gives one version's bytes and version."""
    fsspec = pytest.importorskip("fsspec")
    from fsspec.implementations.memory import MemoryFileSystem

    class RacingFS(MemoryFileSystem):
        protocol = "zarrxracingfs"
        store: dict = {}
        pseudo_dirs = [""]
        races: list = []             # the values written right after the next reads

        def cat_file(self, path, start=None, end=None, **kwargs):
            data = super().cat_file(path, start=start, end=end, **kwargs)
            if self.races:
                self.pipe_file(path, self.races.pop(0))
            return data

    fsspec.register_implementation("zarrxracingfs", RacingFS, clobber=True)
    store = FsspecStore("zarrxracingfs://d", revalidate_after=0)
    store.set("k", b"first")
    RacingFS.races[:] = [b"second value"]
    assert store.get("k") == b"second value"
    RacingFS.races[:] = [b"third, longer value"]
    assert store.get("k", ByteRange.last(100)) == b"third, longer value"
    RacingFS.races[:] = [b"4th"]
    with store.snapshot("k") as snap:
        assert snap.size == 3 and [bytes(v) for v in snap.read([None])] == [b"4th"]
        assert snap.generation == store.generation("k")
    RacingFS.races[:] = [b"x" * n for n in range(1, 200)]     # a writer that never pauses
    with pytest.raises(ConflictError):
        store.get("k")
    RacingFS.races[:] = [b"y" * n for n in range(1, 200)]
    with store.snapshot("k") as snap:       # its tail raced every write: it starts without it
        assert snap.generation == store.generation("k")
        with pytest.raises(ConflictError):
            snap.read([None])


@pytest.mark.parametrize("kind", ["file", "memory"])
def test_a_key_below_a_file_is_missing_and_a_write_there_names_the_error(tmp_path, kind):
    """On fsspec's local and memory filesystems a key below a file reads as missing, as
    LocalStore reads it (before, over local files: a RemoteError for every read, exists and
    delete), and a write there is a RemoteError naming the filesystem's error (before: "HTTP
    412", a status no request was answered with)."""
    import zarrx
    from zarrx.errors import RemoteError

    url = f"file://{tmp_path}" if kind == "file" else f"memory://below-{uuid.uuid4().hex}"
    store = FsspecStore(url, storage_options={"auto_mkdir": True} if kind == "file" else None)
    store.set("a", b"1")
    assert store.get("a/b") is None and store.get("a/b", ByteRange.last(2)) is None
    assert store.get_many([("a/b", None), ("a", None)]) == [None, b"1"]
    assert not store.exists("a/b") and store.getsize("a/b") is None
    store.delete("a/b")
    with pytest.raises(zarrx.errors.NodeNotFoundError):
        zarrx.open_group(store, path="a/b", mode="r")
    with pytest.raises(RemoteError) as info:
        store.set("a/b", b"2")
    assert str(info.value) == f"{store!r}: cannot write 'a/b' ({store.address('a/b')}): " \
                              "other (FileExistsError)"
