"""Servers and configurations users meet outside object stores: an HTTP server that ignores
Range requests (python -m http.server), one that drops a response midway or stalls, one whose
answers are not the range asked for or that redirects in a loop, s3fs-only storage options,
endpoints without a scheme, and object names that are not file names."""
from __future__ import annotations

import base64
import functools
import http.server
import socket
import threading
import time

import numpy as np
import pytest
from loopback import serving

import zarrx
from zarrx.errors import (ArgumentTypeError, RemoteConnectionError, RemoteTimeoutError,
                          StoreError)
from zarrx.store import ByteRange, make_store

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


class _BadServer:
    """Answers every request with headers and part of the body, then closes (``drop``) or
    stalls (``stall``); or (``drip``) with the headers of a 40-byte body sent a byte every
    quarter of a second."""

    def __init__(self, how: str) -> None:
        self.how = how
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                got = conn.recv(65536)
                if not got:
                    return
                data += got
            if self.how == "drip":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\nETag: \"e\"\r\n\r\n")
                for _ in range(40):
                    if self.stop.wait(0.25):
                        return
                    try:
                        conn.sendall(b"x")
                    except OSError:                 # the client gave up
                        return
                return
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nETag: \"e\"\r\n\r\n"
                         + b"x" * 100)
            if self.how == "stall":
                self.stop.wait(30)

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("how, error", [("drop", RemoteConnectionError),
                                        ("stall", RemoteTimeoutError)])
def test_fsspec_http_failures_are_store_errors(how, error):
    from zarrx.store.remote import FsspecStore
    server = _BadServer(how)
    try:
        store = FsspecStore(f"http://127.0.0.1:{server.port}/d", timeout=1, connect_timeout=1,
                            retries=1, backoff=0.01)
        t0 = time.monotonic()
        with pytest.raises(error) as info:
            store.get("k")
        assert time.monotonic() - t0 < 20
        assert "'k'" in str(info.value) and "after 2 attempts" in str(info.value)
    finally:
        server.close()


