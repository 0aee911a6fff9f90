"""Behaviour zarrx shares with zarr-python 3, where zarrx differed without a reason: each test
calls zarrx (and zarr-python, where it has the feature) with the same arguments."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx

zarr = pytest.importorskip("zarr")


@pytest.mark.parametrize("fn", ["create_array", "zeros", "create", "open"])
@pytest.mark.parametrize("shape, chunks, want", [
    ((0,), 1000, (1000,)), ((0, 3), 5, (5, 5)), ((4, 3), 5, (5, 5)), ((4,), 5, (5,)),
    ((4, 3), -1, (4, 3)), ((4, 3), 2, (2, 2))])
def test_an_int_chunks_is_every_axis_chunk_length_as_in_zarr_python(fn, shape, chunks, want):
    """An int ``chunks=`` longer than an axis is kept, as zarr-python keeps it: an array made
    empty (``shape=(0,)``) to be grown by ``append`` gets the chunk length it asked for, not 1."""
    kw = {"mode": "w"} if fn == "open" else {}
    z = getattr(zarrx, fn)(store={}, shape=shape, chunks=chunks, dtype="i4", **kw)
    assert z.chunks == want
    if fn == "zeros" or (fn == "create_array" and len(shape) == 1):
        assert getattr(zarr, fn)(store={}, shape=shape, chunks=chunks, dtype="i4").chunks == want


def test_an_empty_array_grown_by_append_keeps_its_chunk_length():
    z = zarrx.zeros(store={}, shape=(0,), chunks=1000, dtype="i4")
    z.append(np.arange(2500, dtype="i4"))
    assert z.chunks == (1000,) and z.nchunks == 3 and z.nchunks_initialized == 3
    assert z[...].tolist() == list(range(2500))


def test_an_int_chunks_too_long_for_a_chunk_is_refused():
    with pytest.raises(zarrx.ArgumentError, match=r"chunks: expected a positive int below "
                                                  r"2\*\*63, found 18446744073709551616"):
        zarrx.create_array({}, shape=(4,), chunks=2**64, dtype="i4")


@pytest.mark.parametrize("fmt, shards", [(2, None), (3, None), (3, (4,))],
                         ids=["v2", "v3", "v3-sharded"])
@pytest.mark.parametrize("value, found", [
    ([b"x", b"y", 1, b"z"], "int 1 (item 2 of the value)"),
    ("text", "str 'text' (item 0 of the value)"),
    (np.array(["u", "v", "w", "q"]), "str 'u' (item 0 of the value)"),
    (5, "int 5 (item 0 of the value)"),
], ids=["int-in-list", "str", "str-array", "int"])
def test_writing_other_than_bytes_to_a_bytes_array_is_a_type_error_storing_nothing(
        fmt, shards, value, found):
    """zarr-python raises a ``TypeError`` there; zarrx raised a ``CodecError`` (a
    ``ValueError``) naming a chunk, after storing the chunks before that chunk."""
    a = zarrx.create_array({}, shape=(4,), chunks=(2,), shards=shards, dtype="bytes",
                           zarr_format=fmt)
    a[:] = [b"a", b"b", b"c", b"d"]
    if fmt == 3:                    # zarr-python 3.1 creates no Zarr v2 "bytes" array
        z = zarr.create_array({}, shape=(4,), chunks=(2,), dtype="bytes")
        with pytest.raises(TypeError):
            z[:] = value
    with pytest.raises(zarrx.ArgumentTypeError) as info:
        a[:] = value
    assert str(info.value) == (f"/: cannot write {found} to an array of variable-length "
                               f"bytes: expected bytes")
    assert a[:].tolist() == [b"a", b"b", b"c", b"d"]
    with pytest.raises(zarrx.ArgumentTypeError, match="item 1 of the value"):
        a.append([b"e", 6])
    assert a.shape == (4,)


def test_bytes_arrays_take_bytes_like_items_and_none():
    a = zarrx.create_array({}, shape=(4,), chunks=(2,), dtype="bytes")
    a[:] = [bytearray(b"ba"), None, np.bytes_(b"nb"), memoryview(b"mv")]
    assert a[:].tolist() == [b"ba", b"", b"nb", b"mv"]
    with pytest.raises(zarrx.ArgumentTypeError, match="cannot write int 1 .item 1 of"):
        zarrx.create_array({}, data=np.array([b"a", 1], dtype=object), dtype="bytes")


@pytest.mark.parametrize("shape, shards, want", [
    ((8,), 4, (4,)), ((8,), np.int64(4), (4,)), ((8, 8), 4, (4, 4)),
    ((8,), {"shape": 4, "index_location": "start"}, (4,))])
def test_an_int_shards_is_every_axis_shard_length(shape, shards, want):
    """zarr-python takes ``shards=4`` for a 1-d array; zarrx refused any int with a
    TypeError. An int is now every axis's shard length, as an int ``chunks=`` is."""
    a = zarrx.create_array({}, shape=shape, chunks=(2,) * len(shape), shards=shards, dtype="i4")
    a[...] = 1
    assert a.shards == want and a.chunks == (2,) * len(shape) and int(a[...].sum()) == 8 ** len(shape)
    if len(shape) == 1 and not isinstance(shards, dict):
        assert zarr.create_array({}, shape=shape, chunks=(2,), shards=shards,
                                 dtype="i4").shards == want


@pytest.mark.parametrize("shards, message", [
    (True, "create_array: shards: expected a tuple of ints, {'shape': ..., 'index_location': "
           "...}, 'auto' or None, found True"),
    (3, "create_array: shards[0]=3 must be a positive multiple of chunks[0]=2 (or 0 on an "
        "axis of length 0, with positive chunks)"),
    (-2, "create_array: shards[0]=-2 must be a positive multiple of chunks[0]=2 (or 0 on an "
         "axis of length 0, with positive chunks)")])
def test_an_int_shards_that_cannot_be_a_shard_length_is_refused(shards, message):
    with pytest.raises(zarrx.ArgumentError) as info:
        zarrx.create_array({}, shape=(8,), chunks=(2,), shards=shards, dtype="i4")
    assert str(info.value) == message


@pytest.mark.parametrize("serializer", [{"name": "bytes"}, {"name": "bytes", "configuration": {}}])
def test_a_bytes_serializer_dict_without_endian_is_little_endian(serializer):
    """zarr-python's ``BytesCodec`` fills in little-endian, as zarrx's ``BytesCodec()`` does;
    the same codec given as a dict was refused for a multi-byte data type."""
    import json
    for lib in (zarr, zarrx):
        store = {}
        a = lib.create_array(store, shape=(2,), dtype="i4", serializer=serializer)
        a[:] = [1, 2]
        doc = store["zarr.json"]
        doc = json.loads(doc.to_bytes() if hasattr(doc, "to_bytes") else doc)
        assert doc["codecs"][0] == {"name": "bytes", "configuration": {"endian": "little"}}
        assert a[:].tolist() == [1, 2]
    with pytest.raises(zarrx.CodecError, match=r"serializer.configuration.endian: expected "
                                               r"'little' or 'big', found None"):
        zarrx.create_array({}, shape=(2,), dtype="i4",
                           serializer={"name": "bytes", "configuration": {"endian": None}})
