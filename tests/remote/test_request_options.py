"""Every request a remote store sends carries what its configuration asks for: the query of an
HTTP(S) root URL (a token) on listings too, the client options of an ObjectStore on its
conditional DELETE too; and a HEAD's 404 on a missing bucket is the error a read raises."""
from __future__ import annotations

import datetime
import http.server
import ssl
import threading

import pytest
from loopback import serving

import zarrx
from zarrx.errors import RemoteNotFoundError
from zarrx.store import MemoryStore

pytest.importorskip("obstore", reason="obstore is not installed (pip install 'zarrx[remote]')")

from zarrx.store.remote import FsspecStore, ObjectStore  # noqa: E402


def _hierarchy() -> dict[str, bytes]:
    src = MemoryStore()
    g = zarrx.open_group(src, mode="w")
    g.create_array("a/b", shape=(4,), chunks=(2,), dtype="i2")[:] = [1, 2, 3, 4]
    g.create_array("x", shape=(2,), chunks=(2,), dtype="u1")[:] = 7
    return {k: src.get(k) for k in src.list_prefix("")}


def _token_site(files: dict[str, bytes], seen: list) -> type:
    """A web server of ``files`` below /data.zarr that answers only requests carrying
    ``?token=abc`` (403 otherwise), with HTML listings of its folders whose links are written
    relative, from the server's root, and as sort links (``?C=N;O=D``) and ``../``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def reply(self, status: int, body: bytes = b"", kind: str | None = None) -> None:
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", '"v1"')
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            seen.append(f"{self.command} {self.path}")
            path, _, query = self.path.partition("?")
            if query != "token=abc":
                return self.reply(403)
            if not (path == "/data.zarr" or path.startswith("/data.zarr/")):
                return self.reply(404)
            rel = path[len("/data.zarr/"):]
            if rel in files:
                return self.reply(200, files[rel], "application/octet-stream")
            folder = rel.rstrip("/")
            below = [k[len(folder) + 1:] if folder else k for k in files
                     if k.startswith(folder + "/" if folder else "")]
            names = sorted({n.split("/")[0] + ("/" if "/" in n else "") for n in below})
            if not names:
                return self.reply(404)
            links = [f'<a href="{n}">{n}</a>' if i % 2 else
                     f'<a href="/data.zarr/{folder + "/" if folder else ""}{n}">{n}</a>'
                     for i, n in enumerate(names)]
            links += ['<a href="?C=N;O=D">Name</a>', '<a href="../">Parent</a>']
            self.reply(200, f"<html><body>{' '.join(links)}</body></html>".encode(), "text/html")

        do_HEAD = do_PROPFIND = do_GET

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@pytest.mark.parametrize("chain", ["", "simplecache::"])
def test_the_query_of_a_root_url_goes_with_every_listing_page(chain):
    # (before: fsspec's listing asked for /data.zarr and /data.zarr/a without the token, and
    # the server's 403 made it "the server offers no listing")
    pytest.importorskip("aiohttp")
    files, seen = _hierarchy(), []
    with serving(_token_site(files, seen)) as base:
        store = FsspecStore(f"{chain}{base}/data.zarr?token=abc")
        assert sorted(store.list_prefix("")) == sorted(files)
        assert store.list_dir("a/") == (["zarr.json"], ["b"])
        assert sorted(store.list_prefix("a/b/")) == ["a/b/c/0", "a/b/c/1", "a/b/zarr.json"]
        g = zarrx.open_group(store, mode="r", use_consolidated=False)
        assert sorted(name for name, _ in g.members(max_depth=None)) == ["a", "a/b", "x"]
        assert g["a/b"][:].tolist() == [1, 2, 3, 4]
    assert seen and all(line.endswith("?token=abc") for line in seen), seen


def test_an_objectstore_sends_the_query_of_a_root_url_with_every_request():
    files, seen = _hierarchy(), []
    with serving(_token_site(files, seen)) as base:
        store = ObjectStore(f"{base}/data.zarr?token=abc")
        assert store.get("x/zarr.json") == files["x/zarr.json"]
        assert store.exists("a/b/c/0") and not store.exists("nope")
        with pytest.raises(zarrx.errors.StoreError):   # a listing: WebDAV, not served here
            list(store.list_prefix("a/"))
    assert {line.split()[0] for line in seen} >= {"GET", "HEAD", "PROPFIND"}
    assert all(line.endswith("?token=abc") for line in seen), seen


def _s3_like(seen: list) -> type:
    """An S3 endpoint of one object, ``bucket/p/k``: HEAD gives its ETag, DELETE succeeds;
    every request's method and headers are noted in ``seen``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def answer(self) -> None:
            seen.append((self.command, {k.lower(): v for k, v in self.headers.items()}))
            self.send_response(200 if self.command == "HEAD" else 204)
            self.send_header("ETag", '"abc"')
            self.send_header("Content-Length", "3" if self.command == "HEAD" else "0")
            self.send_header("Last-Modified", "Mon, 01 Jan 2024 00:00:00 GMT")
            self.end_headers()

        do_HEAD = do_DELETE = answer

        def log_message(self, *args: object) -> None:
            pass

    return Handler


def _store(endpoint: str, client_options: dict) -> ObjectStore:
    return ObjectStore("s3://bucket/p", retries=0, storage_options={
        "endpoint": endpoint, "access_key_id": "k", "secret_access_key": "s",
        "region": "us-east-1", "client_options": client_options})


