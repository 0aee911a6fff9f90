"""The Python and builtin calls an operation makes on the calling thread: tests bound work by
how such counts grow with the input, never by time."""
from __future__ import annotations

import sys
from typing import Any, Callable


def calls_made(fn: Callable[[], Any]) -> int:
    """How many Python and builtin calls ``fn()`` makes on this thread."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        calls += event in ("call", "c_call")

    sys.setprofile(count)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls
