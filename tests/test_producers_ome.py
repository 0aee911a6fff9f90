"""OME-NGFF images written by ome-zarr-py read by zarrx and shown by the ``zarrx`` command.

tests/data/ome/ holds an image with its pyramid and a label image, written by ome-zarr 0.18.0 in
NGFF 0.4 (Zarr v2, chunk keys nested with "/") and 0.5 (Zarr v3); see its README.md.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import cli

DATA = Path(__file__).resolve().parent / "data" / "ome"
VERSIONS = ["0.4", "0.5"]
# as tests/data/ome/make_corpus.py writes them
IMAGE = (np.arange(2 * 2 * 16 * 20) % 251).astype("uint8").reshape(2, 2, 16, 20)
LABELS = np.zeros((16, 20), dtype="uint16")
LABELS[2:6, 3:9] = 1
LABELS[10:14, 12:18] = 2
YX = [(16, 20), (8, 10), (4, 5), (2, 2), (1, 1)]


def ome(node, version):
    """The node's OME-NGFF metadata: 0.4 keeps it in the attributes, 0.5 under "ome"."""
    return dict(node.attrs) if version == "0.4" else node.attrs["ome"]


def multiscale_levels(group, version):
    """``(axes names, [level array, ...])`` of the group's first multiscale."""
    ms = ome(group, version)["multiscales"][0]
    return [a["name"] for a in ms["axes"]], [group[d["path"]] for d in ms["datasets"]]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_level_of_the_image_and_its_labels_reads_as_written(version):
    zarr = pytest.importorskip("zarr")
    path = DATA / f"image-{version}.zarr"
    root = zarrx.open_group(str(path), mode="r")
    assert root.zarr_format == (2 if version == "0.4" else 3)
    axes, levels = multiscale_levels(root, version)
    assert axes == ["t", "c", "y", "x"]
    assert [a.shape for a in levels] == [(2, 2, *yx) for yx in YX]
    np.testing.assert_array_equal(levels[0][...], IMAGE)
    assert ome(root["labels"], version)["labels"] == ["cells"]
    cells = root["labels/cells"]
    assert "image-label" in ome(cells, version)
    label_axes, label_levels = multiscale_levels(cells, version)
    assert label_axes == ["y", "x"] and [a.shape for a in label_levels] == YX
    np.testing.assert_array_equal(label_levels[0][...], LABELS)
    # the downsampled levels as zarr-python reads them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = zarr.open_group(str(path), mode="r")
        for arr in levels + label_levels:
            want = oracle[arr.path][...]
            np.testing.assert_array_equal(arr[...], want, err_msg=arr.path)
            np.testing.assert_array_equal(arr[..., 1:, ::2], want[..., 1:, ::2],
                                          err_msg=arr.path)


def run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("version", VERSIONS)
def test_tree_ls_and_info_show_the_pyramid(version, capsys):
    path = DATA / f"image-{version}.zarr"
    code, out = run(capsys, "tree", path)
    assert code == 0 and out.splitlines() == [
        "/", "├── labels", "│   └── cells",
        *(f"│       {'└──' if i == 4 else '├──'} s{i} {yx} uint16" for i, yx in enumerate(YX)),
        *(f"{'└──' if i == 4 else '├──'} s{i} {(2, 2, *yx)} uint8" for i, yx in enumerate(YX))]
    code, out = run(capsys, "ls", path)
    assert code == 0 and out.splitlines() == [
        "labels/", *(f"s{i}\t{(2, 2, *yx)}\tuint8" for i, yx in enumerate(YX))]
    code, out = run(capsys, "ls", path / "s4")
    prefix = "s4/" if version == "0.4" else "s4/c/"     # v2 "/"-separated or v3 default keys
    assert code == 0 and out.splitlines() == [f"{prefix}{t}/{c}/0/0\t17"
                                              for t in range(2) for c in range(2)]
    code, out = run(capsys, "info", path / "s0")
    lines = out.splitlines()
    assert code == 0 and "Shape         : (2, 2, 16, 20)" in lines
    assert "Chunk shape   : (1, 1, 8, 8)" in lines and "Chunks stored : 24 of 24" in lines
    if version == "0.5":
        assert "Dimensions    : ('t', 'c', 'y', 'x')" in lines
    code, out = run(capsys, "info", path / "labels" / "cells" / "s4")
    assert code == 0 and "Chunks stored : 0 of 1" in out.splitlines()
    code, out = run(capsys, "check", path)
    assert code == 0 and out.splitlines()[-1] == "no problems found"
