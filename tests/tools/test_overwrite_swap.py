"""``--overwrite`` into a local folder writes the new node beside the old one and swaps it in
only once complete: a run that fails or is killed part way leaves the old node as it was."""
from __future__ import annotations

import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError, StoreError
from zarrx.store import MemoryStore


class _Failing(MemoryStore):
    """A source whose last chunk cannot be read."""

    def get_many(self, requests):
        if any(key.endswith("c/3") for key, _ in requests):
            raise StoreError("c/3: cannot be read")
        return super().get_many(requests)


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _destinations(tmp_path):
    old = zarrx.create_array(str(tmp_path / "old.zarr"), shape=(20,), chunks=(5,), dtype="f8")
    old[:] = 7.5
    g = zarrx.open_group(str(tmp_path / "h.zarr"), mode="w")
    g.create_array("a", shape=(4,), dtype="i2", chunks=(2,))[:] = 3
    zarrx.consolidate_metadata(str(tmp_path / "h.zarr"))
    return ["old.zarr", "h.zarr/a"]


@pytest.mark.parametrize("how", ["copy", "convert"])
def test_a_failed_overwrite_keeps_the_old_node(tmp_path, how):
    # (before: the old node was removed first, and the failure left a partial new one)
    if how == "copy":                   # copied as stored: the source cannot be read
        source = _Failing()
        zarrx.create_array(source, shape=(40,), chunks=(10,), dtype="i4")[:] = np.arange(40)
        error = StoreError
    else:                               # converted: the last chunk cannot be decoded
        source = str(tmp_path / "src.zarr")
        zarrx.create_array(source, shape=(40,), chunks=(10,), dtype="i4")[:] = np.arange(40)
        (tmp_path / "src.zarr" / "c" / "3").write_bytes(b"not a zstd frame")
        error = CodecError
    for dst in _destinations(tmp_path):
        before = _files(tmp_path)
        with pytest.raises(error, match="c/3"):
            getattr(zarrx, how)(source, str(tmp_path / dst), overwrite=True, workers=1)
        assert _files(tmp_path) == before, dst
        assert not [n for n in os.listdir(tmp_path / (os.path.dirname(dst) or "."))
                    if "zarrx-tmp" in n], dst
    assert zarrx.open_array(str(tmp_path / "old.zarr"))[:].tolist() == [7.5] * 20
    h = zarrx.open_group(str(tmp_path / "h.zarr"), use_consolidated=True)
    assert h["a"][:].tolist() == [3] * 4


@pytest.mark.parametrize("how", ["copy", "convert"])
def test_a_successful_overwrite_holds_exactly_the_new_node(tmp_path, how):
    source = str(tmp_path / "src.zarr")
    zarrx.create_array(source, shape=(40,), chunks=(10,), dtype="i4")[:] = np.arange(40)
    for dst in _destinations(tmp_path):
        folder = tmp_path / dst
        folder.chmod(0o750)
        getattr(zarrx, how)(source, str(tmp_path / dst), overwrite=True)
        assert folder.stat().st_mode & 0o777 == 0o750      # the old folder's access
        assert zarrx.open_array(str(folder))[:].tolist() == list(range(40))
        if how == "copy":
            assert _files(folder) == _files(tmp_path / "src.zarr")
        assert not [n for n in os.listdir(folder.parent) if "zarrx-tmp" in n]
    h = zarrx.open_group(str(tmp_path / "h.zarr"), use_consolidated=True)
    assert h.metadata.consolidated["a"].shape == (40,)
    assert h["a"][:].tolist() == list(range(40))


_KILLED = """
import sys, time
import numpy as np
import zarrx
from stalling_store import StallingStore

def stuck(keys):
    if any(key.endswith("c/3") for key in keys):
        open(sys.argv[2], "w").close()
        time.sleep(60)

source = StallingStore(stuck)
zarrx.create_array(source, shape=(40,), chunks=(10,), dtype="i4")[:] = np.arange(40)
getattr(zarrx, sys.argv[3])(source, sys.argv[1], overwrite=True, workers=1)
"""