class _LyingHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``BODY`` at ``/<how>/k``, answering Range requests wrongly by ``how``: ``short``
    (one byte less than its Content-Range says), ``long`` (5 bytes more), ``shifted`` (an
    honest Content-Range of the range one byte earlier), ``ignore`` (200 and the whole body, as
    servers without Range support do), ``loop`` (a redirect to itself), ``stream`` (honest
    answers sent chunked, without Content-Length), ``nohead`` (honest answers to GET, 405 to
    HEAD), ``garbled`` (a Content-Range that does not parse)."""

    protocol_version = "HTTP/1.1"
    BODY = bytes(range(256)) * 40

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def _answer(self, status: int, data: bytes, **headers: str) -> None:
        stream = self.path.startswith("/stream/")
        self.send_response(status)
        if stream:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(data)))
        self.send_header("ETag", '"v1"')
        for k, v in headers.items():
            self.send_header(k.replace("_", "-"), v)
        self.end_headers()
        if self.command == "GET" and stream:
            self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data) if data else b"0\r\n\r\n")
        elif self.command == "GET":
            self.wfile.write(data)

    def do_GET(self) -> None:
        how = self.path.strip("/").split("/")[0]
        body, size = self.BODY, len(self.BODY)
        if self.path.rstrip("/").rpartition("/")[2] != "k":
            return self._answer(404, b"")
        if how == "nohead" and self.command == "HEAD":
            return self._answer(405, b"")
        if how == "loop":
            return self._answer(302, b"", Location=self.path)
        rng = self.headers.get("Range")
        if rng is None or how == "ignore":
            return self._answer(200, body)
        first, last = rng.removeprefix("bytes=").split("-")
        start = max(0, size - int(last)) if first == "" else int(first)
        stop = size if first == "" or last == "" else min(int(last) + 1, size)
        data, shown = body[start:stop], start
        if how == "short":
            data = data[:-1]
        elif how == "long":
            data += b"extra"
        elif how == "shifted":
            shown = start - 1
            data = body[shown:stop]
        elif how == "garbled":
            return self._answer(206, data, Content_Range=f"bytes {start}/{size}")
        return self._answer(206, data, Content_Range=f"bytes {shown}-{stop - 1}/{size}")

    do_HEAD = do_GET


@pytest.fixture(scope="module")
def lying_http():
    with serving(_LyingHandler) as url:
        yield url


def _http_store(backend: str, url: str, **options):
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        return ObjectStore(url, retries=0, **options)
    from zarrx.store.remote import FsspecStore
    return FsspecStore(url, retries=0, **options)


_SHORT = "the server sent 999 bytes for bytes 100-1099 of a 10240-byte object, expected 1000 " \
         "bytes from byte 100"
# (the body is read up to the bytes asked for: what comes after them is left unread)
_LONG = "the server sent more than 1000 bytes for bytes 100-1099 of a 10240-byte object, " \
        "expected 1000 bytes from byte 100"


@pytest.mark.parametrize("backend, how, detail", [
    ("obstore", "short", _SHORT),
    ("fsspec", "short", _SHORT),
    ("obstore", "long", _LONG),
    ("fsspec", "long", _LONG),
    ("obstore", "shifted", "the server sent bytes 99-1099 for bytes 100-1099"),
    ("fsspec", "shifted", _LONG),
    ("obstore", "loop", "the server's redirects cannot be followed (a loop, or too many)"),
    ("obstore", "garbled", "the server sent a Content-Range that is not a range of bytes: "
                           "'bytes 100/10240'"),
    ("fsspec", "garbled", "the server sent a Content-Range that is not a range of bytes: "
                          "'bytes 100/10240'"),
    ("fsspec", "loop", "the server's redirects cannot be followed (a loop, or too many)"),
])
def test_answers_that_are_not_the_range_asked_for_are_store_errors(lying_http, backend, how,
                                                                   detail):
    """A body longer or shorter than the range, or of another range, would shift every slice
    cut from it: it is an error naming what was asked and what came, never data."""
    from zarrx.errors import RemoteError
    store = _http_store(backend, f"{lying_http}/{how}")
    with pytest.raises(RemoteError) as info:
        store.get("k", ByteRange.slice(100, 1000))
    name = type(store).__name__
    assert str(info.value) == (f"{name}('{lying_http}/{how}', read_only=True): cannot read 'k' "
                               f"({lying_http}/{how}/k): {detail}")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_server_ignoring_ranges_gives_the_right_bytes_of_objects_read_in_parts(lying_http,
                                                                               backend):
    """Parts and ranges of an object larger than ``part_size`` from a server that answers every
    Range request with the whole object: each part cut from it, never the whole body joined."""
    body = _LyingHandler.BODY
    store = _http_store(backend, f"{lying_http}/ignore", part_size=1000, min_part_size=1000)
    assert store.get("k") == body
    assert store.get("k", ByteRange.slice(100, 5000)) == body[100:5100]
    assert store.get("k", ByteRange.last(3000)) == body[-3000:]
    assert store.get_many([("k", ByteRange.slice(1, 50)), ("k", ByteRange.slice(9000, 1240))]) \
        == [body[1:51], body[9000:]]


def test_endpoint_without_a_scheme_is_refused():
    pytest.importorskip("obstore")
    with pytest.raises(StoreError) as info:
        make_store("s3://bkt/x", "r", {"endpoint_url": "localhost:9000", "key": "k",
                                       "secret": "s"})
    assert str(info.value) == ("ObjectStore('s3://bkt/x'): storage_options endpoint: expected "
                               "a URL starting with http:// or https://, found 'localhost:9000'")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("endpoint, problem", [
    ("http://127.0.0.1:99999", "expected a URL starting with http:// or https:// and a valid "
                               "host and port, found 'http://127.0.0.1:99999' (Port out of "
                               "range 0-65535)"),
    ("http://", "expected a URL starting with http:// or https:// and a host, found 'http://'"),
    ("http://:80", "expected a URL starting with http:// or https:// and a host, found "
                   "'http://:80'"),
    ("http://[::1", "expected a URL starting with http:// or https:// and a valid host and "
                    "port, found 'http://[::1' (Invalid IPv6 URL)"),
    ("https://exa mple.org", "expected a URL starting with http:// or https:// and no spaces "
                             "or control characters, found 'https://exa mple.org'"),
    ("notaurl", "expected a URL starting with http:// or https://, found 'notaurl'"),
    # (botocore quoted the endpoint whole at the first request, a token in its query too)
    ("http://127.0.0.1:9000/?sig=s3cret", "expected a URL starting with http:// or https:// "
                                          "and no query or fragment ('?…', '#…', not shown), "
                                          "found 'http://127.0.0.1:9000/'"),
    ("https://u:pw@host#s3cret", "expected a URL starting with http:// or https:// and no "
                                 "query or fragment ('?…', '#…', not shown), found "
                                 "'https://host'"),
])
def test_an_unusable_endpoint_is_refused_when_the_store_is_made(backend, endpoint, problem):
    """Not a raw ValueError from botocore or a panic of obstore's client at the first
    request."""
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        with pytest.raises(StoreError) as info:
            ObjectStore("s3://bkt/x", storage_options={
                "endpoint": endpoint, "access_key_id": "k", "secret_access_key": "s"})
        assert str(info.value) == f"ObjectStore('s3://bkt/x'): storage_options endpoint: {problem}"
    else:
        pytest.importorskip("s3fs")
        from zarrx.store.remote import FsspecStore
        for so in ({"endpoint_url": endpoint}, {"client_kwargs": {"endpoint_url": endpoint}}):
            name = "endpoint_url" if "endpoint_url" in so else "client_kwargs['endpoint_url']"
            with pytest.raises(StoreError) as info:
                FsspecStore("s3://bkt/x", storage_options={"key": "k", "secret": "s", **so})
            assert str(info.value) == \
                f"FsspecStore('s3://bkt/x'): storage_options {name}: {problem}"


def test_an_upper_case_endpoint_scheme_is_a_scheme():
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    store = ObjectStore("s3://bkt/x", retries=0, storage_options={
        "endpoint": "HTTP://127.0.0.1:9", "access_key_id": "k", "secret_access_key": "s"})
    with pytest.raises(RemoteConnectionError):       # tried, not refused as not a URL
        store.get("k")


@pytest.fixture
def no_aws_configuration(monkeypatch, tmp_path):
    """No credentials, profiles or instance metadata for botocore to find."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                 "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.mark.parametrize("so, cls, detail", [
    ({}, "RemoteAccessError",
     "access (credentials: NoCredentialsError: Unable to locate credentials)"),
    ({"key": "k"}, "RemoteAccessError",
     "access (credentials: PartialCredentialsError: Partial credentials found in explicit, "
     "missing: aws_secret_access_key)"),
    ({"profile": "nope"}, "RemoteError",
     "storage_options: ProfileNotFound: The config profile (nope) could not be found"),
    ({"key": "k", "secret": "s", "client_kwargs": {"region_name": "no such region"}},
     "RemoteError", "storage_options: InvalidRegionError: Provided region_name 'no such "
     "region' doesn't match a supported format."),
])
def test_s3fs_configuration_errors_are_store_errors(no_aws_configuration, so, cls, detail):
    """What botocore finds wrong when s3fs opens its session: a StoreError naming it, not a
    raw botocore exception."""
    pytest.importorskip("s3fs")
    from zarrx import errors
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("s3://bkt/x", retries=0,
                        storage_options={"endpoint_url": "http://127.0.0.1:9", **so})
    for call, what in ((lambda: store.get("k"), "read 'k' (s3://bkt/x/k)"),
                       (lambda: list(store.list_prefix("")), "list '<root>' (s3://bkt/x/<root>)")):
        with pytest.raises(StoreError) as info:
            call()
        assert type(info.value) is getattr(errors, cls)
        assert str(info.value) == f"FsspecStore('s3://bkt/x'): cannot {what}: {detail}"


