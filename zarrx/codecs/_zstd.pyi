from typing_extensions import Buffer

MAX_RATIO: int
MAX_WINDOW: int

# Status codes of KernelStatus (zarrx.codecs.status): shared by every kernel
NOMEM_ENCODED: int
NOMEM_DECODED: int
SHRINK: int
RATIO: int
NEGATIVE_SIZE: int
# this kernel's own
NO_DCTX: int
NO_CCTX: int
LEVEL: int
TOO_LARGE: int
COMPRESS_FAILED: int
EMPTY: int
NOT_A_FRAME: int
TRAILING: int
BAD_HEADER: int
DECLARED: int
SIZE: int
CORRUPT: int
EXCESS: int
TRUNCATED: int
NO_HEADER: int
BAD_FIRST_HEADER: int
LIMIT_DECLARED: int
LIMIT_EXCEEDED: int
WINDOW: int
SPAN: int

def compress(src: Buffer, level: int = 0, checksum: bool = False) -> bytes: ...
def check(src: Buffer, expected: int) -> None: ...
def decompress_into(src: Buffer, dst: Buffer) -> None: ...
def decompress(src: Buffer, expected: int) -> bytes: ...
def decompress_many(src: Buffer, starts: Buffer, lengths: Buffer, dst: Buffer
                    ) -> tuple[int, Exception] | None: ...
def decompress_bounded(src: Buffer, limit: int) -> bytes: ...
def content_size(src: Buffer) -> int | None: ...
def error_name(rc: int) -> str: ...
def version() -> str: ...
