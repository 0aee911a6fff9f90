"""An S3 server whose listings name keys outside the prefix asked for: the keys of other
stores in the bucket never show as a store's keys, and deleting a store's keys never sends a
key outside it."""
from __future__ import annotations

import http.server
import re
from urllib.parse import parse_qs, urlparse

import pytest
from loopback import not_found, serving

pytest.importorskip("fsspec")


class _OutsideListHandler(http.server.BaseHTTPRequestHandler):
    """An S3 endpoint (bucket ``bkt``) whose ListObjectsV2 gives, besides the key ``a`` below
    the prefix asked for, keys outside it: ``other/x``, ``d2/zarr.json``, ``dx``, the prefix
    with ``y`` appended (``d/suby`` for ``d/sub/``) and ``d``. A multi-object delete is
    recorded (the keys it names, in ``deleted``) and answered as done; anything else is 404."""

    protocol_version = "HTTP/1.1"
    deleted: list[str] = []

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        if "list-type" not in query:
            return not_found(self)
        prefix = query.get("prefix", [""])[0]
        keys = [f"{prefix}a", "other/x", "d2/zarr.json", "dx", prefix.rstrip("/") + "y", "d"]
        items = "".join(f"<Contents><Key>{k}</Key><LastModified>2024-01-01T00:00:00.000Z"
                        f"</LastModified><ETag>\"e\"</ETag><Size>3</Size></Contents>"
                        for k in keys)
        self._send(('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns='
                    '"http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name>'
                    f"<Prefix>{prefix}</Prefix><KeyCount>{len(keys)}</KeyCount>"
                    f"<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>{items}"
                    "</ListBucketResult>").encode())

    def do_HEAD(self) -> None:
        not_found(self)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        keys = re.findall(r"<Key>([^<]*)</Key>", body)
        type(self).deleted.extend(keys)
        self._send(('<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns='
                    '"http://s3.amazonaws.com/doc/2006-03-01/">'
                    + "".join(f"<Deleted><Key>{k}</Key></Deleted>" for k in keys)
                    + "</DeleteResult>").encode())


def _store(backend: str, endpoint: str):
    from zarrx.store import remote
    if backend == "obstore object":       # an obstore store given as it is, with its prefix
        obstore = pytest.importorskip("obstore")
        return remote.ObjectStore(obstore.store.S3Store(
            "bkt", prefix="d", endpoint=endpoint, access_key_id="a", secret_access_key="b",
            region="us-east-1", client_options={"allow_http": True}), retries=0)
    if backend == "obstore":
        pytest.importorskip("obstore")
        return remote.ObjectStore("s3://bkt/d", retries=0, storage_options={
            "endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
            "region": "us-east-1"})
    pytest.importorskip("s3fs")
    return remote.FsspecStore("s3://bkt/d", retries=0, storage_options={
        "endpoint_url": endpoint, "key": "a", "secret": "b"})


@pytest.mark.parametrize("backend", ["obstore", "obstore object", "fsspec"])
def test_keys_listed_outside_the_prefix_are_not_the_stores(backend):
    """obstore passes a listed path outside its store's prefix on unchanged, so ObjectStore
    listed ``other/x`` and ``d2/zarr.json`` as its own keys (a node ``d2``), and deleting its
    keys asked the server to remove ``d/other/x``, ``d/d2/zarr.json``, ``d/dx`` and ``d/dy``:
    objects the server never listed, which may hold another store's data."""
    with serving(_OutsideListHandler) as endpoint:
        store = _store(backend, endpoint)
        assert list(store.list_prefix("")) == ["a"]
        assert list(store.list_prefix("sub/")) == ["sub/a"]
        assert store.list_dir("") == (["a"], [])
        _OutsideListHandler.deleted.clear()
        store.delete_prefix("")
        assert _OutsideListHandler.deleted == ["d/a"]


