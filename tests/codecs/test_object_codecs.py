"""numcodecs' object codecs of Zarr v2 object arrays (vlen-array, json2, msgpack2): chunks as
numcodecs (zarr-python 2) writes and reads them, arrays read and written through them, and
what zarrx refuses."""
from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np
import pytest

import zarrx
from zarrx.errors import CodecError, MetadataError
from zarrx.store import MemoryStore

numcodecs = pytest.importorskip("numcodecs")


def items(kind: str, n: int) -> np.ndarray:
    out = np.empty(n, dtype=object)
    for i in range(n):
        if kind == "vlen-array":
            out[i] = np.arange(i % 4, dtype="<i4") - 1
        else:
            out[i] = ["a", i, {"b": [1, None]}, None, 2.5, "\u00e9"][i % 6]
    return out


FILTERS = {"vlen-array": {"id": "vlen-array", "dtype": "<i4"}, "json2": {"id": "json2"},
           "msgpack2": {"id": "msgpack2"}}


def numcodecs_codec(cid: str) -> Any:
    return {"vlen-array": lambda: numcodecs.VLenArray("<i4"), "json2": numcodecs.JSON,
            "msgpack2": numcodecs.MsgPack}[cid]()


def zarray(filters: list[dict], *, shape: tuple = (5, 3), chunks: tuple = (2, 2),
           fill: Any = 0, order: str = "C") -> bytes:
    return json.dumps({"zarr_format": 2, "shape": list(shape), "chunks": list(chunks),
                       "dtype": "|O", "compressor": None, "fill_value": fill, "order": order,
                       "filters": filters}).encode()


def same(a: np.ndarray, b: np.ndarray) -> bool:
    def norm(v: Any) -> Any:
        return ("array", v.dtype.newbyteorder("=").str, v.tolist()) \
            if isinstance(v, np.ndarray) else v
    return a.shape == b.shape and [norm(v) for v in a.reshape(-1).tolist()] == \
        [norm(v) for v in b.reshape(-1).tolist()]


@pytest.mark.parametrize("cid", sorted(FILTERS))
def test_chunks_match_numcodecs_both_ways(cid: str) -> None:
    """An array written through zarrx stores each chunk as numcodecs encodes it, and reads
    the chunks numcodecs encoded."""
    store = MemoryStore({".zarray": zarray([FILTERS[cid]])})
    a = zarrx.open_array(store, mode="r+")
    values = items(cid, 15).reshape(5, 3)
    a[...] = values
    assert same(a[...], values)
    nc = numcodecs_codec(cid)
    chunk = values[:2, :2].copy()
    assert bytes(store.get("0.0")) == bytes(nc.encode(chunk))
    edge = np.full((2, 2), 0, dtype=object)
    edge[:1, :1] = values[4:, 2:]
    assert bytes(store.get("2.1")) == bytes(nc.encode(edge))
    store.set("1.0", bytes(nc.encode(values[:2, 1:].copy())))
    assert same(a[2:4, 0:2], values[:2, 1:])


@pytest.mark.parametrize("cid", sorted(FILTERS))
def test_fortran_order_chunks_as_numcodecs_encodes_them(cid: str) -> None:
    """In an ``order: "F"`` array, json2 and msgpack2 chunks hold the chunk's nested lists in
    its axis order (as zarr-python 2 writes them); vlen-array's items are in Fortran order."""
    store = MemoryStore({".zarray": zarray([FILTERS[cid]], shape=(2, 3), chunks=(2, 3),
                                           order="F")})
    a = zarrx.open_array(store, mode="r+")
    values = items(cid, 6).reshape(2, 3)
    a[...] = values
    assert a.order == "F" and same(a[...], values)
    layout = values if cid != "vlen-array" else np.asfortranarray(values)
    assert bytes(store.get("0.0")) == bytes(numcodecs_codec(cid).encode(layout))
    assert same(zarrx.open_array(store, mode="r")[...], values)


def test_fill_values_as_stored() -> None:
    """The fill value is the JSON value of ``.zarray`` (zarr-python 2's default 0 stays 0);
    ``null`` reads as None, as zarr-python 2 reads it; a chunk of nothing but the fill value
    is not stored."""
    for fill, want in ((0, 0), ("none", "none"), (None, None), (2.5, 2.5)):
        store = MemoryStore({".zarray": zarray([FILTERS["json2"]], fill=fill)})
        a = zarrx.open_array(store, mode="r+")
        assert a.fill_value == want and type(a.fill_value) is type(want)
        a[0, 0] = {"k": 1}
        assert a[...].tolist()[0] == [{"k": 1}, want, want]
        a[0, 0] = want
        assert store.get("0.0") is None
    store = MemoryStore({".zarray": zarray([FILTERS["vlen-array"]])})
    a = zarrx.open_array(store, mode="r+")
    a[0, :2] = [np.arange(2), None]
    assert [v.tolist() for v in a[0, :2]] == [[0, 1], []]
    assert a[0, 2] == 0


