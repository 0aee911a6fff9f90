"""``zarrx.check`` on a local directory: entries the store neither lists nor reads as keys
(links, pipes, sockets, devices) are found and never repaired."""
from __future__ import annotations

import os

import pytest
from tools.test_check import _data, _kinds

import zarrx


def test_links_pipes_and_sockets_are_found_and_left_alone(tmp_path):
    # LocalStore lists none of them: a read of a linked chunk fails, one of a pipe or a socket
    # reads the fill value, so a check that reported nothing would hide the data there
    import socket
    root = tmp_path / "d.zarr"
    _data(str(root))
    chunk = root / "plain" / "c" / "0" / "1"
    os.rename(chunk, tmp_path / "elsewhere")
    os.symlink(tmp_path / "elsewhere", chunk)
    os.replace(root / "sharded" / "c" / "1", tmp_path / "row")
    os.symlink(tmp_path / "row", root / "sharded" / "c" / "1")          # a linked folder
    os.remove(root / "plain" / "c" / "1" / "1")
    os.mkfifo(root / "plain" / "c" / "1" / "1")
    os.remove(root / "plain" / "c" / "1" / "0")
    sock, cwd = socket.socket(socket.AF_UNIX), os.getcwd()
    os.chdir(root / "plain" / "c" / "1")                # a socket's path is short
    try:
        sock.bind("0")
    finally:
        os.chdir(cwd)
    (root / "plain" / "c" / "0" / ".2.zarrx-tmp-1-aa").symlink_to(tmp_path / "elsewhere")
    try:
        with pytest.raises(zarrx.StoreError, match="is a symbolic link"):
            zarrx.open_array(str(root / "plain"))[...]
        report = zarrx.check(str(root))
        assert _kinds(report) == [("unreadable", "plain/c/0/1", None),
                                  ("unreadable", "plain/c/1/0", None),
                                  ("unreadable", "plain/c/1/1", None),
                                  ("unreadable", "sharded/c/1", None)]
        detail = {f.key: f.detail for f in report.findings}
        assert detail["plain/c/0/1"].startswith("a symbolic link: LocalStore follows no link")
        assert detail["plain/c/1/1"] == ("a named pipe, not a regular file: LocalStore reads "
                                         "it as a missing key (a chunk there reads as the fill "
                                         "value)")
        assert detail["plain/c/1/0"].startswith("a socket, not a regular file")
        assert {f.node for f in report.findings} == {"/"}
        report = zarrx.check(str(root), repair=True)
        assert len(report.remaining) == 4 and not report.repaired
        assert os.path.islink(chunk) and os.path.islink(root / "sharded" / "c" / "1")
    finally:
        sock.close()


def test_a_node_folder_whose_name_the_store_cannot_address_is_a_stray_shown_escaped(tmp_path):
    # a folder another tool made, with a zarr.json, named with control characters (before:
    # the check stopped at it with the store's error, exit status 3); the name is printed
    # escaped, never raw to a terminal
    root = tmp_path / "g.zarr"
    g = zarrx.open_group(str(root), mode="w")
    g.create_array("ok", shape=(2,), dtype="i1")[:] = [1, 2]
    odd = root / "b\x1b[31mX\nY"
    odd.mkdir()
    (odd / "zarr.json").write_bytes((root / "ok" / "zarr.json").read_bytes())
    (root / "ok" / "c" / "\x07").write_bytes(b"x")
    report = zarrx.check(str(root), repair=True, remove_strays=True)
    assert sorted((f.kind, f.key) for f in report.findings) == [
        ("orphaned", "b\\x1b[31mX\\x0aY/zarr.json"), ("orphaned", "ok/c/\\x07")]
    assert all("the store cannot address its name" in f.detail for f in report.findings)
    assert not report.repaired and (odd / "zarr.json").exists()
    assert all(line.isprintable() for line in str(report).split("\n"))
