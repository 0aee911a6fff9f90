"""The ``zarrx`` command: the demo (the main job of ``make demo``), the inspection commands,
convert / copy / check from the command line, exit codes and one-line errors."""
from __future__ import annotations

import io
import json
import os
import sys
import warnings

import numpy as np
import pytest

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


def _tree(tmp_path):
    p = str(tmp_path / "t.zarr")
    g = zarrx.open_group(p, mode="w", attributes={"title": "T"})
    g.create_array("a", shape=(10,), dtype="i2", chunks=(5,), attributes={"units": "m"})[:] = \
        np.arange(10)
    sub = g.create_group("sub")
    sub.create_array("m", shape=(4, 6), dtype="f4", chunks=(2, 3), shards=(4, 6))[...] = \
        np.arange(24, dtype="f4").reshape(4, 6)
    sub.create_group("deeper").create_array("z", shape=(1,), dtype="u1", chunks=(1,))
    return p


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


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


def test_cat_as_text_and_as_npy(tmp_path, capsys):
    p = _tree(tmp_path)
    assert run(capsys, "cat", p + "/sub/m", "1:3, ::2")[1] == "6.0 8.0 10.0\n12.0 14.0 16.0\n"
    assert run(capsys, "cat", p + "/a", "--", "-3:")[1] == "7\n8\n9\n"
    out = tmp_path / "m.npy"
    assert run(capsys, "cat", p + "/sub/m", "--npy", "-o", out)[0] == 0
    np.testing.assert_array_equal(np.load(out), np.arange(24, dtype="f4").reshape(4, 6))
    code, _, err = run(capsys, "cat", p + "/a", "1:2:x")      # (before: exit status 3)
    assert code == 2 and err.startswith("zarrx cat: argument selection: selection '1:2:x': "
                                        "expected") and err.endswith("(see zarrx cat --help)\n")
    code, _, err = run(capsys, "cat", tmp_path / "nothing.zarr", "x")   # before opening
    assert code == 2 and err.startswith("zarrx cat: argument selection: selection 'x'")


@pytest.mark.parametrize("dtype, values, text", [
    ("M8[ns]", ["2020-01-01", "NaT"], "2020-01-01T00:00:00.000000000\nNaT\n"),
    ("m8[s]", [5, "NaT"], "5 seconds\nNaT\n"),
    ("M8", np.array([5, -2**63]).view("M8"), "5\nNaT\n"),    # unit-less: numpy prints NaT only
    ("m8", np.array([5, -2**63]).view("m8"), "5 generic time units\nNaT\n"),
])
def test_cat_prints_dates_as_dates(tmp_path, capsys, dtype, values, text):
    p = str(tmp_path / "d.zarr")
    zarrx.create_array(p, shape=(2,), dtype=dtype)[...] = np.array(values, dtype)
    assert run(capsys, "cat", p)[1] == text


@pytest.mark.parametrize("dtype, shape, values, text", [
    ("f4", (2,), [0.7, 0.1], "0.7\n0.1\n"),
    ("f2", (2,), [0.1, 0.3], "0.1\n0.3\n"),
    ("f4", (1, 2), [[0.7, 1e20]], "0.7 1e+20\n"),
    ("c8", (1,), [0.7 + 0.1j], "(0.7+0.1j)\n"),
    ("f8", (1, 1, 2), [[[1.1234567890123, 123456789.123]]],
     "[[[1.1234567890123e+00 1.2345678912300e+08]]]\n"),
    ("f4", (), 0.7, "0.7\n"),
])
def test_cat_prints_values_as_numpy_does_with_every_digit(tmp_path, capsys, dtype, shape,
                                                          values, text):
    p = str(tmp_path / "f.zarr")
    zarrx.create_array(p, shape=shape, dtype=dtype)[...] = np.array(values, dtype)
    assert run(capsys, "cat", p)[1] == text


