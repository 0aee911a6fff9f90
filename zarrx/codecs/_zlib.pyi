from typing_extensions import Buffer
from typing import Literal

MAX_RATIO: int

# Status codes of KernelStatus (zarrx.codecs.status): shared by every kernel
NOMEM_ENCODED: int
NOMEM_DECODED: int
SHRINK: int
RATIO: int
NEGATIVE_SIZE: int
# this kernel's own
WRAPPER: int
BACKEND: int
NO_LIBDEFLATE: int
LEVEL: int
SETUP: int
NO_COMPRESSOR: int
BOUND: int
COMPRESS_FAILED: int
EMPTY: int
SIZE: int
NO_DECOMPRESSOR: int
EXCESS: int
TRUNCATED: int
TRAILING: int
NEED_DICT: int
NO_INFLATE: int
CORRUPT: int
LIMIT_EXCEEDED: int

Wrapper = Literal["zlib", "gzip", "raw"]
Backend = Literal["auto", "zlib", "libdeflate"]

def backend() -> str: ...
def compress(src: Buffer, level: int = -1, wrapper: Wrapper = "zlib",
             backend: Backend = "auto") -> bytes: ...
def check(src: Buffer, expected: int, wrapper: Wrapper = "zlib") -> None: ...
def decompress_into(src: Buffer, dst: Buffer, wrapper: Wrapper = "zlib",
                    backend: Backend = "auto") -> None: ...
def decompress(src: Buffer, expected: int, wrapper: Wrapper = "zlib",
               backend: Backend = "auto") -> bytes: ...
def decompress_bounded(src: Buffer, limit: int, wrapper: Wrapper = "zlib") -> bytes: ...
def version() -> str: ...
