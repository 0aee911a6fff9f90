"""What differs between the Python versions zarrx supports (3.10 and newer), in one place.

Code elsewhere calls these instead of an API that only newer Pythons have, so that the floor
declared in pyproject.toml (``requires-python``) holds; ``tests/test_python_floor.py`` checks
that no module uses such an API directly.
"""
from __future__ import annotations

import base64
import binascii

__all__ = ["add_note", "b64decode_strict"]


def add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)`` (Python 3.11 and newer). On Python 3.10, which has no
    ``add_note``, the note is appended to the same ``exc.__notes__`` list, where code that
    reads the notes finds it (3.10's tracebacks do not print it)."""
    adder = getattr(exc, "add_note", None)
    if adder is not None:
        adder(note)
        return
    notes = getattr(exc, "__notes__", None)
    if not isinstance(notes, list):
        notes = []
        exc.__notes__ = notes  # type: ignore[attr-defined]
    notes.append(str(note))


def b64decode_strict(data: bytes) -> bytes:
    """Strict base64 decoding (``binascii.Error`` for anything outside the alphabet, data after
    the padding, missing padding) on every supported Python: ``a2b_base64(strict_mode=True)``
    is 3.11 and newer."""
    try:
        return base64.b64decode(data, validate=True)
    except ValueError as exc:       # (binascii.Error is a ValueError)
        raise binascii.Error(str(exc)) from None
