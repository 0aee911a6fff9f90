"""``zarrx check`` finds the temporary files zarr-python's LocalStore leaves when a write is
interrupted (``<name>.<32 hex digits>.partial``): old ones are ``temporary`` and removed by
``--repair``, recent ones left alone, as for zarrx's own."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

import zarrx
from zarrx import cli

zarr = pytest.importorskip("zarr")


def _interrupted_write(path):
    """What Ctrl-C in zarr-python's LocalStore write leaves: the value's temporary file."""
    atomic_write = getattr(zarr.storage._local, "_atomic_write", None)
    if atomic_write is None:
        pytest.skip("zarr-python writes no temporary files")
    with pytest.raises(KeyboardInterrupt):
        with atomic_write(path, "wb") as f:
            f.write(b"half")
            raise KeyboardInterrupt
    left = [p for p in path.parent.iterdir() if p.name.endswith(".partial")]
    assert len(left) == 1
    return left[0]


def test_temporary_files_an_interrupted_zarr_python_write_leaves(tmp_path, capsys):
    # they were orphaned strays ("not a chunk key of the array"), which --repair kept
    root = tmp_path / "d.zarr"
    z = zarr.create_array(str(root), shape=(4, 4), chunks=(2, 2), dtype="i2", fill_value=0)
    z[...] = np.arange(16).reshape(4, 4)
    old = _interrupted_write(root / "c" / "1" / "0")
    recent = _interrupted_write(root / "zarr.json")
    stamp = time.time() - 7200
    os.utime(old, (stamp, stamp))
    report = zarrx.check(str(root))
    key = f"c/1/{old.name}"
    assert [(f.kind, f.key) for f in report.findings] == [("temporary", key)]
    assert "left by a zarr-python writer 2.0 h ago" in report.findings[0].detail
    assert report.recent_temporary == [recent.name]
    assert cli.main(["check", str(root), "--repair"]) == 4
    assert f"repaired: removed the temporary file {key}" in capsys.readouterr().out
    assert not old.exists() and recent.exists()
    assert zarr.open_array(str(root), mode="r")[...].tolist() == \
        np.arange(16).reshape(4, 4).tolist()
