"""Writes deep in a LocalStore open the deepest folder that exists in a few calls, not by
walking every folder from the root: creating a path n levels deep costs O(n) opens, not O(n^2)."""
import os
import subprocess

import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import localfs
from zarrx.store.local import LocalStore

pytestmark = pytest.mark.skipif(localfs._openat2 is None, reason="needs openat2")


@pytest.fixture
def opens(monkeypatch):
    """Counts of os.open calls (the walk's folder opens) made through localfs."""
    seen = {"n": 0}
    real = os.open

    def counted(*args, **kwargs):
        seen["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(localfs.os, "open", counted)
    return seen


def test_creating_nested_groups_opens_each_folder_a_bounded_number_of_times(tmp_path, opens):
    g = zarrx.open_group(str(tmp_path / "t.zarr"), mode="w")
    depth = 300
    opens["n"] = 0
    g.create_group("/".join(["g"] * depth))
    assert opens["n"] <= 4 * depth          # the walk from the root: about depth**2 / 2
    assert isinstance(zarrx.open_group(str(tmp_path / "t.zarr"), mode="r")["/".join(["g"] * depth)],
                      zarrx.Group)


def test_a_key_far_below_existing_folders_makes_only_the_missing_ones(tmp_path, opens):
    store = LocalStore(str(tmp_path))
    deep = "/".join(f"d{i}" for i in range(200))
    store.set(deep + "/k", b"1")
    opens["n"] = 0
    store.set(deep + "/x/y/k", b"2")
    assert opens["n"] <= 8                  # two new folders: mkdir + open each, no walk
    assert store.get(deep + "/x/y/k") == b"2" and store.get(deep + "/k") == b"1"


def test_a_link_on_the_way_of_a_deep_write_is_still_refused_and_named(tmp_path):
    store = LocalStore(str(tmp_path / "root"))
    store.set("a/b/c/k", b"1")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, tmp_path / "root" / "a" / "b" / "l")
    with pytest.raises(StoreError, match="'a/b/l' is a symbolic link"):
        store.set("a/b/l/x/y/k", b"2")
    assert list(outside.iterdir()) == []


def test_a_file_on_the_way_of_a_deep_write_fails_cleanly(tmp_path):
    store = LocalStore(str(tmp_path))
    store.set("a/b/f", b"1")
    with pytest.raises(StoreError, match="cannot write 'a/b/f/x/y/k'"):
        store.set("a/b/f/x/y/k", b"2")
    assert store.get("a/b/f") == b"1"


def _long_key(depth: int) -> str:
    return "/".join(["g"] * depth) + "/zarr.json"


@pytest.fixture
def deep_path(tmp_path):
    """``tmp_path``, its folders thousands deep removed after the test (pytest's own clean-up
    of old temporary folders recurses once per level, and would fail on them)."""
    yield tmp_path
    subprocess.run(["rm", "-rf", str(tmp_path)], check=False)


def test_keys_longer_than_a_path_are_opened_in_pieces_not_walked(deep_path, opens):
    tmp_path = deep_path
    # past PATH_MAX (4096 bytes) one openat2 cannot take the path: the folders are opened a
    # piece of about 4,000 bytes at a time (before: every folder from the root, each call)
    store = LocalStore(str(tmp_path))
    costs = {}
    for depth in (2500, 5000):
        key = _long_key(depth)
        store.set(key, b"1")
        opens["n"] = 0
        assert store.get(key) == b"1"
        assert store.exists(key)
        store.set(key, b"2")
        assert store.get(key) == b"2"
        costs[depth] = opens["n"]
    assert costs[5000] <= 20, costs          # a walk: about 4 × 5,000 folder opens
    assert sorted(store.list_prefix("g/" * 2499)) == sorted([_long_key(2500), _long_key(5000)])


def test_a_link_in_a_key_longer_than_a_path_is_still_refused_and_named(deep_path):
    tmp_path = deep_path
    store = LocalStore(str(tmp_path / "root"))
    deep = "/".join(["g"] * 2500)
    store.set(deep + "/k", b"1")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "k").write_bytes(b"secret")
    fd = os.open(tmp_path / "root", os.O_RDONLY)
    for name in deep.split("/"):            # the path is too long for one call
        fd, above = os.open(name, os.O_RDONLY, dir_fd=fd), fd
        os.close(above)
    os.symlink(outside, "l", dir_fd=fd)
    os.close(fd)
    with pytest.raises(StoreError, match="is a symbolic link"):
        store.get(deep + "/l/k")
    with pytest.raises(StoreError, match="is a symbolic link"):
        store.set(deep + "/l/x", b"2")
    assert sorted(p.name for p in outside.iterdir()) == ["k"]