@pytest.mark.parametrize("extra", [{"requester_pays": True}, {"profile": "default"},
                                   {"client_kwargs": {"verify": False}}])
def test_s3fs_only_options_open_an_fsspec_store(extra):
    pytest.importorskip("s3fs")
    store = make_store("s3://bkt/x", "r", {"endpoint_url": "http://127.0.0.1:9", "key": "k",
                                           "secret": "s", **extra})
    assert type(store).__name__ == "FsspecStore"


def test_configuration_values_never_show_in_errors():
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    with pytest.raises(StoreError) as info:
        ObjectStore("s3://bkt/x", storage_options={"endpoint": "http://127.0.0.1:9",
                                                   "skip_signature": "SUPERSECRETVALUE"})
    assert "SUPERSECRETVALUE" not in str(info.value)
    assert "cannot configure the store" in str(info.value)


@pytest.mark.parametrize("so, name, found", [
    ({"secret_access_key": 12345}, "secret_access_key", "int"),
    ({"region": ["us-east-1"]}, "region", "list")])
def test_an_obstore_option_of_the_wrong_type_is_named(so, name, found):
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    with pytest.raises(StoreError) as info:
        ObjectStore("s3://bkt/x", storage_options={"endpoint": "http://127.0.0.1:9", **so})
    assert str(info.value) == (f"ObjectStore('s3://bkt/x'): storage_options {name}: expected "
                               f"a str, found {found}")


