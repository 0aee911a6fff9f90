"""The ``zarrx`` command's demo (the main job of ``make demo``) and its inspection commands:
info, tree, ls, chunk and attrs, in text and JSON."""
from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pytest

import zarrx
from zarrx import cli

from cli_helpers import _tree, run


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


def test_info_names_a_node_by_its_path_in_the_hierarchy(tmp_path, capsys):
    p = _tree(tmp_path)
    code, out, _ = run(capsys, "info", p + "/sub/m")
    assert code == 0 and "Name          : /sub/m" in out and "Shard shape   : (4, 6)" in out
    code, out, _ = run(capsys, "info", p)
    assert code == 0 and "Members      : 1 arrays, 1 groups" in out and "└──" not in out
    code, out, _ = run(capsys, "info", "--json", p + "/a")
    info = json.loads(out)
    assert info["name"] == "/a" and info["shape"] == [10] and info["chunks"] == [5]
    assert info["attributes"] == {"units": "m"} and info["stored_objects"] == 2
    assert info["grid_objects"] == 2


def test_info_counts_only_the_stored_objects_of_the_grid(tmp_path, capsys):
    import shutil
    p = tmp_path / "a.zarr"
    a = zarrx.create_array(str(p), shape=(10,), chunks=(2,), dtype="i4")
    a[:] = 1
    size = sum((p / "c" / str(i)).stat().st_size for i in range(5))
    for name in ("7", "8"):                     # outside the grid, as a stale writer leaves them
        shutil.copy(p / "c" / "0", p / "c" / name)
    (p / "c" / "stray").write_bytes(b"junk\n")
    assert a.nchunks_initialized == a.nshards_initialized == 5     # as zarr-python counts
    assert a.nbytes_stored() == size
    out = run(capsys, "info", p)[1]
    assert "Chunks stored : 5 of 5\n" in out and f"Stored size   : {size} B ({size} B)\n" in out
    info = json.loads(run(capsys, "info", "--json", p)[1])
    assert (info["stored_objects"], info["grid_objects"], info["nbytes_stored"]) == (5, 5, size)


def test_info_of_a_sharded_array_counts_shards_in_text_and_json(tmp_path, capsys):
    p = str(tmp_path / "s.zarr")
    a = zarrx.create_array(p, shape=(55,), chunks=(10,), shards=(50,), dtype="i4", fill_value=0)
    a[:] = np.arange(1, 56)
    assert (a.nshards_initialized, a.nchunks_initialized) == (2, 10)
    assert "Shards stored : 2 of 2\n" in run(capsys, "info", p)[1]
    info = json.loads(run(capsys, "info", "--json", p)[1])
    assert (info["stored_objects"], info["grid_objects"]) == (2, 2)


@pytest.mark.parametrize("shards", [None, ()], ids=["chunked", "sharded"])
def test_info_json_of_a_zero_dimensional_array(tmp_path, capsys, shards):
    p = str(tmp_path / "s.zarr")
    zarrx.create_array(p, shape=(), dtype="i4", shards=shards)[...] = 3
    info = json.loads(run(capsys, "info", "--json", p)[1])
    assert (info["chunks"], info["shards"]) == ([], shards if shards is None else [])

def test_tree_depth_and_attributes(tmp_path, capsys):
    p = _tree(tmp_path)
    code, out, _ = run(capsys, "tree", p, "--depth", "2", "--attrs")
    assert out == ("/\n@title = \"T\"\n├── a (10,) int16\n│   @units = \"m\"\n"
                   "└── sub\n    ├── deeper\n    └── m (4, 6) float32\n")
    code, out, _ = run(capsys, "tree", p + "/a")
    assert (code, out) == (0, "/a (10,) int16\n")


def test_ls_lists_members_or_stored_objects(tmp_path, capsys):
    p = _tree(tmp_path)
    assert run(capsys, "ls", p)[1] == "a\t(10,)\tint16\nsub/\n"
    code, out, _ = run(capsys, "ls", p + "/sub/m")
    key, size = out.split("\t")
    assert key == "sub/m/c/0/0" and int(size) > 0


