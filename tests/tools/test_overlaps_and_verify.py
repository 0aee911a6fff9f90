"""Copying a hierarchy into itself is refused, whatever the node; verification treats NaT like
NaN; codec arguments may leave out what zarr-python fills in."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import zarrx
from zarrx.tools.convert import same_values


def _run(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zarrx", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


@pytest.mark.parametrize("command", ["copy", "convert"])
@pytest.mark.parametrize("src, dst", [("data.zarr", "data.zarr/backup"),
                                      ("data.zarr/sub", "data.zarr/sub/x")])
def test_a_destination_inside_the_source_is_refused(tmp_path, command, src, dst):
    g = zarrx.open_group(str(tmp_path / "data.zarr"), mode="w")
    g.create_group("sub").create_array("b", shape=(2,), dtype="i4")[...] = [1, 2]
    before = sorted(p.name for p in (tmp_path / "data.zarr").rglob("*"))
    out = _run(command, src, dst, cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "zarrx: " in out.stderr and "Traceback" not in out.stderr
    assert sorted(p.name for p in (tmp_path / "data.zarr").rglob("*")) == before


@pytest.mark.parametrize("command", ["copy", "convert"])
@pytest.mark.parametrize("src, dst, how", [
    ("data.zarr/sub", "data.zarr/sub", "is the source"),
    ("data.zarr/sub/b", "data.zarr", "holds the source"),       # convert said "is the source"
    ("data.zarr", "data.zarr/sub/x", "lies inside the source"),
])
def test_the_refusal_says_how_the_destination_meets_the_source(tmp_path, command, src, dst,
                                                                how):
    g = zarrx.open_group(str(tmp_path / "data.zarr"), mode="w")
    g.create_group("sub").create_array("b", shape=(2,), dtype="i4")[...] = [1, 2]
    out = _run(command, src, dst, "--overwrite", cwd=tmp_path)
    assert (out.returncode, out.stderr) == \
        (3, f"zarrx: {command}: the destination {dst} {how} {src}\n")
    assert zarrx.open_array(str(tmp_path / "data.zarr"), path="sub/b", mode="r")[1] == 2


def test_a_sibling_with_a_common_prefix_is_not_inside(tmp_path):
    g = zarrx.open_group(str(tmp_path / "data.zarr"), mode="w")
    g.create_group("sub").create_array("b", shape=(2,), dtype="i4")[...] = [1, 2]
    assert _run("copy", "data.zarr/sub", "data.zarr/sub2", cwd=tmp_path).returncode == 0
    assert zarrx.open_array(str(tmp_path / "data.zarr"), path="sub2/b", mode="r")[1] == 2


@pytest.mark.parametrize("a", [
    np.array(["2020-01-01", "NaT"], "M8[s]"),
    np.array([1, "NaT"], "m8[ms]"),
    np.array([(1, np.nan)], dtype=[("a", "i4"), ("b", "f8")]),
], ids=["datetime-NaT", "timedelta-NaT", "record-NaN"])
def test_verification_treats_nat_and_nan_as_equal(a):
    assert same_values(a, a.copy())
    b = a.copy()
    b[0] = b[-1] if a.dtype.fields is None else (2, 0.0)
    assert not same_values(a, b)


@pytest.mark.parametrize("spec, expected", [
    ({"name": "gzip"}, {"level": 5}),
    ({"name": "blosc", "configuration": {"cname": "lz4", "shuffle": "bitshuffle"}},
     {"cname": "lz4", "clevel": 5, "shuffle": "bitshuffle", "typesize": 4, "blocksize": 0}),
    ({"name": "zstd"}, {"level": 0, "checksum": False}),
])
def test_codec_arguments_take_zarr_pythons_defaults(spec, expected):
    z = zarrx.create_array({}, shape=(10,), dtype="i4", compressors=spec)
    z[...] = np.arange(10)
    assert z.metadata.codecs[-1].configuration == expected
    assert z[...].tolist() == list(range(10))