class _WebDavHandler(http.server.BaseHTTPRequestHandler):
    """A WebDAV server holding ``FILES`` (by path), whose PROPFIND of a folder answers with
    the folder, every file below it, and files outside it (``/other/x``, ``/dx``,
    ``/d/../other/y``); GET and HEAD serve the files."""

    protocol_version = "HTTP/1.1"
    FILES = {"/d/zarr.json": b'{"zarr_format": 3, "node_type": "group", "attributes": {}}',
             "/d/sub/zarr.json": b'{"zarr_format": 3, "node_type": "group", "attributes": {}}',
             "/d/a": b"xyz"}

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    @staticmethod
    def _item(href: str, size: int | None) -> str:
        kind = "<D:resourcetype><D:collection/></D:resourcetype>" if size is None else \
            f"<D:resourcetype/><D:getcontentlength>{size}</D:getcontentlength>"
        return (f"<D:response><D:href>{href}</D:href><D:propstat><D:prop>{kind}"
                "<D:getlastmodified>Mon, 01 Jan 2024 00:00:00 GMT</D:getlastmodified>"
                "</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>")

    def do_PROPFIND(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or "0"))
        folder = self.path.rstrip("/") + "/"
        inside = [self._item(k, len(v)) for k, v in self.FILES.items() if k.startswith(folder)]
        if not inside:
            return not_found(self)
        body = ('<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">'
                + self._item(folder, None) + "".join(inside)
                + "".join(self._item(h, 3) for h in ("/other/x", "/dx", "/d/../other/y"))
                + "</D:multistatus>").encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        body = self.FILES.get(self.path)
        if body is None:
            return not_found(self)
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)

    do_HEAD = do_GET


def test_a_webdav_listing_names_keys_below_the_url():
    """obstore's HTTP store lists the paths of its server, not of its URL: ObjectStore over
    ``http://host/d`` listed ``d/zarr.json`` for its key ``zarr.json`` (so a group there had
    a member ``d`` and no ``sub``), nothing below ``sub/``, and the files outside ``/d/``."""
    pytest.importorskip("obstore")
    import zarrx
    from zarrx.store import remote
    with serving(_WebDavHandler) as url:
        store = remote.ObjectStore(f"{url}/d", retries=0)
        assert sorted(store.list_prefix("")) == ["a", "sub/zarr.json", "zarr.json"]
        assert list(store.list_prefix("sub/")) == ["sub/zarr.json"]
        assert [name for name, _ in zarrx.open_group(store, mode="r").members()] == ["sub"]


class _OddPageHandler(_OutsideListHandler):
    """A ListObjectsV2 answering with one page: the key ``a`` below the prefix with the
    fields of ``entry``, saying the listing goes on (IsTruncated) when ``truncated``, but
    giving no NextContinuationToken."""

    entry = ""
    truncated = False

    def do_GET(self) -> None:
        prefix = parse_qs(urlparse(self.path).query).get("prefix", [""])[0]
        self._send(('<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns='
                    '"http://s3.amazonaws.com/doc/2006-03-01/"><Name>bkt</Name>'
                    f"<Prefix>{prefix}</Prefix><KeyCount>1</KeyCount><MaxKeys>1000</MaxKeys>"
                    f"<IsTruncated>{str(self.truncated).lower()}</IsTruncated><Contents>"
                    + self.entry.replace("{prefix}", prefix) + "</Contents></ListBucketResult>"
                    ).encode())


_KEY = "<Key>{prefix}a</Key>"
_MODIFIED = "<LastModified>2024-01-01T00:00:00.000Z</LastModified>"


@pytest.mark.parametrize("entry, truncated, detail", [
    (_KEY + _MODIFIED + "<Size>3</Size>", True,
     "the server's listing cannot be read: a field it lacks, 'NextContinuationToken'"),
    (_MODIFIED + "<Size>3</Size>", False, "the server's listing cannot be read: a field it "
                                          "lacks, 'Key'"),
    (_KEY + _MODIFIED, False, "the server's listing cannot be read: a field it lacks, 'Size'"),
    (_KEY + _MODIFIED + "<Size>abc</Size>", False, "the server's listing cannot be read: "
                                                   "invalid literal for int() with base 10: "
                                                   "'abc'"),
], ids=["no token", "no key", "no size", "size not a number"])
def test_a_listing_page_s3fs_cannot_read_is_an_error(entry, truncated, detail):
    """FsspecStore raised s3fs's bare KeyError ('NextContinuationToken', 'Key', 'Size') or
    ValueError, not a ZarrError."""
    from zarrx.errors import RemoteError
    _OddPageHandler.entry, _OddPageHandler.truncated = entry, truncated
    with serving(_OddPageHandler) as endpoint:
        store = _store("fsspec", endpoint)
        with pytest.raises(RemoteError) as info:
            list(store.list_prefix(""))
    assert str(info.value) == f"{store!r}: cannot list '<root>' (s3://bkt/d/<root>): {detail}"
