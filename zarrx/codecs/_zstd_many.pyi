from typing_extensions import Buffer

def compress_many(rows: Buffer, skip: Buffer | None = None, level: int = 0,
                  checksum: bool = False) -> list[bytes | None]: ...
