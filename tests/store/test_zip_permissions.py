"""A writing ZipStore replaces the archive with a new file: the new archive keeps the
permission bits of the one it replaces, as ``zipfile`` writing in place keeps them."""
from __future__ import annotations

import os
import re
import stat
import sys

import pytest

from zarrx.errors import StoreError
from zarrx.store import ZipStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")

GROUP = b'{"zarr_format": 3, "node_type": "group"}'


def _bits(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mode", ["a", "w"])
@pytest.mark.parametrize("bits", [0o600, 0o640, 0o604])
def test_a_replaced_archive_keeps_its_permissions(tmp_path, mode, bits):
    path = tmp_path / "private.zip"
    with ZipStore(path, mode="w") as z:
        z.set("zarr.json", GROUP)
    os.chmod(path, bits)
    with ZipStore(path, mode=mode) as z:
        z.set("a/zarr.json", GROUP)
    assert _bits(path) == bits
    with ZipStore(path, mode="r") as z:
        assert z.get("a/zarr.json") == GROUP


@pytest.mark.parametrize("mode", ["a", "w"])
def test_the_archive_being_written_is_as_private_as_the_one_it_replaces(tmp_path, mode):
    """The temporary archive has the bits before any data is in it, not only once moved in
    place."""
    path = tmp_path / "private.zip"
    with ZipStore(path, mode="w") as z:
        z.set("zarr.json", GROUP)
    os.chmod(path, 0o600)
    with ZipStore(path, mode=mode) as z:
        z.set("a/zarr.json", GROUP)
        temps = [p for p in tmp_path.iterdir() if p.name != "private.zip"]
        assert temps and all(_bits(p) == 0o600 for p in temps), \
            [(p.name, oct(_bits(p))) for p in temps]


def test_a_new_archive_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        with ZipStore(tmp_path / "new.zip", mode="w") as z:
            z.set("zarr.json", GROUP)
        with ZipStore(tmp_path / "x.zip", mode="x") as z:
            z.set("zarr.json", GROUP)
    finally:
        os.umask(old)
    assert _bits(tmp_path / "new.zip") == 0o640
    assert _bits(tmp_path / "x.zip") == 0o640


def test_an_archive_written_through_a_symbolic_link_keeps_its_target_permissions(tmp_path):
    target = tmp_path / "real.zip"
    with ZipStore(target, mode="w") as z:
        z.set("zarr.json", GROUP)
    os.chmod(target, 0o600)
    link = tmp_path / "link.zip"
    link.symlink_to(target)
    with ZipStore(link, mode="a") as z:
        z.set("a/zarr.json", GROUP)
    assert link.is_symlink()
    assert _bits(target) == 0o600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_an_archive_replaced_by_root_keeps_its_owner(tmp_path):
    path = tmp_path / "theirs.zip"
    with ZipStore(path, mode="w") as z:
        z.set("zarr.json", GROUP)
    os.chown(path, 65534, 65534)
    with ZipStore(path, mode="a") as z:
        z.set("a/zarr.json", GROUP)
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (65534, 65534)


@pytest.mark.parametrize("mode", ["a", "w"])
def test_an_archive_the_process_may_not_write_is_refused_and_kept(tmp_path, monkeypatch, mode):
    # as zipfile refuses to open it for writing; the folder alone would let zarrx replace it
    # (checked with os.access faked, since root may write any file)
    path = tmp_path / "ro.zip"
    with ZipStore(path, mode="w") as z:
        z.set("zarr.json", GROUP)
    os.chmod(path, 0o444)
    before = path.read_bytes()
    access = os.access
    monkeypatch.setattr(os, "access", lambda p, how, **kw: False if (
        os.fspath(p) == str(path) and how == os.W_OK) else access(p, how, **kw))
    where = f"ZipStore({str(path)!r}, mode={mode!r})"
    if mode == "w":
        with pytest.raises(StoreError, match=re.escape(
                f"{where}: cannot open in mode 'w': [Errno 13] the archive is read-only: ")):
            ZipStore(path, mode="w")
    else:
        with ZipStore(path, mode="a") as z:
            assert z.get("zarr.json") == GROUP          # reading needs no write permission
            with pytest.raises(StoreError, match=re.escape(
                    f"{where}: cannot write entry 'a/zarr.json': [Errno 13] the archive is "
                    f"read-only: ")):
                z.set("a/zarr.json", GROUP)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["ro.zip"]
