"""What the ``zarrx`` command tests share: running the command, and a hierarchy to run it on."""
from __future__ import annotations

import numpy as np

import zarrx
from zarrx import cli


def _tree(tmp_path):
    p = str(tmp_path / "t.zarr")
    g = zarrx.open_group(p, mode="w", attributes={"title": "T"})
    g.create_array("a", shape=(10,), dtype="i2", chunks=(5,), attributes={"units": "m"})[:] = \
        np.arange(10)
    sub = g.create_group("sub")
    sub.create_array("m", shape=(4, 6), dtype="f4", chunks=(2, 3), shards=(4, 6))[...] = \
        np.arange(24, dtype="f4").reshape(4, 6)
    sub.create_group("deeper").create_array("z", shape=(1,), dtype="u1", chunks=(1,))
    return p


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err
