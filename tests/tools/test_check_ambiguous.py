"""``zarrx check`` reports a node holding both a Zarr v3 document and a v2 one, whose format
depends on the reader, and ``--repair`` removes nothing for it."""
from __future__ import annotations

import shutil

import pytest

import zarrx
from zarrx import cli
from zarrx.tools.check import check


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _detail(both):
    return (f"ambiguous: the node holds both zarr.json and {both}, so its format depends on "
            f"the reader (zarrx and zarr-python read zarr.json, as Zarr v3; a Zarr v2 reader "
            f"reads {both}); remove the documents of the format it is not")


@pytest.mark.parametrize("repair", [False, True])
def test_a_node_with_documents_of_both_formats_is_reported_and_kept(tmp_path, capsys, repair):
    # (before: "no problems found")
    h = tmp_path / "h.zarr"
    g = zarrx.open_group(str(h), mode="w")
    g.create_array("a", shape=(4,), chunks=(2,), dtype="i4")[:] = 1
    g.create_group("g").create_array("b", shape=(2,), chunks=(2,), dtype="u1")[:] = 2
    v2 = zarrx.create_array(str(tmp_path / "v2.zarr"), shape=(4,), chunks=(2,), dtype="i4",
                            zarr_format=2)
    v2[:] = 2
    shutil.copy(tmp_path / "v2.zarr" / ".zarray", h / "a" / ".zarray")
    (h / ".zgroup").write_text('{"zarr_format": 2}')
    (h / "g" / ".zgroup").write_text('{"zarr_format": 2}')
    (h / "g" / ".zarray").write_bytes((tmp_path / "v2.zarr" / ".zarray").read_bytes())
    before = _files(h)
    report = check(str(h), repair=repair)
    assert [(f.kind, f.key, f.node, f.detail) for f in report.findings] == [
        ("metadata", ".zgroup", "/", _detail(".zgroup")),
        ("metadata", "a/.zarray", "/a", _detail(".zarray")),
        ("metadata", "g/.zarray", "/g", _detail(".zarray and .zgroup"))]
    assert report.repaired == [] and report.repairs == []
    assert _files(h) == before
    argv = ["check", str(h), "--repair"] if repair else ["check", str(h)]
    assert cli.main(argv) == 1
    assert "found 3 metadata; 3 not repaired" in capsys.readouterr().out
    assert _files(h) == before


def test_a_node_of_one_format_with_the_other_formats_attributes_is_not_ambiguous(tmp_path):
    h = tmp_path / "h.zarr"
    zarrx.open_group(str(h), mode="w").create_array("a", shape=(2,), dtype="u1")[:] = 1
    (h / "a" / ".zattrs").write_text("{}")
    assert not [f for f in check(str(h)).findings if "ambiguous" in f.detail]