@pytest.mark.parametrize("zarray_doc, message", [
    (zarray([{"id": "json2", "encoding": "nope"}]),
     ".zarray filters[0].encoding: expected a text encoding such as 'utf-8', found 'nope'"),
    (zarray([{"id": "json2", "encoding": "rot13"}]),
     ".zarray filters[0].encoding: expected a text encoding such as 'utf-8', found 'rot13'"),
    (zarray([{"id": "json2", "encoding": "base64"}]),
     ".zarray filters[0].encoding: expected a text encoding such as 'utf-8', found 'base64'"),
    (zarray([{"id": "json2", "separators": [","]}]),
     ".zarray filters[0].separators: expected two strings: the item and key separators, "
     "found [',']"),
    (zarray([{"id": "msgpack2", "raw": 1}]),
     ".zarray filters[0].raw: expected true or false, found 1"),
    (zarray([{"id": "vlen-array"}]), ".zarray filters[0]: missing required field 'dtype'"),
    (zarray([{"id": "vlen-array", "dtype": "|O"}]),
     ".zarray filters[0].dtype: expected a fixed-size dtype (not an object dtype), found '|O'"),
    (zarray([{"id": "vlen-array", "dtype": "|S0"}]),            # before: ZeroDivisionError
     ".zarray filters[0].dtype: expected a fixed-size dtype of at least one byte, found '|S0'"),
    (zarray([{"id": "vlen-array", "dtype": "|V0"}]),
     ".zarray filters[0].dtype: expected a fixed-size dtype of at least one byte, found '|V0'"),
    (zarray([FILTERS["json2"]], fill=[1]),
     ".zarray fill_value: expected a number, string or boolean (the fill value of an object "
     "array), found [1]"),
])
def test_metadata_refused(zarray_doc: bytes, message: str) -> None:
    with pytest.raises(MetadataError) as info:
        zarrx.open_array(MemoryStore({".zarray": zarray_doc}), mode="r")
    assert str(info.value) == message


@pytest.mark.parametrize("cid, chunk, message", [
    ("json2", b"[1, 2", "numcodecs.json2: the chunk is not JSON: Expecting ',' delimiter at "
                        "character 5"),
    ("json2", b'{"a": 1}', "numcodecs.json2: expected a list of the items, the dtype and the "
                           "shape, found dict {'a': 1}"),
    ("json2", b'[1, 2, "|O", [3]]', "numcodecs.json2: expected dtype '|O' and shape [2], "
                                    "found '|O' and [3]"),
    ("json2", b'[1, 2, "<i4", [2]]', "numcodecs.json2: expected dtype '|O' and shape [2], "
                                     "found '<i4' and [2]"),
    ("json2", b'[1, "|O", [2]]', "numcodecs.json2: expected 2 items along axis 0, found 1"),
    ("json2", b'["\xff", 2, "|O", [2]]', "numcodecs.json2: the chunk is not utf-8 text: "
                                         "invalid start byte at byte 2"),
    ("json2", b"[" * 100000, "numcodecs.json2: the chunk's JSON nests too deeply"),
    ("msgpack2", b"\x90\x90", "numcodecs.msgpack2: the chunk is not MessagePack: "
                              "unpack(b) received extra data."),
    ("msgpack2", b"\x93" + b"\x91" * 100000, "numcodecs.msgpack2: the chunk's MessagePack nests "
                                            "too deeply"),           # before: no reason given
    ("vlen-array", b"\x02\x00\x00\x00\x03\x00\x00\x00abc\x00\x00\x00\x00",
     "numcodecs.vlen-array: item 0 holds 3 bytes, not a multiple of the 4-byte <i4"),
    ("vlen-array", b"\x03\x00\x00\x00", "numcodecs.vlen-array: header claims 3 items, "
                                        "expected 2"),
])
def test_corrupt_chunks_refused(cid: str, chunk: bytes, message: str) -> None:
    store = MemoryStore({".zarray": zarray([FILTERS[cid]], shape=(3,), chunks=(2,)),
                         "0": chunk})
    with pytest.raises(CodecError) as info:
        zarrx.open_array(store, mode="r")[...]
    assert str(info.value) == f"array '/' chunk '0': {message}"


def test_numbers_past_pythons_limits_refused() -> None:
    limit = sys.get_int_max_str_digits()
    if not limit:
        pytest.skip("no limit on the digits of an integer")
    store = MemoryStore({".zarray": zarray([FILTERS["json2"]], shape=(2,), chunks=(2,)),
                         "0": b"[" + b"1" * (limit + 1) + b', 2, "|O", [2]]'})
    with pytest.raises(CodecError) as info:
        zarrx.open_array(store, mode="r")[...]
    assert str(info.value) == (
        f"array '/' chunk '0': numcodecs.json2: the chunk's JSON cannot be read: Exceeds the "
        f"limit ({limit} digits) for integer string conversion: value has {limit + 1} digits; "
        f"use sys.set_int_max_str_digits() to increase the limit")


def test_nested_lists_of_a_multidimensional_chunk_must_fit() -> None:
    store = MemoryStore({".zarray": zarray([FILTERS["json2"]], shape=(2, 2), chunks=(2, 2)),
                         "0.0": b'[[1, 2], 3, "|O", [2, 2]]'})
    with pytest.raises(CodecError) as info:
        zarrx.open_array(store, mode="r")[...]
    assert str(info.value) == ("array '/' chunk '0.0': numcodecs.json2: expected a list along "
                               "axis 1, found int 3")


def test_msgpack2_raw_chunks_read_as_numcodecs_reads_them() -> None:
    """With ``raw: true`` MessagePack strings decode to bytes, the dtype ``"|O"`` too."""
    chunk = numcodecs.MsgPack().encode(np.array(["a", "b"], dtype=object))
    store = MemoryStore({".zarray": zarray([{"id": "msgpack2", "raw": True}], shape=(2,),
                                           chunks=(2,)), "0": chunk})
    got = zarrx.open_array(store, mode="r")[...]       # before: "found b'|O' and [2]"
    assert got.tolist() == numcodecs.MsgPack(raw=True).decode(chunk).tolist() == [b"a", b"b"]
