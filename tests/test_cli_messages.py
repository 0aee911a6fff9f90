"""The commands' messages name what they take: ``chunk`` when a key is neither a chunk key nor
coordinates, ``cat`` when given a group."""
from __future__ import annotations

import os

import pytest

import zarrx
from zarrx import cli


@pytest.mark.parametrize("zarr_format, shape, chunks, key, message", [
    # a 0-d array has no coordinates: the message offered "grid coordinates (0,1)"
    (3, (), (), "0", "'0' is not the key of the one chunk of the 0-dimensional array, 'c'"),
    (2, (), (), "c", "'c' is not the key of the one chunk of the 0-dimensional array, '0'"),
    (3, (4, 4, 4), (2, 2, 2), "x", "'x' is neither a chunk key of the array ('c/0/0/0', say) "
                                   "nor grid coordinates such as 0,0,0"),
])
def test_a_key_that_names_no_chunk_says_what_the_array_takes(tmp_path, capsys, zarr_format,
                                                            shape, chunks, key, message):
    path = str(tmp_path / "a.zarr")
    zarrx.create_array(path, shape=shape, chunks=chunks, dtype="u1", fill_value=0,
                       zarr_format=zarr_format)[...] = 1
    assert cli.main(["chunk", path, key]) == 3
    assert capsys.readouterr().err == f"zarrx: array '/': {message}\n"


def test_cat_of_a_group_of_groups_names_them(tmp_path, capsys):
    # "(it has none)" read as an empty group
    g = zarrx.open_group(str(tmp_path / "h.zarr"), mode="w")
    g.create_group("a/b").create_array("x", shape=(1,), dtype="u1")
    g.create_group("a/c")
    g.create_group("e")
    for node, text in [("a", "it holds none directly; its groups: b, c"), ("a/b", "x"),
                       ("e", "it holds none")]:
        assert cli.main(["cat", str(tmp_path / "h.zarr" / node)]) == 3
        assert capsys.readouterr().err == \
            f"zarrx: cat: /{node} is a group; name an array in it ({text})\n"


def test_a_codec_option_given_twice_is_refused():
    # (before: the last one was taken without a word)
    from zarrx.cli.common import parse_codec
    with pytest.raises(zarrx.ZarrError, match=r"^codec 'gzip:level=9, level=1': 'level' is "
                                              r"given twice$"):
        parse_codec("gzip:level=9, level=1")
    assert parse_codec("gzip:level=9") == {"name": "gzip", "configuration": {"level": 9}}


_SHAPES = "positive integers below 2**63 separated by commas (64,64)"


@pytest.mark.parametrize("option, value", [
    # (before: "expected one argument", as argparse took -1,4 for an option)
    ("--chunks", "-1,4"), ("--shards", "-5,5"), ("--chunks", "-1"), ("--chunks", "4,-1"),
    # (before: exit status 3, from the array created with it)
    ("--chunks", "99999999999999999999,4"), ("--shards", "4,99999999999999999999"),
    ("--chunks", "9223372036854775808,1")])
def test_a_bad_shape_value_exits_2_naming_the_option(tmp_path, capsys, monkeypatch, option,
                                                    value):
    monkeypatch.chdir(tmp_path)
    zarrx.create_array("a.zarr", shape=(10, 10), chunks=(5, 5), dtype="i4")[:] = 1
    assert cli.main(["convert", "a.zarr", "b.zarr", option, value]) == 2
    assert capsys.readouterr().err == (f"zarrx convert: argument {option}: expected {_SHAPES}, "
                                       f"found {value!r} (see zarrx convert --help)\n")
    assert not (tmp_path / "b.zarr").exists()


