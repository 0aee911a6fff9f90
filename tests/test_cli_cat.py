"""``zarrx cat``: values printed as text or written as ``.npy``, a block at a time, and what
happens when the output cannot take them."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import zarrx
from zarrx import cli

from cli_helpers import _tree, run


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


@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_cat_to_a_closed_standard_output_is_an_error(npy, tmp_path, capsys, monkeypatch):
    import sys
    p = _tree(tmp_path)
    monkeypatch.setattr(sys, "stdout", None)        # as Python sets it when fd 1 is closed
    code = cli.main(["cat", p + "/a", *npy])
    err = capsys.readouterr().err
    assert code == 3 and err == "zarrx: cat: standard output is closed; write to a file with " \
                                "-o FILE\n"


@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_cat_names_an_output_file_it_cannot_write(tmp_path, capsys, npy):
    p = _tree(tmp_path)
    out = tmp_path / "missing" / "x.out"
    assert run(capsys, "cat", p + "/a", "-o", out, *npy) == \
        (3, "", f"zarrx: cat: cannot write the output file {str(out)!r}: No such file or "
                f"directory\n")


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


@pytest.mark.parametrize("npy", [[], ["--npy"]])
def test_cat_out_of_bounds_names_the_array(tmp_path, capsys, npy):
    p = _tree(tmp_path)
    assert run(capsys, "cat", p + "/sub/m", "9", *npy) == \
        (3, "", "zarrx: array '/sub/m': index 9 is out of bounds for axis 0 with size 4\n")


def test_cat_prints_each_record_as_one_item_of_its_line(tmp_path, capsys):
    p = str(tmp_path / "rec.zarr")
    z = zarrx.create_array(p, shape=(2, 2), dtype=[("a", "i4"), ("b", "f4"), ("c", "U4")])
    z[...] = np.array([[(1, 0.7, "x"), (2, 2.5, "y z")], [(3, -1, ""), (4, 4.5, "w")]],
                      dtype=z.dtype)
    code, out, err = run(capsys, "cat", p)
    assert code == 0 and err == ""
    assert out == "(1,0.7,x) (2,2.5,'y z')\n(3,-1.0,'') (4,4.5,w)\n"
    assert run(capsys, "cat", p, "1")[1] == "(3,-1.0,'')\n(4,4.5,w)\n"
