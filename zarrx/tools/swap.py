"""Replacing a node in a local folder whole: ``--overwrite`` of ``zarrx copy`` and ``convert``.

The new node is written into a fresh hidden folder next to the old one, named as the store's
temporary files are (``.<name>.zarrx-tmp-<pid>-<random>``: never listed, never a key, so never
read as data), and it replaces the old folder only once complete: the old folder is moved aside
(into a second hidden folder), the new one moved in, and the old one removed. A run that fails
part way (a source chunk that cannot be read, a full disk, Ctrl-C) removes the new folder and
leaves the old node as it was. A run killed part way leaves the old node as it was too, and
the hidden folder beside it; killed while the old node is removed, it leaves the new node in
place and the old one in the second hidden folder. Between the two moves (two system calls)
the node is absent.

Each hidden folder holds the node in ``node`` and a record, ``zarrx-swap.json``, naming the
folder it replaces and whether it holds the new node or the old one: it proves the folder a
swap's leftover (:func:`leftovers`), so ``zarrx check --repair`` of a node at the top of its
store, whose hidden folders lie outside the store, removes them and nothing else. The record
is written first and removed last.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import time
from collections.abc import Callable
from typing import Any, TypeVar

from zarrx.errors import StoreError
from zarrx.metadata import nodes
from zarrx.store import LocalStore
from zarrx.store.localfs import TMP_MARK, temp_name
from zarrx.tools.local_entries import newest
from zarrx.tools.location import Location, opened_here, writes_zip

__all__ = ["existing_folder", "replace_folder", "rebased", "leftovers", "remove_leftover",
           "RECORD", "NODE"]

T = TypeVar("T")

#: the record in a swap's hidden folder, and the folder of the node in it
RECORD = "zarrx-swap.json"
NODE = "node"
_MAX_RECORD = 4096


def existing_folder(dst: Location, destination: Any) -> str | None:
    """The folder of the destination node when ``destination`` is a local path (not a zip
    archive, not a URL, not a store handed in) and the node's folder exists; else None."""
    if not opened_here(destination) or writes_zip(destination) \
            or type(dst.store) is not LocalStore:
        return None
    root = str(dst.store.root)
    folder = os.path.join(root, *dst.path.split("/")) if dst.path else root
    if os.path.islink(folder) or not os.path.isdir(folder):
        return None
    return folder


def _hidden(parent: str, name: str, holds: str) -> str:
    """A fresh hidden folder beside ``parent/name`` with its record (``holds``: "new" or
    "old"); OSError when none can be made."""
    path = os.path.join(parent, temp_name(name))
    os.mkdir(path)
    try:
        with open(os.path.join(path, RECORD), "x", encoding="utf-8") as f:
            json.dump({"zarrx": "swap", "replaces": name, "holds": holds}, f)
    except BaseException:
        _remove(path)
        raise
    return path


def _remove(hidden: str) -> None:
    """Remove a hidden folder: the node in it first, the record last (a removal cut short
    leaves the record, so the folder is still known for what it is)."""
    shutil.rmtree(os.path.join(hidden, NODE), ignore_errors=True)
    if not os.path.lexists(os.path.join(hidden, NODE)):
        shutil.rmtree(hidden, ignore_errors=True)


