"""ZipStore listings from a sorted index of entry names: a prefix listing visits only the
matching names and a directory listing only the children, with the results of a scan of every
entry; and opening an archive whose hierarchy lies under one top folder says which."""
from __future__ import annotations

import json
import math
import random
import warnings
import zipfile

import pytest

import zarrx
from zarrx.errors import ArrayNotFoundError, GroupNotFoundError
from zarrx.store import ZipStore

GROUP = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}).encode()


class Visits(list):
    """A list counting the items read from it (bisection reads items one at a time)."""

    def __init__(self, items):
        super().__init__(items)
        self.visits = 0

    def __getitem__(self, i):
        got = super().__getitem__(i)
        self.visits += len(got) if isinstance(i, slice) else 1
        return got


class Scans(dict):
    """A dict counting the walks over its keys."""
    scans = 0

    def __iter__(self):
        Scans.scans += 1
        return super().__iter__()

    def keys(self):
        Scans.scans += 1
        return super().keys()


class Counted:
    """The items a store's key index reads from its sorted blocks (``visits``)."""

    def __init__(self, index):
        self.index = index
        index._blocks = [Visits(b) for b in index._blocks]
        index._maxes = Visits(index._maxes)

    def __len__(self):
        return len(self.index)

    @property
    def visits(self):
        return self.index._maxes.visits + sum(b.visits for b in self.index._blocks)

    @visits.setter
    def visits(self, value):
        self.index._maxes.visits = value
        for b in self.index._blocks:
            b.visits = 0


def counted(store):
    """Count the walks over the store's entries and the index names a listing reads."""
    store._infos = Scans(store._infos)
    Scans.scans = 0
    return Counted(store._index)


def archive(path, names):
    with warnings.catch_warnings(), zipfile.ZipFile(path, "w") as zf:
        warnings.simplefilter("ignore")                         # zipfile: "Duplicate name"
        for name in names:
            zf.writestr(name, b"x")
    return path


def scan_prefix(store, prefix):
    """The listing as a scan of every entry gives it."""
    return sorted(k for k in list(dict(store._infos)) if k.startswith(prefix))


def scan_dir(store, prefix):
    keys, dirs = set(), set()
    for key in scan_prefix(store, prefix):
        head, sep, _ = key[len(prefix):].partition("/")
        (dirs if sep else keys).add(head)
    return sorted(keys), sorted(dirs)


PARTS = ["a", "b", "b0", "b-", "a.b", "é", "\u00ff", "\U0001f600", "z", "0", "."]


def random_name(rng):
    return "/".join(rng.choice(PARTS) for _ in range(rng.randint(1, 4)))


def prefixes(store, rng):
    names = list(store._infos)
    out = {"", "b", "b/", "a/b", "a/b/", "a/b0", "\U0001f600", "\U0010ffff", "a\U0010ffff"}
    for name in rng.sample(names, min(30, len(names))):
        cut = rng.randint(0, len(name))
        out.update({name, name[:cut], name + "/"})
    return sorted(out)


