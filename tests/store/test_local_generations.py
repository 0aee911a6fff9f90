"""``LocalStore.generations``: the generations of many keys in one call into the kernel
(:mod:`zarrx.store._localstat`), each as ``generation`` answers it."""
from __future__ import annotations

import os

import pytest

from zarrx.errors import StoreError
from zarrx.store import LocalStore


def test_generations_of_keys_down_a_path_are_each_keys_generation(tmp_path):
    """``generations`` walks down from one key's folder to the next key's (the documents of
    the groups above a node): any order of keys, a file where a folder is named, a folder
    missing, each answers as ``generation``; a link on the way raises as ``generation`` does."""
    s = LocalStore(str(tmp_path / "s"))
    chain = ["zarr.json"] + ["/".join(f"l{j}" for j in range(i + 1)) + "/zarr.json"
                             for i in range(6)]
    for key in chain:
        s.set(key, b"{}")
    s.set("f", b"x")
    odd = ["l0/l1/zarr.json", "zarr.json", "l0/l1/l2/l3/zarr.json", "f/zarr.json",
           "l0/nothing/zarr.json", "l0/l1/l2/x", "l0/l1/l2/l3/l4/l5/zarr.json", "l0/l1"]
    for keys in (chain, chain[::-1], odd, odd[::-1], chain + odd):
        assert s.generations(keys) == [s.generation(k) for k in keys]
    s.set("l0/l1/l2/zarr.json", b"{ }")         # a new generation, seen
    assert s.generations(chain)[3] == s.generation("l0/l1/l2/zarr.json") != \
        s.generations(chain[:3])[-1]
    os.rename(tmp_path / "s" / "l0" / "l1", tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", tmp_path / "s" / "l0" / "l1")
    with pytest.raises(StoreError, match="symbolic link"):
        s.generation("l0/l1/l2/zarr.json")
    with pytest.raises(StoreError, match="symbolic link"):
        s.generations(chain)


def test_generations_of_files_stamped_after_2262_or_before_1970(tmp_path):
    """A modification time past 2262-04-11 (more nanoseconds since 1970 than 64 bits hold; a
    clock set far ahead, ``touch -d``, a restored archive) or before 1970 reads as
    ``generation`` has it: the kernel does not wrap it around to a negative number."""
    s = LocalStore(str(tmp_path / "s"))
    keys = ["a/zarr.json", "a/b/zarr.json", "zarr.json"]
    for key in keys:
        s.set(key, b"{}")
    stamps = {"a/zarr.json": 10_400_000_000 * 10**9 + 5,     # the year 2299
              "a/b/zarr.json": 9_223_372_037 * 10**9,        # just past 2**63 ns
              "zarr.json": -86_400 * 10**9 + 7}              # 1969-12-31
    for key, ns in stamps.items():
        os.utime(tmp_path / "s" / key, ns=(ns, ns))
        if os.stat(tmp_path / "s" / key).st_mtime_ns != ns:
            pytest.skip(f"the file system of {tmp_path} does not keep the stamp {ns}")
    got = s.generations(keys)
    assert got == [s.generation(k) for k in keys]
    assert [g[3] for g in got] == [stamps[k] for k in keys]


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd")
def test_generations_leave_no_descriptor_open(tmp_path):
    """Every way a walk ends (a folder missing, a file where a folder is named, a link on the
    way or at the end, an empty folder, a name of 255 bytes, a key too long for one path, a
    root that is a link, missing or a file) closes what it opened: many calls later the
    process holds the descriptors it held before."""
    base = tmp_path / "s"
    s = LocalStore(str(base))
    long_name = "n" * 255
    deep = "/".join(["d" * 200] * 21) + "/zarr.json"        # past PATH_MAX with the root
    for key in ("a/b/zarr.json", "a/zarr.json", "f", "a/" + long_name, deep):
        s.set(key, b"{}")
    (base / "empty").mkdir()
    os.symlink(base / "a", base / "link")
    os.symlink(base / "f", base / "a" / "flink")
    os.symlink(base, tmp_path / "rootlink")
    (tmp_path / "file").write_bytes(b"x")
    stores = [s, LocalStore(str(tmp_path / "rootlink")), LocalStore(str(tmp_path / "none")),
              LocalStore(str(tmp_path / "file"))]
    keysets = [["a/b/zarr.json", "missing/x/y/zarr.json", "f/zarr.json", "f/x/y",
                "empty/zarr.json", "a/b/c/d/e", "a/" + long_name, "a/" + long_name + "/x",
                deep, "a/zarr.json", "zarr.json"],
               ["a/b/zarr.json", "a/flink"], ["a/zarr.json", "link/b/zarr.json"]]

    def all_calls():
        for store in stores:
            for keys in keysets:
                try:
                    store.generations(keys)
                except StoreError:
                    pass
    all_calls()
    before = open_fds()
    for _ in range(200):
        all_calls()
    assert open_fds() == before
    assert s.generations(keysets[0])[:2] == [s.generation("a/b/zarr.json"), None]
