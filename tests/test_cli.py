"""The ``zarrx`` command: the demo (the main job of ``make demo``), info, tree, errors."""
from __future__ import annotations

import io

import zarrx
from zarrx import cli


def test_demo_writes_reads_and_verifies(tmp_path):
    out = io.StringIO()
    assert cli.demo(str(tmp_path), out=out) == 0
    text = out.getvalue()
    assert "demo: all reads verified" in text and "BAD" not in text
    assert "├── legacy_v2 (100, 100) int32" in text and "Shape" in text
    g = zarrx.open_group(str(tmp_path / "example.zarr"), mode="r")
    assert sorted(g.keys()) == ["legacy_v2", "sharded", "volume"]
    assert g["legacy_v2"].zarr_format == 2 and g["sharded"].shards == (256, 256)


def test_info_and_tree(tmp_path, capsys):
    p = str(tmp_path / "t.zarr")
    g = zarrx.open_group(p, mode="w")
    g.create_array("a", shape=(10,), dtype="i2", chunks=(5,))
    assert cli.main(["tree", p]) == 0
    assert capsys.readouterr().out == "/\n└── a (10,) int16\n"
    assert cli.main(["info", p + "/a"]) == 0
    assert "Chunk shape   : (5,)" in capsys.readouterr().out


def test_missing_node_is_a_clean_error(tmp_path, capsys):
    assert cli.main(["info", str(tmp_path / "nothing.zarr")]) == 2
    assert capsys.readouterr().err.startswith("zarrx: open: no array or group at '/'")
