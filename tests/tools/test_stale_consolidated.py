"""Consolidated metadata out of step with the nodes' own documents, as zarr-python leaves it
when it writes without consolidating again (readers using it see an old shape, old attributes,
no node added since): ``zarrx check`` finds it, ``zarrx convert`` converts the nodes as their
documents describe them."""
from __future__ import annotations

import pytest

import zarrx
from zarrx import cli

zarr = pytest.importorskip("zarr")


def _consolidated(path, zarr_format):
    g = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i2", fill_value=0)[:] = 1
    g.create_group("s").create_array("b", shape=(2,), chunks=(2,), dtype="u1",
                                     fill_value=0)[:] = 2
    zarr.consolidate_metadata(path)


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_consolidated_metadata_a_later_write_left_behind_is_found(tmp_path, capsys,
                                                                   zarr_format):
    # check said "no problems found" while zarr-python read /a with its old shape
    path = str(tmp_path / "d.zarr")
    _consolidated(path, zarr_format)
    g = zarr.open_group(path, mode="r+", use_consolidated=False)
    g["a"].resize((6,))
    g["s"].create_array("new", shape=(1,), dtype="u1", fill_value=0)
    assert zarr.open_group(path, mode="r")["a"].shape == (4,)       # what readers see
    doc = "zarr.json" if zarr_format == 3 else ".zmetadata"
    own = "zarr.json" if zarr_format == 3 else ".zarray"
    report = zarrx.check(path)
    assert [(f.kind, f.key, f.node) for f in report.findings] == [("metadata", doc, "/")]
    assert report.findings[0].detail == (
        f"stale: readers using it see another hierarchy than the nodes' documents: /a: listed "
        f"with shape (4,), its {own} has (6,); /s/new is not listed; run zarrx consolidate on "
        f"the group / to write it again")
    assert cli.main(["check", path, "--repair"]) == 1               # metadata is not repaired
    assert f"metadata: {doc}: stale: " in capsys.readouterr().out
    assert cli.main(["consolidate", path]) == 0
    assert zarrx.check(path).ok


def test_attributes_changed_since_and_many_nodes_are_named_briefly(tmp_path):
    path = str(tmp_path / "d.zarr")
    _consolidated(path, 3)
    g = zarr.open_group(path, mode="r+", use_consolidated=False)
    for name in "cdef":
        g["s"].create_array(name, shape=(1,), dtype="u1", fill_value=0)
    zarr.open_array(f"{path}/s/b", mode="r+").attrs["units"] = "m"
    detail = zarrx.check(path).findings[0].detail
    assert "/s/b: listed with attributes {}, its zarr.json has {'units': 'm'}; /s/c is not " \
           "listed; /s/d is not listed (and 2 more);" in detail


def test_a_consolidated_hierarchy_in_step_has_no_findings(tmp_path):
    for fmt in (2, 3):
        _consolidated(str(tmp_path / f"{fmt}.zarr"), fmt)
        assert zarrx.check(str(tmp_path / f"{fmt}.zarr")).ok


def test_in_a_zip_archive_the_remedy_is_a_copy_consolidated_again(tmp_path):
    path = str(tmp_path / "d.zip")
    store = zarr.storage.ZipStore(path, mode="w")
    g = zarr.open_group(store, mode="w", zarr_format=2)
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i2", fill_value=0)[:] = 1
    zarr.consolidate_metadata(store)
    zarr.open_group(store, mode="r+", use_consolidated=False).create_array(
        "b", shape=(2,), chunks=(2,), dtype="i2", fill_value=0)
    store.close()
    detail = zarrx.check(path).findings[0].detail
    assert detail.endswith("/b is not listed; a zip archive cannot replace it: copy the archive "
                           "into a directory (zarrx copy) and run zarrx consolidate on the group "
                           "/ to write it again there")
    zarrx.copy(path, str(tmp_path / "d.zarr"))
    zarrx.consolidate_metadata(str(tmp_path / "d.zarr"))
    assert zarrx.check(str(tmp_path / "d.zarr")).ok


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_convert_takes_the_nodes_as_their_documents_describe_them(tmp_path, zarr_format):
    # the array was converted with the shape the consolidated metadata held: values past it
    # were lost (and --verify compared only what was converted); a node added was left out
    path = str(tmp_path / "d.zarr")
    _consolidated(path, zarr_format)
    g = zarr.open_group(path, mode="r+", use_consolidated=False)
    g["a"].resize((6,))
    g["a"][4:] = 5
    g["s"].attrs["title"] = "later"
    g["s"].create_array("new", shape=(1,), dtype="u1", fill_value=0)[:] = 7
    out = str(tmp_path / "out.zarr")
    assert cli.main(["convert", path, out, "--zarr-format", str(5 - zarr_format), "--verify",
                     "-q"]) == 0
    got = zarr.open_group(out, mode="r")                         # consolidated again
    assert got["a"][...].tolist() == [1, 1, 1, 1, 5, 5]
    assert got["s/new"][...].tolist() == [7] and got["s"].attrs["title"] == "later"
    assert zarrx.check(out).ok