@pytest.mark.parametrize("key", ["sub/m/c/0/0", "c/0/0", "0,0", "/sub/m/c/0/0"])
def test_chunk_takes_the_keys_ls_prints(tmp_path, capsys, key):
    p = _tree(tmp_path)
    listed = run(capsys, "ls", p + "/sub/m")[1].split("\t")[0]
    assert listed == "sub/m/c/0/0"
    code, out, _ = run(capsys, "chunk", "--json", p + "/sub/m", key)
    rep = json.loads(out)
    assert code == 0 and rep["key"] == listed and rep["coords"] == [0, 0]


def test_attrs(tmp_path, capsys):
    p = _tree(tmp_path)
    assert json.loads(run(capsys, "attrs", p)[1]) == {"title": "T"}
    assert json.loads(run(capsys, "attrs", p + "/a", "units")[1]) == "m"
    code, out, err = run(capsys, "attrs", p + "/a", "nope")
    assert code == 3 and err == "zarrx: /a: no attribute 'nope'; it has 'units'\n"


def test_info_of_a_unit_less_datetime_array_with_a_fill_value(tmp_path, capsys):
    """numpy cannot print a unit-less datetime64 other than NaT: ``info`` raised its
    ValueError for such a fill value (an integer, as a document may give it)."""
    p = str(tmp_path / "d.zarr")
    zarrx.create_array(p, shape=(2,), dtype="M8", fill_value=5)
    assert "Fill value    : 5\n" in str(zarrx.open_array(p).info)
    code, out, _ = run(capsys, "info", p)
    assert code == 0 and "Fill value    : 5\n" in out


@pytest.mark.parametrize("depth", ["0", "-1"])
def test_tree_depth_must_be_positive(tmp_path, capsys, depth):
    p = _tree(tmp_path)
    code, _, err = run(capsys, "tree", p, "--depth", depth)
    assert code == 2 and f"expected at least 1 level, found {depth}" in err


def test_chunk_describes_one_stored_object(tmp_path, capsys):
    p = _tree(tmp_path)
    code, out, _ = run(capsys, "chunk", "--json", p + "/sub/m", "c/0/0")
    rep = json.loads(out)
    assert code == 0 and rep["index"]["present"] == 4 and rep["decoded"]["max"] == 23.0
    assert rep["region"] == [[0, 4], [0, 6]] and rep["codecs"][0]["name"] == "sharding_indexed"
    key = tmp_path / "t.zarr" / "a" / "c" / "1"
    key.write_bytes(b"garbage")
    code, out, _ = run(capsys, "chunk", p + "/a", "1")
    assert code == 1 and "ERROR" in out and "Stored size : 7 B (7 B)" in out


def test_chunk_json_of_infinite_values_is_strict_json(tmp_path, capsys):
    p = str(tmp_path / "inf.zarr")
    a = zarrx.create_array(p, shape=(4,), chunks=(4,), dtype="f4", fill_value=0)
    a[:] = [np.nan, np.inf, -np.inf, 1]

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no RuntimeWarning on standard error
        code, out, err = run(capsys, "chunk", "--json", p, "0")
    rep = json.loads(out, parse_constant=refuse)["decoded"]
    assert code == 0 and err == ""
    assert (rep["min"], rep["max"], rep["mean"], rep["nan"]) == ("-Infinity", "Infinity", "NaN", 1)
    assert "Mean        : NaN\n" in run(capsys, "chunk", p, "0")[1]


def test_dates_with_nat_in_info_and_chunk(tmp_path, capsys):
    p = str(tmp_path / "nat.zarr")
    a = zarrx.create_array(p, shape=(4,), chunks=(4,), dtype="M8[s]",
                           fill_value=np.datetime64("NaT"))
    a[:] = np.array(["2020-01-01", "NaT", "2021-06-01", "NaT"], dtype="M8[s]")
    assert "Fill value    : NaT\n" in run(capsys, "info", p)[1]
    out = run(capsys, "chunk", p, "0")[1]
    assert out.endswith("Min         : 2020-01-01T00:00:00\nMax         : 2021-06-01T00:00:00\n"
                        "NaT values  : 2\nFill values : 2\n")
    rep = json.loads(run(capsys, "chunk", "--json", p, "0")[1])["decoded"]
    assert (rep["min"], rep["max"], rep["nat"], rep["fill"]) == \
        ("2020-01-01T00:00:00", "2021-06-01T00:00:00", 2, 2)


