"""Progress of a long tool run (convert, copy, check): a bar with throughput and ETA.

The tools report through a :class:`Progress`: ``start(total, label, unit)`` once per unit of
work (an array, a copy), ``advance(n)`` as bytes (or, for check, stored objects) are done,
``close()`` at the end. :class:`NoProgress`
reports nothing; :class:`BarProgress` draws a tqdm bar on standard error (bytes or objects per
second and the time left).
"""
from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

__all__ = ["Progress", "NoProgress", "BarProgress", "progress_for"]


class Progress:
    """What a tool calls as it works; every method may be called from any thread."""

    def start(self, total: int, label: str, unit: str = "B") -> None:
        """A new unit of work of ``total`` ``unit`` (0: unknown) begins: bytes (``"B"``), or
        stored objects (``"object"``) for check."""

    def advance(self, n: int) -> None:
        """``n`` more bytes (objects) of the current unit are done."""

    def close(self) -> None:
        """The run is over (finished, failed or interrupted)."""


class NoProgress(Progress):
    pass


class BarProgress(Progress):
    """A tqdm bar per unit of work on ``file`` (standard error by default)."""

    def __init__(self, file: TextIO | None = None) -> None:
        from tqdm import tqdm  # noqa: F401  (fail early when tqdm is missing)
        self._file = file or sys.stderr
        self._bar: Any = None
        self._lock = threading.Lock()

    def start(self, total: int, label: str, unit: str = "B") -> None:
        from tqdm import tqdm
        with self._lock:
            if self._bar is not None:
                self._bar.close()
            self._bar = tqdm(total=total or None, desc=label, unit=unit,
                             unit_scale=unit == "B", unit_divisor=1024, file=self._file,
                             leave=True, dynamic_ncols=True, smoothing=0.1)

    def advance(self, n: int) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.update(n)

    def close(self) -> None:
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None


def progress_for(progress: Any) -> Progress:
    """A :class:`Progress` from what a caller passed: None/False (nothing), True (a bar on
    standard error), or a Progress."""
    if progress is None or progress is False:
        return NoProgress()
    if progress is True:
        return BarProgress()
    if isinstance(progress, Progress):
        return progress
    from zarrx.errors import ArgumentTypeError
    from zarrx.metadata._util import short
    raise ArgumentTypeError(f"progress: expected a bool or a zarrx.tools.progress.Progress, "
                            f"found {type(progress).__name__} {short(progress, 40)}")