@pytest.mark.parametrize("seed", range(12))
def test_listings_equal_a_scan_of_every_entry(tmp_path, seed):
    rng = random.Random(seed)
    names = [random_name(rng) for _ in range(rng.randint(0, 60))]
    names += rng.sample(names, min(5, len(names)))              # duplicates: the last wins
    names += ["../up", "/abs", "a//b", "c/./d", "dir/"]          # skipped as unsafe, or folders
    rng.shuffle(names)
    path = archive(tmp_path / "r.zip", names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = ZipStore(path, mode="a")
    for round_ in range(3):
        for prefix in prefixes(store, rng):
            assert sorted(store.list_prefix(prefix)) == scan_prefix(store, prefix), prefix
            folder = prefix if not prefix or prefix.endswith("/") else prefix + "/"
            assert store.list_dir(prefix) == scan_dir(store, folder), prefix
        for _ in range(rng.randint(1, 8)):                      # entries written since opening
            name = f"{random_name(rng)}/w{round_}"
            if store.key_problem(name) is None and not store.exists(name):
                store.set(name, b"y")
    store.discard()


def test_a_listing_visits_only_the_matching_names(tmp_path):
    names = [f"other/k{i}" for i in range(5000)]
    names += [f"g/{child}/c/{i}" for child in ("x", "y", "z") for i in range(1000)]
    store = ZipStore(archive(tmp_path / "big.zip", names + ["g/zarr.json"]), mode="r")
    index = counted(store)
    bound = 2 * (math.ceil(math.log2(len(index))) + 2)          # a bisection or two
    assert store.list_dir("g/") == (["zarr.json"], ["x", "y", "z"])
    assert index.visits <= 4 * bound                            # one bisection per child
    index.visits = 0
    got = list(store.list_prefix("g/y/"))
    assert len(got) == 1000
    assert index.visits <= bound + len(got)
    assert Scans.scans == 0                                     # no walk over every entry
    store.close()


def test_entries_written_since_opening_are_listed_without_a_scan(tmp_path):
    store = ZipStore(archive(tmp_path / "w.zip", [f"a/{i}" for i in range(2000)]), mode="a")
    store.set("b/new", b"1")
    index = counted(store)
    assert store.list_dir("b") == (["new"], [])
    assert index.visits <= 2 * (math.ceil(math.log2(len(index))) + 2)
    assert Scans.scans == 0
    store.discard()


def test_members_of_a_deep_hierarchy_lists_each_level_once(tmp_path):
    depth = 300
    path = tmp_path / "deep.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for level in range(depth + 1):
            zf.writestr("g/" * level + "zarr.json", GROUP)
    store = ZipStore(path, mode="r")
    index = counted(store)
    assert len(zarrx.open_group(store, mode="r").members(max_depth=None)) == depth
    # each level: one bisection for its range and one jump past its only child folder
    assert index.visits <= (depth + 1) * 3 * (math.ceil(math.log2(len(index))) + 2)
    assert Scans.scans == 0
    store.close()


def zipped_folder(path, top="data.zarr", extra=()):
    """An archive as ``zip -r`` makes it of a directory store: everything under one folder."""
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{top}/", b"")
        zf.writestr(f"{top}/zarr.json", GROUP)
        zf.writestr(f"{top}/sub/zarr.json", GROUP)
        for name, data in extra:
            zf.writestr(name, data)
    return str(path)


@pytest.mark.parametrize("opener, error", [(zarrx.open, GroupNotFoundError),
                                           (zarrx.open_group, GroupNotFoundError),
                                           (zarrx.open_array, ArrayNotFoundError)])
def test_a_hierarchy_under_one_top_folder_is_named(tmp_path, opener, error):
    path = zipped_folder(tmp_path / "data.zip", extra=[("__MACOSX/data.zarr/._zarr.json", b"")])
    with pytest.raises(error, match=r"at '/' in ZipStore.*its top folder 'data.zarr' holds a "
                                    r"Zarr v3 group: open that with path='data.zarr'"):
        opener(path, mode="r")
    assert len(zarrx.open_group(path, mode="r", path="data.zarr").members()) == 1


def test_no_folder_is_named_when_none_or_several_hold_a_node(tmp_path):
    two = zipped_folder(tmp_path / "two.zip", extra=[("other.zarr/zarr.json", GROUP)])
    none = str(archive(tmp_path / "none.zip", ["data/x", "data/y/z"]))
    for path in (two, none):
        with pytest.raises(GroupNotFoundError) as info:
            zarrx.open_group(path, mode="r")
        assert "top folder" not in str(info.value)
    with pytest.raises(GroupNotFoundError) as info:         # a path given: nothing to suggest
        zarrx.open_group(two, mode="r", path="data.zarr/sub/none")
    assert "top folder" not in str(info.value)


def test_mode_a_creates_the_root_group_beside_the_folder(tmp_path):
    """As zarr-python's ZipStore in mode "a": the folder's group becomes a member."""
    path = zipped_folder(tmp_path / "data.zip")
    with ZipStore(path, mode="a") as store:
        assert [n for n, _ in zarrx.open_group(store, mode="a").members()] == ["data.zarr"]
    with ZipStore(path, mode="r") as store:
        assert store.exists("zarr.json") and store.exists("data.zarr/sub/zarr.json")
