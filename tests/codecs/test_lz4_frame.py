"""An lz4 frame where numcodecs' size-prefixed lz4 block is expected: the error says so."""
from __future__ import annotations

import re

import numpy as np
import pytest

import zarrx
from zarrx.codecs.lz4 import LZ4
from zarrx.errors import CodecError

# an lz4 frame of b"hello": magic, descriptor (version 1, independent blocks, 4 MiB blocks),
# one uncompressed block, the end mark
FRAME = b"\x04\x22\x4d\x18" + b"\x64\x40\xa7" + b"\x05\x00\x00\x80hello" + b"\x00\x00\x00\x00"
FRAME_ERROR = ("lz4: the bytes start with the lz4 frame magic number 0x184D2204 (read as the "
               "size header: 407708164 decoded bytes{want}): they are an lz4 frame (as the lz4 "
               "command line tool and lz4.frame write), not the size-prefixed lz4 block "
               "numcodecs' LZ4 codec reads")


@pytest.mark.parametrize("how", ["decode", "decode-unknown-size", "decode_into"])
def test_an_lz4_frame_is_named(how):
    want = "" if how == "decode-unknown-size" else ", expected 5"
    with pytest.raises(CodecError, match=re.escape(FRAME_ERROR.format(want=want))):
        if how == "decode":
            LZ4().decode(FRAME, 5, 1 << 30)
        elif how == "decode-unknown-size":
            LZ4().decode(FRAME, None, 1 << 30)
        else:
            LZ4().decode_into(FRAME, np.empty(5, np.uint8))


def test_a_block_gets_no_hint():
    with pytest.raises(CodecError) as info:
        LZ4().decode(LZ4().encode(b"hello"), 4, 1 << 30)
    assert "frame" not in str(info.value)


def test_an_array_chunk_holding_an_lz4_frame(tmp_path):
    pytest.importorskip("numcodecs")
    path = str(tmp_path / "a.zarr")
    a = zarrx.create_array(path, shape=(5,), chunks=(5,), dtype="u1", zarr_format=2,
                           compressors=[{"id": "lz4"}])
    (tmp_path / "a.zarr" / "0").write_bytes(FRAME)
    with pytest.raises(zarrx.ZarrError, match=re.escape(FRAME_ERROR.format(want=", expected 5"))):
        a[:]
