"""Fixed-length text (``U<n>``) read from stored bytes: a UTF-32 code unit past U+10FFFF is a
CodecError naming the stored object, where numpy would raise ``SystemError`` at the first item
made a ``str``."""
from __future__ import annotations

import json

import numpy as np
import pytest

import zarrx
from zarrx.store import LocalStore, MemoryStore
from zarrx.tools.check import check

BAD = 0x110000
MESSAGE = ("expected text of Unicode code points (at most 0x10FFFF) in items of {dtype}, "
           "found code unit 0x110000")


def units(*codes: int, order: str = "<") -> bytes:
    return np.array(codes, dtype=f"{order}u4").tobytes()


def text_array(store, fmt: int, dtype: object = "U2", **kw) -> zarrx.Array:
    return zarrx.create_array(store, shape=(4,), chunks=(2,), dtype=dtype, fill_value="",
                              zarr_format=fmt, compressors=None, **kw)


def stored(fmt: int, i: int) -> str:
    return f"c/{i}" if fmt == 3 else str(i)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("read", [
    lambda z: z[...], lambda z: z[3], lambda z: z[2:], lambda z: z.vindex[[0, 3]],
    lambda z: z.oindex[[3]], lambda z: z.get_mask_selection(np.array([0, 0, 0, 1], bool)),
    lambda z: z.read(out=np.empty(4, "U2")), lambda z: list(z), lambda z: np.asarray(z),
], ids=["all", "point", "slice", "vindex", "oindex", "mask", "out", "iter", "asarray"])
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_code_unit_past_the_last_code_point_is_a_codec_error_naming_the_chunk(
        fmt, read, kind, tmp_path):
    store = MemoryStore() if kind == "memory" else LocalStore(str(tmp_path / "t.zarr"))
    z = text_array(store, fmt)
    z[...] = ["ab", "cd", "ef", "gh"]
    store.set(stored(fmt, 1), units(ord("e"), ord("f"), ord("g"), BAD))
    z = zarrx.open_array(store, mode="r")
    with pytest.raises(zarrx.CodecError) as info:
        read(z)
    assert str(info.value) == (f"array '/' chunk {stored(fmt, 1)!r}: "
                               + MESSAGE.format(dtype="<U2"))
    assert z[:2].tolist() == ["ab", "cd"]                 # the other chunk reads


def test_a_code_unit_past_the_last_code_point_in_a_field_or_a_shard(tmp_path):
    dt = np.dtype([("n", "<i4"), ("s", "<U1", (2,))])
    z = zarrx.create_array(MemoryStore(), shape=(2,), chunks=(2,), dtype=dt, zarr_format=2,
                           compressors=None)
    z.store.set("0", np.zeros(2, "<i4,<u4,<u4").tobytes()[:-4] + units(BAD))
    with pytest.raises(zarrx.CodecError, match=r"^array '/' chunk '0': expected text .* "
                                               r"found code unit 0x110000$"):
        z[...]
    for read in (lambda: z["s"], lambda: z.vindex[[1], "s"], lambda: z.get_mask_selection(
            np.array([0, 1], bool), fields="s")):
        with pytest.raises(zarrx.CodecError, match=r"^array '/' chunk '0': .* items of <U1, "):
            read()
    assert z["n"].tolist() == [0, 0]

    s = zarrx.create_array(MemoryStore(), shape=(4,), chunks=(1,), shards=(4,), dtype="U1",
                           fill_value="", compressors=None)
    s[...] = ["a", "b", "c", "d"]
    shard = bytearray(s.store.get("c/0"))
    shard[8:12] = units(BAD)                              # inner chunk 2 (stored in order)
    s.store.set("c/0", bytes(shard))
    with pytest.raises(zarrx.CodecError) as info:
        s[...]
    assert str(info.value) == ("array '/' shard 'c/0' inner chunk 'c/2': "
                               + MESSAGE.format(dtype="<U1"))


def test_text_of_every_code_point_and_byte_order_still_reads(tmp_path):
    values = ["\U0010ffff\ud800", "", "a\x00"[:1], "\u00e9"]
    for fmt, dtype in [(3, "<U2"), (2, "<U2"), (2, ">U2")]:
        z = text_array(MemoryStore(), fmt, dtype)
        z[...] = values
        assert z[...].tolist() == values and z[0] == values[0]


def _string_array(codec: dict, chunk: bytes, shards: bool = False) -> zarrx.Array:
    """A v3 ``string`` array of 4 items in chunks of 2 whose object codec is ``codec``, its
    second chunk (or inner chunk) stored as ``chunk``."""
    import json
    store = MemoryStore()
    inner = [codec]
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [2], "codecs": inner,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}] \
        if shards else inner
    store.set("zarr.json", json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4 if shards else 2]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "", "codecs": codecs}).encode())
    if shards:          # inner chunk 1 at offset 0; inner chunk 0 missing
        index = np.array([2**64 - 1, 2**64 - 1, 0, len(chunk)], "<u8").tobytes()
        store.set("c/0", chunk + index)
    else:
        store.set("c/1", chunk)
    return zarrx.open_array(store, mode="r")


