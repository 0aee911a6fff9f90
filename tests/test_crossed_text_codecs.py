"""Zarr v3 arrays whose variable-length data type and object codec disagree, which other
writers may produce: a ``string`` array stored by ``vlen-bytes`` (zarr-python refuses to open
it) and a ``bytes`` array stored by ``vlen-utf8`` (zarr-python reads it as a mix of str and
bytes). zarrx reads and writes both as their data type says: text stored as UTF-8 bytes, and
bytes stored as text, which must then be UTF-8."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import zarrx
from zarrx.store import MemoryStore

STORED = b"\x02\x00\x00\x00\x01\x00\x00\x00a\x02\x00\x00\x00\xc3\xa9"   # "a", "é" as UTF-8


def _array(data_type: str, codec: str, chunk: bytes | None = None) -> zarrx.Array:
    doc = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": data_type,
           "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
           "chunk_key_encoding": {"name": "default"}, "fill_value": "",
           "codecs": [{"name": codec, "configuration": {}}], "attributes": {}}
    store = MemoryStore({"zarr.json": json.dumps(doc).encode()})
    if chunk is not None:
        store.set("c/0", chunk)
    return zarrx.open_array(store, mode="r+")


def test_bytes_stored_as_text_read_as_bytes():
    z = _array("bytes", "vlen-utf8", STORED)
    assert z[:].tolist() == [b"a", "é".encode(), b"", b""]   # before: "a", "é", b"", b""
    assert z[1] == "é".encode()


def test_bytes_stored_as_text_are_written_when_they_are_utf8():
    z = _array("bytes", "vlen-utf8")
    z[:2] = [b"a", "é".encode()]                 # before: CodecError, "expected str"
    assert z.store.get("c/0") == STORED
    assert z[:].tolist() == [b"a", "é".encode(), b"", b""]
    with pytest.raises(zarrx.CodecError, match=re.escape(
            "vlen-utf8: item 0 is bytes that are not UTF-8 text (invalid start byte at byte "
            "0)")):
        z[2] = b"\xff"
    with pytest.raises(zarrx.ArgumentTypeError, match="expected bytes"):
        z[2] = "text"


def test_text_stored_as_bytes_is_written_as_utf8():
    z = _array("string", "vlen-bytes")
    z[:2] = ["a", "é"]                           # before: ArgumentTypeError, "expected bytes"
    assert z.store.get("c/0") == STORED
    z[2] = b"x"                                  # converted to text, as for any string array
    assert z[:].tolist() == ["a", "é", "x", ""]


@pytest.mark.parametrize("data_type, codec", [("string", "vlen-utf8"),
                                              ("bytes", "vlen-bytes")])
def test_matching_pairs_are_unchanged(data_type, codec):
    z = _array(data_type, codec, STORED)
    want = ["a", "é", "", ""] if data_type == "string" else [b"a", "é".encode(), b"", b""]
    assert z[:].tolist() == want
    z[2:] = want[:2]
    assert z[:].tolist() == want[:2] * 2
    assert np.asarray(z[:]).shape == (4,)
