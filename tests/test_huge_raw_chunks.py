"""Small reads of arrays whose raw chunks (the ``bytes`` codec alone) are huge allocate about
what they return: a missing chunk reads as the fill value without a chunk-sized buffer, and a
stored one is read by the bytes the selection spans in it, not whole."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import zarrx
from zarrx import chunk_io
from zarrx.errors import CodecError
from zarrx.store import LocalStore, MemoryStore

ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")

# run under an address-space limit of what the interpreter has mapped plus 512 MiB: any chunk
# buffer (4 GiB and more here) fails to allocate
CHILD = textwrap.dedent("""
    import os, resource, sys
    import numpy as np
    import zarrx
    from zarrx.store import LocalStore, MemoryStore

    root = sys.argv[1]

    def sparse(name, shape, at, value):
        z = zarrx.create_array(LocalStore(os.path.join(root, name)), shape=shape, chunks=shape,
                               dtype="u1", compressors=None)
        path = os.path.join(root, name, "c", *["0"] * len(shape))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.truncate(int(np.prod(shape)))
            f.seek(at)
            f.write(bytes([value]))
        return zarrx.open_array(LocalStore(os.path.join(root, name)), mode="r")

    one = sparse("one", (1 << 32,), 5, 7)               # a stored 4 GiB chunk
    two = sparse("two", (1 << 16, 1 << 16), 5, 7)       # ... of two dimensions
    empty = {kind: zarrx.create_array(store, shape=(1 << 40,), chunks=(1 << 40,), dtype="u1",
                                      compressors=None, fill_value=3)
             for kind, store in [("local", LocalStore(os.path.join(root, "empty"))),
                                 ("memory", MemoryStore())]}
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
    for z in [one, empty["local"], empty["memory"]]:
        print(z[5], z[(5,)], z[3:8].tolist(), z[0:10:2].tolist(), z[[1, 5]].tolist(),
              z.oindex[np.array([5])].tolist(), z.vindex[np.array([4, 5])].tolist())
    print(two[0, 5], two[0, 3:8].tolist(), two[0:2, 4:6].tolist(), two.oindex[[0], [5]].tolist())
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
@pytest.mark.skipif(ASAN, reason="AddressSanitizer reserves more address space than the limit "
                    "allows")
def test_small_reads_of_huge_raw_chunks_allocate_little(tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "7 7 [0, 0, 7, 0, 0] [0, 0, 0, 0, 0] [0, 7] [7] [0, 7]",
        "3 3 [3, 3, 3, 3, 3] [3, 3, 3, 3, 3] [3, 3] [3] [3, 3]",
        "3 3 [3, 3, 3, 3, 3] [3, 3, 3, 3, 3] [3, 3] [3] [3, 3]",
        "7 [0, 0, 7, 0, 0] [[0, 7], [0, 0]] [[7]]",
    ]


def _stores(tmp_path):
    return {"memory": MemoryStore(), "local": LocalStore(str(tmp_path / "a"))}


SELECTIONS = [
    ("basic", (5, 7)), ("basic", (slice(3, 17), slice(2, 9))),
    ("basic", (slice(1, 30, 4), 3)), ("basic", (slice(None), slice(5, 6))),
    ("basic", (slice(20, 2, -3), slice(None))),
    ("orthogonal", (np.array([1, 7, 3]), slice(2, 12))),
    ("coordinate", (np.array([0, 13, 31, 4]), np.array([19, 0, 5, 5]))),
    ("mask", None),
]


@pytest.mark.parametrize("store", ["memory", "local"])
@pytest.mark.parametrize("shards", [None, (32, 20)], ids=["unsharded", "sharded"])
@pytest.mark.parametrize("kind,sel", SELECTIONS, ids=[f"{k}{i}" for i, (k, _) in
                                                       enumerate(SELECTIONS)])
def test_reads_by_the_bytes_a_selection_spans_give_what_numpy_gives(tmp_path, monkeypatch,
                                                                    store, shards, kind, sel):
    """Every raw chunk is read by ranges here (the size from which they are is lowered): the
    values are those of the whole chunks."""
    monkeypatch.setattr(chunk_io, "RANGED_RAW_BYTES", 1)
    data = np.arange(32 * 20, dtype="<i4").reshape(32, 20)
    z = zarrx.create_array(_stores(tmp_path)[store], shape=data.shape, chunks=(16, 10),
                           shards=shards, dtype="<i4", compressors=None, fill_value=-1)
    z[:16, :] = data[:16, :]                     # the lower chunks stay missing
    want = data.copy()
    want[16:, :] = -1
    if kind == "basic":
        assert np.array_equal(z[sel], want[sel])
    elif kind == "orthogonal":
        assert np.array_equal(z.oindex[sel], want[np.ix_(sel[0], np.arange(20)[sel[1]])])
    elif kind == "coordinate":
        assert np.array_equal(z.vindex[sel], want[sel])
    else:
        mask = np.zeros(data.shape, bool)
        mask[[0, 5, 17], [3, 19, 2]] = True
        assert np.array_equal(z.vindex[mask], want[mask])
    assert z[(3, 4)] == want[3, 4] and z[(20, 4)] == -1


