"""Adversarial trials of the reliability promises (docs/RELIABILITY.md) not covered elsewhere:
creating one node from several writers at once, full disks, refused permissions, kills.
"""
from __future__ import annotations

import errno
import multiprocessing as mp
import os
import subprocess

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore


# -- creating one node from several writers ----------------------------------------------------
class RivalCreates(LocalStore):
    """A LocalStore under which another writer creates ``rival(path)`` right after this handle
    first looked for the node at ``path`` and found none."""

    def __init__(self, root, path, rival):
        super().__init__(root)
        self._watch, self._rival = path, rival

    def get_many(self, requests, *args, **kwargs):
        out = super().get_many(requests, *args, **kwargs)
        keys = [r[0] if isinstance(r, tuple) else r for r in requests]
        if self._rival is not None and f"{self._watch}/.zgroup" in keys:
            rival, self._rival = self._rival, None
            rival(str(self.root))
        return out


def _rival_array(zarr_format):
    def make(root):
        zarrx.create_array(LocalStore(root), name="x", shape=(4,), chunks=(2,), dtype="i4",
                           fill_value=7, zarr_format=zarr_format)
    return make


def _rival_group(zarr_format):
    def make(root):
        zarrx.open_group(LocalStore(root), mode="r+").create_group("x", attributes={"by": "rival"})
    return make


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_array_created_meanwhile_by_another_writer_is_not_overwritten(tmp_path, zarr_format):
    root = str(tmp_path / "s.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    store = RivalCreates(root, "x", _rival_array(zarr_format))
    with pytest.raises(zarrx.errors.ContainsArrayError) as info:
        zarrx.create_array(store, name="x", shape=(4,), chunks=(2,), dtype="i4", fill_value=1,
                           zarr_format=zarr_format)
    assert str(info.value) == f"create_array: a node already exists at 'x' in {store!r}"
    assert zarrx.open_array(root, path="x").fill_value == 7


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_open_with_mode_w_minus_refuses_an_array_created_meanwhile(tmp_path, zarr_format):
    root = str(tmp_path / "s.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    store = RivalCreates(root, "x", _rival_array(zarr_format))
    with pytest.raises(zarrx.errors.ContainsArrayError) as info:
        zarrx.open(store, path="x", mode="w-", shape=(4,), chunks=(2,), dtype="i4",
                   fill_value=1, zarr_format=zarr_format)
    assert str(info.value) == f"open: a node already exists at 'x' in {store!r}"
    assert zarrx.open_array(root, path="x").fill_value == 7


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_group_created_meanwhile_by_another_writer_is_not_overwritten(tmp_path, zarr_format):
    root = str(tmp_path / "s.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    store = RivalCreates(root, "x", _rival_group(zarr_format))
    with pytest.raises(zarrx.errors.ContainsGroupError) as info:
        zarrx.open_group(store, mode="r+").create_group("x", attributes={"by": "me"})
    assert str(info.value) == "group '/': a node already exists at 'x'"
    assert dict(zarrx.open_group(root, path="x").attrs) == {"by": "rival"}
    root = str(tmp_path / "t.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    store = RivalCreates(root, "x", _rival_group(zarr_format))
    with pytest.raises(zarrx.errors.ContainsGroupError) as info:
        zarrx.open_group(store, path="x", mode="w-", zarr_format=zarr_format)
    assert str(info.value) == f"open_group: a node already exists at 'x' in {store!r}"
    assert dict(zarrx.open_group(root, path="x").attrs) == {"by": "rival"}


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_implicit_group_made_meanwhile_keeps_its_attributes(tmp_path, zarr_format):
    """Creating ``x/a`` makes the missing group ``x``; one made by another writer after this
    writer looked for it (with attributes) is kept as it is."""
    root = str(tmp_path / "s.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    store = RivalCreates(root, "x", _rival_group(zarr_format))
    zarrx.create_array(store, name="x/a", shape=(4,), chunks=(2,), dtype="i4",
                       zarr_format=zarr_format)
    group = zarrx.open_group(root, path="x")
    assert dict(group.attrs) == {"by": "rival"}
    assert list(group.array_keys()) == ["a"]


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_create_hierarchy_refuses_a_node_created_meanwhile(tmp_path, zarr_format):
    """(before: the array another writer had just created was deleted and replaced)"""
    root = str(tmp_path / "s.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    meta = zarrx.create_array(zarrx.store.MemoryStore(), shape=(4,), chunks=(2,), dtype="i4",
                              zarr_format=zarr_format).metadata
    store = RivalCreates(root, "x", _rival_array(zarr_format))
    with pytest.raises(zarrx.errors.ContainsArrayError) as info:
        list(zarrx.create_hierarchy(store=store, nodes={"x": meta}))
    assert str(info.value) == (f"create_hierarchy: an array already exists at 'x' in "
                               f"{store!r}; pass overwrite=True to replace it")
    assert zarrx.open_array(root, path="x").fill_value == 7


def _create_w_minus(root, zarr_format, value, barrier, results):
    barrier.wait()
    try:
        a = zarrx.open(root + "/x", mode="w-", shape=(10,), chunks=(5,), dtype="i4",
                       fill_value=value, zarr_format=zarr_format)
        a[:] = value
        results.put(("won", value))
    except zarrx.errors.ContainsArrayError:
        results.put(("refused", value))


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_of_processes_creating_one_array_with_mode_w_minus_exactly_one_wins(tmp_path, zarr_format):
    """4 processes at a barrier create one array with mode "w-", 6 rounds: one wins each round
    and its array is what is stored (before: 2 to 4 of them succeeded in 40% of the rounds,
    each overwriting the array the others had just created)."""
    ctx = mp.get_context("fork")
    for r in range(6):
        root = str(tmp_path / f"r{r}.zarr")
        zarrx.open_group(root, mode="w", zarr_format=zarr_format)
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_create_w_minus, args=(root, zarr_format, v, barrier, results))
                 for v in range(4)]
        for p in procs:
            p.start()
        outcomes = sorted(results.get(timeout=120) for _ in procs)
        for p in procs:
            p.join(timeout=120)
        assert [p.exitcode for p in procs] == [0] * 4
        won = [v for what, v in outcomes if what == "won"]
        assert len(won) == 1, outcomes
        a = zarrx.open_array(root, path="x")
        assert a.fill_value == won[0]
        np.testing.assert_array_equal(a[:], np.full(10, won[0]))


# -- a node deleted through another handle -----------------------------------------------------
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", ["array", "group"])
def test_setting_attributes_of_a_node_deleted_through_another_handle_raises(tmp_path, kind,
                                                                           zarr_format):
    """(before, for v2: the write succeeded, leaving an ``x/.zattrs`` no node lists, so the
    attributes were lost without an error)"""
    root = str(tmp_path / "s.zarr")
    g = zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    node = g.create_array("x", shape=(4,), chunks=(2,), dtype="i4") if kind == "array" \
        else g.create_group("x")
    del zarrx.open_group(root, mode="r+")["x"]
    with pytest.raises(zarrx.errors.NodeNotFoundError) as info:
        node.attrs["k"] = 1
    assert str(info.value) == f"no node at 'x' in {g.store!r}: it was deleted"
    assert sorted(p.name for p in (tmp_path / "s.zarr").iterdir()) == \
        ([".zgroup"] if zarr_format == 2 else ["zarr.json"])



@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", ["array", "group"])
def test_setting_attributes_of_a_node_replaced_by_the_other_kind_raises(tmp_path, kind,
                                                                       zarr_format):
    """(before, for v3: the attributes went into the group (or array) made at its path)"""
    root = str(tmp_path / "s.zarr")
    g = zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    node = g.create_array("x", shape=(4,), chunks=(2,), dtype="i4") if kind == "array" \
        else g.create_group("x")
    other = zarrx.open_group(root, mode="r+")
    if kind == "array":
        other.create_group("x", overwrite=True, attributes={"a": 0})
    else:
        other.create_array("x", shape=(4,), chunks=(2,), dtype="i4", overwrite=True,
                           attributes={"a": 0})
    with pytest.raises(zarrx.errors.NodeNotFoundError) as info:
        node.attrs["k"] = 1
    assert str(info.value) == f"no node at 'x' in {g.store!r}: it was deleted"
    assert dict(zarrx.open_group(root)["x"].attrs) == {"a": 0}


# -- mode "a" (open or create) when another writer creates the node first ------------------------
OPEN_OR_CREATE_ARRAY = {
    "open_array": lambda store: zarrx.open_array(store, path="x", mode="a", shape=(4,),
                                                 chunks=(2,), dtype="i4", fill_value=1),
    "open": lambda store: zarrx.open(store, path="x", mode="a", shape=(4,), chunks=(2,),
                                     dtype="i4", fill_value=1),
    "require_array": lambda store: zarrx.open_group(store, mode="r+").require_array(
        "x", shape=(4,), chunks=(2,), dtype="i4", fill_value=1),
}
OPEN_OR_CREATE_GROUP = {
    "open_group": lambda store: zarrx.open_group(store, path="x", mode="a"),
    "open": lambda store: zarrx.open(store, path="x", mode="a"),
    "require_group": lambda store: zarrx.open_group(store, mode="r+").require_group("x"),
}


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("call", sorted(OPEN_OR_CREATE_ARRAY))
def test_open_or_create_opens_an_array_another_writer_created_meanwhile(tmp_path, call,
                                                                        zarr_format):
    """(before: ContainsArrayError, in 20-26 of 40 calls of 4 processes at a barrier)"""
    root = str(tmp_path / "s.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    store = RivalCreates(root, "x", _rival_array(zarr_format))
    a = OPEN_OR_CREATE_ARRAY[call](store)
    assert isinstance(a, zarrx.Array) and a.fill_value == 7 and a.zarr_format == zarr_format
    a[:] = 3
    np.testing.assert_array_equal(zarrx.open_array(root, path="x")[:], [3, 3, 3, 3])


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("call", sorted(OPEN_OR_CREATE_GROUP))
def test_open_or_create_opens_a_group_another_writer_created_meanwhile(tmp_path, call,
                                                                       zarr_format):
    root = str(tmp_path / "s.zarr")
    zarrx.open_group(root, mode="w", zarr_format=zarr_format)
    store = RivalCreates(root, "x", _rival_group(zarr_format))
    g = OPEN_OR_CREATE_GROUP[call](store)
    assert isinstance(g, zarrx.Group) and dict(g.attrs) == {"by": "rival"}
    assert dict(zarrx.open_group(root, path="x").attrs) == {"by": "rival"}


def _open_or_create(root, zarr_format, barrier, results):
    barrier.wait()
    try:
        zarrx.open_array(root + "/x", mode="a", shape=(10,), chunks=(5,), dtype="i4",
                         zarr_format=zarr_format)[0] = 1
        results.put("ok")
    except zarrx.ZarrError as e:
        results.put(type(e).__name__)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_processes_opening_or_creating_one_array_all_open_it(tmp_path, zarr_format):
    ctx = mp.get_context("fork")
    for r in range(6):
        root = str(tmp_path / f"r{r}.zarr")
        zarrx.open_group(root, mode="w", zarr_format=zarr_format)
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_or_create, args=(root, zarr_format, barrier, results))
                 for _ in range(4)]
        for p in procs:
            p.start()
        outcomes = [results.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=120)
        assert outcomes == ["ok"] * 4


# -- a real full disk (a small tmpfs) ----------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs mounted at ``tmp_path / "disk"`` (skipped where it cannot be mounted)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)],
                          capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk):
    with open(disk / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"x" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("layout", ["v2", "v3", "v3-sharded"])
def test_writes_to_a_full_disk_raise_store_errors_and_keep_what_is_stored(small_disk, layout):
    root = small_disk / "a.zarr"
    fmt = 2 if layout == "v2" else 3
    a = zarrx.create_array(str(root), shape=(40, 40), chunks=(20, 20), dtype="f8",
                           zarr_format=fmt, shards=(40, 40) if layout == "v3-sharded" else None,
                           compressors=None)
    data = np.arange(1600.0).reshape(40, 40)
    a[:] = data
    a.attrs["k"] = 1
    before = _files(root)
    _fill(small_disk)
    store = a.store
    chunk = ("0.0" if fmt == 2 else "c/0/0")
    meta = ".zarray" if fmt == 2 else "zarr.json"
    attrs = ".zattrs" if fmt == 2 else "zarr.json"
    tries = [
        (lambda: a.__setitem__((slice(0, 40 if layout == "v3-sharded" else 20),) * 2, -1.0),
         f"cannot write '{chunk}'"),
        (lambda: a.__setitem__((0, 0), -1.0), f"cannot conditionally write '{chunk}'"),
        (lambda: a.resize((80, 80)), f"cannot conditionally write '{meta}'"),
        (lambda: a.append(np.ones((20, 40))), f"cannot conditionally write '{meta}'"),
        (lambda: a.attrs.__setitem__("k", 2), f"cannot conditionally write '{attrs}'"),
    ]
    for write, what in tries:
        with pytest.raises(zarrx.StoreError) as info:
            write()
        assert str(info.value) == f"{store!r}: {what}: No space left on device"
    with pytest.raises(zarrx.StoreError) as info:
        zarrx.open_group(str(small_disk / "g"), mode="w", zarr_format=fmt)
    assert str(info.value).endswith(f": cannot write '{'.zgroup' if fmt == 2 else 'zarr.json'}'"
                                    f": No space left on device")
    assert _files(root) == before                     # no temporary file left, nothing lost
    b = zarrx.open_array(str(root))
    assert b.shape == (40, 40) and dict(b.attrs) == {"k": 1}
    np.testing.assert_array_equal(b[:], data)
    (small_disk / "filler").unlink()
    a[0, 0] = -1.0
    a.append(np.ones((20, 40)))
    a.attrs["k"] = 2
    b = zarrx.open_array(str(root))
    assert b.shape == (60, 40) and b[0, 0] == -1.0 and dict(b.attrs) == {"k": 2}


def test_a_zip_archive_written_on_a_full_disk_stays_as_it_was(small_disk):
    path = small_disk / "d.zip"
    with zarrx.store.ZipStore(str(path), mode="w") as store:
        zarrx.create_array(store, name="a", shape=(100, 100), chunks=(10, 10), dtype="f8",
                           compressors=None)[:] = 1.0
    size = path.stat().st_size
    _fill(small_disk)
    os.truncate(small_disk / "filler", (small_disk / "filler").stat().st_size - 100_000)
    store = zarrx.store.ZipStore(str(path), mode="a")
    with pytest.raises(zarrx.StoreError) as info:
        try:
            zarrx.create_array(store, name="b", shape=(200, 100), chunks=(200, 100),
                               dtype="f8", compressors=None)[:] = 2.0
        finally:
            store.close()
    assert str(info.value) == (f"{store!r}: cannot write entry 'b/c/0/0': [Errno 28] No space "
                               f"left on device")
    assert sorted(p.name for p in small_disk.iterdir()) == ["d.zip", "filler"]
    assert path.stat().st_size == size
    with zarrx.store.ZipStore(str(path), mode="r") as store:
        np.testing.assert_array_equal(zarrx.open_array(store, path="a")[:], 1.0)
        assert list(zarrx.open_group(store, mode="r").array_keys()) == ["a"]
