"""``zarrx check`` finds a metadata document that is missing: a node the consolidated metadata
names, or a group above a node (readers listing the hierarchy stop there). Metadata is never
repaired, and the data below is kept."""
from __future__ import annotations

import pytest

import zarrx
from zarrx import cli

zarr = pytest.importorskip("zarr")

GROUP_DOC = {2: ".zgroup", 3: "zarr.json"}
ARRAY_DOC = {2: ".zarray", 3: "zarr.json"}


def _deep(path, zarr_format, consolidated):
    """A hierarchy zarr-python writes: /p/q/r/leaf and /a."""
    g = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    g.require_group("p/q/r").create_array("leaf", shape=(2,), chunks=(2,), dtype="i1",
                                          fill_value=0)[:] = [1, 2]
    g.create_array("a", shape=(4,), chunks=(2,), dtype="u1", fill_value=0)[:] = [1, 2, 3, 4]
    if consolidated:
        zarr.consolidate_metadata(path)


@pytest.mark.parametrize("consolidated", [False, True], ids=["listed", "consolidated"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_a_group_document_missing_above_a_node_is_found(tmp_path, capsys, zarr_format,
                                                        consolidated):
    # zarr-python lists no node below /p/q once its document is gone; check said nothing
    root = tmp_path / "d.zarr"
    _deep(str(root), zarr_format, consolidated)
    (root / "p" / "q" / GROUP_DOC[zarr_format]).unlink()
    report = zarrx.check(str(root))
    key = f"p/q/{GROUP_DOC[zarr_format]}"
    attrs = [("orphaned", "p/q/.zattrs", "/p")] if zarr_format == 2 else []   # kept
    assert [(f.kind, f.key, f.node) for f in report.findings] == \
        [("metadata", key, "/p/q")] + attrs
    why = "the consolidated metadata of / names a group here" if consolidated else \
        "the node /p/q/r below has a metadata document"
    assert why in report.findings[0].detail
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    assert cli.main(["check", str(root), "--repair"]) == 1
    assert f"metadata: {key}: missing: " in capsys.readouterr().out
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_an_array_document_the_consolidated_metadata_names_is_missing(tmp_path, zarr_format):
    root = tmp_path / "d.zarr"
    _deep(str(root), zarr_format, consolidated=True)
    (root / "a" / ARRAY_DOC[zarr_format]).unlink()
    report = zarrx.check(str(root), repair=True)
    found = [(f.kind, f.key) for f in report.findings]
    chunks = ["a/.zattrs", "a/0", "a/1"] if zarr_format == 2 else ["a/c/0", "a/c/1"]
    assert found == [("metadata", f"a/{ARRAY_DOC[zarr_format]}")] + \
        [("orphaned", k) for k in chunks]
    assert "names an array here" in report.findings[0].detail
    assert {f.detail for f in report.findings[1:]} == \
        {"below /a, whose metadata document is missing"}
    assert report.repairs == [] and all((root / k).exists() for k in chunks)


def test_nodes_a_sound_consolidated_hierarchy_names_are_no_findings(tmp_path):
    for fmt in (2, 3):
        _deep(str(tmp_path / f"{fmt}.zarr"), fmt, consolidated=True)
        assert zarrx.check(str(tmp_path / f"{fmt}.zarr")).ok
        assert zarrx.check(str(tmp_path / f"{fmt}.zarr" / "p")).ok
