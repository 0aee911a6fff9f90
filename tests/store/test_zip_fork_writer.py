"""A ZipStore being written, inherited by a forked process: the archive stays the writer's.
The forked process reads it and may close its copy; it never writes into the archive nor
finishes it (before: closing in the forked process, or its exit, wrote a central directory into
the writer's temporary archive and moved it in place, so the writer's later writes were lost
and its close failed)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import ZipStore

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _fork(child) -> str:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                   # pragma: no cover - the child
        os.close(r)
        try:
            msg = child()
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            msg = f"{type(exc).__name__}: {exc}"
        os.write(w, msg.encode()[:4000])
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        out = f.read().decode()
    os.waitpid(pid, 0)
    return out


@pytest.mark.parametrize("mode", ["w", "a"])
def test_a_forked_process_closing_the_store_leaves_the_archive_to_its_writer(tmp_path, mode):
    path = tmp_path / "a.zip"
    if mode == "a":
        with ZipStore(path, mode="w") as st:
            zarrx.create_array(st, name="old", shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    st = ZipStore(path, mode=mode)
    a = zarrx.create_array(st, name="new", shape=(100,), chunks=(10,), dtype="i4")
    a[:50] = np.arange(50)          # small entries: some still buffered at the fork

    def child() -> str:
        got = zarrx.open_array(st, path="new", mode="r")[:50]
        st.close()
        return "read" if (got == np.arange(50)).all() else f"read {got}"

    assert _fork(child) == "read"
    a[50:] = np.arange(50, 100)
    st.close()
    with ZipStore(path, mode="r") as rs:
        np.testing.assert_array_equal(zarrx.open_array(rs, path="new")[:], np.arange(100))
        if mode == "a":
            np.testing.assert_array_equal(zarrx.open_array(rs, path="old")[:], [1, 1, 1, 1])


def test_a_forked_process_cannot_write_the_archive(tmp_path):
    st = ZipStore(tmp_path / "a.zip", mode="w")
    zarrx.create_array(st, shape=(10,), chunks=(5,), dtype="i4")[:5] = 3

    def child() -> str:
        try:
            st.set("x/zarr.json", b"{}")
        except StoreError as exc:
            return str(exc)
        return "written"

    msg = _fork(child)
    assert msg == (f"{st!r}: cannot write entry 'x/zarr.json': process {os.getpid()} opened the "
                   f"archive for writing; a forked process only reads it")
    st.set("y", b"1")
    st.close()
    with ZipStore(tmp_path / "a.zip", mode="r") as rs:
        assert rs.get("y") == b"1" and "x/zarr.json" not in list(rs.list_prefix(""))
