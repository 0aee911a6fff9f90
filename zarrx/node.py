"""What arrays and groups share: a store, a path, metadata, attributes and read-only state."""
from __future__ import annotations

from typing import Any

from zarrx.attrs import Attributes
from zarrx.errors import ReadOnlyError
from zarrx.store.base import Store

__all__ = ["Node"]


class Node:
    """Base of :class:`~zarrx.Array` and :class:`~zarrx.Group`."""

    _kind = "node"

    def __init__(self, store: Store, path: str, meta: Any, *, read_only: bool = False) -> None:
        self._store = store
        self._path = path.strip("/")
        self._meta = meta
        self._read_only = read_only or store.read_only

    @property
    def store(self) -> Store:
        return self._store

    @property
    def path(self) -> str:
        return self._path

    @property
    def name(self) -> str:
        return "/" + self._path

    @property
    def basename(self) -> str:
        return self._path.rsplit("/", 1)[-1]

    @property
    def metadata(self) -> Any:
        return self._meta

    @property
    def zarr_format(self) -> int:
        return self._meta.zarr_format

    @property
    def read_only(self) -> bool:
        return self._read_only

    @property
    def attrs(self) -> Attributes:
        """User attributes; every change is written to the store at once."""
        return Attributes(self._meta.attributes, self._save_attrs, read_only=self._read_only)

    def _save_attrs(self, attrs: dict) -> None:
        raise NotImplementedError

    def _check_writable(self, what: str) -> None:
        if self._read_only:
            raise ReadOnlyError(f"{self._kind} {self.name!r}: cannot {what}: the {self._kind} "
                                f"is open read-only")
