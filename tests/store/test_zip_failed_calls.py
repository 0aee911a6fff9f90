"""A call given the path of a zip archive that fails leaves the path as it found it: no empty
archive where there was none, no temporary archive beside it, and the archive that was there
unchanged (a failed mode-"w" call no longer replaces it with an empty one)."""
from __future__ import annotations

import gc
import os
import zipfile

import numpy as np
import pytest

import zarrx
from zarrx.store.zip import ZipStore

#: calls that fail after opening the archive at the path they are given
FAILING = {
    "open_array-a-missing": lambda p: zarrx.open_array(p, mode="a"),
    "open_array-w-no-shape": lambda p: zarrx.open_array(p, mode="w"),
    "open_array-w--no-shape": lambda p: zarrx.open_array(p, mode="w-"),
    "open_array-a-bad-shape": lambda p: zarrx.open_array(p, mode="a", shape="x"),
    "open_array-w-bad-dtype": lambda p: zarrx.open_array(p, mode="w", shape=(3,),
                                                         dtype="bogus"),
    "open-w-bad-dtype": lambda p: zarrx.open(p, mode="w", shape=(3,), dtype="bogus"),
    "open_group-w-bad-attributes": lambda p: zarrx.open_group(p, mode="w",
                                                              attributes=object()),
    "group-bad-attributes": lambda p: zarrx.group(p, overwrite=True, attributes=object()),
    "create_group-bad-attributes": lambda p: zarrx.create_group(p, attributes=object()),
    "create-bad-shape": lambda p: zarrx.create(shape="x", store=p),
    "create_array-bad-dtype": lambda p: zarrx.create_array(p, shape=(3,), dtype="bogus",
                                                           overwrite=True),
    "create_array-named-bad-dtype": lambda p: zarrx.create_array(p, name="a/b", shape=(3,),
                                                                 dtype="bogus"),
    "create_array-bad-codec": lambda p: zarrx.create_array(p, shape=(3,), dtype="i4",
                                                           compressors="bogus",
                                                           overwrite=True),
    "create_array-bad-fill": lambda p: zarrx.create_array(p, shape=(3,), dtype="i4",
                                                          fill_value="zz", overwrite=True),
    "zeros-bad-dtype": lambda p: zarrx.zeros((3,), store=p, dtype="bogus", mode="w"),
    "array-bad-chunks": lambda p: zarrx.array(np.arange(3), store=p, chunks="zz", mode="w"),
    "from_array-bad-chunks": lambda p: zarrx.from_array(p, data=np.arange(3), chunks="zz",
                                                        overwrite=True),
    "create_hierarchy-bad-node": lambda p: zarrx.create_hierarchy(store=p,
                                                                  nodes={"a": object()}),
}


def _folder(tmp_path) -> list[str]:
    return sorted(os.listdir(tmp_path))


@pytest.mark.parametrize("call", FAILING.values(), ids=list(FAILING))
def test_a_failed_call_leaves_no_archive_where_there_was_none(tmp_path, call):
    with pytest.raises(zarrx.ZarrError):
        call(str(tmp_path / "x.zip"))
    gc.collect()                 # a store nobody closed would be finished now
    assert _folder(tmp_path) == []


def _archive(path) -> bytes:
    zarrx.open_group(str(path), mode="w", attributes={"kept": 1}).create_array(
        "a", shape=(4,), dtype="i4", chunks=(2,))[...] = 7
    gc.collect()
    return path.read_bytes()


@pytest.mark.parametrize("call", FAILING.values(), ids=list(FAILING))
def test_a_failed_call_leaves_the_archive_as_it_was(tmp_path, call):
    path = tmp_path / "x.zip"
    before = _archive(path)
    with pytest.raises(zarrx.ZarrError):
        call(str(path))
    gc.collect()
    assert _folder(tmp_path) == ["x.zip"]
    assert path.read_bytes() == before
    assert zarrx.open_array(str(path), path="a", mode="r")[...].tolist() == [7] * 4


class Interrupt(Exception):
    """Not a ZarrError: stands for what a write may meet (Ctrl-C, a failing data source)."""


