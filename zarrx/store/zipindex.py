"""The sorted index of a zip store's entry names, for listings that cost what they return.

A zip archive's central directory is in write order, so listing a prefix by scanning it costs
every entry of the archive, and a group listing in an archive of many entries (or each level of
a deep hierarchy) costs the whole directory again. :class:`NameIndex` keeps the names sorted:
a prefix is a contiguous run found by bisection, O(log n + matches), and a directory listing
jumps over each child folder's subtree, costing O(children × log n).

The index holds the keys the store serves (unsafe names already skipped, duplicates already
reduced to the last entry). Names the store writes are kept aside and merged at the next
listing (one linear merge, as the two runs are sorted), so writing many entries never pays
for re-sorting the index at each one.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

__all__ = ["NameIndex"]

#: the character right after "/": names ``p + "/" + ...`` all sort before ``p + _PAST_SLASH``
_PAST_SLASH = chr(ord("/") + 1)


class NameIndex:
    """The keys of a store, sorted; :meth:`add` records a key written since."""

    def __init__(self, names: Iterable[str]) -> None:
        self._sorted = sorted(names)
        self._added: list[str] = []

    def add(self, name: str) -> None:
        """Record ``name``, a key not in the index (the store refuses to write a key twice)."""
        self._added.append(name)

    def _names(self) -> list[str]:
        if self._added:
            self._added.sort()
            self._sorted = sorted(self._sorted + self._added)   # a merge of two sorted runs
            self._added = []
        return self._sorted

    def prefixed(self, prefix: str) -> list[str]:
        """The keys starting with ``prefix``, sorted."""
        names = self._names()
        if not prefix:
            return list(names)
        i = bisect_left(names, prefix)
        succ = _successor(prefix)       # the run of names starting with prefix ends before it
        return names[i:bisect_left(names, succ, i) if succ is not None else len(names)]

    def children(self, prefix: str) -> tuple[list[str], list[str]]:
        """``(keys, dirs)`` directly below ``prefix`` ("" or ending with "/"), sorted, as names
        relative to it; each child folder costs one bisection, whatever it holds."""
        names = self._names()
        n = len(prefix)
        end = len(names)
        if prefix:
            succ = _successor(prefix)
            end = bisect_left(names, succ) if succ is not None else end
        i = bisect_left(names, prefix, 0, end)
        keys: list[str] = []
        dirs: list[str] = []
        while i < end:
            name = names[i]
            cut = name.find("/", n)
            if cut < 0:
                keys.append(name[n:])
                i += 1
                continue
            dirs.append(name[n:cut])
            # past every name below this folder: they all start with name[:cut] + "/"
            i = bisect_left(names, name[:cut] + _PAST_SLASH, i + 1, end)
        # keys come sorted; folders need not ("a-/x" sorts before "a/x", "a-" after "a")
        dirs.sort()
        return keys, dirs


def _successor(prefix: str) -> str | None:
    """The least string greater than every string starting with ``prefix`` (None when there is
    none: a prefix of only the largest code point)."""
    p = prefix.rstrip(chr(0x10FFFF))
    if not p:
        return None
    return p[:-1] + chr(ord(p[-1]) + 1)