def replace_folder(dst: Location, folder: str, write: Callable[[LocalStore], T]) -> T:
    """``write(store)`` into a fresh folder beside ``folder``, then that folder in its place
    (see the module docstring); the consolidated metadata of the groups above the node is
    brought in step. On any failure the new folder is removed and ``folder`` is kept."""
    parent, name = os.path.split(os.path.abspath(folder))
    try:
        staged = _hidden(parent, name, "new")
    except OSError as exc:
        raise StoreError(f"cannot make a folder in {parent!r} to write the new node in before "
                         f"it replaces {folder!r}: {exc.strerror}; {folder!r} is left as it "
                         f"was (remove it first, or write elsewhere)") from exc
    new = os.path.join(staged, NODE)
    try:
        os.mkdir(new)
        os.chmod(new, stat.S_IMODE(os.stat(folder).st_mode))     # the old folder's access
        with LocalStore(new) as store:
            result = write(store)
    except BaseException:
        _remove(staged)
        raise

    def swap() -> None:
        aside = None
        try:
            aside = _hidden(parent, name, "old")
            os.rename(folder, os.path.join(aside, NODE))
        except OSError as exc:
            _remove(staged)
            if aside is not None:
                _remove(aside)
            raise StoreError(f"cannot replace {folder!r}: {exc.strerror}; it is left as it "
                             f"was") from exc
        assert aside is not None
        try:
            os.rename(new, folder)
        except BaseException as exc:
            os.rename(os.path.join(aside, NODE), folder)
            _remove(staged)
            _remove(aside)
            if isinstance(exc, OSError):
                raise StoreError(f"cannot replace {folder!r}: {exc.strerror}; it is left as "
                                 f"it was") from exc
            raise
        _remove(staged)
        _remove(aside)

    if dst.path:
        nodes.write_subtree(dst.store, dst.path, swap)
    else:
        swap()
    return result


def leftovers(folder: str) -> list[tuple[str, str | None]]:
    """The hidden folders beside ``folder`` named as a swap of it names them, each with what
    its record proves it holds (``"new"``: the node a killed run was writing; ``"old"``: the
    node a killed run was removing), or None when nothing proves it a swap's leftover (no
    record, another one, or more in it than a swap puts there): those are never removed."""
    parent, name = os.path.split(os.path.abspath(folder))
    head = temp_name(name).split(TMP_MARK, 1)[0] + TMP_MARK
    shape = re.compile(re.escape(head) + r"[0-9]+-[0-9a-f]{16}")
    found = []
    try:
        with os.scandir(parent) as it:
            for entry in it:
                if shape.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
                    found.append((entry.path, _proven(entry.path, name)))
    except OSError:
        return []
    return sorted(found)


def _proven(path: str, name: str) -> str | None:
    """What the record of the hidden folder ``path`` says it holds, when it proves it a swap's
    leftover of the folder ``name``: a regular file of the swap's own words, beside nothing
    but the node's folder."""
    try:
        if not set(os.listdir(path)) <= {RECORD, NODE}:
            return None
        fd = os.open(os.path.join(path, RECORD), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))            # (a pipe there: no waiting)
        with open(fd, "rb") as f:
            mode = os.fstat(f.fileno())
            if not stat.S_ISREG(mode.st_mode) or mode.st_size > _MAX_RECORD:
                return None
            record = json.loads(f.read(_MAX_RECORD))
        inner = os.path.join(path, NODE)
        if os.path.lexists(inner) and (os.path.islink(inner) or not os.path.isdir(inner)):
            return None
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or set(record) != {"zarrx", "replaces", "holds"} or \
            record["zarrx"] != "swap" or record["replaces"] != name or \
            record["holds"] not in ("new", "old"):
        return None
    return record["holds"]


def remove_leftover(path: str, name: str, holds: str, temp_age: float) -> bool:
    """Remove the hidden folder ``path`` if it is still proven a swap's leftover of ``name``
    holding ``holds``, and nothing in it is newer than ``temp_age`` seconds (a run may still
    be writing it); True when removed."""
    if _proven(path, name) != holds or time.time() - newest(path) < temp_age:
        return False
    _remove(path)
    if os.path.lexists(path):
        raise OSError(f"{path!r} could not be removed in full")
    return True


def rebased(report: Any, source: str, dst: Location) -> Any:
    """A conversion report of a node written as the root of the fresh folder, as of ``dst``:
    its locations and the paths of the nodes it lists below ``dst.path``."""
    report.source, report.destination = source, str(dst)
    if dst.path:
        report.groups = ["/" + dst.path + g.rstrip("/") for g in report.groups]
        for a in report.arrays:
            a.path = "/" + dst.path + a.path.rstrip("/")
    return report
