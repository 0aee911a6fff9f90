"""``zarrx.copy``: a node and everything below it, byte for byte, between stores."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import cli
from zarrx.store import LocalStore, MemoryStore, ZipStore


def _hierarchy(path):
    g = zarrx.open_group(path, mode="w", attributes={"title": "t"})
    a = g.create_array("a", shape=(20, 20), dtype="i4", chunks=(8, 8), shards=(16, 16))
    a[...] = np.arange(400).reshape(20, 20)
    g.create_group("sub", attributes={"k": 1}).create_array("b", shape=(5,), dtype="f8",
                                                           chunks=(2,))[...] = 1.5
    zarrx.consolidate_metadata(path)
    return g


def _objects(store, prefix=""):
    return {k[len(prefix):]: store.get(k) for k in store.list_prefix(prefix)}


def test_copy_through_a_zip_archive_keeps_every_byte(tmp_path):
    src = str(tmp_path / "src.zarr")
    _hierarchy(src)
    report = zarrx.copy(src, str(tmp_path / "x.zip"))
    assert report.objects == len(_objects(LocalStore(src)))
    zarrx.copy(str(tmp_path / "x.zip"), str(tmp_path / "back.zarr"))
    assert _objects(LocalStore(str(tmp_path / "back.zarr"))) == _objects(LocalStore(src))
    with ZipStore(tmp_path / "x.zip") as z:
        assert _objects(z) == _objects(LocalStore(src))


def test_a_node_copied_into_an_existing_group_becomes_a_member(tmp_path):
    src = str(tmp_path / "src.zarr")
    _hierarchy(src)
    zarrx.open_group(str(tmp_path / "dst.zarr"), mode="w")
    zarrx.copy(f"{src}/sub", str(tmp_path / "dst.zarr" / "copied"))
    g = zarrx.open_group(str(tmp_path / "dst.zarr"), mode="r")
    assert g["copied"].attrs["k"] == 1 and g["copied/b"][:].tolist() == [1.5] * 5


def test_an_existing_destination_needs_overwrite(tmp_path):
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    _hierarchy(src)
    zarrx.create_array(dst, shape=(1,), dtype="u1", chunks=(1,))
    with pytest.raises(zarrx.NodeExistsError, match="overwrite"):
        zarrx.copy(src, dst)
    zarrx.copy(src, dst, overwrite=True)
    assert sorted(zarrx.open_group(dst, mode="r").keys()) == ["a", "sub"]


class _FailingStore(MemoryStore):
    """Refuses every write after ``allowed`` of them (a full disk, a lost connection)."""

    def __init__(self, allowed):
        super().__init__()
        self.allowed = allowed

    def set(self, key, value):
        if self.allowed <= 0:
            raise zarrx.StoreError(f"cannot write {key!r}: no space left")
        self.allowed -= 1
        super().set(key, value)

    def set_many(self, items):
        for key, value in items:
            self.set(key, value)


def test_an_interrupted_copy_leaves_no_node_to_misread(tmp_path):
    src = str(tmp_path / "src.zarr")
    _hierarchy(src)
    dst = _FailingStore(allowed=3)
    with pytest.raises(zarrx.StoreError, match="no space left"):
        zarrx.copy(src, dst, workers=1)
    written = list(dst.list_prefix(""))
    assert written and not [k for k in written if k.endswith("zarr.json")]


def test_nodes_are_added_to_an_existing_zip_archive(tmp_path):
    src = str(tmp_path / "src.zarr")
    _hierarchy(src)
    archive = str(tmp_path / "x.zip")
    zarrx.copy(f"{src}/a", f"{archive}/first")
    zarrx.copy(f"{src}/sub", f"{archive}/second")
    with pytest.raises(zarrx.NodeExistsError):
        zarrx.copy(f"{src}/sub", f"{archive}/second")
    with ZipStore(archive) as z:
        g = zarrx.open_group(z, mode="r")
        assert sorted(g.keys()) == ["first", "second"] and g["second/b"][0] == 1.5


def _entries(archive):
    with ZipStore(archive) as z:
        return _objects(z)


def test_overwrite_into_the_archive_that_holds_the_source_is_refused(tmp_path):
    src, archive = str(tmp_path / "src.zarr"), str(tmp_path / "x.zip")
    _hierarchy(src)
    zarrx.copy(src, archive)
    before = _entries(archive)
    with pytest.raises(zarrx.ZarrError, match="inside the destination archive"):
        zarrx.copy(f"{archive}/sub", f"{archive}/other", overwrite=True)
    assert _entries(archive) == before


def test_overwrite_of_one_node_of_an_archive_holding_others_is_refused(tmp_path):
    src, archive = str(tmp_path / "src.zarr"), str(tmp_path / "x.zip")
    _hierarchy(src)
    zarrx.copy(f"{src}/a", f"{archive}/first")
    zarrx.copy(f"{src}/sub", f"{archive}/second")
    before = _entries(archive)
    with pytest.raises(zarrx.NodeExistsError, match="objects outside /second"):
        zarrx.copy(f"{src}/sub", f"{archive}/second", overwrite=True)
    assert _entries(archive) == before
    zarrx.copy(f"{src}/sub", archive, overwrite=True)      # the whole archive, as named
    assert sorted(zarrx.open_group(archive, mode="r").keys()) == ["b"]


def test_a_missing_source_leaves_the_destination_archive_alone(tmp_path):
    src, archive = str(tmp_path / "src.zarr"), str(tmp_path / "x.zip")
    _hierarchy(src)
    zarrx.copy(src, archive)
    before = _entries(archive)
    with pytest.raises(zarrx.NodeNotFoundError):
        zarrx.copy(str(tmp_path / "missing.zarr"), archive, overwrite=True)
    assert _entries(archive) == before
    with pytest.raises(zarrx.NodeNotFoundError):
        zarrx.copy(str(tmp_path / "missing.zarr"), str(tmp_path / "new.zip"))
    assert not (tmp_path / "new.zip").exists()


def test_an_existing_file_that_is_not_a_zip_archive_is_left_alone(tmp_path):
    src, notes = str(tmp_path / "src.zarr"), tmp_path / "notes.zip"
    _hierarchy(src)
    notes.write_bytes(b"USER DATA\n")
    for overwrite in (False, True):
        with pytest.raises(zarrx.StoreError, match="exists and is not a zip archive"):
            zarrx.copy(src, str(notes), overwrite=overwrite)
        assert notes.read_bytes() == b"USER DATA\n"


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_node_copied_into_a_consolidated_hierarchy_is_listed(tmp_path, zarr_format):
    dst = str(tmp_path / "h.zarr")
    g = zarrx.open_group(dst, mode="w", zarr_format=zarr_format)
    g.create_array("a", shape=(2,), dtype="i1")
    zarrx.consolidate_metadata(dst)
    src = str(tmp_path / "x.zarr")
    x = zarrx.open_group(src, mode="w", zarr_format=zarr_format)
    x.create_array("b", shape=(3,), dtype="i1")[:] = 7
    zarrx.consolidate_metadata(src)             # a group with its own consolidated metadata
    zarrx.copy(src, f"{dst}/copied")
    h = zarrx.open_group(dst, mode="r")
    assert h.metadata.consolidated is not None and sorted(h.keys()) == ["a", "copied"]
    assert h["copied/b"][:].tolist() == [7, 7, 7]
    import json
    if zarr_format == 2:
        doc = json.load(open(f"{dst}/.zmetadata"))
        assert "copied/b/.zarray" in doc["metadata"] and not doc.get("zarrx_pending")
    else:
        doc = json.load(open(f"{dst}/zarr.json"))["consolidated_metadata"]
        assert sorted(doc["metadata"]) == ["a", "copied", "copied/b"]
        assert not doc.get("zarrx_pending")
        zarrx.consolidate_metadata(dst)         # the entries as it writes them
        assert json.load(open(f"{dst}/zarr.json"))["consolidated_metadata"] == doc


# the peak resident memory of one copy, in a fresh process (VmHWM, reset just before it)
_COPY_PEAK = textwrap.dedent("""
    import sys
    import zarrx

    def status(field):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) << 10 for line in f if line.startswith(field))

    before = status("VmRSS:")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    zarrx.copy(sys.argv[1], sys.argv[2], workers=1)
    print((status("VmHWM:") - before) >> 20)
