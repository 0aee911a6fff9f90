"""An in-memory, thread-safe store."""
from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

from zarrx.store.base import ByteRange, Request, Store, as_bytes, check_key

__all__ = ["MemoryStore"]


class MemoryStore(Store):
    """Keys and values in a dict guarded by a lock; ``read_only=True`` refuses writes."""

    def __init__(self, data: dict[str, bytes] | None = None, *, read_only: bool = False) -> None:
        self._data: dict[str, bytes] = dict(data or {})
        self._lock = threading.Lock()
        self.read_only = read_only

    def get(self, key: str, byte_range: ByteRange | None = None) -> bytes | None:
        value = self._data.get(check_key(key))   # dict reads are atomic under the GIL
        if value is None or byte_range is None:
            return value
        return byte_range.apply(value)

    def get_many(self, requests: Iterable[Request]) -> list[bytes | None]:
        data = self._data
        out: list[bytes | None] = []
        for key, rng in requests:
            value = data.get(key)
            out.append(value if value is None or rng is None else rng.apply(value))
        return out

    def get_many_buffers(self, requests: Iterable[Request]) -> list[bytes | memoryview | None]:
        data = self._data
        out: list[bytes | memoryview | None] = []
        for key, rng in requests:
            value = data.get(key)
            if value is None or rng is None or rng.is_full:
                out.append(value)
            else:
                start, stop = rng.resolve(len(value))
                out.append(memoryview(value)[start:stop])     # no copy of the range
        return out

    def getsize(self, key: str) -> int | None:
        value = self._data.get(check_key(key))
        return None if value is None else len(value)

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        check_key(key)
        self._check_writable(key)
        value = as_bytes(value, key)
        with self._lock:
            self._data[key] = value

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        checked = []
        for key, value in items:
            check_key(key)
            self._check_writable(key)
            checked.append((key, value if type(value) is bytes else as_bytes(value, key)))
        with self._lock:
            self._data.update(checked)

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = [check_key(k) for k in keys]
        for k in keys[:1]:
            self._check_writable(k)
        with self._lock:
            for k in keys:
                self._data.pop(k, None)

    def delete(self, key: str) -> None:
        check_key(key)
        self._check_writable(key)
        with self._lock:
            self._data.pop(key, None)

    def list_prefix(self, prefix: str) -> Iterator[str]:
        with self._lock:
            keys = list(self._data)
        return (k for k in keys if k.startswith(prefix))

    def __len__(self) -> int:
        return len(self._data)

    def __getstate__(self) -> dict:
        return {"data": dict(self._data), "read_only": self.read_only}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["data"], read_only=state["read_only"])

    def __repr__(self) -> str:
        return f"MemoryStore(<{len(self._data)} keys>)"
