"""The sorted index of a store's keys, for listings that cost what they return.

A store that keeps its keys in a hash map (a dict in memory, a zip archive's central
directory) would list a prefix by scanning every key it holds, so listing each group of a
hierarchy of ``n`` nodes (``members(max_depth=None)``, ``consolidate_metadata``) would cost
``n**2`` key visits. :class:`KeyIndex` keeps the keys sorted, in blocks of a few hundred (a
key is added or removed by bisection and one short list edit, whatever the number of keys):
a prefix is a contiguous run found by bisection, ``O(log n + matches)``, and a folder listing
jumps over each child folder's subtree, ``O(children × log n)``.

The index does no locking: its store updates it under the lock that guards its writes, and
lists under that lock too.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator

__all__ = ["KeyIndex"]

#: the character right after "/": keys ``p + "/" + ...`` all sort before ``p + _PAST_SLASH``
_PAST_SLASH = chr(ord("/") + 1)
#: keys in a block (a block of twice as many is split in two)
_BLOCK = 512


class KeyIndex:
    """The distinct keys of a store, sorted; :meth:`add` and :meth:`discard` keep it so."""

    __slots__ = ("_blocks", "_maxes", "_len")

    def __init__(self, keys: Iterable[str] = ()) -> None:
        ordered = sorted(set(keys))
        self._blocks = [ordered[i:i + _BLOCK] for i in range(0, len(ordered), _BLOCK)]
        self._maxes = [b[-1] for b in self._blocks]
        self._len = len(ordered)

    def __len__(self) -> int:
        return self._len

    def add(self, key: str) -> None:
        """Record ``key`` (nothing changes when it is there already)."""
        blocks, maxes = self._blocks, self._maxes
        if not blocks:
            blocks.append([key])
            maxes.append(key)
            self._len = 1
            return
        i = min(bisect_left(maxes, key), len(maxes) - 1)
        block = blocks[i]
        j = bisect_left(block, key)
        if j < len(block) and block[j] == key:
            return
        block.insert(j, key)
        self._len += 1
        maxes[i] = block[-1]
        if len(block) > 2 * _BLOCK:
            blocks[i:i + 1] = [block[:_BLOCK], block[_BLOCK:]]
            maxes[i:i + 1] = [block[_BLOCK - 1], block[-1]]

    def discard(self, key: str) -> None:
        """Forget ``key`` (nothing changes when it is not there)."""
        i = bisect_left(self._maxes, key)
        if i == len(self._maxes):
            return
        block = self._blocks[i]
        j = bisect_left(block, key)
        if j == len(block) or block[j] != key:
            return
        del block[j]
        self._len -= 1
        if block:
            self._maxes[i] = block[-1]
        else:
            del self._blocks[i], self._maxes[i]

    def _from(self, key: str) -> Iterator[str]:
        """The keys from the first one not less than ``key``, in order."""
        blocks = self._blocks
        first = bisect_left(self._maxes, key)
        for b in range(first, len(blocks)):
            block = blocks[b]
            for j in range(bisect_left(block, key) if b == first else 0, len(block)):
                yield block[j]

    def prefixed(self, prefix: str) -> list[str]:
        """The keys starting with ``prefix``, sorted."""
        out = []
        for key in self._from(prefix):
            if not key.startswith(prefix):
                break
            out.append(key)
        return out

    def children(self, prefix: str) -> tuple[list[str], list[str]]:
        """``(keys, dirs)`` directly below ``prefix`` ("" or ending with "/"), sorted, as names
        relative to it; each child folder costs one bisection, whatever it holds."""
        n = len(prefix)
        keys: list[str] = []
        dirs: list[str] = []
        seek = prefix
        while seek is not None:
            after, seek = seek, None
            for key in self._from(after):
                if not key.startswith(prefix):
                    break
                cut = key.find("/", n)
                if cut < 0:
                    keys.append(key[n:])
                    continue
                dirs.append(key[n:cut])
                # past every key below this folder: they all start with key[:cut] + "/"
                seek = key[:cut] + _PAST_SLASH
                break
        # keys come sorted; folders need not ("a-/x" sorts before "a/x", "a-" after "a")
        dirs.sort()
        return keys, dirs