@pytest.mark.parametrize("store", ["memory", "local"])
def test_a_stored_chunk_of_the_wrong_size_is_still_an_error(tmp_path, monkeypatch, store):
    """A range read finding the chunk too short reads it whole, whose size is then refused."""
    monkeypatch.setattr(chunk_io, "RANGED_RAW_BYTES", 1)
    st = _stores(tmp_path)[store]
    z = zarrx.create_array(st, shape=(64,), chunks=(64,), dtype="u1", compressors=None)
    st.set("c/0", bytes(10))
    for read in (lambda: z[40:42], lambda: z[(40,)], lambda: z[[40, 41]]):
        with pytest.raises(CodecError) as info:
            read()
        assert str(info.value) == ("array '/' chunk 'c/0': expected 64 bytes for a chunk of "
                                   "shape (64,) and data type uint8, found 10")


@pytest.mark.parametrize("store", ["memory", "local"])
@pytest.mark.parametrize("extra", [-10, 10], ids=["short", "long"])
def test_a_part_read_of_a_chunk_of_the_wrong_size_is_an_error(tmp_path, monkeypatch, store,
                                                              extra):
    """A chunk whose stored size is not a chunk's is refused by a read of a few of its cells
    too, even when the range they span is all there: the read is that of the whole chunk."""
    monkeypatch.setattr(chunk_io, "RANGED_RAW_BYTES", 1)
    st = _stores(tmp_path)[store]
    z = zarrx.create_array(st, shape=(64,), chunks=(64,), dtype="u1", compressors=None)
    st.set("c/0", bytes(64 + extra))
    for read in (lambda: z[4:6], lambda: z[(5,)], lambda: z[[4, 5]], lambda: z[5]):
        with pytest.raises(CodecError) as info:
            read()
        assert str(info.value) == ("array '/' chunk 'c/0': expected 64 bytes for a chunk of "
                                   f"shape (64,) and data type uint8, found {64 + extra}")


@pytest.mark.parametrize("store", ["memory", "local"])
def test_a_part_read_of_an_inner_chunk_of_the_wrong_size_is_an_error(tmp_path, monkeypatch,
                                                                     store):
    """The size of an inner chunk is its shard index entry's: one that is not a chunk's is
    refused by a read of a few of its cells as by a read of all of them."""
    from zarrx.codecs._crc32c import crc32c
    monkeypatch.setattr(chunk_io, "RANGED_RAW_BYTES", 1)
    st = _stores(tmp_path)[store]
    z = zarrx.create_array(st, shape=(64,), chunks=(32,), shards=(64,), dtype="u1",
                           compressors=None)
    z[:] = np.arange(64, dtype="u1")
    blob = bytearray(st.get("c/0"))
    index = np.frombuffer(bytes(blob[-36:-4]), dtype="<u8").copy()
    assert index.tolist() == [0, 32, 32, 32]
    index[1] = 16                                # inner chunk 0 now says 16 bytes
    blob[-36:] = index.tobytes() + crc32c(index.tobytes()).to_bytes(4, "little")
    st.set("c/0", bytes(blob))
    for read in (lambda: z[4:6], lambda: z[5], lambda: z[[4, 5]], lambda: z[:]):
        with pytest.raises(CodecError) as info:
            read()
        assert str(info.value) == ("array '/' shard 'c/0' inner chunk 'c/0': expected 32 bytes "
                                   "for a chunk of shape (32,) and data type uint8, found 16")
    assert z[40:42].tolist() == [40, 41]


# a stored 4 GiB chunk one byte short, read under the same address-space limit
SHORT_CHILD = textwrap.dedent("""
    import os, resource, sys
    import zarrx
    from zarrx.errors import CodecError
    from zarrx.store import LocalStore

    root = sys.argv[1]
    z = zarrx.create_array(LocalStore(root), shape=(1 << 32,), chunks=(1 << 32,), dtype="u1",
                           compressors=None)
    os.makedirs(os.path.join(root, "c"), exist_ok=True)
    with open(os.path.join(root, "c", "0"), "wb") as f:
        f.truncate((1 << 32) - 1)
    with open("/proc/self/status") as f:
        vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + (512 << 20), resource.RLIM_INFINITY))
    for read in (lambda: z[5], lambda: z[3:8], lambda: z[-2:], lambda: z.oindex[[4, 5]]):
        try:
            read()
        except CodecError as exc:
            print(exc)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
@pytest.mark.skipif(ASAN, reason="AddressSanitizer reserves more address space than the limit "
                    "allows")
def test_a_part_read_of_a_huge_chunk_of_a_known_wrong_size_refuses_it_without_reading_it(
        tmp_path) -> None:
    # the chunk was read whole to have its size refused: a StoreError that 4 GiB do not fit
    # in memory instead of the chunk's size
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(zarrx.__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SHORT_CHILD, str(tmp_path / "a")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "array '/' chunk 'c/0': expected 4294967296 bytes for a chunk of shape (4294967296,) "
        "and data type uint8, found 4294967295"] * 4
