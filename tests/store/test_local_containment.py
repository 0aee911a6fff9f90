"""LocalStore never reaches outside its root through a symbolic link, on any operation.

Every test runs twice: with the one-call ``openat2`` resolution (where the kernel offers it) and
with the directory-by-directory ``openat`` walk that other systems use.
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import ABSENT, ByteRange, LocalStore
from zarrx.store import localfs


@pytest.fixture(params=["openat2", "walk"])
def resolver(request, monkeypatch):
    if request.param == "openat2":
        if localfs._openat2 is None:
            pytest.skip("openat2 is not available here")
    else:
        monkeypatch.setattr(localfs, "_openat2", None)
    return request.param


@pytest.fixture
def outside(tmp_path):
    out = tmp_path / "outside"
    out.mkdir()
    (out / "k").write_bytes(b"secret")
    (out / "zarr.json").write_bytes(b'{"zarr_format": 3, "node_type": "group"}')
    return out


def snapshot_of(folder):
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in sorted(folder.rglob("*"))}


def link_message(store, key, link):
    return (f"{store!r}: key {key!r}: {link!r} is a symbolic link; links below the root are "
            "not followed")


def every_operation(store, key):
    return {
        "get": lambda: store.get(key),
        "get-range": lambda: store.get(key, ByteRange.last(2)),
        "get_many": lambda: store.get_many([(key, None), ("real/k", None)]),
        "getsize": lambda: store.getsize(key),
        "exists": lambda: store.exists(key),
        "generation": lambda: store.generation(key),
        "get_versioned": lambda: store.get_versioned(key),
        "snapshot": lambda: store.snapshot(key),
        "set": lambda: store.set(key, b"x"),
        "set_if-absent": lambda: store.set_if(key, b"x", ABSENT),
        "set_if": lambda: store.set_if(key, b"x", (1, 2, 3, 4, 5)),
        "delete": lambda: store.delete(key),
        "delete_if": lambda: store.delete_if(key, (1, 2, 3, 4, 5)),
    }


@pytest.mark.parametrize("target", ["outside", "inside"])
def test_no_operation_follows_a_linked_folder(tmp_path, outside, resolver, target):
    store = LocalStore(tmp_path / "root")
    store.set("real/k", b"inside")
    os.symlink(outside if target == "outside" else tmp_path / "root" / "real",
               tmp_path / "root" / "linked")
    before = snapshot_of(tmp_path)
    for name, call in every_operation(store, "linked/k").items():
        with pytest.raises(StoreError) as info:
            call()
        assert str(info.value) == link_message(store, "linked/k", "linked"), name
    for name, call in every_operation(store, "real/../linked/k").items():
        with pytest.raises(StoreError, match="found a '..' segment"):
            call()
    assert sorted(store.list_prefix("")) == ["real/k"]
    assert list(store.list_prefix("linked/")) == [] and store.list_dir("linked/") == ([], [])
    assert store.list_dir("") == ([], ["real"])
    store.delete_prefix("linked/")
    assert store.sweep("linked/", older_than=0) == []
    assert snapshot_of(tmp_path) == before


def test_a_link_deep_in_a_key_is_named(tmp_path, outside, resolver):
    store = LocalStore(tmp_path / "root")
    store.set("a/b/c/k", b"1")
    os.symlink(outside, tmp_path / "root" / "a" / "b" / "evil")
    with pytest.raises(StoreError) as info:
        store.set("a/b/evil/new/k", b"x")
    assert str(info.value) == link_message(store, "a/b/evil/new/k", "a/b/evil")
    assert not (outside / "new").exists()


def test_a_link_as_the_key_itself(tmp_path, outside, resolver):
    store = LocalStore(tmp_path / "root")
    os.symlink(outside / "k", _mkdir(tmp_path / "root") / "lk")
    for name in ("get", "get-range", "getsize", "exists", "generation", "get_versioned",
                 "snapshot", "set_if-absent", "set_if", "delete_if"):
        with pytest.raises(StoreError) as info:
            every_operation(store, "lk")[name]()
        assert str(info.value) == link_message(store, "lk", "lk"), name
    assert list(store.list_prefix("")) == [] and store.list_dir("") == ([], [])
    store.set("lk", b"replaces the link, not its target")
    assert not os.path.islink(tmp_path / "root" / "lk")
    assert store.get("lk") == b"replaces the link, not its target"
    os.unlink(tmp_path / "root" / "lk")
    os.symlink(outside / "k", tmp_path / "root" / "lk")
    store.delete("lk")                                  # removes the link itself
    assert not os.path.lexists(tmp_path / "root" / "lk")
    assert (outside / "k").read_bytes() == b"secret"


def _mkdir(path):
    path.mkdir(exist_ok=True)
    return path


def test_arrays_and_groups_stay_inside(tmp_path, outside, resolver):
    root = tmp_path / "root"
    g = zarrx.open_group(str(root), mode="w")
    g.create_array("inside", shape=(4,), dtype="i2", chunks=(2,))[:] = np.arange(4)
    os.symlink(outside, root / "evil")
    before = snapshot_of(outside)
    assert [name for name, _ in g.members()] == ["inside"]
    with pytest.raises(StoreError, match="'evil' is a symbolic link"):
        g.create_array("evil/arr", shape=(4,), dtype="i2", chunks=(2,))
    with pytest.raises(StoreError, match="'evil' is a symbolic link"):
        g["evil"]
    del g["inside"]
    assert snapshot_of(outside) == before
    assert sorted(os.listdir(root)) == ["evil", "zarr.json"]


def test_a_linked_root_is_fine(tmp_path, resolver):
    real = _mkdir(tmp_path / "real")
    os.symlink(real, tmp_path / "root")
    store = LocalStore(tmp_path / "root")
    store.set("a/k", b"1")
    assert store.get("a/k") == b"1" and (real / "a" / "k").read_bytes() == b"1"
    assert list(store.list_prefix("")) == ["a/k"]
    assert store.set_if("a/k", b"2", store.generation("a/k")) == store.generation("a/k")
    store.delete("a/k")
    assert os.listdir(real) == []


def test_links_swapped_in_while_working_are_never_followed(tmp_path, outside, resolver):
    root = tmp_path / "root"
    store = LocalStore(root)
    store.set("d/k", b"inside")
    stop = threading.Event()

    def swap() -> None:                     # d: the real folder, then a link to outside, ...
        n = 0
        while not stop.is_set():
            n += 1
            for step in (lambda: os.rename(root / "d", root / f"hold{n}"),
                         lambda: os.symlink(outside, root / "d"),
                         lambda: os.unlink(root / "d"),
                         lambda: os.rename(root / f"hold{n}", root / "d")):
                try:
                    step()
                except OSError:             # the store made a folder "d" meanwhile, say
                    pass
                time.sleep(0.0002)          # let each state be seen

    swapper = threading.Thread(target=swap)
    swapper.start()
    refused = 0
    try:
        i, deadline = 0, time.monotonic() + 60
        while i < 150 or (refused == 0 and time.monotonic() < deadline):  # until the link is met
            i += 1
            for call in (lambda: store.get("d/k"), lambda: store.set(f"d/new{i % 3}", b"x"),
                         lambda: store.get_versioned("d/k"), lambda: list(store.list_prefix("d/")),
                         lambda: store.delete(f"d/new{(i + 1) % 3}")):
                try:
                    got = call()
                except StoreError as exc:
                    refused += "symbolic link" in str(exc)
                    continue
                assert "secret" not in repr(got)
    finally:
        stop.set()
        swapper.join()
    assert snapshot_of(outside) == {"k": b"secret",
                                    "zarr.json": b'{"zarr_format": 3, "node_type": "group"}'}
    assert refused > 0                      # the link was met, and refused


def test_a_fifo_in_the_store_does_not_block(tmp_path, resolver):
    store = LocalStore(tmp_path / "root")
    store.set("a/k", b"1")
    os.mkfifo(tmp_path / "root" / "a" / "fifo")
    results = []
    reader = threading.Thread(target=lambda: results.append(
        (store.get("a/fifo"), store.exists("a/fifo"), store.getsize("a/fifo"),
         store.snapshot("a/fifo"), sorted(store.list_prefix("a/")))))
    reader.start()
    reader.join(30)
    assert not reader.is_alive()
    assert results == [(None, False, None, None, ["a/k"])]
