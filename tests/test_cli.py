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
    assert "└── legacy (100, 100) int32" in text and "Shape" in text
    g = zarrx.open_group(str(tmp_path / "example.zarr"), mode="r")
    assert sorted(g.keys()) == ["sharded", "volume"] and g["sharded"].shards == (256, 256)
    legacy = zarrx.open_group(str(tmp_path / "legacy_v2.zarr"), mode="r")
    assert legacy.zarr_format == 2 and legacy["legacy"].zarr_format == 2


def test_zarr_python_reads_every_node_the_demo_writes(tmp_path):
    import warnings

    import numpy as np
    import pytest
    zarr = pytest.importorskip("zarr")
    assert cli.demo(str(tmp_path), out=io.StringIO()) == 0
    for root in ("example.zarr", "legacy_v2.zarr"):
        ours = zarrx.open_group(str(tmp_path / root), mode="r")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = zarr.open_group(str(tmp_path / root), mode="r")
            seen = sorted(name for name, _ in theirs.members(max_depth=None))
            assert seen == sorted(name for name, _ in ours.members(max_depth=None))
            for name, node in ours.members(max_depth=None):
                if isinstance(node, zarrx.Array):
                    np.testing.assert_array_equal(theirs[name][...], node[...])


def test_info_and_tree(tmp_path, capsys):
    p = str(tmp_path / "t.zarr")
    g = zarrx.open_group(p, mode="w")
    g.create_array("a", shape=(10,), dtype="i2", chunks=(5,))
    assert cli.main(["tree", p]) == 0
    assert capsys.readouterr().out == "/\n└── a (10,) int16\n"
    assert cli.main(["info", p + "/a"]) == 0
    assert "Chunk shape   : (5,)" in capsys.readouterr().out


def test_missing_node_is_a_clean_error(tmp_path, capsys):
    assert cli.main(["info", str(tmp_path / "nothing.zarr")]) == 3
    assert capsys.readouterr().err.startswith("zarrx: open: no array or group at '/'")