@pytest.mark.parametrize("so, name, found", [
    ({"client_kwargs": ["region_name"]}, "client_kwargs", "list"),
    ({"config_kwargs": ["x"], "use_ssl": False}, "config_kwargs", "list"),
    ({"client_options": "x"}, "client_options", "str")])
def test_storage_options_holding_settings_must_be_dicts(so, name, found):
    """Not a raw AttributeError or ValueError from s3fs at the first request, nor a setting
    dropped without a word."""
    pytest.importorskip("obstore")
    pytest.importorskip("s3fs")
    from zarrx.store.remote import FsspecStore, ObjectStore
    base = {"endpoint_url": "http://127.0.0.1:9", "key": "k", "secret": "s"}
    with pytest.raises(ArgumentTypeError) as info:
        make_store("s3://bkt/x", "r", {**base, **so})
    assert str(info.value) == \
        f"'s3://bkt/x': storage_options {name}: expected a dict, found {found}"
    cls = ObjectStore if name == "client_options" else FsspecStore
    with pytest.raises(ArgumentTypeError) as info:
        cls("s3://bkt/x", storage_options=so)
    assert str(info.value) == (f"{cls.__name__}('s3://bkt/x'): storage_options {name}: "
                               f"expected a dict, found {found}")


def test_storage_options_must_be_a_dict():
    with pytest.raises(ArgumentTypeError) as info:
        make_store("memory://x", "r", "abc")       # type: ignore[arg-type]
    assert str(info.value) == "'memory://x': storage_options: expected a dict, found str"


def test_object_names_need_not_be_file_names():
    """S3 names may hold ':' and be longer than a file name; only file stores refuse them."""
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("memory://zarrx-names")
    long = "n" * 300
    for key in ("g/c:d/zarr.json", f"g/{long}"):
        store.set(key, b"v")
        assert store.get(key) == b"v"
    store.delete_prefix("")


def test_pickling_a_store_made_from_an_unpicklable_object_says_so():
    obstore = pytest.importorskip("obstore")
    import pickle
    from zarrx.store.remote import ObjectStore
    store = ObjectStore(obstore.store.MemoryStore())
    with pytest.raises(StoreError) as info:
        pickle.dumps(store)
    assert "cannot be pickled: the MemoryStore it was made from cannot" in str(info.value)
    assert "make the store from a URL" in str(info.value)