def test_cat_reads_and_prints_text_a_block_at_a_time(tmp_path, capsys, monkeypatch):
    from zarrx.tools import text
    p = str(tmp_path / "b.zarr")
    values = np.arange(5 * 3 * 4, dtype="i2").reshape(5, 3, 4)
    zarrx.create_array(p, shape=values.shape, dtype="i2", chunks=(2, 2, 2))[...] = values
    whole = {sel: run(capsys, "cat", p, sel)[1] for sel in ("0", "::-2, 1", "...")}
    assert whole["..."] == np.array2string(values) + "\n"
    sizes = []
    read = zarrx.Array.__getitem__
    monkeypatch.setattr(zarrx.Array, "__getitem__",
                        lambda self, sel: sizes.append(np.size(read(self, sel))) or
                        read(self, sel))
    monkeypatch.setattr(text, "BLOCK_ELEMENTS", 5)
    for sel in ("0", "::-2, 1"):                # one and two dimensions: the same text
        assert run(capsys, "cat", p, sel)[1] == whole[sel]
    out = run(capsys, "cat", p)[1]              # numpy's brackets, each block aligned alone
    assert out.replace("[ ", "[").replace("  ", " ") == \
        whole["..."].replace("[ ", "[").replace("  ", " ")
    assert sizes and max(sizes) <= 5


def test_cat_out_of_memory_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    from zarrx.cli import nodes
    p = _tree(tmp_path)

    def no_memory(*args):
        raise MemoryError
    monkeypatch.setattr(nodes, "text_pieces", no_memory)
    monkeypatch.setattr(nodes, "npy_pieces", no_memory)
    for npy in ([], ["--npy", "-o", tmp_path / "a.npy"]):
        code, _, err = run(capsys, "cat", p + "/a", *npy)
        assert (code, err) == (3, "zarrx: cat: /a: not enough memory for the values selected\n")


@pytest.mark.parametrize("dtype, shape, chunks", [
    ("i2", (5, 3, 4), (2, 2, 2)),
    (">f8", (7,), (3,)),
    ("M8[s]", (2, 9), (1, 4)),
    ("i4", (), ()),
    ("u1", (0, 3), (2, 2)),
    (str, (3, 4), (2, 3)),
])
@pytest.mark.parametrize("sel", ["...", "::-2", "1:, 1"])
def test_cat_npy_reads_and_writes_a_block_at_a_time(tmp_path, capsys, monkeypatch, dtype,
                                                     shape, chunks, sel):
    from zarrx.tools import text
    from zarrx.tools.summary import parse_selection
    p = str(tmp_path / "n.zarr")
    size = int(np.prod(shape))
    values = np.arange(size).reshape(shape)
    values = values.astype(str).astype(object) * (values % 3 + 1) if dtype is str \
        else values.astype(dtype)
    a = zarrx.create_array(p, shape=shape, dtype=dtype, chunks=chunks)
    a[...] = values
    sel = "..." if not shape else "1:" if len(shape) == 1 and "," in sel else sel
    expected = values[parse_selection(sel)] if shape else values
    expected = np.asarray(expected).astype(str if dtype is str else a.dtype)
    sizes = []
    read = zarrx.Array.__getitem__
    monkeypatch.setattr(zarrx.Array, "__getitem__",
                        lambda self, s: sizes.append(np.size(read(self, s))) or read(self, s))
    monkeypatch.setattr(text, "BLOCK_ELEMENTS", 5)
    out = tmp_path / "n.npy"
    assert run(capsys, "cat", p, sel, "--npy", "-o", out)[0] == 0
    got = np.load(out, allow_pickle=False)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert max(sizes, default=0) <= 5