def vlen(*items: bytes) -> bytes:
    return b"".join([np.uint32(len(items)).tobytes(),
                     *(np.uint32(len(v)).tobytes() + v for v in items)])


JSON2 = {"name": "numcodecs.json2", "configuration": {"encoding": "utf-8"}}


@pytest.mark.parametrize("codec, chunk, found", [
    ({"name": "vlen-bytes"}, vlen(b"ok", b"\xff"),
     "an item of 1 bytes that are not UTF-8 (invalid start byte at byte 0)"),
    (JSON2, b'["a", null, "|O", [2]]', "an item of type NoneType (None)"),
    (JSON2, b'["b", {"k": 1}, "|O", [2]]', "an item of type dict ({'k': 1})"),
    ({"name": "numcodecs.msgpack2"}, b"\x94\xa1a\x07\xa2|O\x91\x02", "an item of type int (7)"),
], ids=["vlen-bytes-not-utf8", "json2-null", "json2-object", "msgpack2-int"])
@pytest.mark.parametrize("shards", [False, True])
def test_string_items_that_are_not_text_are_a_codec_error_naming_the_chunk(codec, chunk, found,
                                                                           shards):
    # they were a UnicodeDecodeError, or turned into the text 'None', "{'k': 1}", '7'
    z = _string_array(codec, chunk, shards)
    where = "shard 'c/0' inner chunk 'c/1'" if shards else "chunk 'c/1'"
    want = (f"array '/' {where}: expected text (str, or UTF-8 bytes) for the data type "
            f"'string', found {found}")
    for read in (lambda: z[...], lambda: z[3], lambda: z.vindex[[0, 3]], lambda: list(z)):
        with pytest.raises(zarrx.CodecError) as info:
            read()
        assert str(info.value) == want
    assert z[:2].tolist() == ["", ""]


def test_string_items_of_other_object_codecs_that_are_text_still_read():
    z = _string_array({"name": "vlen-bytes"}, vlen(b"\xc3\xa9", b""))
    assert z[...].tolist() == ["", "", "\u00e9", ""] and z[2] == "\u00e9"
    z = _string_array(JSON2, b'["x", "y", "|O", [2]]')
    assert z[2:].tolist() == ["x", "y"]


@pytest.mark.parametrize("shards", [False, True])
def test_string_items_no_utf8_holds_are_a_codec_error_naming_the_chunk(shards):
    # a lone surrogate decoded by numcodecs.json2: numpy's StringDType refused it with
    # UnicodeEncodeError
    z = _string_array(JSON2, b'["a", "\\udc80", "|O", [2]]', shards)
    where = "shard 'c/0' inner chunk 'c/1'" if shards else "chunk 'c/1'"
    with pytest.raises(zarrx.CodecError) as info:
        z[...]
    assert str(info.value) == (f"array '/' {where}: expected text UTF-8 can encode (no lone "
                               f"surrogates) for the data type 'string', found '\\udc80'")


def test_a_string_fill_value_no_utf8_holds_is_a_codec_error_where_it_is_read():
    # another writer stored it as an escape; reading cells of it raised UnicodeEncodeError
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "string",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "\udcff",
           "codecs": [{"name": "vlen-utf8"}]}
    z = zarrx.open_array(MemoryStore({"zarr.json": json.dumps(doc).encode()}), mode="r+")
    assert z.fill_value == "\udcff"
    z[:2] = ["a", "b"]
    assert z[:2].tolist() == ["a", "b"]
    for read in (lambda: z[...], lambda: z[3]):
        with pytest.raises(zarrx.CodecError) as info:
            read()
        assert str(info.value) == ("array '/' chunk 'c/1': expected text UTF-8 can encode (no "
                                   "lone surrogates) for the data type 'string', found "
                                   "'\\udcff' (the array's fill value)")


def test_check_compares_stored_text_with_a_string_fill_value_no_utf8_holds():
    # a chunk at the array's edge holds "" past the edge, which differs from the fill value;
    # the comparison (numpy's StringDType against the surrogate) raised TypeError in check
    doc = {"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "string",
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "\udcff",
           "codecs": [{"name": "vlen-utf8"}]}
    store = MemoryStore({"zarr.json": json.dumps(doc).encode(), "c/1": vlen(b"c", b"")})
    found = [(f.key, f.kind) for f in check(store).findings]
    assert found == [("c/1", "stale")]