def test_obstore_memory_url_is_one_store_per_process():
    pytest.importorskip("obstore")
    import pickle
    from zarrx.store.remote import ObjectStore
    a = ObjectStore("memory:///zarrx-one")
    a.set("k", b"v")
    assert ObjectStore("memory:///zarrx-one").get("k") == b"v"
    assert pickle.loads(pickle.dumps(a)).get("k") == b"v"
    assert ObjectStore("memory:///zarrx-other").get("k") is None


def test_a_path_in_an_obstore_memory_url_is_a_prefix():
    """``memory://name/sub`` is the objects below ``sub/`` of the store ``memory://name``, as
    fsspec's memory filesystem and bucket URLs read a path."""
    pytest.importorskip("obstore")
    from zarrx.store.remote import ObjectStore
    top = ObjectStore("memory://zarrx-pre")
    top.set("sub/k", b"v")
    top.set("other", b"w")
    below = ObjectStore("memory://zarrx-pre/sub/")
    assert below.get("k") == b"v" and below.get("other") is None
    assert sorted(below.list_prefix("")) == ["k"]
    below.set("deeper/x", b"y")
    assert top.get("sub/deeper/x") == b"y"
    below.delete("k")
    assert top.get("sub/k") is None
    assert ObjectStore("memory:///zarrx-pre").get("other") == b"w"


def test_an_unknown_s3fs_option_is_a_store_error_naming_it():
    pytest.importorskip("s3fs")
    from zarrx.errors import RemoteError
    from zarrx.store.remote import FsspecStore
    store = FsspecStore("s3://bkt/x", retries=0, storage_options={
        "key": "k", "secret": "s", "endpoint_url": "http://127.0.0.1:9", "endpoint_ur": "x"})
    with pytest.raises(RemoteError, match="unexpected keyword argument 'endpoint_ur'"):
        store.get("k")


def test_remote_stores_upload_pooled_values_and_seal_them():
    """A write hands a remote store chunks gathered into pooled memory (``keeps_values``): the
    store seals the value (no writable view of it remains possible) and uploads its bytes."""
    pytest.importorskip("obstore")
    import numpy as np
    from zarrx.store._values import Value
    from zarrx.store.remote import ObjectStore
    store = ObjectStore("memory://zarrx-pooled")
    assert store.keeps_values
    value = Value.empty(1 << 20)
    memoryview(value)[:] = bytes(range(256)) * 4096
    store.set("k", value)
    assert memoryview(value).readonly
    assert store.get("k") == bytes(range(256)) * 4096
    z = zarrx.create_array(ObjectStore("memory://zarrx-pooled/a"), shape=(512, 512),
                           chunks=(256, 256), dtype="f4", compressors=None)
    z[...] = np.arange(512 * 512, dtype="f4").reshape(512, 512)
    assert np.array_equal(zarrx.open_array(ObjectStore("memory://zarrx-pooled/a"))[...],
                          np.arange(512 * 512, dtype="f4").reshape(512, 512))


def test_an_unclassified_obstore_failure_says_its_cause():
    """A failure zarrx has no class for names obstore's cause, not only the error's type
    ('other (GenericError)' said nothing of what went wrong)."""
    pytest.importorskip("obstore")
    from zarrx.errors import RemoteError
    from zarrx.store.remote import ObjectStore
    store = ObjectStore("s3://bkt/x", retries=0, storage_options={
        "endpoint": "http://127.0.0.1:9", "client_options": {"allow_http": False},
        "access_key_id": "a", "secret_access_key": "b", "region": "us-east-1"})
    with pytest.raises(RemoteError) as info:
        store.get("k")
    assert str(info.value) == ("ObjectStore('s3://bkt/x'): cannot read 'k' (s3://bkt/x/k): "
                               "other (GenericError: HTTP error: builder error)")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
