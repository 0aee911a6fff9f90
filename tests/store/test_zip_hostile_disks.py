"""ZipStore on a failing disk: a failed write or close, or a file size limit, never costs the
previous archive, which is replaced only when the store closes."""
from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import textwrap

import pytest

from zarrx.errors import StoreError
from zarrx.store import ZipStore

from .zip_archives import GROUP


def previous(path):
    with ZipStore(path, mode="w") as store:
        store.set("zarr.json", GROUP)
        store.set("c/0", b"old chunk")
    return path.read_bytes()


class FullDisk:
    """Wraps the archive file: writes fail with ENOSPC once ``budget`` bytes are written."""

    def __init__(self, fp, budget):
        self.fp, self.budget = fp, budget

    def write(self, data):
        self.budget -= len(data)
        if self.budget < 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.fp.write(data)

    def __getattr__(self, name):
        return getattr(self.fp, name)


@pytest.mark.parametrize("mode", ["a", "w"])
def test_a_failed_write_keeps_the_previous_archive(tmp_path, mode):
    path = tmp_path / "data.zip"
    before = previous(path)
    store = ZipStore(path, mode=mode)
    store.set("c/1", b"new chunk")
    store._zf.fp = FullDisk(store._zf.fp, budget=100)
    with pytest.raises(StoreError) as info:
        store.set("c/2", os.urandom(10_000))
    assert str(info.value) == (f"{store!r}: cannot write entry 'c/2': [Errno 28] No space left "
                               "on device")
    with pytest.raises(StoreError, match=re.escape(
            "cannot write entry 'c/3': an earlier write failed ([Errno 28] No space left on "
            "device); closing keeps the previous archive")):
        store.set("c/3", b"x")
    store.close()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]      # no temporary archive left


def test_a_failed_close_keeps_the_previous_archive(tmp_path):
    path = tmp_path / "data.zip"
    before = previous(path)
    store = ZipStore(path, mode="a")
    store.set("c/1", b"new chunk")
    store._zf.fp = FullDisk(store._zf.fp, budget=10)          # the central directory fails
    with pytest.raises(StoreError) as info:
        store.close()
    assert str(info.value) == (f"{store!r}: cannot finish the archive: [Errno 28] No space left "
                               "on device; the previous archive is unchanged")
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]
    store.close()                                             # closed: idempotent


def test_a_file_size_limit_keeps_the_previous_archive(tmp_path):
    """A real write failure: the writer runs under RLIMIT_FSIZE and gets EFBIG."""
    pytest.importorskip("resource")
    path = tmp_path / "data.zip"
    before = previous(path)
    code = textwrap.dedent(f"""
        import os, resource, signal
        from zarrx.store import ZipStore
        from zarrx.errors import StoreError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        store = ZipStore({str(path)!r}, mode="a")
        try:
            store.set("big", os.urandom(200_000))
        except StoreError as exc:
            print("refused:", exc)
        store.close()
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    assert "refused:" in out and "File too large" in out
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]


def test_writing_replaces_the_archive_only_when_closed(tmp_path):
    path = tmp_path / "data.zip"
    previous(path)
    store = ZipStore(path, mode="w")
    store.set("zarr.json", GROUP)
    with ZipStore(path) as reader:                            # still the previous archive
        assert reader.get("c/0") == b"old chunk"
    store.close()
    with ZipStore(path) as reader:
        assert sorted(reader.list_prefix("")) == ["zarr.json"]
    with pytest.raises(StoreError, match="cannot open in mode 'x'"):
        ZipStore(path, mode="x")


class Interrupted(FullDisk):
    """Wraps the archive file: Ctrl-C arrives (once) when ``budget`` bytes are written."""

    def write(self, data):
        self.budget -= len(data)
        if self.budget < 0:
            self.budget = float("inf")
            raise KeyboardInterrupt
        return self.fp.write(data)


@pytest.mark.parametrize("mode", ["a", "w"])
def test_an_interrupted_write_keeps_the_previous_archive(tmp_path, mode):
    """An entry cut short by Ctrl-C leaves the archive being written in doubt: as after a
    failed write, the store refuses further writes and closing keeps the previous archive."""
    path = tmp_path / "data.zip"
    before = previous(path)
    store = ZipStore(path, mode=mode)
    store.set("c/1", b"new chunk")
    store._zf.fp = Interrupted(store._zf.fp, budget=100)
    with pytest.raises(KeyboardInterrupt):
        store.set("c/2", os.urandom(10_000))
    with pytest.raises(StoreError, match=re.escape(
            "cannot write entry 'c/3': an earlier write failed (interrupted: "
            "KeyboardInterrupt); closing keeps the previous archive")):
        store.set("c/3", b"x")
    store.close()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.zip"]
