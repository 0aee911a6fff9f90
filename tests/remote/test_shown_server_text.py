"""Text a server sends or a bucket stores (an object's name, an S3 error code, a Content-Type)
appears in error messages with its control characters escaped and, for a server's error
code, at most a few hundred characters: a hostile bucket or server can neither send escape
sequences to the terminal that shows the message nor fill it with its answer."""
from __future__ import annotations

import http.server

import pytest
from loopback import serving

import zarrx
from zarrx.errors import MetadataError, RemoteError
from zarrx.store.remote import FsspecStore, ObjectStore

EVIL = "a\x1b[31mred\x1b[0m\x07"


def test_a_listed_name_holding_escape_sequences_is_shown_escaped(s3_server):
    """obstore cannot take the name as a path; its message quoted the name as it was, escape
    sequences included."""
    pytest.importorskip("obstore", reason="obstore is not installed (pip install obstore)")
    s3fs = pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    prefix = s3_server.fresh()
    fs = s3fs.S3FileSystem(skip_instance_cache=True, **s3_server.fsspec_options)
    fs.pipe(f"{s3_server.bucket}/{prefix}/x/{EVIL}", b"z")
    store = ObjectStore(f"s3://{s3_server.bucket}/{prefix}", storage_options=s3_server.options)
    with pytest.raises(RemoteError) as info:
        list(store.list_prefix(""))
    message = str(info.value)
    assert message.isprintable()
    assert (f'obstore cannot read an object\'s name: Error parsing Path "{prefix}/x/'
            r'a\x1b[31mred\x1b[0m\x07": Encountered illegal character sequence "\x1b"') \
        in message


class _ErrorCodeHandler(http.server.BaseHTTPRequestHandler):
    """An S3 stand-in answering every request with HTTP 400 and an error code of two lines
    and 5,000 characters more."""

    protocol_version = "HTTP/1.1"
    code = "Evil\r\n\tLine" + "A" * 5000

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        body = (f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{self.code}</Code>"
                f"<Message>m</Message></Error>").encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_GET


def test_an_s3_error_code_is_shown_on_one_line_and_cut_short():
    """s3fs hands on the code of the server's error answer; it was quoted as sent, line
    breaks and all 5,000 characters."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install 'zarrx[s3]')")
    with serving(_ErrorCodeHandler) as url:
        store = FsspecStore("s3://bucket/p", retries=0, storage_options={
            "endpoint_url": url, "key": "k", "secret": "s", "use_ssl": False})
        with pytest.raises(RemoteError) as info:
            store.get("k")
    assert str(info.value) == (
        "FsspecStore('s3://bucket/p'): cannot read 'k' (s3://bucket/p/k): HTTP 400 "
        r"(Evil\n\tLine" + "A" * 285 + "...)")


class _ContentTypeHandler(http.server.BaseHTTPRequestHandler):
    """Serves an HTML page, with escape sequences in its Content-Type, for every path."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        body = b"<html></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/\x1b[31mhtml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_HEAD = do_GET


def test_a_content_type_holding_escape_sequences_is_shown_escaped():
    """fsspec's HTTP client takes such a header (obstore's refuses the answer)."""
    pytest.importorskip("aiohttp", reason="aiohttp is not installed (pip install aiohttp)")
    with serving(_ContentTypeHandler) as url:
        store = FsspecStore(url, retries=0, storage_options={"headers": {}})
        with pytest.raises(MetadataError) as info:
            zarrx.open_array(store, mode="r", zarr_format=3)
    assert str(info.value).endswith(
        r"expected a JSON metadata document, found an HTML page (Content-Type "
        r"'text/\x1b[31mhtml')")
