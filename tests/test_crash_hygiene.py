"""What a writer killed with SIGKILL leaves behind: invisible temporary files that node deletes,
overwrites and ``LocalStore.sweep`` remove; never a torn object; never stale consolidated
metadata. The writers are forked children killed for real."""
from __future__ import annotations

import json
import os
import random
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore
from zarrx.store._localwrite import set_link_method
from zarrx.store.localfs import TMP_MARK

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")


def killed_while_writing(store: LocalStore, key: str) -> int:
    """Fork a child that writes ``key`` through the Python path and is killed just before its
    rename (or link); its pid."""
    pid = os.fork()
    if pid == 0:                                # the child never returns
        try:
            store._put = None                   # type: ignore[misc]
            # a new key is linked in, an existing one renamed over: die before either
            os.replace = os.link = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
            store.set(key, b"half-way")
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return pid


def killed_in_the_write_kernel(store: LocalStore, key: str, folder: Path, how: str) -> int:
    """Fork a child that writes a large value of ``key`` (a plain key: the C write kernel
    takes it, naming unnamed files ``how``: see ``_localwrite.link_method``) and kill it while
    its file in ``folder`` is being written; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            set_link_method(how)
            store.set(key, b"x" * (768 << 20))
        finally:
            os._exit(1)
    deadline = time.monotonic() + 60
    while not writing_in(pid, folder):
        assert time.monotonic() < deadline, "the child's file never appeared"
        assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the child finished before the kill"
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return pid


def writing_in(pid: int, folder: Path) -> bool:
    """Whether process ``pid`` has a file open in ``folder``: a temporary file, or an unnamed
    one (``O_TMPFILE``, which /proc shows as ``#<inode> (deleted)``)."""
    if any(TMP_MARK in n for n in os.listdir(folder)):
        return True
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(f"{folder}/#"):
            return True
    return False


def temp_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob(f"*{TMP_MARK}*"))


def test_a_killed_writer_leaves_an_invisible_recognisable_temp_file(tmp_path):
    root = tmp_path / "data.zarr"
    a = zarrx.create_array(str(root), shape=(4,), dtype="i2", chunks=(2,))
    a[:] = np.arange(4)
    pid = killed_while_writing(a.store, "c/0")
    [left] = temp_files(root)
    assert re.fullmatch(rf"c/\.0\.zarrx-tmp-{pid}-[0-9a-f]{{16}}", left)
    assert sorted(a.store.list_prefix("")) == ["c/0", "c/1", "zarr.json"]
    assert a.store.list_dir("c/") == (["0", "1"], [])
    np.testing.assert_array_equal(zarrx.open_array(str(root), mode="r")[:], np.arange(4))


def test_a_writer_killed_in_the_write_kernel_leaves_the_old_value(tmp_path):
    """Named temporary files (where unnamed ones cannot be linked): a recognisable one is left,
    which ``sweep`` removes."""
    root = tmp_path / "data.zarr"
    a = zarrx.create_array(str(root), shape=(4,), dtype="i2", chunks=(2,))
    a[:] = np.arange(4)
    pid = killed_in_the_write_kernel(a.store, "c/0", root / "c", "none")
    [left] = temp_files(root)
    assert re.fullmatch(rf"c/\.0\.zarrx-tmp-{pid}-[0-9a-f]{{16}}", left)
    assert sorted(a.store.list_prefix("")) == ["c/0", "c/1", "zarr.json"]
    np.testing.assert_array_equal(zarrx.open_array(str(root), mode="r")[:], np.arange(4))
    assert a.store.sweep(older_than=None) == [left] and temp_files(root) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
@pytest.mark.parametrize("how", ["fd", "proc"])
@pytest.mark.parametrize("key", ["c/0", "c/3"])
def test_a_writer_killed_writing_an_unnamed_file_leaves_nothing(tmp_path, how, key):
    """An existing key (c/0) and a new one (c/3): the file being written has no name yet, so
    the kill leaves nothing behind, not even a temporary file."""
    root = tmp_path / "data.zarr"
    a = zarrx.create_array(str(root), shape=(8,), dtype="i2", chunks=(2,))
    a[:4] = np.arange(4)
    killed_in_the_write_kernel(a.store, key, root / "c", how)
    assert temp_files(root) == []
    assert sorted(os.listdir(root / "c")) == ["0", "1"]
    np.testing.assert_array_equal(zarrx.open_array(str(root), mode="r")[:4], np.arange(4))


@pytest.mark.parametrize("how", ["overwrite", "del", "delete_prefix"])
def test_temp_files_go_with_their_node(tmp_path, how):
    g = zarrx.open_group(str(tmp_path / "g.zarr"), mode="w")
    a = g.create_array("a", shape=(4,), dtype="i2", chunks=(2,))
    a[:] = 1
    killed_while_writing(g.store, "a/c/1")
    killed_while_writing(g.store, "a/zarr.json")
    assert len(temp_files(tmp_path / "g.zarr")) == 2
    if how == "overwrite":
        g.create_array("a", shape=(2,), dtype="i2", chunks=(2,), overwrite=True)
    elif how == "del":
        del g["a"]
        assert not (tmp_path / "g.zarr" / "a").exists()
    else:
        g.store.delete_prefix("a/")
    assert temp_files(tmp_path / "g.zarr") == []


