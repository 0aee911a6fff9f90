"""The write side of remote stores: uploads, deletes, and their conditional forms.

- **Writes.** ``set`` and ``set_many`` upload (concurrently, a batch at a time); an answer
  lost on the way is settled by :mod:`zarrx.store.remote.lost_answers`. The ETag a write
  returns is remembered as the key's generation seen lately.
- **Deletes** go out in batches of 1,000 keys; a key already missing is no failure.
- **Conditional writes** send If-None-Match ``*`` (create) or If-Match (replace), and
  conditional deletes If-Match; HTTP 412 becomes :class:`~zarrx.errors.ConflictError`. A
  server that ignores conditions is found by :mod:`zarrx.store.remote.condition_check` before
  the first conditional request, and refused with ``StoreError``.

:class:`RemoteWrites` is a part of :class:`~zarrx.store.remote.base.RemoteStore`, which supplies
the requests (``_call``, ``_run``, ``_put``, ``_delete``, ``_delete_if``), the errors, the
listing and the generations seen lately.
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

from zarrx.store.base import (ABSENT, check_generation, check_prefix, conflict, is_absent,
                              refuse_unnamable)
from zarrx.store.remote.common import (Failure, etag_generation, gather_all, if_match_of,
                                       upload_view)
from zarrx.store.remote.condition_check import check_conditions
from zarrx.store.remote.lost_answers import put

__all__ = ["RemoteWrites"]


class RemoteWrites:
    """Uploads and deletes over a remote store's request primitives (see the module
    docstring)."""

    options: Any
    bytes_written: int
    supports_conditional_writes: bool

    # -- writes -------------------------------------------------------------------------------
    async def _write(self, key: str, data: memoryview, mode: str | None) -> str | None:
        if mode is not None:
            await check_conditions(self, "write")    # a server ignoring conditions: StoreError
        try:
            etag = await put(self, key, data, mode)     # a lost answer: see lost_answers
        except Failure as fail:
            self._forget(key)
            if mode is not None and fail.kind in ("precondition", "exists", "missing"):
                raise                                   # a condition failed: set_if says so
            if fail.kind == "unsupported" and mode is not None:
                raise self._unsupported("conditionally write", key, fail) from None
            # a plain upload sent no condition: a server that does not implement it (HTTP 501
            # to a PUT, or to the requests of a multipart upload) or refuses it (a 404 from a
            # proxy, a 409) failed the write, never a condition (not a ConflictError)
            if fail.kind in ("precondition", "exists", "missing"):
                fail = Failure("other", fail.status, fail.detail)
            raise self._error("write", key, fail) from None
        self.bytes_written += len(data)
        if etag is None:
            self._forget(key)
        else:
            self._remember(key, etag, len(data))
        return etag

    def set(self, key: str, value: bytes | bytearray | memoryview) -> None:
        key = self._key(key)
        self._check_writable(key)
        self._run(self._write(key, upload_view(value, key), None))

    def set_many(self, items: Iterable[tuple[str, bytes | bytearray | memoryview]]) -> None:
        checked = []
        for key, value in items:
            key = self._key(key)
            self._check_writable(key)
            checked.append((key, upload_view(value, key)))
        if checked:
            self._run(gather_all([self._write(k, v, None) for k, v in checked]))

    def delete(self, key: str) -> None:
        self.delete_many([key])

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = [self._key(k) for k in keys]
        for k in keys[:1]:
            self._check_writable(k)
        for k in keys:
            self._forget(k)
        if keys:
            self._run(self._remove(keys))

    async def _remove(self, keys: list[str]) -> None:
        batches = [keys[i:i + 1000] for i in range(0, len(keys), 1000)]

        async def one(batch: list[str]) -> None:
            try:
                await self._call("DELETE", "delete", batch[0], lambda: self._delete(batch))
            except Failure as fail:
                if fail.kind != "missing":
                    raise self._error("delete", batch[0], fail) from None

        await gather_all([one(b) for b in batches])

    def delete_prefix(self, prefix: str) -> None:
        self._check_writable(check_prefix(prefix, self) or "<root>")
        keys = list(self.list_prefix(prefix))
        refuse_unnamable(self, prefix, keys)
        self.delete_many(keys)

    # -- conditional writes ---------------------------------------------------------------------
    def set_if(self, key: str, value: bytes | bytearray | memoryview,
               if_generation: Hashable | None) -> Hashable:
        key = self._key(key)
        self._check_writable(key)
        data = upload_view(value, key)
        if not self.supports_conditional_writes:
            return super().set_if(key, value, if_generation)
        expected: Hashable = ABSENT if is_absent(if_generation) else if_generation
        if expected is not ABSENT and if_match_of(expected) is None:
            raise conflict(self, key, "conditionally write", expected, self.generation(key))
        mode = "create" if expected is ABSENT else if_match_of(expected)
        try:
            etag = self._run(self._write(key, data, mode))  # type: ignore[arg-type]
        except Failure as fail:
            raise conflict(self, key, "conditionally write", expected, self.generation(key)
                           if fail.found is None else etag_generation(fail.found[0])) from None
        return etag_generation(etag) if etag is not None else self.generation(key)

    def delete_if(self, key: str, if_generation: Hashable | None) -> None:
        key = self._key(key)
        self._check_writable(key)
        if not self.supports_conditional_writes:
            return super().delete_if(key, if_generation)
        found = self.generation(key)
        if is_absent(if_generation):
            if found is not None:
                raise conflict(self, key, "conditionally delete", ABSENT, found)
            return
        check_generation(self, key, if_generation, found, "conditionally delete")
        self._run(check_conditions(self, "delete"))   # a server ignoring them: StoreError
        self._forget(key)
        try:
            self._run(self._call("DELETE", "delete", key,
                                 lambda: self._delete_if(key, if_match_of(if_generation))))  # type: ignore[arg-type]
        except Failure as fail:
            if fail.kind == "unsupported":
                raise self._unsupported("conditionally delete", key, fail) from None
            if fail.kind == "missing":
                raise conflict(self, key, "conditionally delete", if_generation, None) from None
            if fail.kind != "precondition":
                raise self._error("delete", key, fail) from None
            raise conflict(self, key, "conditionally delete", if_generation,
                           self.generation(key)) from None
