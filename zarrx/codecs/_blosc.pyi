from typing_extensions import Buffer
from typing import Any

MAX_RATIO: int

# Status codes of KernelStatus (zarrx.codecs.status): shared by every kernel
NOMEM_ENCODED: int
NOMEM_DECODED: int
SHRINK: int
RATIO: int
NEGATIVE_SIZE: int
# this kernel's own
CNAME: int
NOT_BUILT: int
TYPESIZE: int
CLEVEL: int
SHUFFLE: int
BLOCKSIZE: int
TOO_LARGE: int
COMPRESS_FAILED: int
SHORT: int
CBYTES: int
NBYTES: int
BIG_BLOCKS: int
INVALID: int
MEMCPY_SIZE: int
GEOMETRY: int
CORRUPT: int

CNAMES: tuple[str, ...]
SHUFFLES: dict[int, str]

def built(cname: str) -> bool: ...
def compress(src: Buffer, typesize: int, clevel: int = 5, shuffle: int = 1, cname: str = "lz4",
             blocksize: int = 0, own_shuffle: bool = True) -> bytes: ...
def check(src: Buffer, expected: int) -> None: ...
def compress_rows(rows: Buffer, fill: Buffer | None, clevel: int, cname: str,
                  blocksize: int = 0) -> Any: ...
def decompress_into(src: Buffer, dst: Buffer) -> None: ...
def decompress(src: Buffer, expected: int) -> bytes: ...
def header(src: Buffer) -> dict[str, Any]: ...
def version() -> str: ...
def shuffle_backend() -> str: ...
