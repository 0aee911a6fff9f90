"""The listing of a web server's folders through FsspecStore is bounded without a query in
the root URL too: fsspec's own walk, used there before, went down as deep as a server linked
(a RecursionError, not a ZarrError, after about 2,000 requests) and read each page whole."""
from __future__ import annotations

import http.server

import pytest
from loopback import serving

from zarrx.errors import RemoteError
from zarrx.store.remote import FsspecStore

pytest.importorskip("aiohttp", reason="aiohttp is not installed (pip install aiohttp)")


class _Deep(http.server.BaseHTTPRequestHandler):
    """A folder page links a file ``f`` and a folder ``d/`` below it, at every depth; a page
    below ``/big/`` never ends. A folder asked for without its slash is redirected to it, as
    web servers do."""

    protocol_version = "HTTP/1.1"
    pages: list[str] = []

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        if not path.endswith(("/", "/f")):
            self.send_response(301)
            self.send_header("Location", path + "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path.endswith("/f"):
            return self._answer(b"x", "application/octet-stream")
        self.pages.append(path)
        if path.startswith("/big/"):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"<a href='x'>x</a>" * 10_000)
            except OSError:
                pass                                # the client stopped reading
            return
        self._answer(b'<html><a href="d/">d/</a> <a href="f">f</a></html>', "text/html")

    def _answer(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("query", ["", "?token=abc"])
def test_folders_linked_ever_deeper_end_the_listing_with_an_error(query):
    _Deep.pages = []
    with serving(_Deep) as base:
        address = base.replace("http://", "http://user:sekrit@")
        store = FsspecStore(f"{address}/deep{query}", retries=0)
        with pytest.raises(RemoteError) as info:
            list(store.list_prefix(""))
    assert str(info.value) == (
        f"FsspecStore('{base}/deep', read_only=True): cannot list '<root>' "
        f"({base}/deep/<root>): the listing of {base}/deep/ goes deeper than 64 levels of "
        f"folders")
    assert len(_Deep.pages) == 64


def test_a_listing_page_without_end_is_bounded_without_a_query(monkeypatch):
    from zarrx.store.remote import fsspec_listing
    monkeypatch.setattr(fsspec_listing, "MAX_PAGE_BYTES", 1 << 20)
    with serving(_Deep) as base:
        with pytest.raises(RemoteError, match="the listing page of .*/big/ is longer than "
                                              "1048576 bytes"):
            list(FsspecStore(f"{base}/big", retries=0).list_prefix(""))


def test_a_listing_of_folders_without_a_query_lists_their_files():
    """Within the bounds the walk lists what fsspec's did: the files below the root."""
    class Shallow(_Deep):
        def do_GET(self) -> None:
            if self.path.split("/").count("d") >= 2 and self.path.endswith("/"):
                return self._answer(b'<html><a href="f">f</a></html>', "text/html")
            super().do_GET()

    with serving(Shallow) as base:
        keys = sorted(FsspecStore(f"{base}/root", retries=0).list_prefix(""))
    assert keys == ["d/d/f", "d/f", "f"]


class _DeadLink(http.server.BaseHTTPRequestHandler):
    """A folder page linking a file and a folder that is not there (404)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        path = self.path.partition("?")[0]
        pages = {"/root/": b'<a href="zarr.json">z</a> <a href="gone/">gone/</a> '
                           b'<a href="sub/">sub/</a>',
                 "/root/sub/": b'<a href="k">k</a>'}
        if path in pages:
            body, kind, status = pages[path], "text/html", 200
        elif path.endswith("/"):
            body, kind, status = b"", "text/html", 404
        else:
            body, kind, status = b"{}", "application/json", 200
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.mark.parametrize("query", ["", "?token=abc"])
def test_a_link_to_a_folder_that_is_not_there_leaves_the_rest_of_the_listing(query):
    """A folder page whose link leads nowhere (404) read as a missing root: the whole listing
    was empty."""
    with serving(_DeadLink) as base:
        store = FsspecStore(f"{base}/root{query}", retries=0)
        assert sorted(store.list_prefix("")) == ["sub/k", "zarr.json"]
        assert list(store.list_prefix("nothing/")) == []


@pytest.mark.parametrize("charset", ["bogus", "zip"])
def test_a_page_whose_charset_is_unknown_is_read_as_utf8(charset):
    """A folder page labelled with a charset Python does not know, or one that is no text
    encoding: the listing raised LookupError, not a ZarrError; a browser ignores such a
    label."""
    class Labelled(_DeadLink):
        def send_header(self, keyword: str, value: str) -> None:
            if keyword == "Content-Type" and value == "text/html":
                value = f"text/html; charset={charset}"
            super().send_header(keyword, value)

    with serving(Labelled) as base:
        store = FsspecStore(f"{base}/root", retries=0)
        assert sorted(store.list_prefix("")) == ["sub/k", "zarr.json"]
