"""fsspec chains ending at a local path (``zip::/data/a.zip``, ``dir::x.zarr``) name the same
data wherever a location is taken: the open functions, the copy tools and the ``zarrx``
command."""
from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.store.inputs import local_chain

from cli_helpers import run

pytest.importorskip("fsspec")


@pytest.fixture
def here(tmp_path, monkeypatch):
    src = tmp_path / "x.zarr"
    g = zarrx.open_group(str(src), mode="w")
    g.create_array("a", shape=(6,), chunks=(2,), dtype="i4")[...] = np.arange(6)
    with zipfile.ZipFile(tmp_path / "a b.zip", "w") as zf:
        for root, _, files in os.walk(src):
            for name in files:
                zf.write(os.path.join(root, name), os.path.relpath(os.path.join(root, name), src))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("form", ["zip::a b.zip", "zip::{here}/a b.zip", "dir::x.zarr",
                                  "dir::{here}/x.zarr"])
def test_the_command_opens_a_chain_ending_at_a_local_path(here, capsys, form):
    """``zarrx info zip::a.zip`` read a local folder named ``zip::a.zip`` (no such zip
    archive), where ``zarrx.open`` opens the archive."""
    where = form.format(here=here)
    assert zarrx.open_group(where, mode="r")["a"][...].tolist() == list(range(6))
    code, out, err = run(capsys, "info", where, "--json")
    assert (code, err) == (0, "")
    assert '"zarr_format": 3' in out
    code, out, err = run(capsys, "tree", where)
    assert code == 0 and "a" in out, err


def test_copy_reads_a_chain_ending_at_a_local_path(here):
    zarrx.copy("zip::a b.zip", str(here / "out.zarr"))
    assert zarrx.open_array(str(here / "out.zarr"), path="a", mode="r")[...].tolist() == \
        list(range(6))


def test_a_local_chain_is_written_as_its_url(here):
    assert local_chain("zip::a b.zip") == f"zip::file://{here}/a b.zip"
    assert local_chain("simplecache::zip::/d/a.zip") == "simplecache::zip::file:///d/a.zip"
    assert local_chain("notaprotocol::b") is None
    assert local_chain("zip::s3://bucket/a.zip") is None


@pytest.mark.parametrize("chain", ["zip::s3:/bucket/a.zip", "simplecache::s3:/bucket/x.zarr",
                                   "dir::https:/host/x.zarr"])
def test_a_chain_ending_at_a_url_with_one_slash_is_refused(here, tmp_path_factory,
                                                           monkeypatch, chain):
    """``f"simplecache::{pathlib.Path('s3://bucket/x.zarr')}"`` (one slash): its last link
    was taken for a local path and the data written to a folder ``s3:`` here, where
    ``s3:/bucket/x.zarr`` alone is refused."""
    empty = tmp_path_factory.mktemp("empty")
    monkeypatch.chdir(empty)
    head, _, last = chain.rpartition("::")
    scheme = last.split(":")[0]
    with pytest.raises(zarrx.errors.StoreError, match=(
            f"^open_group: the last link of the fsspec chain '{head}::...': a path starting "
            f"with '{scheme}:/' is not a URL")):
        zarrx.open_group(chain, mode="w")
    with pytest.raises(zarrx.errors.StoreError, match="is not a URL"):
        zarrx.copy(str(here / "x.zarr"), chain)
    assert os.listdir(empty) == []
