"""``overwrite=True`` (``--overwrite``) replaces a node: a destination holding other things but
no node is refused, and nothing of it is removed."""
from __future__ import annotations

import pytest

import zarrx
from zarrx.errors import NodeExistsError


def _files(folder):
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("how", ["copy", "convert"])
def test_overwrite_leaves_a_directory_that_holds_no_node_alone(tmp_path, how):
    # (before: every file of the directory was removed, then the node written there)
    src = str(tmp_path / "src.zarr")
    zarrx.create_array(src, shape=(4,), dtype="i2", chunks=(2,), data=[1, 2, 3, 4])
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.txt").write_text("mine")
    (docs / "sub" / "y.txt").write_text("also mine")
    before = _files(docs)
    run = getattr(zarrx, how)
    with pytest.raises(NodeExistsError, match=f"^{how}: the destination {docs} holds no Zarr "
                                              f"node, but other objects, such as "):
        run(src, str(docs), overwrite=True)
    assert _files(docs) == before
    # an empty directory, or one holding a node, is written
    (tmp_path / "empty").mkdir()
    run(src, str(tmp_path / "empty"), overwrite=True)
    run(src, str(tmp_path / "empty"), overwrite=True)
    assert zarrx.open_array(str(tmp_path / "empty"))[:].tolist() == [1, 2, 3, 4]