def test_sweep_removes_old_temp_files_only(tmp_path):
    store = LocalStore(tmp_path / "root")
    store.set("x/k", b"1")
    killed_while_writing(store, "x/k")
    killed_while_writing(store, "y/deep/k")
    recent, old = temp_files(tmp_path / "root")         # x/..., y/deep/...
    hour_ago = time.time() - 3601
    os.utime(tmp_path / "root" / old, (hour_ago, hour_ago))
    assert store.sweep() == [old]                       # older than an hour by default
    assert sorted(os.listdir(tmp_path / "root")) == ["x"]   # folders left empty are gone
    assert store.sweep("x/", older_than=3600) == []
    assert store.sweep("y/", older_than=0) == []
    assert store.sweep("x/", older_than=0) == [recent]
    assert temp_files(tmp_path / "root") == [] and store.get("x/k") == b"1"
    with pytest.raises(zarrx.ReadOnlyError):
        LocalStore(tmp_path / "root", read_only=True).sweep()


# -- consolidated metadata (v2 .zmetadata, v3 inline) under kill -9 -----------------------------
NODES = ("", "sub", "sub/arr")


def consolidated(root: Path, zarr_format: int) -> None:
    g = zarrx.open_group(str(root), mode="w", zarr_format=zarr_format)
    g.create_group("sub").create_array("arr", shape=(3,), dtype="f8", chunks=(3,))
    zarrx.consolidate_metadata(str(root))


def write_forever(root: Path, ready: int, trial: int) -> None:
    g = zarrx.open_group(str(root), mode="r+")
    nodes = [g, g["sub"], g["sub/arr"]]
    os.write(ready, b"1")
    i = 0
    while True:
        i += 1
        for node in nodes:
            node.attrs["n"] = f"{trial}.{i}"           # never a value an earlier trial wrote
            node.attrs["nan"] = float("nan")


def direct_attrs(root: Path, path: str, zarr_format: int) -> dict:
    if zarr_format == 3:
        return json.loads((root / path / "zarr.json").read_text()).get("attributes", {})
    attrs = root / path / ".zattrs"
    return json.loads(attrs.read_text()) if attrs.exists() else {}


def stored_consolidated(root: Path, zarr_format: int) -> tuple[list[str], dict[str, dict]]:
    """The pending paths of the consolidated document on disk and the attributes of each
    entry, by path."""
    if zarr_format == 3:
        doc = json.loads((root / "zarr.json").read_text())["consolidated_metadata"]
        return doc.get("zarrx_pending", []), {p: e.get("attributes", {})
                                              for p, e in doc["metadata"].items()}
    doc = json.loads((root / ".zmetadata").read_text())
    return doc.get("zarrx_pending", []), {p: doc["metadata"].get(f"{p}/.zattrs" if p else
                                                                 ".zattrs", {}) for p in NODES}


def kill_trials(tmp_path: Path, trials: int, zarr_format: int = 2) -> tuple[int, int, int]:
    """(stale metadata served, trials that killed a writer between its writes, trials whose
    consolidated entries were left stale on disk, i.e. where the pending list was needed)."""
    root = tmp_path / f"v{zarr_format}.zarr"
    consolidated(root, zarr_format)
    rng = random.Random(1234)
    stale = mid_write = needed = 0
    for trial in range(trials):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                write_forever(root, w, trial)
            finally:
                os._exit(1)
        os.close(w)
        os.read(r, 1)
        os.close(r)
        time.sleep(rng.uniform(0.0, 0.12))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        for doc in root.rglob(".z*" if zarr_format == 2 else "zarr.json"):  # 0 torn objects
            json.loads(doc.read_text())
        assert temp_files(root) == [] or all(TMP_MARK in p for p in temp_files(root))
        pending, entry_attrs = stored_consolidated(root, zarr_format)
        mid_write += bool(pending)
        needed += any(entry_attrs.get(p, {}).get("n") != direct_attrs(root, p, zarr_format)
                      .get("n") for p in pending)
        g = zarrx.open_group(str(root), mode="r")
        assert g.metadata.consolidated is not None
        served = {"": dict(g.attrs), "sub": dict(g["sub"].attrs),
                  "sub/arr": dict(g["sub/arr"].attrs)}
        for path in NODES:
            want = direct_attrs(root, path, zarr_format)
            got = served[path]
            same = got.keys() == want.keys() and all(
                got[k] == want[k] or (got[k] != got[k] and want[k] != want[k]) for k in want)
            stale += not same
    return stale, mid_write, needed


def test_killed_v2_writers_never_leave_stale_consolidated_metadata(tmp_path):
    stale, mid_write, _ = kill_trials(tmp_path, 50)
    assert stale == 0
    assert mid_write > 0                                # kills did land between the writes


def test_killed_v3_writers_never_leave_stale_consolidated_metadata(tmp_path):
    """The same trial for v3 inline consolidated metadata in the root zarr.json."""
    stale, mid_write, _ = kill_trials(tmp_path, 50, 3)
    assert stale == 0
    assert mid_write > 0


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ZARRX_SLOW"), reason="set ZARRX_SLOW=1 to run")
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_killed_writers_never_leave_stale_consolidated_metadata_200(tmp_path, zarr_format):
    stale, mid_write, needed = kill_trials(tmp_path, 200, zarr_format)
    assert stale == 0 and mid_write > 0
    assert needed > 0           # some kills left the document stale on disk: readers settled it
