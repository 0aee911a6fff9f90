"""Temporary archives of ZipStore writers: a killed writer's temporary is left beside the
archive (which stays as it was) and removed by the next writer; a live writer's is kept."""
import os

import zarrx
from zarrx.store import ZipStore


_WRITER = """
import os, sys
from zarrx.store.zip import ZipStore
zs = ZipStore(sys.argv[1], mode="a")
zs.set("b", b"2")
print("open", flush=True)
if sys.stdin.readline().strip() == "die":
    os._exit(0)                 # killed: neither close nor the finalizer runs
zs.close()
print("closed", flush=True)
"""


def _writer(path):
    import subprocess
    import sys
    import zarrx as _z
    root = os.path.dirname(os.path.dirname(_z.__file__))
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, path], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": root})
    assert proc.stdout.readline() == "open\n"
    return proc


def _temps(folder):
    return sorted(n for n in os.listdir(folder) if ".zarrx-tmp-" in n)


def test_a_killed_writers_temporary_archive_is_removed_by_the_next_writer(tmp_path):
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zs.set("a", b"1")
    proc = _writer(path)
    proc.communicate("die\n")
    left = _temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(".h.zip.zarrx-tmp-")
    with ZipStore(path, mode="r") as zs:          # reading leaves it
        assert sorted(zs.list_prefix("")) == ["a"]
    assert _temps(tmp_path) == left
    with ZipStore(path, mode="a") as zs:          # the next writer removes it
        assert _temps(tmp_path) == left           # once it starts writing
        zs.set("c", b"3")
        assert len(_temps(tmp_path)) == 1 and _temps(tmp_path) != left
    assert _temps(tmp_path) == []
    with ZipStore(path) as zs:
        assert sorted(zs.list_prefix("")) == ["a", "c"]


_KILLED_MIDWAY = """
import sys
import numpy as np
import zarrx
from zarrx.store.zip import ZipStore
calls = 0
set_entry = ZipStore.set


def pausing_set(self, key, value):
    global calls
    calls += 1
    if calls == 9:                  # 8 chunks of 1 MiB written: wait here to be killed
        print("midway", flush=True)
        sys.stdin.readline()
    return set_entry(self, key, value)


ZipStore.set = pausing_set
with ZipStore(sys.argv[1], mode="a") as zs:
    z = zarrx.create_array(zs, name="big", shape=(64 << 20,), chunks=(1 << 20,), dtype="u1",
                           compressors=None)
    z[...] = 7
"""


def test_a_writer_killed_midway_through_a_large_write_leaves_a_temporary_the_next_writer_removes(
        tmp_path):
    import signal
    import subprocess
    import sys
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zarrx.create_array(zs, name="a", shape=(4,), dtype="u1")[...] = 1
    before = (tmp_path / "h.zip").read_bytes()
    root = os.path.dirname(os.path.dirname(zarrx.__file__))
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_MIDWAY, path], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": root})
    assert proc.stdout.readline() == "midway\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    left = _temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(f".h.zip.zarrx-tmp-{proc.pid}-")
    assert os.path.getsize(tmp_path / left[0]) > 4 << 20          # most chunks written so far
    assert (tmp_path / "h.zip").read_bytes() == before            # the archive as it was
    assert zarrx.open_group(path, mode="r")["a"][...].tolist() == [1, 1, 1, 1]
    with ZipStore(path, mode="a") as zs:                          # the next writer
        zarrx.create_array(zs, name="b", shape=(2,), dtype="u1")[...] = 2
        assert left[0] not in _temps(tmp_path)
    assert _temps(tmp_path) == []
    g = zarrx.open_group(path, mode="r")
    assert sorted(g.array_keys()) == ["a", "b"] and g["b"][...].tolist() == [2, 2]


def test_a_live_writers_temporary_archive_is_kept(tmp_path):
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zs.set("a", b"1")
    proc = _writer(path)
    theirs = _temps(tmp_path)
    other = ZipStore(path, mode="a")             # another writer opens meanwhile
    other.set("x", b"x")
    assert set(theirs) < set(_temps(tmp_path))
    other.discard()
    assert _temps(tmp_path) == theirs
    out, _ = proc.communicate("close\n")
    assert out == "closed\n" and proc.returncode == 0
    assert _temps(tmp_path) == []
    with ZipStore(path) as zs:                   # the live writer finished its archive
        assert sorted(zs.list_prefix("")) == ["a", "b"]


def test_a_writer_whose_temporary_was_removed_before_it_locked_it_makes_another(tmp_path,
                                                                                monkeypatch):
    """The moment between creating the temporary archive and locking it: a writer of another
    process that took the lock first removed it; the store writes to a new one."""
    from zarrx.store import ziptemp

    lock, taken = ziptemp._lock, []

    def removed_first(fd, *, wait):
        if not taken:
            name = next(n for n in os.listdir(tmp_path) if ".zarrx-tmp-" in n)
            taken.append(name)
            os.unlink(tmp_path / name)
        return lock(fd, wait=wait)

    monkeypatch.setattr(ziptemp, "_lock", removed_first)
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        assert len(_temps(tmp_path)) == 1 and _temps(tmp_path) != taken
        zs.set("a", b"1")
    with ZipStore(path) as zs:
        assert list(zs.list_prefix("")) == ["a"]


def test_a_copy_interrupted_at_the_first_write_leaves_no_temporary_archive(tmp_path, monkeypatch):
    """Mode "a" copies the archive at its first write: Ctrl-C during the copy removes the
    temporary archive it was copying into (and releases its lock), and the store goes on."""
    from zarrx.store import zip as zipmod
    path = str(tmp_path / "h.zip")
    with ZipStore(path, mode="w") as zs:
        zs.set("a", b"1")
    before = open(path, "rb").read()
    real = zipmod.copy_version

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt
    monkeypatch.setattr(zipmod, "copy_version", interrupted)
    zs = ZipStore(path, mode="a")
    try:
        try:
            zs.set("b", b"2")
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("the copy was not interrupted")
        assert _temps(tmp_path) == []
        monkeypatch.setattr(zipmod, "copy_version", real)
        zs.set("b", b"2")                       # the next write copies again
    finally:
        zs.close()
    assert _temps(tmp_path) == []
    assert open(path, "rb").read() != before
    with ZipStore(path) as zs:
        assert sorted(zs.list_prefix("")) == ["a", "b"]
