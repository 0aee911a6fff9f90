"""The entries of a local directory tree that ``check`` looks at beside the store's listing:
temporary files left by writers, and links and special files (which ``LocalStore`` never lists
or follows). Walked without following links, with a stack of its own."""
from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator

from zarrx.store.localcond import kind_of
from zarrx.store.localfs import is_temp_name, temp_owner

__all__ = ["folders", "walk"]


def folders(start: str) -> Iterator[tuple[str, list[str], list[str], list[str]]]:
    """``os.walk(start)`` top down, never into links, with a stack of its own: ``os.walk``
    recurses (up to Python 3.11), so folders nested past the recursion limit would raise
    RecursionError. Pruning ``dirs`` prunes the walk, as there. The fourth item names the
    entries that are links or neither files nor folders (from the entries' types: no system
    call per entry)."""
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        dirs, files, links, odd = [], [], set(), []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
                if entry.is_symlink() or not (entry.is_file(follow_symlinks=False) or
                                              entry.is_dir(follow_symlinks=False)):
                    odd.append(entry.name)
            except OSError:
                is_dir = False
            (dirs if is_dir else files).append(entry.name)
            if is_dir and entry.is_symlink():
                links.add(entry.name)
        yield folder, dirs, files, odd
        stack.extend(os.path.join(folder, d) for d in reversed(dirs) if d not in links)


def newest(path: str) -> float:
    """The mtime of ``path``; for a folder (the new node ``copy`` or ``convert --overwrite``
    writes beside the one it replaces), the newest mtime of the entries below it, so that a
    folder still being written is never taken for an old one."""
    latest = os.lstat(path).st_mtime
    if os.path.isdir(path) and not os.path.islink(path):
        for folder, dirs, files in os.walk(path):
            for name in dirs + files:
                with contextlib.suppress(OSError):
                    latest = max(latest, os.lstat(os.path.join(folder, name)).st_mtime)
    return latest


def walk(root: str, node: str) -> tuple[list[tuple[str, float]], list[tuple[str, str]]]:
    """What one walk below ``node`` finds, each sorted by path relative to root: the
    temporary files of its keys, with their mtimes, and the links and entries that are
    neither regular files nor folders, with what is wrong with each."""
    prefix = f"{node}/" if node else ""
    start = os.path.join(root, *node.split("/")) if node else root
    temps: list[tuple[str, float]] = []
    odd: list[tuple[str, str]] = []
    for folder, dirs, files, names in folders(start):
        rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        for name in files + [d for d in dirs if is_temp_name(d)]:
            if not is_temp_name(name) or not (rel_dir + temp_owner(name)).startswith(prefix):
                continue
            try:
                mtime = newest(os.path.join(folder, name))
            except OSError:
                continue
            temps.append((rel_dir + name, mtime))
        dirs[:] = [d for d in dirs if not is_temp_name(d)]
        for name in names:
            if is_temp_name(name):
                continue
            what = _odd(os.path.join(folder, name))
            if what is not None:
                odd.append((rel_dir + name, what))
    return sorted(temps), sorted(odd)


def _odd(path: str) -> str | None:
    """What is wrong with the entry at ``path`` (a link, a pipe, ...); None for a file or a
    folder, or an entry removed meanwhile."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return ("a symbolic link: LocalStore follows no link below its root, so reading it "
                "fails (put the file or folder it points to in its place)")
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return (f"{kind_of(mode)}, not a regular file: LocalStore reads it as a missing key (a "
            f"chunk there reads as the fill value)")
