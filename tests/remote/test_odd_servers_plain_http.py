"""Plain HTTP servers: one without Range support, one that wants a token, user and password
or query, and one that lists a directory as an HTML page."""
from __future__ import annotations

import base64
import functools
import http.server

import numpy as np
import pytest
from loopback import serving

import zarrx

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")


@pytest.fixture(scope="module")
def plain_http(tmp_path_factory):
    """python's own HTTP server over a directory: no Range support, no ETag."""
    root = tmp_path_factory.mktemp("plain")
    a = np.arange(600, dtype="<i4").reshape(20, 30)
    for fmt in (2, 3):
        zarrx.save_array(str(root / f"v{fmt}.zarr"), a, zarr_format=fmt, chunks=(7, 9))
    g = zarrx.open_group(str(root / "g.zarr"), mode="w")
    g.create_array("x", shape=a.shape, chunks=(10, 10), shards=(20, 30), dtype=a.dtype)[...] = a
    zarrx.consolidate_metadata(str(root / "g.zarr"))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None          # type: ignore[attr-defined]
    with serving(handler) as url:
        yield url, a


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("name", ["v2.zarr", "v3.zarr", "g.zarr/x"])
def test_server_without_range_support_is_read_whole(plain_http, backend, name):
    base, a = plain_http
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        store = ObjectStore(f"{base}/{name}")
    else:
        from zarrx.store.remote import FsspecStore
        store = FsspecStore(f"{base}/{name}")
    z = zarrx.open_array(store, mode="r")
    np.testing.assert_array_equal(z[...], a)
    np.testing.assert_array_equal(z[3:17, 4:25], a[3:17, 4:25])


def test_consolidated_group_over_plain_http(plain_http):
    base, a = plain_http
    g = zarrx.open_consolidated(f"{base}/g.zarr", mode="r")
    np.testing.assert_array_equal(g["x"][5:9], a[5:9])


_BASIC = "Basic " + base64.b64encode(b"us er:p@ss").decode()


@pytest.fixture(scope="module")
def token_http(plain_http, tmp_path_factory):
    """An HTTP server that serves its files only to requests carrying the header
    ``Authorization: Bearer t0ken`` (or the basic credentials of user ``us er``, password
    ``p@ss``) or the query ``?token=t0ken``."""
    base, a = plain_http
    root = tmp_path_factory.mktemp("token")
    zarrx.save_array(str(root / "v3.zarr"), a, chunks=(7, 9))

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):  # type: ignore[no-untyped-def]
            if self.headers.get("Authorization") not in ("Bearer t0ken", _BASIC) and \
                    not self.path.endswith("?token=t0ken"):
                self.send_error(401)
                return
            super().do_GET()

        do_HEAD = do_GET

        def log_message(self, *args):  # type: ignore[no-untyped-def]
            pass

    with serving(functools.partial(Handler, directory=str(root))) as url:
        yield url, a


@pytest.mark.parametrize("so", [{"headers": {"Authorization": "Bearer t0ken"}},
                                {"client_kwargs": {"headers": {"Authorization": "Bearer t0ken"}}}])
def test_fsspec_http_options_as_zarr_python_passes_them(token_http, so):
    """storage_options of fsspec's HTTP filesystem (which obstore's HTTP store does not take)
    open an FsspecStore for an http(s) URL, as in zarr-python."""
    base, a = token_http
    z = zarrx.open_array(f"{base}/v3.zarr", mode="r", storage_options=so)
    assert type(z.store).__name__ == "FsspecStore"
    np.testing.assert_array_equal(z[2:9, 5:20], a[2:9, 5:20])
    from zarrx.errors import RemoteAccessError
    with pytest.raises(RemoteAccessError):
        zarrx.open_array(f"{base}/v3.zarr", mode="r")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_the_query_of_an_http_url_goes_with_every_request(token_http, backend):
    """An access token in the URL's query reaches the server with every key's request."""
    from zarrx.errors import RemoteAccessError
    from zarrx.store.remote import FsspecStore, ObjectStore
    base, a = token_http
    make = ObjectStore if backend == "obstore" else FsspecStore
    if backend == "obstore":
        pytest.importorskip("obstore")
    z = zarrx.open_array(make(f"{base}/v3.zarr?token=t0ken"), mode="r")
    np.testing.assert_array_equal(z[...], a)
    assert "t0ken" not in repr(z.store)
    with pytest.raises(RemoteAccessError):
        zarrx.open_array(make(f"{base}/v3.zarr?token=wrong"), mode="r")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_the_user_and_password_of_an_http_url_are_sent_and_never_shown(token_http, backend):
    """``https://user:password@host/...`` is HTTP basic authentication: ObjectStore dropped
    the credentials (HTTP 401), FsspecStore sent them."""
    from zarrx.errors import RemoteAccessError
    base, a = token_http
    url = base.replace("http://", "http://us%20er:p%40ss@") + "/v3.zarr"
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore as make
    else:
        from zarrx.store.remote import FsspecStore as make
    z = zarrx.open_array(url, mode="r") if backend == "obstore" else \
        zarrx.open_array(make(url), mode="r")
    assert type(z.store).__name__ == make.__name__
    np.testing.assert_array_equal(z[...], a)
    assert "p%40ss" not in repr(z.store) and "us%20er" not in repr(z.store)
    wrong = url.replace("p%40ss", "nope")
    with pytest.raises(RemoteAccessError) as info:
        zarrx.open_array(make(wrong), mode="r")
    assert "nope" not in str(info.value)


def test_fsspec_http_lists_a_directory_listing_by_the_names_it_links(tmp_path):
    """A server with directory listings (python's own) links to names percent-encoded: an
    unconsolidated hierarchy lists its nodes by their names, and reads them."""
    from zarrx.store.remote import FsspecStore
    names = ["a b", "p%20q", "h#1", "q?r", "x+y", "\u00fc"]
    g = zarrx.open_group(str(tmp_path / "g.zarr"), mode="w")
    for i, name in enumerate(names):
        g.create_array(name, shape=(2,), chunks=(1,), dtype="i1", fill_value=-1)[...] = i
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None          # type: ignore[attr-defined]
    with serving(handler) as url:
        store = FsspecStore(f"{url}/g.zarr")
        assert sorted(store.list_prefix("a b/")) == ["a b/c/0", "a b/c/1", "a b/zarr.json"]
        h = zarrx.open_group(store, mode="r")
        assert sorted(h.keys()) == sorted(names)
        for i, name in enumerate(names):
            assert h[name][...].tolist() == [i, i], name
