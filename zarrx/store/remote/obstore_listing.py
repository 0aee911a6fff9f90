"""Listings for :class:`~zarrx.store.remote.objectstore.ObjectStore`: the names below a folder,
from the full object paths a server lists.

An obstore store with a prefix (``s3://bucket/data.zarr``) strips the prefix from the paths a
listing gives and passes a path outside it on unchanged, so a key ``other/x`` that a broken or
hostile server lists for the prefix ``data.zarr/`` would read as the store's own key
``other/x`` (``data.zarr/other/x``), a node to show and, deleting the store's keys, an object
to remove. The listing is therefore asked of a store of the same bucket without the prefix,
whose paths are full, and a path outside the folder asked for is left out, as
``FsspecStore`` leaves it out. obstore's HTTP store lists (with WebDAV) the paths of its
server, not of its URL: they are named relative to the URL's path the same way."""
from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import unquote, urlsplit

from zarrx.store.remote.common import listed_too_many, listed_twice

__all__ = ["root_client", "names_below", "without_folder_markers", "Listed", "resumes"]

#: the obstore stores whose ``prefix`` names a key prefix in a bucket or container
_PREFIXED = ("S3Store", "GCSStore", "AzureStore")


def root_client(client: Any) -> tuple[Any, str, str]:
    """The store to list ``client``'s keys with, the path its listings are asked below, and
    the path the names they give begin with (each ``""`` or ending in ``/``): a bucket store
    with a prefix is listed through one of its bucket without it, whose paths are full; an
    HTTP store is listed as it is, and its server names each file by its path on the server
    (WebDAV's ``href``, which obstore passes on percent-decoded), below the path of the
    store's URL."""
    if type(client).__name__ == "HTTPStore":
        path = unquote(urlsplit(str(getattr(client, "url", ""))).path).strip("/")
        return client, "", path + "/" if path else ""
    prefix = str(getattr(client, "prefix", None) or "").strip("/")
    if not prefix or type(client).__name__ not in _PREFIXED:
        return client, "", ""
    # obstore stores are rebuilt from these (pickling); the credential provider and the
    # client and retry options come along
    try:
        args, kwargs = client.__getnewargs_ex__()
        root = type(client)(*args, **{**kwargs, "prefix": None})
    except Exception:  # noqa: BLE001 - an obstore that cannot: listed as it lists itself
        return client, "", ""
    return root, prefix + "/", prefix + "/"


class Listed:
    """What one listing has taken so far, kept across its attempts: a listing of a bucket cut
    by a transient failure (throttling, a 5xx, a dropped connection) goes on after the last
    path it took, so that each page, not the whole listing, has the store's retries."""

    __slots__ = ("found", "seen", "twice", "last")

    def __init__(self) -> None:
        self.found: list[tuple[str, int]] = []
        self.seen: set[str] = set()
        self.twice: set[str] = set()
        self.last: str | None = None       # the greatest path taken


def resumes(client: Any) -> bool:
    """Whether listings of ``client`` come in the order of their paths, so that one cut short
    goes on with the paths after the last it took (a bucket's; not a WebDAV server's)."""
    return type(client).__name__ in _PREFIXED


async def names_below(listing: Any, root: str, folder: str, most: int, *,
                      complete: bool = False, listed: Listed | None = None
                      ) -> list[tuple[str, int]]:
    """``(name, size)`` of each path that ``listing(after)`` (an obstore listing of the full
    paths below ``root + folder``, from the first or, given ``after``, after it) gives below
    ``root + folder``, named relative to ``root``; a listing that repeats a path is a bad
    response (a server ignoring its continuation token would be asked for pages for ever).
    obstore lists a folder marker ``name/`` as ``name``: the marker of ``folder`` itself is
    listed as ``folder`` without its slash. ``listed``: what earlier attempts of this listing
    took; it starts after their last path.

    ``complete``: the paths after the last path listed are asked for (S3's ``start-after``)
    until none is past it. obstore takes a page that says the listing goes on
    (``IsTruncated``) but gives no continuation token for the last page, and shows neither the
    flag nor where its pages ended, so a listing cut that way looks whole whatever the size of
    its pages (a server's 1000, or fewer): the paths after the last one complete it, one more
    request for a listing that is whole (an empty page). A path written by another writer
    meanwhile is listed as a listing begun later would list it; the paths a server ignoring
    ``start-after`` sends again (not past the last) are left out, unless one comes more often
    than an object and its marker do (a server sending one page for ever)."""
    listed = Listed() if listed is None else listed
    last = await _take(listing(listed.last), root + folder, len(root), most, listed,
                       listed.last)
    while complete and last is not None:
        last = await _take(listing(last), root + folder, len(root), most, listed, last)
    return listed.found


async def _take(stream: Any, below: str, cut: int, most: int, listed: Listed,
                after: str | None) -> str | None:
    """The paths of ``stream`` past ``after`` into ``listed`` (see :func:`names_below`); the
    greatest of them, None when there is none."""
    last = None
    found, seen, twice = listed.found, listed.seen, listed.twice
    again: dict[str, int] = {}      # the paths sent again, at or before ``after``
    async for chunk in stream:
        for m in chunk:
            path = m["path"]
            if after is not None and path <= after:
                # left out; but sent more often than an object and its marker: a repeated page
                again[path] = again.get(path, 0) + 1
                if again[path] > 2:
                    raise listed_twice(path[cut:] if len(path) > cut else path)
                if len(again) > most:
                    raise listed_too_many(most)
                continue
            if path in seen and path not in twice:
                twice.add(path)     # an object "name" and a marker "name/", both "name"
            elif path in seen:       # named as the store names it (its key), when it is one
                raise listed_twice(path[cut:] if len(path) > cut else path)
            seen.add(path)
            if len(seen) > most:
                raise listed_too_many(most)
            if last is None or path > last:
                last = path
            if listed.last is None or path > listed.last:
                listed.last = path
            if path.startswith(below) or (below and path == below[:-1]):
                found.append((path[cut:], m["size"]))
    return last


def without_folder_markers(found: list[tuple[str, int]], folder: str
                           ) -> tuple[list[str], set[str]]:
    """The names of a listing of ``folder`` without its folder markers, the objects named
    ``folder/`` or ``name/`` that the AWS console and some tools create, which obstore lists
    without their trailing slash (as ``folder`` itself, or as ``name``); and the names that
    may still be markers: those listed twice (an object ``name`` and its marker), empty ones,
    and those other listed names lie below (a marker with content). An empty ``name`` other
    names lie below is a marker: a store's key is never also a folder of other keys."""
    folders = {name[:i] for name, _ in found for i in range(len(name)) if name[i] == "/"}
    counts = Counter(name for name, _ in found)
    names: dict[str, None] = {}             # in the listing's order, each once
    doubtful: set[str] = set()
    for name, size in found:
        if name == folder or (size == 0 and name in folders):
            continue
        if size == 0 or counts[name] > 1 or name in folders:
            doubtful.add(name)
        names[name] = None
    return list(names), doubtful
