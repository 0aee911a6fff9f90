"""Listing a web server's folders for :class:`~zarrx.store.remote.fsspecstore.FsspecStore`:
within bounds (a page's bytes, the pages, the depth of folders), where fsspec's own walk reads
pages whole and goes down as deep as a server links; and when its root URL carries a query (an
access token, a signature), with that query sent with every page, as it is with every key.

fsspec's HTTP filesystem cannot do it: it reads the links of a page by joining them to the
page's URL as text, so the links of ``https://host/data.zarr?token=abc`` would read as
``https://host/data.zarr?token=abc/zarr.json``, and links named from the server's root would
be left out (they do not start with the page's URL). Here each folder's page is asked for as
``<folder>/?<query>`` and its links are resolved against ``<folder>/`` as a browser resolves
them; fsspec's own link patterns find them, so both list the same names."""
from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

from zarrx.store.remote.common import Failure, listed_too_many
from zarrx.store.remote.urls import redact

__all__ = ["http_filesystem", "web_find"]

T = TypeVar("T")

#: the most folders below the root a listing goes down (a server linking ever deeper), the
#: most folder pages one listing asks for, and the most bytes of one page read
MAX_DEPTH = 64
MAX_PAGES = 100_000
MAX_PAGE_BYTES = 64 << 20


def http_filesystem(fs: Any) -> Any | None:
    """fsspec's HTTP filesystem that ``fs`` reads through (itself, or the one a caching
    filesystem wraps); None when there is none."""
    for _ in range(8):
        if type(fs).__name__ == "HTTPFileSystem":
            return fs
        fs = getattr(fs, "fs", None)
        if fs is None:
            return None
    return None


def _same_place(link: str, folder: str) -> bool:
    """Whether ``link`` lies below ``folder/`` (across http and https, as fsspec allows)."""
    a, b = urlsplit(link), urlsplit(folder + "/")
    return a.scheme in ("http", "https") and a.netloc == b.netloc and \
        a.path.startswith(b.path) and a.path != b.path


def _text(body: bytes, charset: str | None) -> str:
    """A page's text in the ``charset`` its Content-Type names; in UTF-8 when it names none,
    or one Python does not know or that is no text encoding (``bogus``, ``zip``), as browsers
    ignore a label they do not know (decoding with it raised LookupError)."""
    try:
        return body.decode(charset or "utf-8", errors="ignore")
    except LookupError:
        return body.decode("utf-8", errors="ignore")


async def _links(fs: Any, folder: str, query: str) -> list[str]:
    """The links of the page of ``folder`` (a URL without a query) below it, without queries
    or fragments; folders end with ``/``."""
    from fsspec.implementations.http import ex, ex2
    page = f"{folder}/?{query}" if query else f"{folder}/"
    session = await fs.set_session()
    async with session.get(fs.encode_url(page), **fs.kwargs) as r:
        fs._raise_not_found_for_status(r, page)
        kind = r.headers.get("Content-Type", "").partition(";")[0].strip() or None
        body = bytearray()
        if kind in ("text/html", None):
            async for piece in r.content.iter_chunked(1 << 20):
                body += piece
                if len(body) > MAX_PAGE_BYTES:
                    raise Failure("bad_response", None,
                                  f"the listing page of {redact(folder)}/ is longer than "
                                  f"{MAX_PAGE_BYTES} bytes")
        text = _text(bytes(body), r.charset)
    found = [u[2] for u in ex.findall(text)]
    if fs.simple_links:
        found += ex2.findall(text)
    out = set()
    for link in found:
        url = urljoin(folder + "/", link)
        url = url.partition("#")[0].partition("?")[0]
        if _same_place(url, folder):
            out.add(url)
    return sorted(out)


async def web_find(fs: Any, root: str, query: str,
                   bounded: Callable[[Awaitable[T]], Awaitable[T]], most: int) -> list[str]:
    """The URLs of the files below the folder ``root`` (a URL without a query), each page
    asked for with ``query`` and within ``bounded`` (the store's timeout); folders a page
    links to are walked down to :data:`MAX_DEPTH` levels, each once, and at most ``most``
    files are taken (``RemoteOptions.max_listed``)."""
    files: list[str] = []
    seen = {root.rstrip("/")}
    todo = [(root.rstrip("/"), 0)]
    pages = 0
    while todo:
        folder, depth = todo.pop()
        pages += 1
        if pages > MAX_PAGES:
            raise Failure("bad_response", None, f"the listing of {redact(root)}/ goes on "
                                                f"past {MAX_PAGES} folder pages")
        try:
            links = await bounded(_links(fs, folder, query))
        except FileNotFoundError:
            if depth == 0:
                raise                   # no such folder: nothing below the prefix
            continue                    # a dead link to a folder below it: no files there
        for url in links:
            if not url.endswith("/"):
                files.append(url)
                if len(files) > most:
                    raise listed_too_many(most)
            elif url.rstrip("/") not in seen:
                if depth + 1 >= MAX_DEPTH:
                    raise Failure("bad_response", None, f"the listing of {redact(root)}/ "
                                                        f"goes deeper than {MAX_DEPTH} levels "
                                                        f"of folders")
                seen.add(url.rstrip("/"))
                todo.append((url.rstrip("/"), depth + 1))
    return sorted(files)
