"""zstd frames needing a window over the limit are refused for memory, not called corrupt."""
from __future__ import annotations

import re

import numpy as np
import pytest

from zarrx.codecs import zstd
from zarrx.errors import CodecError

MAGIC = b"\x28\xb5\x2f\xfd"
RAW_BLOCK = bytes([(3 << 3) | 1, 0, 0]) + b"abc"    # the last block: 3 raw bytes


def frame(window_exponent: int) -> bytes:
    """A frame of 3 bytes without a content size whose window is 2**(10 + exponent) bytes."""
    return MAGIC + b"\x00" + bytes([window_exponent << 3]) + RAW_BLOCK


WINDOW = ("zstd: frame at offset {off} needs a window of 1073741824 bytes, more than the "
          "134217728 bytes (128 MiB) zarrx allows: refused for the memory decoding it would take "
          "(the data is not known to be corrupt)")


@pytest.mark.parametrize("call", ["decompress", "decompress_into", "decompress_bounded"])
def test_a_window_over_the_limit_is_refused_for_memory(call):
    data = frame(20)
    with pytest.raises(CodecError, match=re.escape(WINDOW.format(off=0))):
        if call == "decompress":
            zstd.decompress(data, 3)
        elif call == "decompress_into":
            zstd.decompress_into(data, np.empty(3, np.uint8))
        else:
            zstd.decompress_bounded(data, 100)


def test_the_frame_over_the_limit_is_named():
    ok, big = frame(17), frame(20)
    assert zstd.decompress(ok, 3) == b"abc"           # a 128 MiB window is allowed
    with pytest.raises(CodecError, match=re.escape(WINDOW.format(off=len(ok)))):
        zstd.decompress(ok + big, 6)
