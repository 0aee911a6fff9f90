from typing_extensions import Buffer

MAX_RATIO: int

# Status codes of KernelStatus (zarrx.codecs.status): shared by every kernel
NOMEM_ENCODED: int
NOMEM_DECODED: int
SHRINK: int
RATIO: int
NEGATIVE_SIZE: int
# this kernel's own
ACCELERATION: int
TOO_LARGE: int
COMPRESS_FAILED: int
SHORT: int
DECLARED: int
BLOCK_LIMIT: int
CORRUPT: int
SIZE: int

def compress(src: Buffer, acceleration: int = 1) -> bytes: ...
def check(src: Buffer, expected: int) -> None: ...
def decompress_into(src: Buffer, dst: Buffer) -> None: ...
def decompress(src: Buffer, expected: int) -> bytes: ...