def test_a_server_answering_head_with_405_has_its_objects(lying_http, backend):
    """HEAD refused (405): sizes and versions come from a GET's headers; obstore takes the 405
    for a missing object, and exists() said False."""
    body = _LyingHandler.BODY
    store = _http_store(backend, f"{lying_http}/nohead")
    assert store.exists("k") and store.getsize("k") == len(body)
    assert store.generation("k") is not None
    assert not store.exists("other") and store.getsize("other") is None
    assert store.get("k", ByteRange.slice(100, 50)) == body[100:150]
    with store.snapshot("k") as snap:
        assert [bytes(v) for v in snap.read([ByteRange.last(3), None])] == [body[-3:], body]


def test_fsspec_reads_a_server_that_sends_no_content_length(lying_http):
    """Answers streamed without Content-Length: fsspec's HTTP filesystem gives no size, and
    FsspecStore raised a bare TypeError; it now reads the object to know its size."""
    body = _LyingHandler.BODY
    store = _http_store("fsspec", f"{lying_http}/stream")
    assert store.get("k") == body and store.getsize("k") == len(body)
    assert store.get("k", ByteRange.slice(100, 50)) == body[100:150]
    assert store.get("k", ByteRange.last(7)) == body[-7:]
    assert store.get_versioned("k")[0] == body
    assert store.get("other") is None


def test_obstore_says_a_server_that_sends_no_content_length_needs_fsspec(lying_http):
    pytest.importorskip("obstore")
    from zarrx.errors import RemoteError
    store = _http_store("obstore", f"{lying_http}/stream")
    with pytest.raises(RemoteError) as info:
        store.get("k")
    assert str(info.value) == (
        f"ObjectStore('{lying_http}/stream', read_only=True): cannot read 'k' "
        f"({lying_http}/stream/k): the server's answer has no Content-Length header, which "
        "ObjectStore needs (FsspecStore reads such servers)")


@pytest.mark.parametrize("backend", ["obstore", "fsspec"])
@pytest.mark.parametrize("scheme", ["http", "s3"])
def test_a_server_sending_a_byte_now_and_then_times_out(backend, scheme):
    """``timeout`` bounds a whole request: a body trickling in (a byte every 0.25 s, 10 s in
    all) fails after ``timeout`` seconds. aiohttp and botocore bound each read only, and
    FsspecStore returned the body once it had all come."""
    server = _BadServer("drip")
    try:
        endpoint = f"http://127.0.0.1:{server.port}"
        if scheme == "s3":
            pytest.importorskip("s3fs")
            so = ({"endpoint": endpoint, "access_key_id": "a", "secret_access_key": "b",
                   "region": "us-east-1"} if backend == "obstore"
                  else {"endpoint_url": endpoint, "key": "a", "secret": "b"})
            cls = "ObjectStore" if backend == "obstore" else "FsspecStore"
            from zarrx.store import remote
            store = getattr(remote, cls)("s3://bkt/d", storage_options=so, timeout=1,
                                         retries=1, backoff=0.01)
        else:
            store = _http_store(backend, f"{endpoint}/d", timeout=1)
        with pytest.raises(RemoteTimeoutError) as info:
            store.get("k")
        assert str(info.value).startswith(f"{store!r}: cannot read 'k' ({store._url('k')}): "
                                          "timeout")
    finally:
        server.close()


class _PageHandler(http.server.BaseHTTPRequestHandler):
    """Answers every GET and HEAD with 200 and an HTML sign-in page (as a portal in front of a
    data server does for a client without its cookie); under ``/busy/``, the first request for
    each path gets 503 with ``Retry-After: 7``."""

    PAGE = b"<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>...</body></html>"
    busy: set = set()

    def do_GET(self) -> None:
        if self.path.startswith("/busy/") and self.path not in self.busy:
            self.busy.add(self.path)
            self.send_response(503)
            self.send_header("Retry-After", "7")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.PAGE)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(self.PAGE)

    do_HEAD = do_GET

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass


@pytest.fixture(scope="module")
def page_http():
    with serving(_PageHandler) as url:
        yield url


@pytest.mark.parametrize("backend, ctype", [("obstore", "text/html; charset=utf-8"),
                                            ("fsspec", "text/html")])
@pytest.mark.parametrize("zarr_format, key", [(None, "zarr.json"), (3, "zarr.json"),
                                              (2, ".zarray")])
