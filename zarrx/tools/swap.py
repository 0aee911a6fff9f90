"""Replacing a node in a local folder whole: ``--overwrite`` of ``zarrx copy`` and ``convert``.

The new node is written into a fresh folder next to the old one, named as the store's temporary
files are (``.<name>.zarrx-tmp-<pid>-<random>``: never listed, never a key, so never read as
data), and it replaces the old folder only once complete: the old folder is renamed aside, the
new one renamed in, and the old one removed. A run that fails part way (a source chunk that
cannot be read, a full disk, Ctrl-C) removes the new folder and leaves the old node as it was.
A run killed part way leaves the old node as it was too, and the hidden folder beside it, which
may be removed. Between the two renames (two system calls) the node is absent.
"""
from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from typing import Any, TypeVar

from zarrx.errors import StoreError
from zarrx.metadata import nodes
from zarrx.store import LocalStore
from zarrx.store.localfs import temp_name
from zarrx.tools.location import Location, opened_here, writes_zip

__all__ = ["existing_folder", "replace_folder", "rebased"]

T = TypeVar("T")


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


def replace_folder(dst: Location, folder: str, write: Callable[[LocalStore], T]) -> T:
    """``write(store)`` into a fresh folder beside ``folder``, then that folder in its place
    (see the module docstring); the consolidated metadata of the groups above the node is
    brought in step. On any failure the new folder is removed and ``folder`` is kept."""
    parent, name = os.path.split(os.path.abspath(folder))
    staged = os.path.join(parent, temp_name(name))
    try:
        os.mkdir(staged)
    except OSError as exc:
        raise StoreError(f"cannot make a folder in {parent!r} to write the new node in before "
                         f"it replaces {folder!r}: {exc.strerror}; {folder!r} is left as it "
                         f"was (remove it first, or write elsewhere)") from exc
    try:
        os.chmod(staged, stat.S_IMODE(os.stat(folder).st_mode))     # the old folder's access
        with LocalStore(staged) as store:
            result = write(store)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise

    def swap() -> None:
        aside = os.path.join(parent, temp_name(name))
        try:
            os.rename(folder, aside)
        except OSError as exc:
            shutil.rmtree(staged, ignore_errors=True)
            raise StoreError(f"cannot replace {folder!r}: {exc.strerror}; it is left as it "
                             f"was") from exc
        try:
            os.rename(staged, folder)
        except BaseException as exc:
            os.rename(aside, folder)
            shutil.rmtree(staged, ignore_errors=True)
            if isinstance(exc, OSError):
                raise StoreError(f"cannot replace {folder!r}: {exc.strerror}; it is left as "
                                 f"it was") from exc
            raise
        shutil.rmtree(aside, ignore_errors=True)

    if dst.path:
        nodes.write_subtree(dst.store, dst.path, swap)
    else:
        swap()
    return result


def rebased(report: Any, source: str, dst: Location) -> Any:
    """A conversion report of a node written as the root of the fresh folder, as of ``dst``:
    its locations and the paths of the nodes it lists below ``dst.path``."""
    report.source, report.destination = source, str(dst)
    if dst.path:
        report.groups = ["/" + dst.path + g.rstrip("/") for g in report.groups]
        for a in report.arrays:
            a.path = "/" + dst.path + a.path.rstrip("/")
    return report