@pytest.mark.parametrize("how", ["copy", "convert"])
def test_a_killed_overwrite_keeps_the_old_node(tmp_path, how):
    for dst in _destinations(tmp_path):
        before = _files(tmp_path)
        started = tmp_path.parent / f"{tmp_path.name}-started"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_KILLED),
                                 str(tmp_path / dst), str(started), how], env=env)
        try:
            deadline = time.monotonic() + 60
            while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert started.exists(), "the run did not reach the last chunk"
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        started.unlink()
        left = [n for n in os.listdir(tmp_path / (os.path.dirname(dst) or "."))
                if "zarrx-tmp" in n]
        assert left, "the new node is written beside the old one"
        # the hidden folder left beside it is never listed, so never read as data
        h = zarrx.open_group(str(tmp_path / "h.zarr"), mode="r", use_consolidated=False)
        assert sorted(h.keys()) == ["a"]
        for name in left:
            shutil.rmtree(tmp_path / (os.path.dirname(dst) or ".") / name)
        assert _files(tmp_path) == before, dst


@pytest.mark.parametrize("how", ["copy", "convert"])
def test_an_interrupted_overwrite_says_the_destination_is_as_it_was(tmp_path, capsys,
                                                                     monkeypatch, how):
    # (before: the old node was removed, and convert said to resume the new one)
    from zarrx import cli
    copy_module = importlib.import_module("zarrx.tools.copy")
    from zarrx.tools.convert import _Job
    source = str(tmp_path / "src.zarr")
    zarrx.create_array(source, shape=(40,), chunks=(10,), dtype="i4")[:] = np.arange(40)
    _destinations(tmp_path)
    before = _files(tmp_path / "old.zarr")

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(copy_module, "run_parallel", ctrl_c)
    monkeypatch.setattr(_Job, "array", ctrl_c)
    dst = str(tmp_path / "old.zarr")
    assert cli.main([how, source, dst, "--overwrite", "-q"]) == 130
    assert capsys.readouterr().err == \
        f"zarrx: interrupted; the destination {dst} is as it was\n"
    assert _files(tmp_path / "old.zarr") == before
    assert not [n for n in os.listdir(tmp_path) if "zarrx-tmp" in n]


def test_check_repair_removes_an_old_folder_a_killed_overwrite_left(tmp_path):
    from zarrx.store.localfs import temp_name
    from zarrx.tools.check import check
    _destinations(tmp_path)
    h = tmp_path / "h.zarr"
    left = h / temp_name("a")
    shutil.copytree(h / "a", left)                  # as a killed run leaves it
    report = check(str(h), repair=True)             # recent: left alone
    assert report.findings == [] and report.recent_temporary == [left.name] and left.exists()
    old = time.time() - 7200
    for p in [left, *left.rglob("*")]:
        os.utime(p, (old, old), follow_symlinks=False)
    (left / "c" / "0").touch()                      # a writer still at work below it
    assert check(str(h), repair=True).findings == [] and left.exists()
    os.utime(left / "c" / "0", (old, old))
    report = check(str(h))
    assert [(f.kind, f.key, f.detail) for f in report.findings] == [
        ("temporary", left.name, "a temporary folder (a node that copy or convert --overwrite "
                                 "was writing) left by a writer 2.0 h ago")]
    report = check(str(h), repair=True)
    assert report.repairs == [f"removed the temporary folder {left.name}"]
    assert not left.exists()
    assert zarrx.open_array(str(h / "a"))[:].tolist() == [3] * 4


def test_a_parent_folder_that_takes_no_new_folder_leaves_the_old_node(tmp_path, monkeypatch):
    source = str(tmp_path / "src.zarr")
    zarrx.create_array(source, shape=(4,), chunks=(2,), dtype="i4")[:] = [1, 2, 3, 4]
    _destinations(tmp_path)
    before = _files(tmp_path)

    def refused(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(os, "mkdir", refused)
    dst = str(tmp_path / "old.zarr")
    with pytest.raises(StoreError, match=re.escape(
            f"cannot make a folder in {str(tmp_path)!r} to write the new node in before it "
            f"replaces {dst!r}: Permission denied; {dst!r} is left as it was")):
        zarrx.copy(source, dst, overwrite=True)
    assert _files(tmp_path) == before
