"""``zarrx cat -o``: the output file is never written into the Zarr data it reads."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import zarrx
from zarrx import cli
from zarrx.store import ZipStore


def _files(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("npy", [[], ["--npy"]])
@pytest.mark.parametrize("output", ["zarr.json", "a/c/0", "a.npy", "sub/new/x.txt"])
def test_cat_refuses_an_output_file_inside_the_hierarchy_it_reads(tmp_path, capsys, npy,
                                                                   output):
    # (before: -o data.zarr/zarr.json replaced the group's document with the values as text,
    # and -o data.zarr/a/c/0 a chunk, with exit status 0)
    root = tmp_path / "data.zarr"
    g = zarrx.open_group(str(root), mode="w")
    g.create_array("a", shape=(4,), dtype="i2", chunks=(2,))[:] = np.arange(4)
    g.create_group("sub")
    before = _files(root)
    assert cli.main(["cat", str(root / "a"), "-o", str(root / output), *npy]) == 3
    assert capsys.readouterr().err == (
        f"zarrx: cat: the output file {str(root / output)!r} lies in the Zarr data it reads "
        f"(LocalStore({str(root)!r}, read_only=True)): it would replace or add an object "
        f"there; write it elsewhere\n")
    assert _files(root) == before
    assert zarrx.open_array(str(root / "a"))[:].tolist() == [0, 1, 2, 3]
    assert cli.main(["cat", str(root / "a"), "-o", str(tmp_path / output.replace("/", "_")),
                     *npy]) == 0


def test_cat_refuses_to_write_over_the_zip_archive_it_reads(tmp_path, capsys):
    archive = tmp_path / "a.zip"
    with ZipStore(archive, "w") as store:
        zarrx.create_array(store, name="g/a", shape=(2,), dtype="f4", data=[1, 2])
    before = archive.read_bytes()
    link = tmp_path / "link.zip"
    os.symlink(archive, link)
    for output in (archive, link):
        assert cli.main(["cat", f"{archive}/g/a", "-o", str(output)]) == 3
        assert "lies in the Zarr data it reads" in capsys.readouterr().err
    assert archive.read_bytes() == before


@pytest.mark.parametrize("name", ["example.zarr", "legacy_v2.zarr"])
def test_the_demo_leaves_existing_data_where_it_would_write_alone(tmp_path, capsys, name):
    # (before: demo --dir replaced an existing example.zarr, data and all, without a word)
    mine = tmp_path / name
    zarrx.create_array(str(mine), shape=(3,), dtype="i1", chunks=(3,))[:] = 7
    before = _files(tmp_path)
    assert cli.main(["demo", "--dir", str(tmp_path)]) == 3
    assert capsys.readouterr() == ("", f"zarrx: demo: {str(mine)!r} exists; it is left "
                                       f"alone: name another --dir, or remove it\n")
    assert _files(tmp_path) == before


@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("below", ["", "sub", "new", "new/deeper", "plain", "plain/deeper"])
def test_the_demo_refuses_a_directory_in_a_hierarchy(tmp_path, capsys, zarr_format, below):
    # (before: it wrote its v3 and v2 hierarchies in there, nodes of the one found, which
    # then mixed both formats and read the examples as its own)
    root = tmp_path / "data.zarr"
    zarrx.open_group(str(root), mode="w", zarr_format=zarr_format).create_group("sub")
    (root / "plain").mkdir()
    before = _files(tmp_path)
    where = str(root / below) if below else str(root)
    assert cli.main(["demo", "--dir", where]) == 2
    assert capsys.readouterr() == ("", (
        f"zarrx demo: argument --dir: {where!r} is in the Zarr hierarchy at {str(root)!r}: "
        f"the examples (a Zarr v3 hierarchy and a v2 one) would be written into it as its "
        f"nodes; name a directory outside it (see zarrx demo --help)\n"))
    assert _files(tmp_path) == before and not (root / "new").exists()


@pytest.mark.parametrize("below", ["", "c", "c/0/x", "x"])
def test_the_demo_refuses_a_directory_in_an_array(tmp_path, capsys, below):
    array = tmp_path / "a.zarr"
    zarrx.create_array(str(array), shape=(4,), chunks=(2,), dtype="i1")[:] = 1
    before = _files(tmp_path)
    where = str(array / below) if below else str(array)
    assert cli.main(["demo", "--dir", where]) == 2
    assert capsys.readouterr().err == (
        f"zarrx demo: argument --dir: {where!r} is in the array at {str(array)!r} (an array "
        f"has no children); name a directory outside it (see zarrx demo --help)\n")
    assert _files(tmp_path) == before
    with pytest.raises(zarrx.ZarrError) as info:        # the library names its keyword
        cli.demo(where)
    assert info.value.arguments == ("root",)


def test_the_demo_writes_beside_a_hierarchy(tmp_path, capsys):
    zarrx.open_group(str(tmp_path / "data.zarr"), mode="w")
    assert cli.main(["demo", "--dir", str(tmp_path / "examples")]) == 0
    assert zarrx.open_group(str(tmp_path / "data.zarr")).members() == ()
    assert (tmp_path / "examples" / "example.zarr" / "zarr.json").is_file()


def test_info_of_a_group_escapes_attribute_names_with_control_characters(tmp_path, capsys):
    # (before: printed raw, so a stored name could send escape sequences to the terminal)
    root = str(tmp_path / "g.zarr")
    zarrx.open_group(root, mode="w", attributes={"t\x1b[2Jk": 1, "plain": 2})
    assert cli.main(["info", root]) == 0
    out = capsys.readouterr().out
    assert "Attributes   : plain, 't\\x1b[2Jk'\n" in out and "\x1b" not in out


def test_member_names_with_control_characters_are_skipped_or_printed_escaped(tmp_path, capsys):
    # a consolidated document may name members no store would take; tree, ls and check
    # printed them raw (escape sequences to the terminal)
    import json
    root = tmp_path / "g.zarr"
    zarrx.open_group(str(root), mode="w", zarr_format=2).create_array("a", shape=(2,),
                                                                      dtype="i1")
    zarrx.consolidate_metadata(str(root))
    doc = json.loads((root / ".zmetadata").read_text())
    doc["metadata"]["b\x1b[31mX/.zarray"] = doc["metadata"]["a/.zarray"]
    (root / ".zmetadata").write_text(json.dumps(doc))
    outputs = {}
    for cmd in ("tree", "ls", "check"):
        # tree and ls skip the member, as a listing of the directory would, naming it escaped
        # (printed on standard error as one line, "zarrx: warning: ...")
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            assert cli.main([cmd, str(root)]) == (1 if cmd == "check" else 0)
        captured = capsys.readouterr()
        outputs[cmd] = captured.out
        said = captured.err.splitlines()
        assert all("\x1b" not in text for text in said)
        if cmd != "check":
            assert any(text.startswith("zarrx: warning: ") and
                       "skipping the child 'b\\x1b[31mX'" in text for text in said)
    assert all("\x1b" not in out for out in outputs.values())
    assert outputs["tree"] == "/\n└── a (2,) int8\n"
    assert outputs["ls"] == "a\t(2,)\tint8\n"
    assert "  metadata: b\\x1b[31mX/.zarray: missing:" in outputs["check"]


@pytest.mark.parametrize("below", ["", "/sub/x"])
def test_demo_into_a_file_is_refused_before_anything_is_written(tmp_path, capsys, below):
    # (before: "writing an example hierarchy to ..." then "Not a directory", exit status 3)
    from zarrx import cli
    (tmp_path / "f.txt").write_text("keep")
    assert cli.main(["demo", "--dir", str(tmp_path / "f.txt") + below]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "is a file, not a directory" in err and "argument --dir" in err
    assert (tmp_path / "f.txt").read_text() == "keep"
