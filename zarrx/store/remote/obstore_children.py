"""The immediate children of a folder (``ObjectStore.list_dir``) on S3, listing the keys of
the folder in order and skipping over the keys of each child folder instead of listing them.

obstore's delimiter listing cannot be used: it takes every page itself, with no bound on their
number. Its paged listing (``obstore.list``) can start after any path (S3's ``start-after``),
and every key of a child folder ``name/`` sorts before its siblings after it (``/`` is 0x2F;
the least sibling after it is ``name0``): a listing that has reached the keys of a child folder
at the end of a page starts again past them (:func:`past_folder`). Skipping only at the end of
a page costs no request the listing of every key would not send (the next page is needed
either way), and a page that ends in a child's keys is followed by the keys after that child.
Opening a group whose array holds a million chunks asks for a few pages, not a thousand; a
folder of many small child folders costs what the listing of every key costs.

The protections of the full listing (:mod:`zarrx.store.remote.obstore_listing`) are kept: a
server repeating a path or naming new ones past ``RemoteOptions.max_listed`` fails the listing,
a path outside the folder is left out, a listing cut by a transient failure goes on after the
last path it took or skipped, and a listing that looks whole is completed by asking for the
paths after its last one. A server ignoring ``start-after`` (listing from the first path
again) is listed to its end without skipping: it costs what the full listing costs."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from zarrx.store.remote.common import listed_too_many, listed_twice

__all__ = ["Skipping", "past_folder", "children_below", "chunk_for", "SKIPS"]

#: the obstore stores whose ``offset`` is sent to the server as start-after (S3's); others
#: (GCS, Azure, HTTP, local files) list every key and drop those before it, so a skip would
#: save nothing
SKIPS = ("S3Store",)

#: keys asked for per chunk of a listing: an S3 page, so that a chunk ends where a page does
CHUNK = 1000


def chunk_for(most: int) -> int:
    """The paths asked of obstore at a time, for a listing of at most ``most``: a page, or
    fewer when the bound is lower (a server sending pages of one path for ever is stopped
    after about ``most`` requests)."""
    return min(CHUNK, most + 1)


_MAX_KEY = 1024                 # bytes of an S3 key
_TOP = "\U0010ffff"             # the greatest character (UTF-8 bytes F4 8F BF BF)


def past_folder(folder: str) -> str | None:
    """A start-after bound past the keys below ``folder`` (a full path ending in ``/``): not
    below any path that starts with it and is at most 1024 UTF-8 bytes long (such a path's
    bytes, compared one by one, never pass those of the greatest character repeated), and
    below every other path after ``folder`` (it starts with ``folder``, whose ``/`` sorts
    before every character a sibling may have there: ``name0``, ``name~`` are not skipped).
    None when ``folder`` leaves no room for a key below it. A key longer than S3 allows is
    listed after the bound: taken, not skipped."""
    room = _MAX_KEY - len(folder.encode("utf-8", "surrogatepass"))
    if room < 4:
        return None
    return folder + _TOP * (room // 4)


class Skipping:
    """What one listing has taken so far, kept across its attempts (a transient failure
    resumes it after :attr:`after`)."""

    __slots__ = ("found", "dirs", "seen", "twice", "after", "skipped", "skips", "requests")

    def __init__(self) -> None:
        self.found: list[tuple[str, int]] = []   # (name, size) of the paths in the folder
        self.dirs: dict[str, None] = {}          # the child folders, in order
        self.seen: set[str] = set()
        self.twice: set[str] = set()
        self.after: str | None = None            # the greatest path taken, or bound skipped to
        self.skipped: set[str] = set()           # the child folders skipped over
        self.skips = True                        # False: the server ignores start-after
        self.requests = 0                        # listings started


async def children_below(listing: Callable[[str | None], Any], root: str, folder: str,
                         most: int, state: Skipping) -> Skipping:
    """Fill ``state`` with the paths directly in ``root + folder`` and its child folders.
    ``listing(after)``: an obstore listing, in chunks of :func:`chunk_for` ``(most)``, of the
    full paths below ``root + folder``, from the first or after ``after``."""
    below = root + folder
    while True:
        after = state.after
        state.requests += 1
        more = await _stream(listing(after), below, len(root), most, state, after)
        if more:
            continue                    # skipped past a child folder: list after it
        if state.after == after or not state.skips:
            # nothing past the last path: the listing is whole (a server ignoring
            # start-after listed from its first path to its end)
            return state


async def _stream(stream: Any, below: str, cut: int, most: int, state: Skipping,
                  after: str | None) -> bool:
    """Take the paths of ``stream`` past ``after`` into ``state``; True when it stopped to
    skip past a child folder (``state.after`` is then the bound to list after)."""
    seen, twice = state.seen, state.twice
    again: dict[str, int] = {}      # the paths sent again, at or before ``after``
    size = chunk_for(most)
    async for chunk in stream:
        child = None
        for m in chunk:
            path = m["path"]
            if after is not None and path <= after:
                state.skips = False     # the server lists from before start-after
                again[path] = again.get(path, 0) + 1
                if again[path] > 2:     # more often than an object and its marker: a loop
                    raise listed_twice(path[cut:] if len(path) > cut else path)
                if len(again) > most:
                    raise listed_too_many(most)
                continue
            if path in seen and path not in twice:
                twice.add(path)         # an object "name" and a marker "name/", both "name"
            elif path in seen:
                raise listed_twice(path[cut:] if len(path) > cut else path)
            seen.add(path)
            if len(seen) > most:
                raise listed_too_many(most)
            if state.after is None or path > state.after:
                state.after = path
            child = None
            if path.startswith(below):
                head, sep, _ = path[len(below):].partition("/")
                if sep:
                    state.dirs[head] = None
                    child = head
                else:
                    state.found.append((path[cut:], m["size"]))
            elif below and path == below[:-1]:
                state.found.append((path[cut:], m["size"]))   # the folder's own marker
        if len(chunk) == size and child is not None and state.skips \
                and child not in state.skipped:
            # the page ends in a child folder's keys: go on past them
            bound = past_folder(below + child + "/")
            if bound is not None and bound > state.after:
                state.skipped.add(child)
                state.after = bound
                return True
    return False
