"""``zarrx.check``: a stored object the store cannot read (a permission, an I/O error, a request
that failed) is ``unreadable``, not ``corrupt``: its data may be sound, so no repair touches
it, not even ``fill_corrupt``."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import StoreError
from zarrx.store import MemoryStore
from zarrx.store.counting import CountingStore


class _Refusing(CountingStore):
    """A store that fails every read of the keys in ``refused``, as a file without read
    permission or a server answering 403 does."""

    def __init__(self, inner, refused):
        super().__init__(inner)
        self.refused = set(refused)

    def _count_reads(self, requests, results):
        for key, _ in requests:
            if key in self.refused:
                raise StoreError(f"cannot read {key!r}: Permission denied")
        super()._count_reads(requests, results)


def _array(store, fmt, shards=None):
    kw = {"shards": shards} if shards else {}
    z = zarrx.create_array(store, shape=(8,), dtype="i4", chunks=(2,), zarr_format=fmt,
                           fill_value=-1, **kw)
    z[:] = np.arange(8)
    return z


@pytest.mark.parametrize("fmt, shards, key", [(3, None, "c/1"), (2, None, "1"),
                                              (3, (4,), "c/1")],
                         ids=["v3", "v2", "sharded"])
def test_an_object_the_store_cannot_read_is_unreadable_and_never_repaired(fmt, shards, key):
    inner = MemoryStore()
    _array(inner, fmt, shards)
    before = inner.get(key)
    store = _Refusing(inner, [key])
    report = zarrx.check(store)
    assert [(f.kind, f.key, f.inner) for f in report.findings] == [("unreadable", key, None)]
    assert report.findings[0].detail == (
        f"the store cannot read it: cannot read {key!r}: Permission denied (its data was not "
        f"checked, and no repair touches it)")
    report = zarrx.check(store, repair=True, fill_corrupt=True)
    assert not report.repaired and len(report.remaining) == 1
    assert inner.get(key) == before
    assert zarrx.open_array(inner, mode="r")[:].tolist() == list(range(8))


def test_a_chunk_that_does_not_decode_is_still_corrupt():
    store = MemoryStore()
    zarrx.create_array(store, shape=(4,), dtype="i4", chunks=(2,),
                       compressors=[{"name": "zstd"}])[:] = 7
    store.set("c/1", b"not zstd")
    assert [(f.kind, f.key) for f in zarrx.check(store).findings] == [("corrupt", "c/1")]


def test_a_zip_entry_failing_its_crc_is_corrupt(tmp_path):
    # the archive hands over the entry's bytes and its own check finds them damaged
    import zipfile
    from zarrx.store import ZipStore
    path = tmp_path / "z.zip"
    with ZipStore(path, "w") as store:
        _array(store, 3)
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("c/1")
    data = bytearray(path.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + len(info.extra)] ^= 0xFF
    path.write_bytes(bytes(data))
    report = zarrx.check(str(path))
    assert [(f.kind, f.key) for f in report.findings] == [("corrupt", "c/1")]
    assert "CRC-32 mismatch" in report.findings[0].detail


@pytest.mark.parametrize("shards", [None, (4,)], ids=["chunk", "shard"])
def test_chunk_says_an_object_it_cannot_read_is_an_error_not_undecodable(shards):
    # (before: reported as an object that does not decode, exit status 1; a shard's index
    # as corrupt)
    from zarrx.tools.summary import chunk_report
    inner = MemoryStore()
    _array(inner, 3, shards)
    arr = zarrx.open_array(_Refusing(inner, ["c/1"]), mode="r")
    with pytest.raises(StoreError, match=re.escape("cannot read 'c/1': Permission denied")):
        chunk_report(arr, "c/1")
    assert "error" not in chunk_report(arr, "c/0")
    inner.set("c/1", b"\x00" * 5)
    assert "error" in chunk_report(zarrx.open_array(inner, mode="r"), "c/1")


@pytest.mark.parametrize("fmt, doc", [(3, "a/zarr.json"), (2, "a/.zarray"), (3, "zarr.json")])
def test_a_metadata_document_the_store_cannot_read_is_unreadable_and_its_chunks_kept(fmt, doc):
    # (before: the check stopped at it with the store's error, exit status 3)
    inner = MemoryStore()
    g = zarrx.open_group(inner, mode="w", zarr_format=fmt)
    g.create_array("a", shape=(4,), dtype="i4", chunks=(2,))[:] = [1, 2, 3, 4]
    g.create_array("b", shape=(2,), dtype="i4", chunks=(2,))[:] = [5, 6]
    keys = sorted(inner.list())
    store = _Refusing(inner, [doc])
    report = zarrx.check(store, repair=True, fill_corrupt=True, remove_strays=True)
    assert [(f.kind, f.key) for f in report.findings] == [("unreadable", doc)]
    assert report.findings[0].detail.startswith(f"the store cannot read it: cannot read {doc!r}")
    assert not report.repaired and sorted(inner.list()) == keys