@pytest.mark.parametrize("dtype, values, expected", [
    (str, ["a", "ccc é", ""], np.array(["a", "ccc é", ""], "U5")),
    (bytes, [b"ab", b"c", b""], np.array([b"ab", b"c", b""], "S2")),
])
def test_cat_npy_of_variable_length_values_is_fixed_width_not_pickled(tmp_path, capsys,
                                                                      dtype, values, expected):
    p = str(tmp_path / "s.zarr")
    zarrx.create_array(p, shape=(3,), dtype=dtype, chunks=(2,))[...] = np.array(values,
                                                                                dtype=object)
    out = tmp_path / "s.npy"
    code, _, err = run(capsys, "cat", p, "--npy", "-o", out)
    assert (code, err) == (0, "")
    got = np.load(out, allow_pickle=False)
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()


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


def test_convert_and_check_from_the_command_line(tmp_path, capsys):
    p = _tree(tmp_path)
    out = str(tmp_path / "v2.zarr")
    code, _, err = run(capsys, "convert", p, out, "--chunks", "2,2,2")
    assert code == 2 and "chunks: expected a shape of 1 or 2 dimensions (those of the " \
        "arrays in the hierarchy), found (2, 2, 2)" in err
    code, text, _ = run(capsys, "convert", p, out, "--zarr-format", "2",
                        "--compressor", "zstd:level=5", "--verify", "--no-progress")
    assert code == 0 and "converted" in text and "verified" in text
    code, _, err = run(capsys, "convert", p + "/sub/m", out + "/sub/m2", "--chunks", "2,2")
    assert code == 3 and "a hierarchy holds one Zarr format" in err
    code, _, _ = run(capsys, "convert", p + "/sub/m", out + "/sub/m2", "--chunks", "2,2",
                     "--zarr-format", "2", "-q")
    assert code == 0
    m = zarrx.open_array(out + "/sub/m2", mode="r")
    assert m.zarr_format == 2 and m.chunks == (2, 2) and m.shards is None
    m = zarrx.open_array(out + "/sub/m", mode="r")
    assert m.chunks == (2, 3) and m.metadata.chunk_codecs[-1].configuration["level"] == 5
    assert run(capsys, "check", out)[0] == 0
    (tmp_path / "v2.zarr" / "sub" / "stray").write_bytes(b"x")
    code, text, _ = run(capsys, "check", out)
    assert code == 1 and "orphaned: sub/stray" in text
    code, text, _ = run(capsys, "check", out, "--repair")
    assert code == 1 and "1 orphaned object kept" in text     # a stray may be data
    code, text, _ = run(capsys, "check", out, "--repair", "--remove-strays")
    assert code == 4 and "all repaired" in text
    assert run(capsys, "check", out)[0] == 0


def test_consolidate(tmp_path, capsys):
    p = _tree(tmp_path)
    code, out, _ = run(capsys, "consolidate", p)
    assert code == 0 and "5 nodes" in out
    assert zarrx.open_consolidated(p).metadata.consolidated is not None


def test_version_and_usage_errors(capsys):
    assert run(capsys, "--version") == (0, f"zarrx {zarrx.__version__}\n", "")
    code, out, err = run(capsys, "convert", "only-one")
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("zarrx convert:")


def test_errors_are_one_line_with_exit_status_3(tmp_path, capsys):
    code, _, err = run(capsys, "info", tmp_path / "nothing.zarr")
    assert code == 3 and err.startswith(f"zarrx: {tmp_path / 'nothing.zarr'}: no array or group: "
                                        f"no such directory")
    assert err.count("\n") == 1
    p = _tree(tmp_path)
    for argv in (["info", p, "-S", "anon=true"], ["info", "memory://nothing.zarr"],
                 ["convert", p, p + "/sub"]):
        code, _, err = run(capsys, *argv)
        assert code == 3 and err.startswith("zarrx: ") and err.count("\n") == 1, (argv, err)


@pytest.mark.parametrize("argv", [["demo", "--dir"], ["tree", "x", "--depth", "two"]])
def test_bad_option_values_are_usage_errors(argv, capsys):
    assert run(capsys, *argv)[0] == 2


