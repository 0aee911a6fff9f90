"""Directories on the local file system for ``zarrx bench --store local``.

The parent makes one root directory per run (under ``--dir``, default the temporary directory)
and removes it at the end; every write of a worker goes into a fresh directory below it, which
the worker removes once the case is measured, so a long run never holds more than one copy of
the data per worker. ``--cold`` empties the page cache before every timed read, which only root
can do (``/proc/sys/vm/drop_caches``).
"""
from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["STORE_KINDS", "DROP_CACHES", "bench_root", "fresh_dir", "dir_usage", "remove_dir",
           "cold_problem", "drop_caches"]

STORE_KINDS = ("memory", "local")
DROP_CACHES = "/proc/sys/vm/drop_caches"
_counter = itertools.count()


@contextmanager
def bench_root(parent: str | None) -> Iterator[str]:
    """A new, empty directory under ``parent`` (None: the temporary directory) for the whole
    run; removed with everything in it on exit."""
    root = tempfile.mkdtemp(prefix="zarrx-bench-", dir=parent)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def fresh_dir(root: str, tag: str) -> str:
    """The path of a directory below ``root`` that no earlier call returned (not created: each
    system creates its store root itself, as a user's first write would)."""
    return os.path.join(root, f"{tag}-{os.getpid()}-{next(_counter)}")


def dir_usage(path: str) -> tuple[int, int]:
    """``(bytes, files)``: the sum of the sizes of the regular files below ``path``, and their
    number. Stored bytes are file sizes, not blocks on disk."""
    total = files = 0
    stack = [path]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
                    files += 1
    return total, files


def remove_dir(path: str) -> None:
    """Remove a store directory once it is measured (a missing one is fine)."""
    shutil.rmtree(path, ignore_errors=True)


def cold_problem() -> str | None:
    """None when this process can empty the page cache, else why it cannot."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "not running as root"
    if not os.access(DROP_CACHES, os.W_OK):
        return f"{DROP_CACHES} is not writable"
    return None


def drop_caches() -> None:
    """Write dirty pages back, then drop the page cache, dentries and inodes
    (``sync; echo 3 > /proc/sys/vm/drop_caches``), so the next read comes from the device."""
    os.sync()
    with open(DROP_CACHES, "w", encoding="ascii") as f:
        f.write("3\n")
