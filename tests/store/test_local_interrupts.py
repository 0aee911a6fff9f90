"""Ctrl-C during a write to a LocalStore leaves no temporary file behind and the array usable."""
from __future__ import annotations

import os

import numpy as np
import pytest

import zarrx
from zarrx.store import localfs


def _leftovers(root) -> list[str]:
    return [f for _, _, files in os.walk(root) for f in files if localfs.is_temp_name(f)]


@pytest.mark.parametrize("partial", [False, True], ids=["whole-chunk", "read-modify-write"])
def test_ctrl_c_as_a_temporary_file_is_made_leaves_none_behind(tmp_path, monkeypatch, partial):
    root = tmp_path / "a.zarr"
    z = zarrx.create_array(str(root), shape=(8, 4), chunks=(4, 4), dtype="i4",
                           compressors=zarrx.codecs.Zstd(level=1))
    z[:] = 1
    made = []
    plain_open = localfs.Dir.open

    def open_then_interrupt(self, name, flags, mode=0o666):
        fd = plain_open(self, name, flags, mode)
        if localfs.is_temp_name(name):
            made.append(name)
            raise KeyboardInterrupt      # the signal lands just as the file exists
        return fd

    monkeypatch.setattr(localfs.Dir, "open", open_then_interrupt)
    monkeypatch.setattr(zarrx.store.LocalStore, "_put", None)     # the Python write path
    with zarrx.config.set(threads=1), pytest.raises(KeyboardInterrupt):
        if partial:
            z[1, 1] = 7
        else:
            z[:4] = 7
    monkeypatch.undo()
    assert made and _leftovers(root) == []
    z[1, 1] = 5
    expected = np.ones((8, 4), "i4")
    expected[1, 1] = 5
    np.testing.assert_array_equal(z[...], expected)
