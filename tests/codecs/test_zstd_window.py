"""zstd frames of data whose size is not known (decoded by streaming) needing a window over the
limit are refused for memory, not called corrupt; frames decoding to a known size need none."""
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


def test_a_window_over_the_limit_is_refused_for_memory_when_the_size_is_not_known():
    with pytest.raises(CodecError, match=re.escape(WINDOW.format(off=0))):
        zstd.decompress_bounded(frame(20), 100)


@pytest.mark.parametrize("call", ["decompress", "decompress_into"])
def test_frames_decoding_to_a_known_size_take_no_window_whatever_they_declare(call):
    """Decoded in one pass into the destination, which is the window: a frame's declared
    window costs nothing (before: streamed through a window buffer of that size, 1 GiB refused
    and up to 128 MiB allocated for 3 bytes)."""
    for exponent in (17, 20, 21):                  # windows of 128 MiB, 1 GiB, 2 GiB
        if call == "decompress":
            assert zstd.decompress(frame(exponent), 3) == b"abc"
        else:
            out = np.empty(3, np.uint8)
            zstd.decompress_into(frame(exponent), out)
            assert out.tobytes() == b"abc"
        with pytest.raises(CodecError, match="^zstd: frame decodes to more than 2 bytes, "
                                             "expected 2$"):
            zstd.decompress(frame(exponent), 2)
    assert zstd.decompress(frame(17) + frame(20), 6) == b"abcabc"


def test_the_frame_over_the_limit_is_named():
    ok, big = frame(17), frame(20)
    assert zstd.decompress_bounded(ok, 100) == b"abc"     # a 128 MiB window is allowed
    with pytest.raises(CodecError, match=re.escape(WINDOW.format(off=len(ok)))):
        zstd.decompress_bounded(ok + big, 100)