def test_the_conditional_delete_sends_the_default_headers_and_user_agent():
    # (before: the DELETE, sent outside obstore, went without them: Python-urllib's agent)
    seen: list = []
    with serving(_s3_like(seen)) as base:
        store = _store(base, {"default_headers": {"X-Team": "t1", "If-Match": "other"},
                              "user_agent": "zarrx-test/1"})
        store.delete_if("k", store.generation("k"))
    heads = [h for m, h in seen if m == "HEAD"]
    (delete,) = [h for m, h in seen if m == "DELETE"]
    assert heads and all(h["x-team"] == "t1" and h["user-agent"] == "zarrx-test/1"
                         for h in heads)          # as obstore sends its own requests
    assert (delete["x-team"], delete["user-agent"], delete["if-match"]) == \
        ("t1", "zarrx-test/1", '"abc"')           # the condition wins over a default


def _certificates(tmp_path):
    """A CA and a certificate it signed for 127.0.0.1: (CA PEM, server cert file, key file)."""
    pytest.importorskip("cryptography")
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)

    def cert(subject, issuer, key, sign_key, ca):
        b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(hours=1))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            b = b.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return b.sign(sign_key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "zarrx test CA")])
    ca = cert(ca_name, ca_name, ca_key, ca_key, True)
    server = cert(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]), ca_name,
                  key, ca_key, False)
    pem = serialization.Encoding.PEM
    (tmp_path / "server.pem").write_bytes(server.public_bytes(pem))
    (tmp_path / "server.key").write_bytes(key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return ca.public_bytes(pem).decode(), tmp_path / "server.pem", tmp_path / "server.key"


def test_the_conditional_delete_trusts_the_proxy_ca_certificate(tmp_path):
    # (before: obstore's requests trusted it, the DELETE did not: RemoteConnectionError)
    ca, cert_file, key_file = _certificates(tmp_path)
    seen: list = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _s3_like(seen))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        # the proxy itself is not used for this host, but its CA is trusted all the same
        store = _store(f"https://127.0.0.1:{server.server_address[1]}", {
            "proxy_url": "http://127.0.0.1:9", "proxy_excludes": "127.0.0.1",
            "proxy_ca_certificate": ca})
        generation = store.generation("k")        # obstore's own request trusts it
        store.delete_if("k", generation)
    finally:
        server.shutdown()
        server.server_close()
    assert [m for m, _ in seen][-1] == "DELETE"


@pytest.fixture(params=["obstore", "fsspec"])
def bucket_store(request, s3_server):
    def make(bucket: str):
        if request.param == "obstore":
            return ObjectStore(f"s3://{bucket}/{s3_server.fresh()}",
                               storage_options=s3_server.options)
        pytest.importorskip("s3fs")
        return FsspecStore(f"s3://{bucket}/{s3_server.fresh()}",
                           storage_options=s3_server.fsspec_options)
    return make


def test_exists_and_generation_of_a_key_in_a_missing_bucket_raise_as_reads(bucket_store):
    # (before: "absent", where a read of the same key raised RemoteNotFoundError)
    store = bucket_store("no-such-bucket-zarrx")
    for call in (store.get, store.exists, store.generation, store.getsize):
        with pytest.raises(RemoteNotFoundError, match=r"cannot read 'k' .*HTTP 404 "
                                                      r"\(NoSuchBucket\)"):
            call("k")


def test_a_missing_key_costs_one_more_request_once_an_existing_key_none(bucket_store,
                                                                        s3_server):
    store = bucket_store(s3_server.bucket)
    store.set("there", b"v")
    store.requests.clear()
    assert store.exists("there") and store.generation("there") is not None
    assert dict(store.requests) == {"HEAD": 2}
    store.requests.clear()
    assert not store.exists("nope")              # one GET tells a missing key from a bucket
    assert dict(store.requests) == {"HEAD": 1, "GET": 1}
    store.requests.clear()
    assert not store.exists("nope2") and store.generation("nope3") is None
    assert dict(store.requests) == {"HEAD": 2}  # the bucket is known to be there


def test_a_listing_with_a_query_is_bounded_in_pages_and_page_size(monkeypatch):
    """A server linking to ever new folders, or sending a page without end, costs a bounded
    number of requests and bytes (the walk of the listing is zarrx's own there)."""
    pytest.importorskip("aiohttp")
    from zarrx.errors import RemoteError
    from zarrx.store.remote import fsspec_listing
    monkeypatch.setattr(fsspec_listing, "MAX_PAGES", 30)
    monkeypatch.setattr(fsspec_listing, "MAX_PAGE_BYTES", 1 << 20)
    seen: list = []

    class Endless(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            try:
                if self.path.startswith("/big"):
                    for _ in range(100):
                        self.wfile.write(b"<a href='x'>x</a>" * 10_000)
                else:
                    n = len(seen)
                    self.wfile.write(f'<a href="a{n}/">a</a> <a href="b{n}/">b</a>'.encode())
            except OSError:
                pass                                # the client stopped reading

        def log_message(self, *args: object) -> None:
            pass

    with serving(Endless) as base:
        with pytest.raises(RemoteError, match="goes on past 30 folder pages"):
            list(FsspecStore(f"{base}/deep?token=abc", retries=0).list_prefix(""))
        assert len(seen) == 30
        with pytest.raises(RemoteError, match="is longer than 1048576 bytes"):
            list(FsspecStore(f"{base}/big?token=abc", retries=0).list_prefix(""))
