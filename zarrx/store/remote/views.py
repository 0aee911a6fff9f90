"""Read-only views of a remote store: what :meth:`~RemoteStore.with_read_only` (zarr-python's
method) makes, and what ``make_store`` hands out for an :class:`ObjectStore` or
:class:`FsspecStore` opened with mode "r".

A view is a store of the same class over the same client (an obstore store, an fsspec
filesystem: no new connection, no new HTTP client, no second set of credentials): it shares
the request limits, the generations seen lately and the counters (``requests``,
``bytes_read``, ``bytes_written``) of the store it was made from, and refuses writes with
:class:`~zarrx.errors.ReadOnlyError`. A store that cannot write whatever it is asked (an HTTP
server, a read-only filesystem) has no writable view.
"""
from __future__ import annotations

from typing import Any

from zarrx.errors import StoreError

__all__ = ["Views"]


class Views:
    """Mixed into :class:`~zarrx.store.remote.base.RemoteStore`: the byte counters (shared by
    a store and its views) and :meth:`with_read_only`."""

    #: bytes read and written, shared by a store and its views
    _tally: list[int]
    read_only: bool

    @property
    def bytes_read(self) -> int:
        return self._tally[0]

    @bytes_read.setter
    def bytes_read(self, n: int) -> None:
        self._tally[0] = n

    @property
    def bytes_written(self) -> int:
        return self._tally[1]

    @bytes_written.setter
    def bytes_written(self, n: int) -> None:
        self._tally[1] = n

    def _cannot_write(self) -> str | None:
        """Why the store cannot write whatever it is opened with (None: it can)."""
        return None

    def with_read_only(self, read_only: bool = False) -> Any:
        """A store over the same client and objects, read-only or not (a read-only store
        whose kind cannot write has no writable one: StoreError)."""
        if not read_only and self.read_only and (why := self._cannot_write()) is not None:
            raise StoreError(f"{self!r}: with_read_only(False): the store cannot write ({why})")
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)   # the client, limits, caches and counters
        view.read_only = bool(read_only)
        return view
