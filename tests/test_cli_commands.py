"""convert, copy, check and consolidate from the command line, exit codes and one-line errors."""
from __future__ import annotations

import os

import numpy as np
import pytest

import zarrx
from zarrx import cli

from cli_helpers import _tree, run


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


def test_copy_onto_an_existing_node_names_the_option_to_pass(tmp_path, capsys):
    p = _tree(tmp_path)
    code, _, err = run(capsys, "copy", p + "/a", p + "/sub/m")
    assert (code, err) == (3, f"zarrx: copy: a node exists at /sub/m in the destination "
                              f"{p}/sub/m; pass --overwrite (overwrite=True) to replace it\n")
    assert zarrx.open_array(p + "/sub/m", mode="r").shape == (4, 6)


@pytest.mark.parametrize("cmd", ["copy", "convert"])
def test_ctrl_c_while_a_zip_archive_is_finished_leaves_no_file(tmp_path, capsys, monkeypatch,
                                                                cmd):
    # the archive is written to a temporary file moved in place at the end; interrupted
    # there, the temporary was left behind. A zip archive is not resumed: no --resume hint.
    from zarrx.store import ziptemp
    p = _tree(tmp_path)

    def interrupted(path):
        raise KeyboardInterrupt
    monkeypatch.setattr(ziptemp, "fsync_temp", interrupted)
    assert run(capsys, cmd, p, tmp_path / "out.zip") == (130, "", "zarrx: interrupted\n")
    assert os.listdir(tmp_path) == ["t.zarr"]


def test_a_change_one_array_of_a_hierarchy_cannot_take_names_that_array(tmp_path, capsys):
    p = _tree(tmp_path)                     # /a is int16: 99999 does not fit
    code, _, err = run(capsys, "convert", p, tmp_path / "out.zarr", "--fill-value", "99999")
    assert (code, err) == (2, "zarrx convert: argument --fill-value: convert /a: fill_value "
                              "for its type int16: expected an integer in [-32768, 32767], "
                              "found 99999 (see zarrx convert --help)\n")
    assert not (tmp_path / "out.zarr").exists()


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
