"""Hostile and edge folders for the folder listing of the local read kernels
(``csrc/zx_dirlist.c`` through :func:`~zarrx.store._localread.absent_keys`, ``read_whole`` and
the box reads), meant for the sanitized build too (``make sanitize``): many names (the hash
table and the text grow), names of 255 bytes (a few per getdents64 buffer, entries split
across calls), names of bytes >= 0x80, names filling the text buffer exactly, folders that
are links, and folders replaced or removed while they are read. Every answer is the truth of
some moment, or "not known"."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

import zarrx
from folder_stamps import settle
from zarrx.store import LocalStore, _localread

pytestmark = pytest.mark.skipif(not hasattr(os, "getxattr"), reason="Linux folder listings")


def listings() -> int:
    return _localread.lookups()["listings"]


def make(folder, names) -> None:
    """``folder`` holding files of those names, old enough to be listed."""
    os.makedirs(folder, exist_ok=True)
    for name in names:
        with open(os.path.join(os.fsencode(folder), os.fsencode(name)), "wb") as f:
            f.write(b"x")
    settle(folder)


def known_absent(root, keys) -> list[bool]:
    return LocalStore(str(root)).known_absent(keys)


@pytest.mark.parametrize("count,length", [(5000, 9), (300, 255), (1, 255), (2000, 40)])
def test_folders_of_many_or_long_names_answer_every_key(tmp_path, count, length):
    """Thousands of names (the text and the hash table grow several times over) and names of
    255 bytes (a few entries per getdents64 call)."""
    names = [f"{i:0{length}d}" for i in range(count)]
    make(tmp_path / "f", names[::2])
    keys = [f"f/{n}" for n in names] + [f"f/{'9' * length}", f"f/{'8' * 255}"]
    before = listings()
    got = known_absent(tmp_path, keys)
    want = [not (tmp_path / k).exists() for k in keys]
    if len(keys) >= 16:                     # one listing answers every key
        assert listings() == before + 1
        assert got == want
    else:                                   # too few keys to list: nothing known absent
        assert listings() == before and not any(got)


def test_names_of_any_bytes_in_a_listed_folder(tmp_path):
    """Names that no key can be (bytes >= 0x80, not UTF-8, spaces) are held and hashed
    with the others; the keys around them are answered by the listing."""
    raw = [bytes([0x80 + i % 128]) * (1 + i % 255) for i in range(200)] + [b"\xff\xfe ab",
                                                                          "é".encode()]
    make(tmp_path / "f", raw + [b"a1", b"a3"])
    keys = [f"f/a{i}" for i in range(400)]
    before = listings()
    got = known_absent(tmp_path, keys)
    assert listings() == before + 1
    assert got == [i not in (1, 3) for i in range(400)]


def read_whole(root, keys) -> list:
    return _localread.read_whole(os.fsencode(root), keys, os.O_RDONLY,
                                 zarrx.store.localboxes.RESOLVE, SLOW)


SLOW = object()


@pytest.mark.parametrize("length", [7, 15, 63, 127])
def test_keys_longer_than_names_that_fill_the_listing_exactly(tmp_path, length):
    """Names whose bytes (each with its terminating zero) fill the listing's first 4 KiB
    exactly, asked for by keys longer than any of them: a key was compared over its whole
    length with the last name held, reading past the end of the listing's memory (the
    sanitizers stop the process)."""
    names = [f"{i:0{length}x}" for i in range(4096 // (length + 1))]
    make(tmp_path / "f", names)
    assert sum(len(x) + 1 for x in os.listdir(tmp_path / "f")) == 4096
    longer = [f"f/{x}z" for x in names] + [f"f/k{i:0250d}" for i in range(2000)]
    keys = [f"f/{x}" for x in names] + longer
    before = listings()
    got = known_absent(tmp_path, keys)
    assert listings() == before + 1
    assert got == [False] * len(names) + [True] * len(longer)
    # the same through whole reads: 2 misses, then the listing answers the rest
    keys = [f"f/y{i:0200d}" for i in range(2)] + longer + [f"f/{names[-1]}"]
    before = listings()
    assert read_whole(tmp_path, keys) == [None] * (len(keys) - 1) + [b"x"]
    assert listings() == before + 1


def test_a_linked_folder_is_never_listed_nor_read(tmp_path):
    make(tmp_path / "real", [str(i) for i in range(0, 40, 2)])
    os.symlink(tmp_path / "real", tmp_path / "link")
    keys = [f"link/{i}" for i in range(40)]
    before = listings()
    assert known_absent(tmp_path, keys) == [False] * 40
    assert listings() == before
    assert all(g is SLOW for g in read_whole(tmp_path, keys))


def test_a_linked_row_folder_of_a_raw_array_is_refused(tmp_path):
    z = zarrx.create_array(str(tmp_path / "a"), shape=(4, 256), chunks=(1, 4), dtype="u1",
                           fill_value=0, compressors=None)
    z[0, :8] = 5
    os.rename(tmp_path / "a" / "c" / "0", tmp_path / "row")
    os.symlink(tmp_path / "row", tmp_path / "a" / "c" / "0")
    with pytest.raises(zarrx.ZarrError, match="symbolic link"):
        zarrx.open_array(str(tmp_path / "a"), mode="r")[:]


def _swapping(folder, stop: threading.Event, remove: bool) -> threading.Thread:
    """A thread that, until ``stop``, replaces ``folder`` by a file and puts it back (or,
    with ``remove``, removes the empty folder and makes it again)."""
    aside = str(folder) + ".aside"

    def run() -> None:
        while not stop.is_set():
            if remove:
                os.rmdir(folder)
                os.mkdir(folder)
                continue
            os.rename(folder, aside)
            with open(folder, "wb") as f:
                f.write(b"not a folder")
            os.remove(folder)
            os.rename(aside, folder)

    t = threading.Thread(target=run)
    t.start()
    return t


def test_a_folder_replaced_by_a_file_while_listed_reads_as_one_of_its_states(tmp_path):
    names = [f"{i}" for i in range(0, 64, 8)]
    make(tmp_path / "f", names)
    keys = [f"f/{i}" for i in range(64)]
    truth = [f"{i}" not in names for i in range(64)]
    stop = threading.Event()
    t = _swapping(tmp_path / "f", stop, remove=False)
    try:
        for _ in range(300):
            got = known_absent(tmp_path, keys)
            assert got in (truth, [True] * 64, [False] * 64)
            for k, g in zip(keys, read_whole(tmp_path, keys)):
                assert g is None or g is SLOW or (g == b"x" and k[2:] in names)
    finally:
        stop.set()
        t.join()
    settle(tmp_path / "f")
    assert known_absent(tmp_path, keys) == truth


def test_a_folder_removed_while_listed_reads_as_empty_or_not_known(tmp_path):
    (tmp_path / "e").mkdir()
    keys = [f"e/{i}" for i in range(32)]
    stop = threading.Event()
    t = _swapping(tmp_path / "e", stop, remove=True)
    try:
        for _ in range(300):
            got = known_absent(tmp_path, keys)
            assert got in ([True] * 32, [False] * 32)
    finally:
        stop.set()
        t.join()


def test_sparse_raw_reads_of_a_folder_of_long_names_match_numpy(tmp_path):
    """The box kernel asks the listing for chunk names shorter than the names held."""
    z = zarrx.create_array(str(tmp_path / "a"), shape=(2, 4096), chunks=(1, 4), dtype="u1",
                           fill_value=3, compressors=None)
    z[1, 4000:4008] = 9
    make(tmp_path / "a" / "c" / "1", [f"{i:0254d}" for i in range(15)] + ["x" * 159])
    want = np.full(z.shape, 3, np.uint8)
    want[1, 4000:4008] = 9
    np.testing.assert_array_equal(zarrx.open_array(str(tmp_path / "a"), mode="r")[:], want)