""")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/status")
def test_a_copy_of_big_objects_holds_a_few_of_them_not_a_batch_of_16(tmp_path):
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    a = zarrx.create_array(src, shape=(8, 2048, 2048), dtype="f4", chunks=(1, 256, 2048),
                           shards=(1, 2048, 2048), compressors=None)   # 8 shards of 16 MiB
    a[...] = np.arange(8 * 2048 * 2048, dtype="f4").reshape(8, 2048, 2048)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", _COPY_PEAK, src, dst], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # all 8 shards (128 MiB) were held at once before; now two at a time (32 MiB)
    assert int(proc.stdout) < 80, f"copying 8 shards of 16 MiB peaked at {proc.stdout} MiB"
    np.testing.assert_array_equal(zarrx.open_array(dst, mode="r")[:, ::64, ::64],
                                  a[:, ::64, ::64])


def test_a_node_of_the_other_format_names_the_conversion_to_run(tmp_path, capsys):
    # the message said "use zarr_format=3", an argument copy does not take
    zarrx.create_array(str(tmp_path / "v2.zarr"), shape=(2,), chunks=(2,), dtype="u1",
                       zarr_format=2)[:] = 1
    zarrx.open_group(str(tmp_path / "v3.zarr"), mode="w", zarr_format=3)
    assert cli.main(["copy", str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr" / "a")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("zarrx: copy: cannot create a Zarr v2 node at 'a' inside the Zarr v3 "
                          "group '/'") and \
        err.endswith("; convert it instead (zarrx convert --zarr-format 3, "
                      "zarrx.convert(zarr_format=3)), or copy it into a separate store\n")
    assert not (tmp_path / "v3.zarr" / "a").exists()
    assert cli.main(["convert", str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr" / "a"),
                     "-q"]) == 3
    assert capsys.readouterr().err.endswith(
        "; pass --zarr-format 3 (zarr_format=3), or convert into a separate store\n")
    assert cli.main(["convert", str(tmp_path / "v2.zarr"), str(tmp_path / "v3.zarr" / "a"),
                     "--zarr-format", "3", "-q"]) == 0


def test_a_copy_clears_what_a_stopped_delete_left_at_its_destination(tmp_path):
    # chunks of a deleted array whose delete stopped after its document: the copied array,
    # with fewer chunks stored, read them as its own (where the source reads the fill value)
    src = zarrx.create_array(str(tmp_path / "src.zarr"), shape=(4, 4), chunks=(2, 2),
                             dtype="i4", fill_value=0)
    src[:2, :2] = 5
    dst = LocalStore(str(tmp_path / "dst.zarr"))
    zarrx.open_group(dst, mode="w")
    for key in ("a/c/1/1", "a/c/0/1"):
        dst.set(key, np.full(4, 9, "<i4").tobytes())
    zarrx.copy(str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr" / "a"))
    np.testing.assert_array_equal(zarrx.open_array(dst, path="a", mode="r")[:], src[:])
    assert sorted(dst.list_prefix("a/")) == ["a/c/0/0", "a/zarr.json"]
