"""A URL whose host is an IPv6 address (``http://[::1]:8080/data.zarr``) opens through fsspec:
its ``::`` are not taken for the separators of an fsspec chain."""
from __future__ import annotations

import functools
import http.server
import socket

import pytest

import zarrx
from tests.loopback import serving
from zarrx.errors import StoreError
from zarrx.store import FsspecStore
from zarrx.store.remote.urls import split_chain

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")


@pytest.mark.parametrize("url, links", [
    ("http://[::1]:8080/data.zarr", ["http://[::1]:8080/data.zarr"]),
    ("https://[2001:db8::7]/a::b", ["https://[2001:db8::7]/a", "b"]),
    ("zip://k::s3://bucket/a.zip", ["zip://k", "s3://bucket/a.zip"]),
    ("simplecache::zip::file:///a.zip", ["simplecache", "zip", "file:///a.zip"]),
    ("simplecache::http://[::1]:8/x", ["simplecache", "http://[::1]:8/x"]),
    ("s3://bucket/a", ["s3://bucket/a"]),
])
def test_a_chain_is_split_outside_brackets(url, links):
    assert split_chain(url) == links


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_url_opens_through_fsspec(tmp_path):
    # (before: the URL was split at its '::' as a chain, and reading raised a ValueError,
    # "Invalid IPv6 URL", shown as 'http://<unparsable URL>::1]:.../data.zarr')
    zarrx.create_array(str(tmp_path / "data.zarr"), shape=(6,), chunks=(4,), dtype="i4",
                       attributes={"x": 1})[:] = [1, 2, 3, 4, 5, 6]
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    with serving(handler, "::1") as base:
        url = f"{base}/data.zarr"
        store = FsspecStore(url)
        assert repr(store) == f"FsspecStore({url!r}, read_only=True)"
        a = zarrx.open_array(store, mode="r")
        assert a[:].tolist() == [1, 2, 3, 4, 5, 6] and a.attrs["x"] == 1
        # a chain with such a link: fsspec splits at every '::', so it is refused by name
        with pytest.raises(StoreError, match=r"^FsspecStore\('simplecache::http://\[::1\]:\d+"
                                             r"/data.zarr'\): cannot open a chain of URLs one "
                                             r"of which has an IPv6 address"):
            FsspecStore(f"simplecache::{url}")
