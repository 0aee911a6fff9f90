"""A memory store that calls ``stall(keys)`` before each read, for child processes of the
SIGKILL trials that must be killed while they read a given chunk."""
from __future__ import annotations

from collections.abc import Callable

from zarrx.store import MemoryStore


class StallingStore(MemoryStore):
    def __init__(self, stall: Callable[[list[str]], None]) -> None:
        super().__init__()
        self._stall = stall

    def get(self, key, byte_range=None):
        self._stall([key])
        return super().get(key, byte_range)

    def get_many(self, requests):
        self._stall([key for key, _ in requests])
        return super().get_many(requests)

    def get_many_buffers(self, requests):
        self._stall([key for key, _ in requests])
        return super().get_many_buffers(requests)
