"""Listing and sweeping of :class:`~zarrx.store.local.LocalStore`: the keys below a prefix, the
keys and folders of one folder, and the removal of temporary files left by writers that died.

Folders are walked depth first with a stack of their own, never by recursion, so folders nested
deeper than Python's recursion limit are listed and swept too; no symbolic link below the root is
followed (:mod:`zarrx.store.localfs`).
"""
from __future__ import annotations

import time
from collections.abc import Iterator

from zarrx.errors import StoreError
from zarrx.store.base import Store, check_prefix, key_problem
from zarrx.store.localfs import Dir, LinkError, is_temp_name, scan, temp_owner

__all__ = ["FileListing", "SWEEP_AGE"]

SWEEP_AGE = 3600.0


class FileListing(Store):
    """The listing and sweeping half of LocalStore (it relies on LocalStore's ``_tree``,
    ``_prune`` and ``_check_writable``)."""

    # -- listing -----------------------------------------------------------------------------
    def _folder(self, folder: str) -> Dir | None:
        try:
            return self._tree.dir(folder.split("/") if folder else [])
        except (FileNotFoundError, NotADirectoryError, LinkError):
            return None
        except OSError as exc:
            raise StoreError(f"{self!r}: cannot list {folder + '/'!r}: "
                             f"{exc.strerror or exc}") from exc

    def list_prefix(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix``; walks only the directory the prefix reaches."""
        folder, _, _ = check_prefix(prefix, self).rpartition("/")
        if folder and _prefix_dir_invalid(folder):
            return iter(())                     # no valid key can start with this prefix
        return (key for key in self._keys_below(folder) if key.startswith(prefix))

    def _keys_below(self, folder: str) -> Iterator[str]:
        d = self._folder(folder)
        if d is not None:
            yield from self._walk(d, folder + "/" if folder else "")

    def _walk(self, d: Dir, key_prefix: str) -> Iterator[str]:
        """The keys below ``d`` (closing it), depth first with a stack of its own, so that
        folders nested deeper than Python's recursion limit are walked too."""
        frames = [_Frame(d, key_prefix)]
        try:
            while frames:
                top = frames[-1]
                if top.entries is None:
                    top.entries = iter(self._scan(top.d))
                for kind, name in top.entries:
                    if kind == "key":
                        yield top.rel + name
                    elif kind == "dir":
                        sub = self._child(top.d, name, top.rel)
                        if sub is None:
                            continue
                        frames.append(_Frame(sub, top.rel + name + "/"))
                        break
                else:
                    frames.pop().d.close()
        finally:
            for frame in frames:
                frame.d.close()

    def _child(self, d: Dir, name: str, rel: str) -> Dir | None:
        """The sub-folder ``name`` of ``d``; None when it vanished or was replaced by a file or
        a link meanwhile. Any other failure (a folder it may not open, no file descriptor left)
        is a ``StoreError``: skipping the folder would leave its keys out of the listing, and
        a delete or a shrink would report success leaving them stored."""
        try:
            return d.child(name)
        except (FileNotFoundError, NotADirectoryError, LinkError):
            return None
        except OSError as exc:
            raise StoreError(f"{self!r}: cannot list {rel + name + '/'!r}: "
                             f"{exc.strerror or exc}") from exc

    def _scan(self, d: Dir) -> list[tuple[str, str]]:
        try:
            return list(scan(d))
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"{self!r}: cannot list {d.rel + '/'!r}: "
                             f"{exc.strerror or exc}") from exc

    def list_dir(self, prefix: str) -> tuple[list[str], list[str]]:
        check_prefix(prefix, self)
        folder = prefix[:-1] if prefix.endswith("/") else prefix
        if prefix and (not folder or _prefix_dir_invalid(folder)):
            return [], []
        d = self._folder(folder)
        if d is None:
            return [], []
        keys: list[str] = []
        dirs: list[str] = []
        with d:
            for kind, name in self._scan(d):
                if kind in ("key", "dir"):
                    (dirs if kind == "dir" else keys).append(name)
        return sorted(keys), sorted(dirs)

    # -- crash hygiene -----------------------------------------------------------------------
    def sweep(self, prefix: str = "", older_than: float | None = SWEEP_AGE) -> list[str]:
        """Remove the temporary files of writers that died, below ``prefix`` (a key prefix, as
        for ``list_prefix``), unmodified for at least ``older_than`` seconds (None: all of them,
        including those of writers still running). Directories left empty are removed. Returns
        the removed files' paths relative to the root, sorted."""
        self._check_writable(check_prefix(prefix, self) or "<root>")
        cutoff = None if older_than is None else time.time() - older_than
        return self._sweep_below(prefix, cutoff, False)

    def _sweep_below(self, prefix: str, cutoff: float | None, others: bool) -> list[str]:
        """The work of :meth:`sweep`; ``others``: remove the links, named pipes, sockets and
        devices below ``prefix`` too (a prefix delete), never what a link points to."""
        folder, _, _ = prefix.rpartition("/")
        if folder and _prefix_dir_invalid(folder):
            return []
        d = self._folder(folder)
        if d is None:
            return []
        removed: list[str] = []
        if self._sweep(d, folder + "/" if folder else "", prefix, cutoff, removed, others) \
                and removed:
            self._prune(folder.split("/") + [""])   # the folder itself, if left empty
        return sorted(removed)

    def _sweep(self, d: Dir, rel: str, prefix: str, cutoff: float | None,
               removed: list[str], others: bool = False) -> bool:
        """Sweep ``d`` and the folders below it (closing them), removing those left empty;
        True when ``d`` is left empty. Depth first with a stack of its own, as :meth:`_walk`.
        ``others``: see :meth:`_sweep_below`."""
        frames = [_Frame(d, rel)]
        emptied = False                         # whether the folder swept last was left empty
        try:
            while frames:
                top = frames[-1]
                if top.entries is None:
                    entries = self._scan(top.d)
                    top.entries, top.left = iter(entries), len(entries)
                if top.child is not None:       # back from sweeping the folder ``child``
                    if emptied:
                        try:
                            top.d.rmdir(top.child)
                            top.left -= 1
                        except OSError:
                            pass
                    top.child = None
                for kind, name in top.entries:
                    if kind == "temp" and (top.rel + temp_owner(name)).startswith(prefix):
                        try:
                            if cutoff is None or top.d.lstat(name).st_mtime <= cutoff:
                                top.d.unlink(name)
                                removed.append(top.rel + name)
                                top.left -= 1
                        except FileNotFoundError:   # finished or removed meanwhile
                            top.left -= 1
                    elif kind == "other" and others and (top.rel + name).startswith(prefix):
                        try:
                            top.d.unlink(name)          # a link itself, never its target
                            removed.append(top.rel + name)
                            top.left -= 1
                        except FileNotFoundError:
                            top.left -= 1
                    elif kind == "dir":
                        sub_rel = f"{top.rel}{name}/"
                        if not (sub_rel.startswith(prefix) or prefix.startswith(sub_rel)):
                            continue
                        sub = self._child(top.d, name, top.rel)
                        if sub is None:
                            continue
                        top.child = name
                        frames.append(_Frame(sub, sub_rel))
                        break
                else:
                    frames.pop().d.close()
                    emptied = top.left == 0 and bool(top.rel)
            return emptied
        finally:
            for frame in frames:
                frame.d.close()


class _Frame:
    """A folder being walked or swept: its :class:`Dir`, its path relative to the root (ending
    in ``/``, or empty), the entries not seen yet (None until scanned), the entries left in it
    (sweep) and the sub-folder being swept."""

    __slots__ = ("d", "rel", "entries", "left", "child")

    def __init__(self, d: Dir, rel: str) -> None:
        self.d, self.rel = d, rel
        self.entries: Iterator[tuple[str, str]] | None = None
        self.left = 0
        self.child: str | None = None


def _prefix_dir_invalid(folder: str) -> bool:
    return key_problem(folder) is not None or any(is_temp_name(s) for s in folder.split("/"))
