import numpy as np
import numpy.typing as npt

OK: int
BAD_LENGTH: int
SHARD_TOO_SMALL: int
BAD_CRC: int
HALF_SENTINEL: int
OVERFLOW: int
PAST_END: int
OVERLAP_INDEX: int
NEGATIVE_COORD: int
TOO_LARGE: int

def index_nbytes(n_chunks: int, n_crc: int) -> int: ...
def decode_index(buf: bytes | bytearray | memoryview, n_chunks: int, shard_size: int,
                 at_end: bool, n_crc: int, big_endian: bool = False,
                 word_at: npt.NDArray[np.int64] | None = None
                 ) -> tuple[npt.NDArray[np.uint64], int, int]: ...
def stored_crc(buf: bytes | bytearray | memoryview, has_crc: bool) -> tuple[int, int]: ...
def encode_index(entries: npt.ArrayLike, n_crc: int, big_endian: bool = False,
                 word_at: npt.NDArray[np.int64] | None = None) -> bytes: ...
def pack_entries(n: int, values: dict[int, object], kept_entries: npt.NDArray[np.uint64] | None,
                 kept_bytes: object, base: int
                 ) -> tuple[npt.NDArray[np.uint64], list[object], int]: ...
def slot_spans(entries: npt.NDArray[np.uint64], slots: npt.NDArray[np.int64], limit: int
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int, int, int, int,
                          int]: ...
def locate(coords: npt.NDArray[np.int64], per_shard: npt.NDArray[np.int64]
           ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64],
                      int, int]: ...


class Slab:
    data: bytes
    def __init__(self, size: int) -> None: ...
    def __buffer__(self, flags: int) -> memoryview: ...
