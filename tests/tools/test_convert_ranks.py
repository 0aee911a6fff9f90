"""``zarrx convert`` of a hierarchy whose arrays have different numbers of dimensions: a chunk
or shard shape applies to the arrays of its rank, the others keep theirs."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import zarrx
from zarrx import cli


def _mixed(path):
    """A group holding a sharded 1-D array, a 3-D array in a subgroup and a 0-D array."""
    g = zarrx.open_group(path, mode="w", attributes={"title": "mixed"})
    g.create_array("line", shape=(100,), dtype="i4", chunks=(10,), shards=(20,),
                   fill_value=-1)[:95] = np.arange(95)
    g.create_group("sub").create_array("cube", shape=(12, 8, 8), dtype="f4", chunks=(4, 4, 4))[
        ...] = np.arange(768, dtype="f4").reshape(12, 8, 8)
    g.create_array("scalar", shape=(), dtype="u2", fill_value=7)
    return g


def _values(group):
    return {name: np.asarray(node[...]) for name, node in group.members(max_depth=None)
            if isinstance(node, zarrx.Array)}


def test_a_shard_shape_applies_to_the_arrays_of_its_rank(tmp_path, capsys):
    zarr = pytest.importorskip("zarr")
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    _mixed(src)
    code = cli.main(["convert", src, dst, "--chunks", "2,4,4", "--shards", "6,8,8", "--verify",
                     "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "DIFFER" not in out
    assert "note: /line keeps its own chunks and shards: it has 1 dimension, not the 3 of " \
           "chunks (2, 4, 4) or the 3 of shards (6, 8, 8)" in out
    assert "note: /scalar keeps its own chunks and shards: it has 0 dimensions" in out
    assert "/sub/cube" not in out.split("note:", 1)[1]
    g = zarrx.open_group(dst, mode="r")
    assert g["sub/cube"].chunks == (2, 4, 4) and g["sub/cube"].shards == (6, 8, 8)
    assert g["line"].chunks == (10,) and g["line"].shards == (20,)
    assert g["scalar"].shape == () and g["scalar"].shards is None
    expected = _values(zarrx.open_group(src, mode="r"))
    got = _values(g)
    assert sorted(got) == sorted(expected) == ["line", "scalar", "sub/cube"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = zarr.open_group(dst, mode="r")
        assert theirs.attrs["title"] == "mixed"
        assert theirs["sub/cube"].shards == (6, 8, 8) and theirs["line"].shards == (20,)
        for name, values in expected.items():
            np.testing.assert_array_equal(got[name], values)
            np.testing.assert_array_equal(theirs[name][...], values)


def test_the_other_arrays_keep_their_layout_in_another_format(tmp_path):
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "v2.zarr")
    _mixed(src)
    report = zarrx.convert(src, dst, zarr_format=2, chunks=(3,), verify=True)
    assert report.ok and len(report.notes) == 2           # the cube and the scalar
    assert report.notes[0].startswith("/scalar keeps its own chunks: it has 0 dimensions, "
                                      "not the 1 of chunks (3,)")
    assert report.notes[1].startswith("/sub/cube keeps its own chunks: it has 3 dimensions")
    g = zarrx.open_group(dst, mode="r")
    assert g["line"].zarr_format == 2 and g["line"].chunks == (3,)
    assert g["sub/cube"].chunks == (4, 4, 4)
    np.testing.assert_array_equal(g["line"][...], zarrx.open_array(src + "/line")[...])


@pytest.mark.parametrize("option, value", [("chunks", (4, 4)), ("shards", (8, 8))])
def test_a_shape_no_array_has_the_rank_of_is_refused_before_anything_is_written(
        tmp_path, option, value):
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    _mixed(src)
    with pytest.raises(zarrx.ZarrError) as info:
        zarrx.convert(src, dst, **{option: value})
    assert str(info.value) == (f"convert /: {option}: expected a shape of 0, 1 or 3 "
                               f"dimensions (those of the arrays in the hierarchy), found "
                               f"{value!r}")
    assert not os.path.exists(dst)


def test_a_single_array_of_another_rank_is_still_refused(tmp_path):
    src = str(tmp_path / "src.zarr")
    _mixed(src)
    with pytest.raises(zarrx.ZarrError, match=r"shards: expected 1 positive ints, found "
                                              r"\(8, 8, 8\)"):
        zarrx.convert(src + "/line", str(tmp_path / "dst.zarr"), shards=(8, 8, 8))


@pytest.mark.parametrize("shape, chunks", [((), ()), ((5,), (4,)), ((5, 3), (4, 2))],
                         ids=["0-d", "1-d", "2-d"])
def test_a_zarr_v2_fortran_order_array_of_any_rank_converts_to_zarr_v2(tmp_path, shape, chunks):
    """Its order "F" (read as a transpose reversing the axes, which reorders nothing with
    fewer than two) stays "F"; it was refused as a transpose filter Zarr v2 cannot hold."""
    zarr = pytest.importorskip("zarr")
    src, dst = str(tmp_path / "src.zarr"), str(tmp_path / "dst.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = zarr.create_array(src, shape=shape, chunks=chunks, dtype="<i2",
                              zarr_format=2, order="F", fill_value=4)
    values = (np.arange(int(np.prod(shape)), dtype="<i2") + 1).reshape(shape)
    z[...] = values
    assert zarrx.convert(src, dst, zarr_format=2, verify=True).ok
    out = zarrx.open_array(dst, mode="r")
    assert (out.zarr_format, out.order, out.metadata.filters) == (2, "F", None)
    np.testing.assert_array_equal(out[...], values)
    np.testing.assert_array_equal(zarr.open_array(dst, mode="r")[...], values)
