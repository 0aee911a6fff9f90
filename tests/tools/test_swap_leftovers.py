"""The hidden folders a killed ``copy`` or ``convert --overwrite`` of a node at the top of its
store leaves beside it, outside the store: ``check`` of the node reports them and ``check
--repair`` removes them, and nothing their record does not prove a swap's leftover."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import zarrx
from zarrx import cli
from zarrx.store.localfs import temp_name
from zarrx.tools.check import check
from zarrx.tools.swap import NODE, RECORD

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

_KILLED = """
import os, signal, sys, time
import numpy as np
import zarrx
from stalling_store import StallingStore
from zarrx.tools import swap

target, started, how, when = sys.argv[1:5]

def stuck(keys):
    if when == "writing" and any(key.endswith("c/3") for key in keys):
        open(started, "w").close()
        time.sleep(60)

removing = swap._remove

def killed_removing(hidden):
    with open(os.path.join(hidden, swap.RECORD)) as f:
        if '"old"' in f.read():         # the old node, moved aside: killed as it goes
            open(started, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    removing(hidden)

if when == "removing":
    swap._remove = killed_removing
source = StallingStore(stuck)
zarrx.create_array(source, shape=(40,), chunks=(10,), dtype="i4")[:] = np.arange(40)
getattr(zarrx, how)(source, target, overwrite=True, workers=1)
"""


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _killed(tmp_path, target, how, when):
    started = tmp_path.parent / f"{tmp_path.name}-started"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(_KILLED), str(target),
                             str(started), how, when], env=env)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert started.exists(), "the run did not get there"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    started.unlink()


@pytest.mark.slow
@pytest.mark.parametrize("how", ["copy", "convert"])
@pytest.mark.parametrize("when", ["writing", "removing"])
def test_check_of_a_top_node_reports_and_repairs_what_a_killed_overwrite_left_beside_it(
        tmp_path, capsys, how, when):
    # (before: the hidden folder lay outside the store check opens, and was never reported)
    old = tmp_path / "old.zarr"
    zarrx.create_array(str(old), shape=(20,), chunks=(5,), dtype="f8")[:] = 7.5
    (tmp_path / "notes.txt").write_text("mine")
    _killed(tmp_path, old, how, when)
    left = [p for p in tmp_path.iterdir() if "zarrx-tmp" in p.name]
    assert len(left) == 1 and left[0].name.startswith(".old.zarr.zarrx-tmp-")
    want = [7.5] * 20 if when == "writing" else list(range(40))
    assert zarrx.open_array(str(old))[:].tolist() == want
    kept = _files(old)
    holds = ("the new node a zarrx copy or convert --overwrite of 'old.zarr' was writing when "
             "it was killed ('old.zarr' is as it was)" if when == "writing" else
             "the old node a zarrx copy or convert --overwrite of 'old.zarr' was removing when "
             "it was killed ('old.zarr' holds the new one)")
    assert cli.main(["check", str(old)]) == 0                # recent: a run may be writing it
    assert f"left alone (recent, a writer may be running): temporary file {left[0]}" in \
        capsys.readouterr().out
    assert cli.main(["check", str(old), "--temp-age", "0"]) == 1
    out = capsys.readouterr().out
    assert f"  temporary: {left[0]}: a hidden folder holding {holds}, left " in out
    assert cli.main(["check", str(old), "--repair", "--temp-age", "0"]) == 4
    assert f"  repaired: removed the hidden folder {left[0]}\n" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "old.zarr"]
    assert _files(old) == kept and (tmp_path / "notes.txt").read_text() == "mine"
    assert cli.main(["check", str(old), "--temp-age", "0"]) == 0


def _hidden(parent, name, record=None, extra=()):
    path = parent / temp_name(name)
    (path / NODE).mkdir(parents=True)
    zarrx.create_array(str(path / NODE), shape=(2,), dtype="u1")[:] = 1
    if record is not None:
        (path / RECORD).write_text(json.dumps(record))
    for entry in extra:
        (path / entry).write_text("x")
    return path


def test_only_folders_proven_a_swaps_leftovers_of_the_node_are_removed(tmp_path):
    data = tmp_path / "data.zarr"
    zarrx.open_group(str(data), mode="w").create_array("a", shape=(2,), dtype="u1")[:] = 2
    mine = {"zarrx": "swap", "replaces": "data.zarr", "holds": "new"}
    proven = _hidden(tmp_path, "data.zarr", mine)
    not_proven = [
        _hidden(tmp_path, "data.zarr"),                                     # no record
        _hidden(tmp_path, "data.zarr", dict(mine, replaces="other.zarr")),  # another's
        _hidden(tmp_path, "data.zarr", dict(mine, holds="both")),
        _hidden(tmp_path, "data.zarr", dict(mine, extra=1)),
        _hidden(tmp_path, "data.zarr", mine, extra=["photo.jpg"]),          # more in it
    ]
    ignored = [_hidden(tmp_path, "other.zarr", dict(mine, replaces="other.zarr")),
               tmp_path / ".data.zarr.zarrx-tmp-12-notsixteenhexdigits",
               tmp_path / ".data.zarr.zarrx-tmp-12-0123456789abcdef.x"]
    ignored[1].mkdir()
    ignored[2].mkdir()
    link = tmp_path / temp_name("data.zarr")                 # a link to a proven one
    link.symlink_to(proven)
    file = tmp_path / temp_name("data.zarr")
    file.write_text("a file, not a folder")
    piped = _hidden(tmp_path, "data.zarr")                   # a record that is no file:
    os.mkfifo(piped / RECORD)                                # never waited on
    linked = _hidden(tmp_path, "data.zarr")
    (linked / RECORD).symlink_to(tmp_path / "record.json")   # nor followed
    (tmp_path / "record.json").write_text(json.dumps(mine))
    not_proven += [piped, linked]
    before = {k: v for k, v in _files(tmp_path).items() if "record" not in k}
    report = check(str(data), temp_age=0)
    assert sorted(f.key for f in report.findings) == sorted(map(str, [proven, *not_proven]))
    assert report.recent_temporary == []
    unproven = [f for f in report.findings if f.key != str(proven)]
    assert all("without the record that proves it theirs" in f.detail for f in unproven)
    report = check(str(data), repair=True, temp_age=0)
    assert report.repairs == [f"removed the hidden folder {proven}"]
    assert len(report.remaining) == len(not_proven)
    after = {k: v for k, v in _files(tmp_path).items() if "record" not in k}
    assert not proven.exists() and link.is_symlink() and file.read_text().startswith("a file")
    assert after == {k: v for k, v in before.items() if not k.startswith(proven.name + "/")}
    assert all(p.exists() for p in not_proven + ignored)


def test_a_node_below_the_top_of_its_store_looks_at_nothing_beside_the_store(tmp_path):
    data = tmp_path / "data.zarr"
    zarrx.open_group(str(data), mode="w").create_array("a", shape=(2,), dtype="u1")[:] = 2
    mine = {"zarrx": "swap", "replaces": "data.zarr", "holds": "new"}
    proven = _hidden(tmp_path, "data.zarr", mine)
    assert check(str(data / "a"), repair=True, temp_age=0).findings == []
    assert proven.exists()


def test_an_overwrite_leaves_nothing_beside_and_its_folders_hold_a_record(tmp_path,
                                                                         monkeypatch):
    from zarrx.tools import swap
    src = tmp_path / "src.zarr"
    zarrx.create_array(str(src), shape=(4,), chunks=(2,), dtype="i4")[:] = np.arange(4)
    dst = tmp_path / "dst.zarr"
    zarrx.copy(str(src), str(dst))
    seen = []
    real = swap._remove

    def looked_at(hidden):
        seen.append(json.loads(open(os.path.join(hidden, RECORD)).read()))
        real(hidden)
    monkeypatch.setattr(swap, "_remove", looked_at)
    zarrx.convert(str(src), str(dst), overwrite=True, fill_value=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dst.zarr", "src.zarr"]
    assert sorted(r["holds"] for r in seen) == ["new", "old"]
    assert all(r["replaces"] == "dst.zarr" for r in seen)
    assert zarrx.open_array(str(dst)).fill_value == 5
