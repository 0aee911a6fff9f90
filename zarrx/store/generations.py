"""Generations as the store contract uses them (see :mod:`zarrx.store.base`): :data:`ABSENT`,
the expected state "no object", and the :class:`~zarrx.errors.ConflictError` of a read or write
that finds another state than the one it expected."""
from __future__ import annotations

from collections.abc import Hashable

from zarrx.errors import ConflictError

__all__ = ["ABSENT", "is_absent", "conflict", "check_generation"]


class _Absent:
    """The type of :data:`ABSENT` (one instance; it pickles as itself)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


#: ``if_generation`` of a conditional write meaning "the object must not exist"
ABSENT = _Absent()


def is_absent(generation: object) -> bool:
    """True for the ``if_generation`` values that mean "no object": :data:`ABSENT` and None."""
    return generation is None or generation is ABSENT


def _state(generation: object) -> str:
    return "no object" if is_absent(generation) else f"generation {generation!r}"


def conflict(store: object, key: str, action: str, expected: object,
             found: Hashable | None) -> ConflictError:
    """``ConflictError("<store>: cannot <action> 'key': expected <state>, found <state>")``;
    ``expected`` is a generation, ABSENT, or a description such as ``"an object"``."""
    want = expected if isinstance(expected, str) else _state(expected)
    return ConflictError(f"{store!r}: cannot {action} {key!r}: expected {want}, "
                         f"found {_state(found)}")


def check_generation(store: object, key: str, expected: Hashable | None, found: Hashable | None,
                     action: str) -> None:
    """Raise :func:`conflict` unless ``found`` satisfies ``expected`` (None: anything)."""
    if expected is None:
        return
    if expected is ABSENT:
        if found is not None:
            raise conflict(store, key, action, ABSENT, found)
    elif found is None or found != expected:
        raise conflict(store, key, action, expected, found)
