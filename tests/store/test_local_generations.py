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
