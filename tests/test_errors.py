"""The error family: one base class, and the builtins idiomatic code already catches; and where
an error happened, carried as fields (array, stored key, inner chunk) and put in front of the
message by ``str()``."""
from __future__ import annotations

import json

import numpy as np
import pytest

import zarrx
from zarrx import errors
from zarrx.codecs import zstd
from zarrx.store import MemoryStore

FAMILY = [
    (errors.MetadataError, ValueError),
    (errors.CodecError, ValueError),
    (errors.StoreError, OSError),
    (errors.ShardError, ValueError),
    (errors.IndexingError, IndexError),
    (errors.NodeNotFoundError, KeyError),
    (errors.NodeNotFoundError, FileNotFoundError),
    (errors.NodeExistsError, FileExistsError),
    (errors.ReadOnlyError, PermissionError),
    (errors.ReadOnlyError, errors.StoreError),
]


@pytest.mark.parametrize("cls,builtin", FAMILY, ids=lambda x: x.__name__)
def test_subclass_of_zarr_error_and_builtin(cls, builtin):
    exc = cls("message")
    assert isinstance(exc, zarrx.ZarrError) and isinstance(exc, builtin)


def test_key_error_message_is_not_quoted():
    assert str(errors.NodeNotFoundError("group '/': no member 'x'")) == "group '/': no member 'x'"


def test_expected_helper():
    e = errors.expected("a/zarr.json codecs[2].configuration.level", "an int", "x")
    assert isinstance(e, errors.MetadataError)
    assert str(e) == "a/zarr.json codecs[2].configuration.level: expected an int, found 'x'"


def test_missing_member_is_key_error():
    g = zarrx.open_group(zarrx.store.MemoryStore(), mode="w")
    with pytest.raises(KeyError):
        g["missing"]


# -- where an error happened: fields set once by chunk I/O, rendered in front of the detail ----

NOT_A_FRAME = "zstd: input of 7 bytes is not a complete zstd frame: Unknown frame descriptor"


def located(exc: zarrx.ZarrError) -> tuple:
    return exc.array, exc.key, exc.inner


def test_location_fields_render_in_front_of_the_detail():
    exc = errors.CodecError("zstd: broken")
    assert str(exc) == "zstd: broken" and exc.where == ""
    assert exc.at(array="g/a", key="g/a/c/0") is exc
    assert str(exc) == "array 'g/a' chunk 'g/a/c/0': zstd: broken"
    exc.at(array="other", key="other", inner="c/1")      # fields already set are kept
    assert str(exc) == "array 'g/a' shard 'g/a/c/0' inner chunk 'c/1': zstd: broken"
    assert exc.detail == "zstd: broken"
    assert str(errors.CodecError("x").at(array="")) == "array '/': x"
    assert str(errors.ShardError("truncated").at(key="a/c/0")) == "shard 'a/c/0': truncated"


def test_corrupt_chunk_of_an_array():
    store = MemoryStore()
    z = zarrx.create_array(store, name="g/a", shape=(8,), dtype="f4", chunks=(4,))
    z[...] = 1
    store.set("g/a/c/1", b"garbage")
    msg = f"array 'g/a' chunk 'g/a/c/1': {NOT_A_FRAME}"
    for op in (lambda: z[...], lambda: z[5], lambda: z.__setitem__(slice(5, 6), 2)):
        with pytest.raises(zarrx.CodecError) as info:     # read, one element, read-modify-write
            op()
        assert str(info.value) == msg
        assert located(info.value) == ("g/a", "g/a/c/1", None)
        assert info.value.detail == NOT_A_FRAME


def test_corrupt_chunk_of_the_root_array():
    store = MemoryStore()
    z = zarrx.create_array(store, shape=(8,), dtype="f4", chunks=(4,))
    z[...] = 1
    store.set("c/0", b"garbage")
    with pytest.raises(zarrx.CodecError) as info:
        z[...]
    assert str(info.value) == f"array '/' chunk 'c/0': {NOT_A_FRAME}"
    assert located(info.value) == ("", "c/0", None)


def _patch_inner_frame(store, key: str, slot: int, n_slots: int) -> None:
    """Make the zstd frame of inner chunk ``slot`` declare 8 decoded bytes instead of 16."""
    blob = bytearray(store.get(key))
    index = np.frombuffer(bytes(blob[-(16 * n_slots + 4):-4]), "<u8").reshape(n_slots, 2)
    off, nb = (int(v) for v in index[slot])
    blob[off + 5] = 8                         # the 1-byte content size of a single-segment frame
    assert zstd.content_size(bytes(blob[off:off + nb])) == 8
    store.set(key, bytes(blob))