@pytest.mark.parametrize("text, expected", [
    ("transpose:order=[1,0]", {"name": "transpose", "configuration": {"order": [1, 0]}}),
    ("blosc:cname=lz4,shuffle=bitshuffle",
     {"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "bitshuffle"}}),
    ('zstd:level=5,checksum=true', {"name": "zstd",
                                    "configuration": {"level": 5, "checksum": True}}),
])
def test_codec_arguments_take_json_values(text, expected):
    from zarrx.cli.common import parse_codec
    assert parse_codec(text) == expected


def test_a_failed_conversion_says_the_destination_is_incomplete(tmp_path, capsys):
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    g = zarrx.open_group(src, mode="w")
    for name in ("a", "b"):
        g.create_array(name, shape=(8,), chunks=(2,), dtype="i4", fill_value=0)[:] = \
            np.arange(1, 9)
    (tmp_path / "src.zarr" / "b" / "c" / "2").write_bytes(b"garbage")
    code, _, err = run(capsys, "convert", src, dst)
    assert code == 3 and err.count("\n") == 1 and err.startswith("zarrx: array 'b' chunk 'b/c/2'")
    assert err.endswith(f"; the destination {dst} is left incomplete (it does not open until "
                        "finished): run the conversion again with --resume to finish it\n")
    code, _, err = run(capsys, "convert", src, dst)        # refused: the destination is as it was
    assert code == 3 and "left incomplete" not in err
    assert err == ("zarrx: convert /: the destination holds at / a node an interrupted "
                   "conversion left unfinished; pass --resume (resume=True) to finish it, or "
                   "--overwrite (overwrite=True) to start again\n")
    code, _, err = run(capsys, "convert", tmp_path / "missing.zarr", tmp_path / "out.zip")
    assert code == 3 and "left incomplete" not in err and not (tmp_path / "out.zip").exists()


@pytest.mark.parametrize("argv", [["check", "x.zarr", "--fill-corrupt"],
                                  ["check", "x.zarr", "--remove-strays"],
                                  ["convert", "a.zarr", "b.zarr", "--chunks", "abc"],
                                  ["convert", "a.zarr", "b.zarr", "--shards", "0,1"],
                                  ["convert", "a.zarr", "b.zarr", "--max-memory", "lots"],
                                  ["info", "a.zarr", "-S", "novalue"],
                                  ["check", "x.zarr", "--workers", "0"],
                                  ["convert", "a.zarr", "b.zarr", "--workers", "-2"],
                                  ["copy", "a.zarr", "b.zarr", "--workers", "many"],
                                  ["check", "x.zarr", "--temp-age", "nan"],
                                  ["check", "x.zarr", "--temp-age", "-5"]])
def test_command_line_mistakes_exit_2_before_anything_is_opened(argv, tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"zarrx {argv[0]}: ") and err.endswith(f"(see zarrx {argv[0]} --help)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option, value, expected", [
    ("--workers", "0", "a number of workers from 1 to 1024"),
    ("--workers", "2x", "a number of workers from 1 to 1024"),
    ("--workers", "99999999999999999999", "a number of workers from 1 to 1024"),
    ("--workers", "-2", "a number of workers from 1 to 1024"),
    ("--temp-age", "nan", "a number of seconds, 0 or more"),
    ("--temp-age", "inf", "a number of seconds, 0 or more"),
    ("--temp-age", "-5", "a number of seconds, 0 or more")])
def test_a_number_option_out_of_range_says_what_it_takes(option, value, expected, tmp_path,
                                                         capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "check", "x.zarr", option, value)
    assert code == 2
    assert err == (f"zarrx check: argument {option}: expected {expected}, found {value!r} "
                   f"(see zarrx check --help)\n")


@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_cat_to_a_closed_standard_output_is_an_error(npy, tmp_path, capsys, monkeypatch):
    import sys
    p = _tree(tmp_path)
    monkeypatch.setattr(sys, "stdout", None)        # as Python sets it when fd 1 is closed
    code = cli.main(["cat", p + "/a", *npy])
    err = capsys.readouterr().err
    assert code == 3 and err == "zarrx: cat: standard output is closed; write to a file with " \
                                "-o FILE\n"


def test_chunk_names_a_codec_stored_as_its_name_alone(tmp_path, capsys):
    p = str(tmp_path / "s.zarr")
    a = zarrx.create_array(p, shape=(4,), chunks=(2,), dtype="i4", compressors=[{"name": "crc32c"}])
    a[:] = np.arange(4)
    doc = json.loads((tmp_path / "s.zarr" / "zarr.json").read_text())
    doc["codecs"][1] = "crc32c"                        # the short form of {"name": "crc32c"}
    (tmp_path / "s.zarr" / "zarr.json").write_text(json.dumps(doc))
    code, out, _ = run(capsys, "chunk", p, "0")
    assert code == 0 and "Codecs      : bytes(endian='little') -> crc32c\n" in out


@pytest.mark.parametrize("argv, message", [
    (("cat", "/a", "9" * 5000), "selection: expected integers of at most 19 digits, found one "
                                "of 5000 digits"),
    (("cat", "/a", "1:" + "9" * 20), "selection: expected integers of at most 19 digits, found "
                                     "one of 20 digits"),
    (("chunk", "/a", "9" * 5000), "array '/a': chunk coordinates: expected integers of at most "
                                  "19 digits, found one of 5000 digits"),
])
def test_integers_too_long_for_an_index_are_refused(tmp_path, capsys, argv, message):
    p = _tree(tmp_path)
    code, _, err = run(capsys, argv[0], p + argv[1], *argv[2:])
    assert (code, err) == _refused(argv[0], message)


def _refused(cmd, message):
    """A selection of cat that does not parse is a usage error; the others, errors."""
    if cmd == "cat":
        return 2, f"zarrx cat: argument selection: {message} (see zarrx cat --help)\n"
    return 3, f"zarrx: {message}\n"


_CUT = "'" + "x" * 76 + "..."          # a long key, cut as every message cuts long values


@pytest.mark.parametrize("argv, message", [
    (("chunk", "/a", "x" * 10_000), f"array '/a': {_CUT} is neither a chunk key of the array "
                                    f"('c/0', say) nor grid coordinates such as 0"),
    (("chunk", "/a", "a/" + "x" * 10_000), "array '/a': 'a/" + "x" * 74 + "... is neither a "
                                           "chunk key of the array ('c/0', say) nor grid "
                                           "coordinates such as 0"),
    (("chunk", "/a", ",".join("1" * 5000)), "array '/a': chunk '" + "1," * 38 + "...: "
                                            "expected 1 coordinates, found 5000"),
    (("cat", "/a", "x" * 10_000), f"selection {_CUT}: expected comma-separated integers, "
                                  f"slices (start:stop:step) or '...', found {_CUT}"),
    (("attrs", "/a", "x" * 10_000), f"/a: no attribute {_CUT}; it has 'units'"),
])
def test_a_long_key_is_cut_in_messages(tmp_path, capsys, argv, message):
    p = _tree(tmp_path)
    code, _, err = run(capsys, argv[0], p + argv[1], *argv[2:])
    assert (code, err) == _refused(argv[0], message)


def test_ctrl_c_while_the_commands_load_is_one_line_and_status_130(capsys, monkeypatch):
    def interrupted():
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "parser", interrupted)
    assert run(capsys, "info", "x.zarr") == (130, "", "zarrx: interrupted\n")


def test_a_file_where_a_directory_is_expected_is_named(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("hi")
    p = _tree(tmp_path)
    assert run(capsys, "info", f) == (3, "", f"zarrx: {str(f)!r} is a file, not a directory: "
                                             f"Zarr data is a directory or a zip archive named "
                                             f"*.zip\n")
    code, _, err = run(capsys, "convert", p + "/a", f / "x.zarr")
    assert code == 3 and err == (f"zarrx: {str(f / 'x.zarr')!r} ({str(f)!r}) is a file, not a "
                                 f"directory: Zarr data is a directory or a zip archive named "
                                 f"*.zip\n")
    code, _, err = run(capsys, "copy", p + "/a", f)
    assert code == 3 and "is a file, not a directory" in err and f.read_text() == "hi"


@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_cat_names_an_output_file_it_cannot_write(tmp_path, capsys, npy):
    p = _tree(tmp_path)
    out = tmp_path / "missing" / "x.out"
    assert run(capsys, "cat", p + "/a", "-o", out, *npy) == \
        (3, "", f"zarrx: cat: cannot write the output file {str(out)!r}: No such file or "
                f"directory\n")


def test_commands_name_a_node_an_interrupted_conversion_left_unfinished(tmp_path, capsys):
    from zarrx.tools.progress import Progress

    class StopAfterOne(Progress):
        def advance(self, n):
            raise KeyboardInterrupt

    src, dst = str(tmp_path / "a.zarr"), str(tmp_path / "b.zarr")
    zarrx.create_array(src, shape=(64,), dtype="i8", chunks=(8,))[:] = np.arange(64)
    with pytest.raises(KeyboardInterrupt):
        zarrx.convert(src, dst, max_memory="1K", workers=1, progress=StopAfterOne())
    for command in ("info", "check", "cat"):
        assert run(capsys, command, dst) == (
            3, "", f"zarrx: {dst}: no array or group yet: a conversion into it has not "
                   f"finished (.zarrx-pending records what it is to be); if it was interrupted, "
                   f"run it again with --resume to finish it\n")
    assert run(capsys, "convert", src, dst, "--resume", "-q")[0] == 0
    assert run(capsys, "cat", dst, "60:")[1] == "60\n61\n62\n63\n"


def test_cat_quotes_strings_that_would_not_read_as_one_value(tmp_path, capsys):
    p = str(tmp_path / "s.zarr")
    zarrx.create_array(p, shape=(5,), chunks=(2,), dtype=str)[:] = \
        ["a\nb", "two words", "", "plain", "é"]
    assert run(capsys, "cat", p)[1] == "'a\\nb'\n'two words'\n''\nplain\né\n"
    p = str(tmp_path / "s2.zarr")
    zarrx.create_array(p, shape=(2, 2), chunks=(2, 2), dtype=str)[...] = \
        [["a b", "c"], ["", "'q'"]]
    assert run(capsys, "cat", p)[1] == "'a b' c\n'' \"'q'\"\n"


@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_an_interrupted_or_failed_cat_leaves_no_partial_output_file(tmp_path, capsys,
                                                                    monkeypatch, npy):
    from zarrx.cli import nodes
    p = _tree(tmp_path)
    out = tmp_path / "out" / "a.txt"
    out.parent.mkdir()

    def pieces(*args, **kw):
        yield b"1\n" if npy else "1\n"
        raise KeyboardInterrupt
    monkeypatch.setattr(nodes, "npy_pieces" if npy else "text_pieces", pieces)
    assert run(capsys, "cat", p + "/a", "-o", out, *npy) == (130, "", "zarrx: interrupted\n")
    assert os.listdir(out.parent) == []
    monkeypatch.undo()
    out.write_text("kept")                  # an existing file is replaced only when complete
    assert run(capsys, "cat", p + "/a", "0:2", "-o", out, *npy)[0] == 0
    assert out.read_bytes() != b"kept" and os.listdir(out.parent) == ["a.txt"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_cat_onto_a_full_disk_names_where_it_writes(tmp_path, capsys, monkeypatch, npy):
    p = _tree(tmp_path)
    assert run(capsys, "cat", p + "/a", "-o", "/dev/full", *npy) == \
        (3, "", "zarrx: cat: cannot write the output file '/dev/full': No space left on "
                "device\n")
    full = open("/dev/full", "w", buffering=1)    # line-buffered, as a terminal
    monkeypatch.setattr(sys, "stdout", full)
    code, _, err = run(capsys, "cat", p + "/a", *npy)
    monkeypatch.undo()
    try:
        full.close()
    except OSError:                         # what is left in its buffer cannot be written
        pass
    assert (code, err) == (3, "zarrx: cat: cannot write to standard output: No space left "
                              "on device\n")


def test_copy_onto_an_existing_node_names_the_option_to_pass(tmp_path, capsys):
    p = _tree(tmp_path)
    code, _, err = run(capsys, "copy", p + "/a", p + "/sub/m")
    assert (code, err) == (3, f"zarrx: copy: a node exists at /sub/m in the destination "
                              f"{p}/sub/m; pass --overwrite (overwrite=True) to replace it\n")
    assert zarrx.open_array(p + "/sub/m", mode="r").shape == (4, 6)


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


@pytest.mark.parametrize("cmd", ["copy", "convert"])
def test_ctrl_c_while_a_zip_archive_is_finished_leaves_no_file(tmp_path, capsys, monkeypatch,
                                                                cmd):
    # the archive is written to a temporary file moved in place at the end; interrupted
    # there, the temporary was left behind. A zip archive is not resumed: no --resume hint.
    from zarrx.store import zip as zipstore
    p = _tree(tmp_path)

    def interrupted(path):
        raise KeyboardInterrupt
    monkeypatch.setattr(zipstore, "fsync_temp", interrupted)
    assert run(capsys, cmd, p, tmp_path / "out.zip") == (130, "", "zarrx: interrupted\n")
    assert os.listdir(tmp_path) == ["t.zarr"]


def test_a_change_one_array_of_a_hierarchy_cannot_take_names_that_array(tmp_path, capsys):
    p = _tree(tmp_path)                     # /a is int16: 99999 does not fit
    code, _, err = run(capsys, "convert", p, tmp_path / "out.zarr", "--fill-value", "99999")
    assert (code, err) == (2, "zarrx convert: argument --fill-value: convert /a: fill_value "
                              "for its type int16: expected an integer in [-32768, 32767], "
                              "found 99999 (see zarrx convert --help)\n")
    assert not (tmp_path / "out.zarr").exists()


@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_cat_out_of_bounds_names_the_array(tmp_path, capsys, npy):
    p = _tree(tmp_path)
    assert run(capsys, "cat", p + "/sub/m", "9", *npy) == \
        (3, "", "zarrx: array '/sub/m': index 9 is out of bounds for axis 0 with size 4\n")


@pytest.mark.parametrize("cmd", ["copy", "convert"])
@pytest.mark.parametrize("below", ["x", "new/x"])
def test_a_destination_inside_an_array_is_refused(tmp_path, capsys, cmd, below):
    # the walk up to the hierarchy stops at an array, which made the destination a store of
    # its own inside the array's directory
    p = _tree(tmp_path)
    code, _, err = run(capsys, cmd, p + "/a", f"{p}/sub/m/{below}")
    assert (code, err) == (3, f"zarrx: '{p}/sub/m/{below}': cannot write a node inside the "
                              f"array at '{p}/sub/m' (an array has no children)\n")
    assert sorted(os.listdir(f"{p}/sub/m")) == ["c", "zarr.json"]


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


def test_cat_prints_each_record_as_one_item_of_its_line(tmp_path, capsys):
    p = str(tmp_path / "rec.zarr")
    z = zarrx.create_array(p, shape=(2, 2), dtype=[("a", "i4"), ("b", "f4"), ("c", "U4")])
    z[...] = np.array([[(1, 0.7, "x"), (2, 2.5, "y z")], [(3, -1, ""), (4, 4.5, "w")]],
                      dtype=z.dtype)
    code, out, err = run(capsys, "cat", p)
    assert code == 0 and err == ""
    assert out == "(1,0.7,x) (2,2.5,'y z')\n(3,-1.0,'') (4,4.5,w)\n"
    assert run(capsys, "cat", p, "1")[1] == "(3,-1.0,'')\n(4,4.5,w)\n"
