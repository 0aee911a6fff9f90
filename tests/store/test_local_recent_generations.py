"""A `LocalStore` generation (device, inode, size, mtime, ctime) taken while the file's
timestamps were within the current tick of the clock (or its file system's granularity)
could be repeated by a later file of the same size reusing the inode within that tick, on file
systems with coarse timestamps. Such a generation still equals itself (reads and conditional
writes are unchanged), but caches keyed by generations (shard indexes, kept shards) keep
nothing read at it, so they never serve one version's index for another's bytes."""
from __future__ import annotations

import numpy as np

import zarrx
from folder_stamps import coarse_stamps, settle
from zarrx.store import LocalStore, localsnap


def shard_reads(monkeypatch) -> list[str]:
    """The keys of the snapshot reads made from now on."""
    seen: list[str] = []
    orig = localsnap.FileSnapshot.read

    def read(self, ranges, arena=None):
        seen.append(self.key)
        return orig(self, ranges, arena)

    monkeypatch.setattr(localsnap.FileSnapshot, "read", read)
    return seen


def sharded(path):
    z = zarrx.create_array(str(path), shape=(64, 64), chunks=(8, 8), shards=(32, 32),
                           dtype="int32", fill_value=0)
    z[:] = np.arange(64 * 64, dtype="int32").reshape(64, 64)
    return z


def test_an_index_read_at_a_recent_generation_is_not_kept(tmp_path, monkeypatch):
    sharded(tmp_path / "a")
    with coarse_stamps():
        z = zarrx.open_array(str(tmp_path / "a"), mode="r")
        reads = shard_reads(monkeypatch)
        for _ in range(3):
            assert z[1, 1] == 65
        # before: the index once, then only the inner chunk (4 reads)
        assert reads == ["c/0/0"] * 6


def test_an_index_read_at_a_settled_generation_is_kept(tmp_path, monkeypatch):
    sharded(tmp_path / "a")
    settle(tmp_path / "a", tmp_path / "a" / "c" / "0" / "0")
    z = zarrx.open_array(str(tmp_path / "a"), mode="r")
    reads = shard_reads(monkeypatch)
    for _ in range(3):
        assert z[1, 1] == 65
    assert reads == ["c/0/0"] * 4                   # the index once, the inner chunk each time


def test_a_recent_generation_equals_the_settled_one_of_the_same_version(tmp_path):
    store = LocalStore(str(tmp_path))
    store.set("k", b"abc")
    with coarse_stamps():
        recent = store.get_versioned("k")[1]
        snap = store.snapshot("k")
        assert getattr(recent, "recent", False) and snap.generation == recent
        snap.close()
        assert store.generation("k") == recent
        assert repr(recent) == repr(tuple(recent))
        assert store.set_if("k", b"abd", recent) is not None    # conditional writes as before
    settle(tmp_path / "k")
    gen = store.get_versioned("k")[1]
    assert not getattr(gen, "recent", False) and gen == store.generation("k")