def test_an_html_page_where_metadata_should_be_names_the_url_and_what_came(
        page_http, backend, ctype, zarr_format, key):
    """A server answering 200 with a login page gave "zarr.json: expected valid JSON, found
    Expecting value at line 1 column 1", naming neither the store nor the URL."""
    from zarrx.errors import MetadataError
    store = _http_store(backend, f"{page_http}/data.zarr")
    with pytest.raises(MetadataError) as info:
        zarrx.open(store, mode="r", zarr_format=zarr_format)
    name = type(store).__name__
    assert str(info.value) == (
        f"{name}('{page_http}/data.zarr', read_only=True): {key} ({page_http}/data.zarr/{key}): "
        f"expected a JSON metadata document, found an HTML page titled 'Sign in' "
        f"(Content-Type {ctype})")


def test_metadata_that_is_not_json_names_the_store_and_what_came(tmp_path):
    from zarrx.errors import MetadataError
    root = tmp_path / "a.zarr"
    root.mkdir()
    for doc, found in [(b"", "an empty object"), (b" \n", "only white space"),
                       (b"\x1f\x8b\x08\x00gz", "6 bytes that are not JSON, starting "
                                               "b'\\x1f\\x8b\\x08\\x00gz'")]:
        (root / "zarr.json").write_bytes(doc)
        with pytest.raises(MetadataError) as info:
            zarrx.open(str(root), mode="r")
        assert str(info.value) == (f"LocalStore('{root}', read_only=True): zarr.json: expected "
                                   f"a JSON metadata document, found {found}")


def test_fsspec_http_honours_retry_after(page_http, monkeypatch):
    """fsspec's HTTP filesystem shows the headers of a failed answer: a 503's Retry-After sets
    the wait before the next attempt (at most max_backoff)."""
    from zarrx.store.remote import FsspecStore, base
    pauses: list[float] = []

    async def pause(seconds):
        pauses.append(seconds)

    monkeypatch.setattr(base, "_pause", pause)
    store = FsspecStore(f"{page_http}/busy/x", retries=2, backoff=0.01, max_backoff=3.0)
    assert store.get("k") == _PageHandler.PAGE
    assert pauses == [3.0]


@pytest.mark.parametrize("url, backend, so, message", [
    ("memory://typo", "url", {"gloabl_store": True},
     "FsspecStore('memory://typo'): storage_options gloabl_store: not options of "
     "MemoryFileSystem, which would ignore them; it takes global_store, listings_expiry_time, "
     "max_paths, skip_instance_cache, use_listings_cache"),
    ("file:///tmp/zarrx-never-made/x.zarr", "url", {"auto_mkdri": True},
     "FsspecStore('file:///tmp/zarrx-never-made/x.zarr'): storage_options auto_mkdri: not "
     "options of LocalFileSystem, which would ignore them; it takes auto_mkdir, "
     "listings_expiry_time, max_paths, skip_instance_cache, use_listings_cache"),
    ("memory://typo", "obstore", {"region": "eu-west-1"},
     "ObjectStore('memory://typo'): storage_options region: a memory store takes no options"),
    ("s3://bucket/x", "obstore", {"regoin": "eu-west-1"},
     "ObjectStore('s3://bucket/x'): cannot configure the store: UnknownConfigurationKeyError: "
     "Configuration key: 'regoin' is not valid for store 'S3'."),
])
def test_a_storage_option_that_would_be_ignored_is_named(url, backend, so, message):
    """memory:// and file:// stores ignored storage options they do not know (a typo went
    unnoticed)."""
    if backend == "obstore":
        pytest.importorskip("obstore")
        from zarrx.store.remote import ObjectStore
        make = lambda: ObjectStore(url, storage_options=so)  # noqa: E731
    else:
        make = lambda: zarrx.open(url, mode="a", storage_options=so)  # noqa: E731
    with pytest.raises(StoreError) as info:
        make()
    assert str(info.value) == message