def test_corrupt_inner_chunk_of_a_sharded_array():
    store = MemoryStore()
    z = zarrx.create_array(store, name="sh", shape=(8, 8), dtype="f4", chunks=(2, 2),
                           shards=(4, 4))
    z[...] = 3
    _patch_inner_frame(store, "sh/c/0/0", 0, 4)          # inner chunk (0, 0) of shard (0, 0)
    _patch_inner_frame(store, "sh/c/1/0", 3, 4)          # inner chunk (1, 1) of shard (1, 0)
    detail = "zstd: frame decodes to 8 bytes, expected 16"
    for sel, shard, inner in ((np.s_[0:2, 0:2], "sh/c/0/0", "c/0/0"),
                              (np.s_[6, 2], "sh/c/1/0", "c/1/1")):
        with pytest.raises(zarrx.CodecError) as info:
            z[sel]
        assert str(info.value) == f"array 'sh' shard '{shard}' inner chunk '{inner}': {detail}"
        assert located(info.value) == ("sh", shard, inner)
    with pytest.raises(zarrx.CodecError) as info:        # read-modify-write of the shard
        z[7, 3] = 0
    assert located(info.value) == ("sh", "sh/c/1/0", "c/1/1")
    np.testing.assert_array_equal(z[4:8, 4:8], 3)         # other shards read as before


def test_corrupt_shard_index_names_the_shard_once():
    store = MemoryStore()
    z = zarrx.create_array(store, name="sh", shape=(8, 8), dtype="f4", chunks=(2, 2),
                           shards=(4, 4))
    z[...] = 3
    store.set("sh/c/0/0", store.get("sh/c/0/0")[:10])
    msg = ("array 'sh' shard 'sh/c/0/0': truncated: 10 bytes, shorter than its 68-byte index "
           "(4 entries x 16 B + 4 B crc32c) at the end")
    for op in (lambda: z[...], lambda: z.__setitem__((0, 0), 1)):
        with pytest.raises(errors.ShardError) as info:
            op()
        assert str(info.value) == msg
        assert located(info.value) == ("sh", "sh/c/0/0", None)


@pytest.mark.parametrize("sharded", [False, True], ids=["chunks", "shards"])
def test_errors_raised_in_worker_threads_keep_their_location(sharded):
    store = MemoryStore()
    z = zarrx.create_array(store, name="t", shape=(32, 32), dtype="f4", chunks=(4, 4),
                           shards=(16, 16) if sharded else None)
    z[...] = 1
    if sharded:
        _patch_inner_frame(store, "t/c/1/0", 5, 16)       # inner chunk (5, 1) of shard (1, 0)
        where = ("t", "t/c/1/0", "c/1/1")
        msg = ("array 't' shard 't/c/1/0' inner chunk 'c/1/1': zstd: frame decodes to 8 bytes, "
               "expected 64")
    else:
        store.set("t/c/5/1", b"garbage")
        where = ("t", "t/c/5/1", None)
        msg = f"array 't' chunk 't/c/5/1': {NOT_A_FRAME}"
    with zarrx.config.set(threads=2):
        for op in (lambda: z[...], lambda: z.__setitem__((slice(1, 31), slice(5, 7)), 2)):
            with pytest.raises(zarrx.CodecError) as info:
                op()
            assert str(info.value) == msg
            assert located(info.value) == where
        np.testing.assert_array_equal(z[:16, 8:], 1)      # the pool is still usable


def test_plan_errors_name_the_root_array_by_its_path():
    """An unknown codec (must_understand false: the metadata reads) is named at the first
    chunk, with the array's path: '/' for the root."""
    store = MemoryStore()
    zarrx.create_array(store, shape=(4,), dtype="f4", chunks=(4,))[...] = 1
    meta = json.loads(store.get("zarr.json"))
    meta["codecs"].append({"name": "nosuch", "must_understand": False})
    store.set("zarr.json", json.dumps(meta).encode())
    with pytest.raises(zarrx.CodecError, match=r"^unknown codec 'nosuch' in array '/'; "):
        zarrx.open_array(store, mode="r")[...]


def test_errors_pickle_with_their_location():
    import pickle
    exc = errors.CodecError("zstd: x").at(array="a", key="a/c/0/0", inner="c/1")
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is errors.CodecError and str(back) == str(exc)


@pytest.mark.skipif("libasan" in __import__("os").environ.get("LD_PRELOAD", ""),
                    reason="AddressSanitizer aborts on a TiB allocation")
@pytest.mark.parametrize("compressors", ["auto", None], ids=["zstd", "raw"])
def test_a_chunk_larger_than_memory_is_a_located_codec_error(compressors) -> None:
    """Encoding (or allocating a buffer for) a 32 TiB chunk fails with a CodecError naming
    the array, the chunk's key and the bytes the chunk needs, not a bare MemoryError."""
    z = zarrx.create_array(MemoryStore(), shape=(2**42,), chunks=(2**42,), dtype="f8",
                           compressors=compressors)
    with pytest.raises(errors.CodecError) as info:
        z[...] = 1
    assert str(info.value) == ("array '/' chunk 'c/0': cannot allocate 35184372088832 bytes "
                               "for a chunk of shape (4398046511104,) and data type float64")