def test_nanosecond_dates_and_float32_fill_print_as_numpy_does(tmp_path, capsys):
    p = str(tmp_path / "ns.zarr")
    a = zarrx.create_array(p, shape=(2,), chunks=(2,), dtype="M8[ns]",
                           fill_value=np.datetime64("2000-01-01", "ns"))
    a[:] = np.array(["2020-01-01", "2021-06-01"], dtype="M8[ns]")
    assert "Fill value    : 2000-01-01T00:00:00.000000000\n" in run(capsys, "info", p)[1]
    out = run(capsys, "chunk", p, "0")[1]
    assert "Min         : 2020-01-01T00:00:00.000000000\n" in out
    assert "Max         : 2021-06-01T00:00:00.000000000\n" in out
    p = str(tmp_path / "f.zarr")
    zarrx.create_array(p, shape=(2,), chunks=(2,), dtype="f4", fill_value=0.1)
    assert "Fill value    : 0.1\n" in run(capsys, "info", p)[1]


def test_paths_inside_zip_archives(tmp_path, capsys):
    p = _tree(tmp_path)
    archive = str(tmp_path / "t.zip")
    assert run(capsys, "copy", p, archive)[0] == 0
    assert run(capsys, "cat", archive + "/sub/m", "0")[1] == "0.0\n1.0\n2.0\n3.0\n4.0\n5.0\n"
    assert "Name          : /sub/m" in run(capsys, "info", archive + "/sub/m")[1]


def test_chunk_names_a_codec_stored_as_its_name_alone(tmp_path, capsys):
    p = str(tmp_path / "s.zarr")
    a = zarrx.create_array(p, shape=(4,), chunks=(2,), dtype="i4", compressors=[{"name": "crc32c"}])
    a[:] = np.arange(4)
    doc = json.loads((tmp_path / "s.zarr" / "zarr.json").read_text())
    doc["codecs"][1] = "crc32c"                        # the short form of {"name": "crc32c"}
    (tmp_path / "s.zarr" / "zarr.json").write_text(json.dumps(doc))
    code, out, _ = run(capsys, "chunk", p, "0")
    assert code == 0 and "Codecs      : bytes(endian='little') -> crc32c\n" in out


def test_chunk_outside_the_grid_is_an_error_unless_something_is_stored_there(tmp_path, capsys):
    # a mistyped coordinate is not a problem of the data (exit status 3, not 1)
    p = _tree(tmp_path)
    assert run(capsys, "chunk", p + "/sub/m", "1,0") == \
        (3, "", "zarrx: array '/sub/m': chunk (1, 0) lies outside the array's grid of (1, 1) "
                "stored objects, and nothing is stored at 'sub/m/c/1/0'\n")
    with open(p + "/a/c/7", "wb") as f:     # a chunk left outside the grid: reported
        f.write(b"x")
    code, out, _ = run(capsys, "chunk", p + "/a", "7")
    assert code == 1 and "lies outside the array's grid" in out


def test_non_finite_attributes_print_as_zarr_spells_them_in_strict_json(tmp_path, capsys):
    p = str(tmp_path / "na.zarr")
    zarrx.create_array(p, shape=(2,), dtype="f4",
                       attributes={"a": float("nan"), "b": [1.5, float("inf"), float("-inf")]})

    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")

    code, out, err = run(capsys, "attrs", p)
    assert code == 0 and err == ""
    assert json.loads(out, parse_constant=refuse) == {"a": "NaN",
                                                      "b": [1.5, "Infinity", "-Infinity"]}
    code, out, _ = run(capsys, "info", "--json", p)
    assert json.loads(out, parse_constant=refuse)["attributes"]["a"] == "NaN"
