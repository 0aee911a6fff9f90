"""Naming a node the way users do: a directory inside a hierarchy, a path in a zip archive."""
from __future__ import annotations

import os
import re

import pytest

import zarrx
from zarrx.store import LocalStore, ZipStore
from zarrx.tools.location import open_node, parse_storage_options, resolve, side_options


def test_a_node_inside_a_directory_keeps_its_name_in_the_hierarchy(tmp_path):
    g = zarrx.open_group(str(tmp_path / "data.zarr"), mode="w")
    g.create_group("sub").create_array("a", shape=(4,), dtype="i1", chunks=(2,))
    loc = resolve(str(tmp_path / "data.zarr" / "sub" / "a"))
    assert isinstance(loc.store, LocalStore)
    assert loc.store.root == tmp_path / "data.zarr" and loc.path == "sub/a"
    assert open_node(loc).name == "/sub/a"



def test_directories_still_to_be_made_inside_a_hierarchy_are_groups_of_it(tmp_path):
    zarr = pytest.importorskip("zarr")
    root = tmp_path / "data.zarr"
    zarrx.open_group(str(root), mode="w").create_array("a", shape=(3,), dtype="u1", chunks=(3,))
    loc = resolve(str(root / "new" / "deeper" / "b"))
    assert loc.store.root == root and loc.path == "new/deeper/b"
    loc = resolve(str(tmp_path / "elsewhere" / "new" / "b"))     # no hierarchy above: its own
    assert loc.store.root == tmp_path / "elsewhere" / "new" / "b" and loc.path == ""
    zarrx.convert(str(root / "a"), str(root / "new" / "deeper" / "b"))
    zarrx.copy(str(root / "a"), str(root / "other" / "c"))
    theirs = zarr.open_group(str(root), mode="r")
    assert theirs["new/deeper/b"].shape == (3,) and theirs["other/c"].shape == (3,)

def test_a_standalone_array_is_its_own_root(tmp_path):
    zarrx.create_array(str(tmp_path / "a.zarr"), shape=(3,), dtype="u1", chunks=(3,))
    loc = resolve(str(tmp_path / "a.zarr"))
    assert loc.store.root == tmp_path / "a.zarr" and loc.path == ""


def test_a_path_inside_a_zip_archive(tmp_path):
    archive = tmp_path / "archive.zip"
    with ZipStore(archive, "w") as store:
        zarrx.create_array(store, name="g/a", shape=(2,), dtype="f4", chunks=(2,), data=[1, 2])
    loc = resolve(f"{archive}/g/a")
    assert isinstance(loc.store, ZipStore) and loc.path == "g/a"
    assert open_node(loc)[:].tolist() == [1.0, 2.0]
    loc.store.close()


def test_storage_options_are_read_as_json_when_they_parse():
    opts = parse_storage_options(["anon=true", "retries=3", "region=eu-west-1", "x={\"a\": 1}"])
    assert opts == {"anon": True, "retries": 3, "region": "eu-west-1", "x": {"a": 1}}
    with pytest.raises(zarrx.ZarrError, match="expected key=value"):
        parse_storage_options(["anon"])




def test_the_local_end_of_a_copy_to_or_from_a_url_takes_no_storage_options(tmp_path):
    opts = {"endpoint": "http://127.0.0.1:9", "anon": True}
    local, url = str(tmp_path / "a.zarr"), "s3://bucket/a.zarr"
    assert side_options(local, url, opts) is None and side_options(url, local, opts) == opts
    assert side_options(f"{tmp_path}/b.zip/g", url, opts) is None
    assert side_options(local, str(tmp_path / "b.zarr"), opts) == opts   # refused when opened


def _stray_array_documents(folder):
    """The documents of an array (both formats) in ``folder``, with nothing else of it."""
    (folder / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array"}')
    (folder / ".zarray").write_text("{}")


def test_a_stray_array_document_far_above_refuses_nothing_below_it(tmp_path, capsys):
    # the walk up looked for an array up to the file system's root, so one stray /zarr.json
    # (or /tmp/.zarray) refused every write below it
    zarr = pytest.importorskip("zarr")
    from zarrx import cli
    src = str(tmp_path / "src.zarr")
    zarrx.create_array(src, shape=(3,), dtype="i2", chunks=(2,), data=[1, 2, 3])
    top = tmp_path / "top"
    (top / "work" / "1").mkdir(parents=True)
    _stray_array_documents(top)
    for dst in (top / "work" / "out.zarr", top / "work" / "1" / "new" / "out.zarr",
                top / "work" / "new" / "out.zarr"):
        resolve(str(dst), "w").store.close()
        assert cli.main(["copy", src, str(dst), "-q"]) == 0
        assert zarr.open_array(str(dst), mode="r")[:].tolist() == [1, 2, 3]
    # in a group of its own right below the stray documents
    zarrx.open_group(str(top / "g.zarr"), mode="w")
    assert cli.main(["convert", src, str(top / "g.zarr" / "a"), "-q"]) == 0
    assert zarr.open_group(str(top / "g.zarr"), mode="r")["a"][:].tolist() == [1, 2, 3]
    # right inside the folder they claim for an array, and in folders to be made there
    for dst in (top / "out.zarr", top / "new" / "out.zarr"):
        assert cli.main(["copy", src, str(dst), "-q"]) == 3
        assert capsys.readouterr().err == (f"zarrx: '{dst}': cannot write a node inside the "
                                           f"array at '{top}' (an array has no children)\n")
        assert not os.path.lexists(dst)


@pytest.mark.parametrize("fmt", [2, 3])
def test_a_destination_in_an_arrays_chunk_folders_is_refused(tmp_path, fmt):
    root = tmp_path / "x.zarr"
    g = zarrx.open_group(str(root), mode="w", zarr_format=fmt)
    kw = {"chunk_key_encoding": {"name": "v2", "separator": "/"}} if fmt == 2 else {}
    g.create_array("a", shape=(4, 4, 4), dtype="u1", chunks=(2, 2, 2), **kw)[...] = 1
    folder = root / "a" / ("c/0" if fmt == 3 else "0")
    assert folder.is_dir()
    before = sorted(p for p in root.rglob("*"))
    for dst in (folder, folder / "0", folder / "new" / "deeper", folder.parent / "7" / "x"):
        with pytest.raises(zarrx.errors.ContainsArrayError,
                           match=re.escape(f"inside the array at '{root / 'a'}'")):
            resolve(str(dst), "w")
    assert sorted(p for p in root.rglob("*")) == before


def test_a_url_below_a_group_under_a_stray_array_document_is_written():
    from zarrx.store import make_store
    from zarrx.tools.location import _refuse_inside_array_url
    make_store("memory://stray-above", "w").set(
        "zarr.json", b'{"zarr_format": 3, "node_type": "array"}')
    zarrx.open_group(make_store("memory://stray-above/data.zarr", "w"), mode="w") \
        .create_array("a", shape=(2,), dtype="u1")
    _refuse_inside_array_url("memory://stray-above/data.zarr/new/x", None)
    with pytest.raises(zarrx.errors.ContainsArrayError, match="inside the array"):
        _refuse_inside_array_url("memory://stray-above/data.zarr/a/new/x", None)
    with pytest.raises(zarrx.errors.ContainsArrayError, match="inside the array"):
        _refuse_inside_array_url("memory://stray-above/elsewhere/x", None)