def test_values_starting_with_a_minus_reach_the_commands(tmp_path, capsys, monkeypatch):
    # (before: "the following arguments are required: key", "unrecognized arguments: -2:",
    # "expected one argument")
    monkeypatch.chdir(tmp_path)
    zarrx.create_array("a.zarr", shape=(4,), chunks=(2,), dtype="f8")[:] = [1, 2, 3, 4]
    for key in ("-1", "-1,0"):
        assert cli.main(["chunk", "a.zarr", key]) == 3
        assert capsys.readouterr().err == (f"zarrx: array '/': {key!r} is neither a chunk key "
                                           f"of the array ('c/0', say) nor grid coordinates "
                                           f"such as 0\n")
    assert cli.main(["cat", "a.zarr", "-2:"]) == 0
    assert capsys.readouterr().out == "3.0\n4.0\n"
    for value, stored in [("-1.5e3", -1500.0), ("-Infinity", float("-inf"))]:
        assert cli.main(["convert", "a.zarr", "b.zarr", "--fill-value", value,
                         "--overwrite", "-q"]) == 0
        assert zarrx.open_array("b.zarr").fill_value == stored


@pytest.mark.parametrize("dtype, value, expected", [
    # (before: exit status 3, "array '/': array metadata fill_value: ...", naming neither the
    # option nor the type)
    ("i4", "abc", "expected an integer in [-2147483648, 2147483647], found 'abc'"),
    ("u1", "300", "expected an integer in [0, 255], found 300"),
    ("u1", "-1", "expected an integer in [0, 255], found -1"),
    ("i2", "[1,2]", "expected an integer in [-32768, 32767], found [1, 2]"),
    ("f4", "abc", 'expected a number, "NaN", "Infinity", "-Infinity" or a hex bit pattern of '
                  "8 digits, found 'abc'"),
    ("M8[s]", "abc", "expected a fill value for datetime64[s], found 'abc'")])
def test_a_fill_value_the_type_cannot_take_exits_2_naming_option_value_and_type(
        tmp_path, capsys, monkeypatch, dtype, value, expected):
    monkeypatch.chdir(tmp_path)
    zarrx.create_array("a.zarr", shape=(4,), chunks=(2,), dtype=dtype)
    kind = str(zarrx.open_array("a.zarr").dtype)
    assert cli.main(["convert", "a.zarr", "b.zarr", "--fill-value", value]) == 2
    assert capsys.readouterr().err == (f"zarrx convert: argument --fill-value: convert /: "
                                       f"fill_value for its type {kind}: {expected} (see zarrx "
                                       f"convert --help)\n")
    assert not (tmp_path / "b.zarr").exists()