def _interrupt_chunk_writes(monkeypatch) -> None:
    real = ZipStore._add

    def add(self, key, data):
        if "/c/" in f"/{key}" or key.startswith("c"):
            raise Interrupt(f"interrupted writing {key}")
        return real(self, key, data)
    monkeypatch.setattr(ZipStore, "_add", add)


WRITING = {
    "save_array": lambda p: zarrx.save_array(p, np.arange(6), mode="w"),
    "save_group": lambda p: zarrx.save_group(p, a=np.arange(6), b=np.ones(3)),
    "from_array": lambda p: zarrx.from_array(p, data=np.arange(6), chunks=(2,),
                                             overwrite=True),
    "create_array-data": lambda p: zarrx.create_array(p, data=np.arange(6), chunks=(2,),
                                                      overwrite=True),
    "array": lambda p: zarrx.array(np.arange(6), store=p, chunks=(2,), mode="w"),
}


@pytest.mark.parametrize("existing", [False, True], ids=["new", "existing"])
@pytest.mark.parametrize("call", WRITING.values(), ids=list(WRITING))
def test_an_interrupted_write_keeps_the_path_as_it_was(tmp_path, monkeypatch, call, existing):
    path = tmp_path / "x.zip"
    before = _archive(path) if existing else None
    _interrupt_chunk_writes(monkeypatch)
    with pytest.raises(Interrupt):
        call(str(path))
    gc.collect()
    assert _folder(tmp_path) == (["x.zip"] if existing else [])
    if existing:
        assert path.read_bytes() == before


def test_successful_calls_still_write_their_archive(tmp_path):
    path = str(tmp_path / "x.zip")
    zarrx.open_array(path, mode="a", shape=(3,), dtype="i4")[...] = 5
    gc.collect()
    assert zarrx.open_array(path, mode="r")[...].tolist() == [5, 5, 5]
    zarrx.open_group(str(tmp_path / "g.zip"), mode="a")
    gc.collect()
    assert "zarr.json" in zipfile.ZipFile(tmp_path / "g.zip").namelist()


def test_a_call_caught_inside_a_successful_one_discards_nothing(tmp_path):
    """open in mode "a" tries the node first (no node: an error it handles), then creates."""
    path = str(tmp_path / "x.zip")
    g = zarrx.open(path, mode="a", attributes={"made": True})
    del g
    gc.collect()
    assert dict(zarrx.open_group(path, mode="r").attrs) == {"made": True}


def test_a_store_the_caller_passes_is_not_discarded(tmp_path):
    path = tmp_path / "x.zip"
    with ZipStore(path, mode="w") as store:
        with pytest.raises(zarrx.ZarrError):
            zarrx.create_array(store, shape=(3,), dtype="bogus")
        zarrx.create_array(store, shape=(3,), dtype="i4")[...] = 2   # still writable
    assert zarrx.open_array(str(path), mode="r")[...].tolist() == [2, 2, 2]


@pytest.mark.parametrize("call", FAILING.values(), ids=list(FAILING))
def test_a_failed_call_leaves_an_empty_file_as_it_was(tmp_path, call):
    """An empty file (what tempfile.NamedTemporaryFile(suffix=".zip") makes) is an empty
    archive to mode "a": a failed call leaves it the empty file it was, with nothing beside."""
    path = tmp_path / "x.zip"
    path.write_bytes(b"")
    with pytest.raises(zarrx.ZarrError):
        call(str(path))
    gc.collect()
    assert _folder(tmp_path) == ["x.zip"] and path.read_bytes() == b""


def test_a_second_ctrl_c_while_a_failed_call_discards_its_archive_leaves_nothing(
        tmp_path, monkeypatch):
    from zarrx.store import zipread
    real = zipread.Reader.close

    def interrupted(self):                  # Ctrl-C again while the store is discarded
        monkeypatch.setattr(zipread.Reader, "close", real)
        raise KeyboardInterrupt

    monkeypatch.setattr(zipread.Reader, "close", interrupted)
    with pytest.raises(KeyboardInterrupt):
        zarrx.open_array(str(tmp_path / "x.zip"), mode="w")    # no shape=: fails
    gc.collect()
    assert _folder(tmp_path) == []          # (before: its temporary archive was left)
