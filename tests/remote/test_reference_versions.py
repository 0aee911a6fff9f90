"""A kerchunk reference set on a web server is read once per process per version of its file:
the version is what the server says of it (ETag, Last-Modified, Content-MD5, Digest) with its
size, and a file the server says nothing of is read again at each opening."""
from __future__ import annotations

import base64
import http.server
import json

import pytest

import zarrx

from loopback import answer_range, serving

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp", reason="aiohttp is not installed (pip install aiohttp)")


def _refs(value: int) -> bytes:
    """A reference set of one array 'a' of 10 big-endian int32, all ``value`` (inline, so
    that every version of the file has the same size)."""
    zarray = {"shape": [10], "chunks": [10], "dtype": ">i4", "fill_value": 0, "order": "C",
              "filters": None, "compressor": None, "zarr_format": 2}
    data = base64.b64encode(value.to_bytes(4, "big") * 10).decode()
    return json.dumps({"version": 1, "refs": {".zgroup": '{"zarr_format": 2}',
                                              "a/.zarray": json.dumps(zarray),
                                              "a/0": f"base64:{data}"}}).encode()


class _File:
    """The one file the server holds: its bytes and the headers it is served with."""

    def __init__(self, body: bytes, headers: list[tuple[str, str]]) -> None:
        self.body, self.headers = body, headers
        self.gets = 0


def _server(file: _File):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            file.gets += 1
            answer_range(self, file.body, file.headers)

        def do_HEAD(self):
            answer_range(self, file.body, file.headers)
    return Handler


def _first(base: str) -> int:
    return int(zarrx.open_array("reference://", path="a", mode="r", storage_options={
        "fo": f"{base}/refs.json", "remote_protocol": "http"})[0])


STAMPS = {
    "Last-Modified": ("Sun, 06 Dec 2026 10:00:00 GMT", "Sun, 06 Dec 2026 10:00:01 GMT"),
    "ETag": ('"v1"', '"v2"'),
    "Content-MD5": ("MTExMTExMTExMTExMTExMQ==", "MjIyMjIyMjIyMjIyMjIyMg=="),
    "Digest": ("sha-256=MTEx", "sha-256=MjIy"),
}


@pytest.mark.parametrize("header", list(STAMPS))
def test_a_file_rewritten_with_the_same_size_is_read_again(header):
    old, new = STAMPS[header]
    file = _File(_refs(1), [(header, old)])
    with serving(_server(file)) as base:
        assert _first(base) == 1
        assert _first(base) == 1 and file.gets == 1        # the same version: read once
        file.body, file.headers = _refs(2), [(header, new)]
        assert len(file.body) == len(_refs(1))
        assert _first(base) == 2
        assert _first(base) == 2 and file.gets == 2


def test_a_file_without_any_validator_is_read_at_each_opening():
    """Its size alone says nothing of its contents: never taken from what was read before."""
    file = _File(_refs(1), [])
    with serving(_server(file)) as base:
        assert _first(base) == 1
        assert _first(base) == 1 and file.gets == 2
        file.body = _refs(2)
        assert _first(base) == 2 and file.gets == 3