def test_a_fill_value_one_array_of_a_hierarchy_cannot_take_exits_2_and_writes_nothing(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    g = zarrx.open_group("g.zarr", mode="w")
    g.create_array("a", shape=(3,), dtype="f8")
    g.create_array("b", shape=(3,), dtype="u1")
    zarrx.convert("g.zarr", "old.zarr")
    for target, extra in [("new.zarr", []), ("old.zarr", ["--overwrite"])]:
        assert cli.main(["convert", "g.zarr", target, "--fill-value", "300", *extra]) == 2
        assert capsys.readouterr().err == (
            "zarrx convert: argument --fill-value: convert /b: fill_value for its type uint8: "
            "expected an integer in [0, 255], found 300 (see zarrx convert --help)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.zarr", "old.zarr"]
    assert zarrx.open_array("old.zarr/b").fill_value == 0
    with pytest.raises(zarrx.ZarrError) as info:        # the library names the keyword
        zarrx.convert("g.zarr", "new.zarr", fill_value=300)
    assert info.value.arguments == ("fill_value",)


@pytest.mark.parametrize("options, named, message", [
    # each exit status 3 before, as errors of the data
    (["--compressor", "zstd:level"], "argument --compressor",
     "codec 'zstd:level': expected name:key=value,key=value, found 'level'"),
    (["--compressor", "zstd:level=abc"], "argument --compressor",
     "array '/': create_array compressors[0].configuration.level: expected an integer in "
     "[-131072, 22], found 'abc'"),
    (["--filter", "{"], "argument --filter", "codec '{': not valid JSON: Expecting property "
                                             "name enclosed in double quotes: line 1 column 2 "
                                             "(char 1)"),
    (["--chunks", "3,3"], "argument --chunks",
     "convert /: chunks: expected 1 positive ints, found (3, 3)"),
    (["--shards", "3"], "argument --shards",
     "array '/': create_array: shards[0]=3 must be a positive multiple of chunks[0]=2 (or 0 on "
     "an axis of length 0, with positive chunks)"),
    (["--zarr-format", "2", "--shards", "4"], "arguments --zarr-format and --shards",
     "convert /: Zarr v2 has no sharding; drop the shard shape (--shards none), or write "
     "Zarr v3 (--zarr-format 3)")])
def test_option_values_the_data_cannot_take_exit_2_naming_the_options(
        tmp_path, capsys, monkeypatch, options, named, message):
    monkeypatch.chdir(tmp_path)
    zarrx.create_array("a.zarr", shape=(4,), chunks=(2,), dtype="i4")
    assert cli.main(["convert", "a.zarr", "b.zarr", *options]) == 2
    assert capsys.readouterr().err == \
        f"zarrx convert: {named}: {message} (see zarrx convert --help)\n"
    assert not (tmp_path / "b.zarr").exists()


def test_a_source_that_cannot_be_converted_unchanged_is_still_an_error_of_the_data(
        tmp_path, capsys, monkeypatch):
    # the source's own codec is at fault, whatever was asked: exit status 3
    monkeypatch.chdir(tmp_path)
    zarrx.create_array("a.zarr", shape=(4,), chunks=(2,), dtype="i4")
    doc = (tmp_path / "a.zarr" / "zarr.json")
    doc.write_text(doc.read_text().replace('"name": "zstd"', '"name": "mystery"'))
    assert cli.main(["convert", "a.zarr", "b.zarr", "--fill-value", "5"]) == 3
    assert capsys.readouterr().err.startswith("zarrx: convert /: the codec 'mystery' is unknown")


def test_a_location_holding_no_node_says_why(tmp_path, capsys):
    # (before: "open: no array or group at '/' in LocalStore(...)" for all three)
    z = zarrx.create_array(str(tmp_path / "src.zarr"), shape=(4,), chunks=(2,), dtype="u1")
    z[...] = 1
    (tmp_path / "empty").mkdir()
    partial = tmp_path / "partial.zarr"              # a copy killed before its documents
    (partial / "c").mkdir(parents=True)
    (partial / "c" / "0").write_bytes((tmp_path / "src.zarr" / "c" / "0").read_bytes())
    for name, why in [("missing.zarr", f"no such directory ({str(tmp_path / 'missing.zarr')!r})"),
                      ("empty", "the directory is empty"),
                      ("partial.zarr", "the directory holds 1 entry ('c') but no metadata "
                                       "document (zarr.json, .zarray or .zgroup) of a node")]:
        for command in ("info", "check"):
            assert cli.main([command, str(tmp_path / name)]) == 3
            err = capsys.readouterr().err
            assert err.startswith(f"zarrx: {tmp_path / name}: no array or group: {why}"), err
    assert cli.main(["copy", str(tmp_path / "src.zarr"), str(partial)]) == 0   # run again
    assert zarrx.open_array(str(partial), mode="r")[...].tolist() == [1, 1, 1, 1]


def test_a_warning_prints_as_one_line_without_source_code(tmp_path, capsys):
    # (before: "/.../zarrx/group.py:138: ZarrUserWarning: ..." and the line of zarrx's source
    # that issued it, which reads as part of a traceback)
    g = zarrx.open_group(str(tmp_path / "n.zarr"), mode="w")
    g.create_array("a", shape=(1,), dtype="u1")
    (tmp_path / "n.zarr" / "bad\nname").mkdir()
    (tmp_path / "n.zarr" / "bad\nname" / "zarr.json").write_bytes(
        (tmp_path / "n.zarr" / "a" / "zarr.json").read_bytes())
    for command in (["tree"], ["ls"], ["info"]):
        assert cli.main(command + [str(tmp_path / "n.zarr")]) == 0
        err = capsys.readouterr().err
        assert err.startswith("zarrx: warning: ") and "skipping the child 'bad\\nname'" in err
        assert err.count("\n") == 1 and ".py" not in err


@pytest.mark.parametrize("selection", ["1:2:0", "::0", "0, ::0"])
def test_a_zero_slice_step_is_a_usage_error_found_before_opening(tmp_path, capsys, selection):
    # (before: exit status 3 after opening the array, as if the data were at fault)
    missing = str(tmp_path / "missing.zarr")            # nothing is opened
    assert cli.main(["cat", missing, selection]) == 2
    err = capsys.readouterr().err
    assert err.startswith("zarrx cat: argument selection: ") and "nonzero slice step" in err


@pytest.mark.parametrize("inner", ["", "/group/array"], ids=["root", "inner"])
def test_a_zip_archive_that_does_not_exist_is_named(tmp_path, capsys, monkeypatch, inner):
    # (before: "zarrx: ZipStore('/.../missing.zip', mode='r'): cannot open in mode 'r':
    # [Errno 2] No such file or directory: '/.../missing.zip'")
    monkeypatch.chdir(tmp_path)
    for command in ("info", "check", "tree"):
        assert cli.main([command, f"missing.zip{inner}"]) == 3
        assert capsys.readouterr().err == (
            f"zarrx: missing.zip{inner}: no array or group: no such zip archive "
            f"({str(tmp_path / 'missing.zip')!r})\n")


def test_consolidating_a_zip_archive_that_needs_an_entry_rewritten_is_refused(tmp_path, capsys,
                                                                             monkeypatch):
    # (before: "ZipStore('/.../data.zip', mode='a'): entry 'zarr.json' already exists; zip
    # entries cannot be overwritten (write the archive anew to change it)")
    from zarrx.store import ZipStore
    monkeypatch.chdir(tmp_path)
    for name, fmt in (("v3.zip", 3), ("v2.zip", 2)):
        with ZipStore(name, mode="w") as zs:
            zarrx.open_group(zs, mode="w", zarr_format=fmt).create_array(
                "x", shape=(4,), dtype="u1")[...] = 1
    before = (tmp_path / "v3.zip").read_bytes()
    tail = ("and the entries of a zip archive cannot be rewritten; consolidate the hierarchy "
            "before zipping it, or copy it to a directory (zarrx copy), consolidate it there "
            "and zip it again\n")
    assert cli.main(["consolidate", "v3.zip"]) == 3
    assert capsys.readouterr().err == (
        "zarrx: v3.zip: cannot consolidate in place: the consolidated metadata of a Zarr v3 "
        "hierarchy goes into its group's document 'zarr.json', " + tail)
    assert (tmp_path / "v3.zip").read_bytes() == before
    # Zarr v2 keeps it in an entry of its own, which an archive takes once
    assert cli.main(["consolidate", "v2.zip"]) == 0
    assert capsys.readouterr().out == "consolidated the metadata of 1 nodes below v2.zip\n"
    assert zarrx.open_consolidated("v2.zip", mode="r")["x"][...].tolist() == [1, 1, 1, 1]
    assert cli.main(["consolidate", "v2.zip"]) == 3
    assert capsys.readouterr().err == (
        "zarrx: v2.zip: cannot consolidate in place: the archive holds consolidated metadata "
        "already ('.zmetadata'), " + tail)
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith(".")) == []


@pytest.mark.parametrize("argv, message", [
    (["info", "a.zarr", "--jsn"],
     "zarrx info: unrecognized arguments: --jsn; did you mean --json? (see zarrx info --help)"),
    (["convert", "a.zarr", "b.zarr", "--zarr-fromat", "2"],
     "zarrx convert: unrecognized arguments: --zarr-fromat 2; did you mean --zarr-format? "
     "(see zarrx convert --help)"),
    (["info", "a.zarr", "b.zarr"],
     "zarrx info: unrecognized arguments: b.zarr (see zarrx info --help)"),
])
def test_an_unknown_argument_is_reported_by_its_command_with_the_closest_option(
        tmp_path, capsys, monkeypatch, argv, message):
    # (before: "zarrx: unrecognized arguments: --jsn (see zarrx --help)")
    monkeypatch.chdir(tmp_path)
    zarrx.create_array("a.zarr", shape=(4,), chunks=(2,), dtype="f8")
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", message + "\n")
    assert not (tmp_path / "b.zarr").exists()
