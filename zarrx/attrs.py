"""User attributes as a mutable mapping that persists every change to the node's metadata."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from zarrx.errors import ArgumentTypeError, ReadOnlyError
from zarrx.metadata._util import Loc
from zarrx.metadata.json import check_tree

__all__ = ["Attributes"]


class Attributes(MutableMapping[str, Any]):
    """``node.attrs``: reads come from the node's metadata; each change is written at once."""

    def __init__(self, data: dict[str, Any], save: Callable[[dict[str, Any]], None], *,
                 read_only: bool = False) -> None:
        self._data = dict(data)
        self._save = save
        self._read_only = read_only

    def _commit(self, new: dict[str, Any]) -> None:
        if self._read_only:
            raise ReadOnlyError("cannot change attributes: the node is open read-only")
        try:
            json.dumps(new, allow_nan=True)
        except RecursionError:
            pass                                # far too deep: check_tree words it below
        except (TypeError, ValueError) as exc:
            raise ArgumentTypeError(f"attributes must be JSON-serialisable: {exc}") from exc
        check_tree(new, Loc("attributes"))     # the depth a reader takes
        self._save(new)
        self._data = new

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self._commit({**self._data, key: value})

    def __delitem__(self, key: str) -> None:
        if key not in self._data:
            raise KeyError(key)
        new = dict(self._data)
        del new[key]
        self._commit(new)

    def update(self, *args: Any, **kwargs: Any) -> None:  # one write for many keys
        new = dict(self._data)
        new.update(*args, **kwargs)
        self._commit(new)

    def put(self, mapping: dict[str, Any]) -> None:
        """Replace all attributes at once."""
        self._commit(dict(mapping))

    def asdict(self) -> dict[str, Any]:
        return dict(self._data)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Attributes({self._data!r})"
