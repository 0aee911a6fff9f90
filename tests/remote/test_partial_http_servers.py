"""Web servers that support only part of what ranged, conditioned reads use: one without
suffix ranges (``bytes=-N`` answered with 416), one that sends weak ETags (``W/"..."``) and,
as HTTP says, never lets If-Match match one, and one that answers 403 where a key is missing.
Arrays written by zarrx read right through both backends: sharded and not, missing chunks as
the fill value."""
from __future__ import annotations

import hashlib
import http.server

import numpy as np
import pytest
from loopback import answer, answer_range, not_found, serving

import zarrx
from zarrx.errors import ConflictError, RemoteAccessError, StoreError
from zarrx.store.base import ByteRange
from zarrx.store.remote import RemoteOptions

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

BACKENDS = ["obstore", "fsspec"]


class _PartialHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``objects`` (path below the mode -> bytes) below ``/<mode>/``: ``nosuffix``
    answers a suffix range with 416, ``weak`` sends weak ETags and answers every If-Match with
    412 (a weak ETag never matches it), as nginx does (``nosuffix-nohead``: and answers HEAD
    with 403), ``forbidden`` answers 403 for a
    missing object, ``html`` answers 200 with an HTML page for a missing object (as some web
    hosts do), and ``balanced`` sends another ETag with every answer (as servers behind a
    balancer, each with ETags of its own, do) and ignores If-Match; all serve other ranges,
    and honour If-Match otherwise. ``requests`` records each request's method, mode and
    Range."""

    protocol_version = "HTTP/1.1"
    objects: dict[str, bytes] = {}
    requests: list[tuple[str, str, str | None]] = []

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        mode, _, name = self.path.lstrip("/").partition("/")
        rng = self.headers.get("Range")
        self.requests.append((self.command, mode, rng))
        body = self.objects.get(name)
        if mode == "nosuffix-nohead":
            if self.command == "HEAD":
                return answer(self, 403, b"", [])
            mode = "nosuffix"
        if mode == "forbidden" and body is None:
            return answer(self, 403, b"", [])
        if mode == "html" and body is None:         # a host's page for any missing path
            return answer(self, 200, HTML_PAGE, [("Content-Type", "text/html")])
        if body is None or mode not in ("nosuffix", "weak", "forbidden", "balanced", "html"):
            return not_found(self)
        etag = f'"{hashlib.md5(body).hexdigest()}"'
        if mode == "balanced":
            etag = f'"{len(self.requests)}"'
        if mode == "weak":
            etag = "W/" + etag
        if self.headers.get("If-Match") not in (None, etag) or \
                mode == "weak" and self.headers.get("If-Match") is not None:
            return answer(self, 412, b"", [])
        headers = [("ETag", etag), ("Accept-Ranges", "bytes")]
        answer_range(self, body, headers, suffixes=mode != "nosuffix")

    do_HEAD = do_GET


HTML_PAGE = b"<!doctype html><html><head><title>Not here</title></head></html>"
EXPECTED = np.full((40, 30), -1, dtype="i4")
EXPECTED[:20] = np.arange(600, dtype="i4").reshape(20, 30)


@pytest.fixture(scope="module")
def partial_http(tmp_path_factory):
    """The server, serving v3 arrays ``sharded`` and ``plain`` and a v2 array whose lower
    halves are not written, and an empty object ``empty``."""
    root = tmp_path_factory.mktemp("partial")
    g = zarrx.open_group(root / "v3", mode="w", zarr_format=3)
    s = g.create_array("sharded", shape=(40, 30), dtype="i4", chunks=(5, 5), shards=(20, 10),
                       fill_value=-1)
    s[:20] = EXPECTED[:20]
    u = g.create_array("plain", shape=(40, 30), dtype="i4", chunks=(10, 10), fill_value=-1)
    u[:20] = EXPECTED[:20]
    p = zarrx.create_array(root / "v2", shape=(40, 30), dtype="i4", chunks=(10, 10),
                           fill_value=-1, zarr_format=2)
    p[:20] = EXPECTED[:20]
    objects = {f.relative_to(root).as_posix(): f.read_bytes()
               for f in root.rglob("*") if f.is_file()}
    _PartialHandler.objects = {**objects, "empty": b""}
    with serving(_PartialHandler) as url:
        yield url


def _store(backend: str, url: str, **options):
    if backend == "obstore":
        pytest.importorskip("obstore")
        return zarrx.store.ObjectStore(url, retries=0, **options)
    return zarrx.store.FsspecStore(url, retries=0, **options)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", ["v3/sharded", "v2"])
@pytest.mark.parametrize("mode", ["nosuffix", "nosuffix-nohead"])
def test_a_server_without_suffix_ranges_serves_arrays(partial_http, backend, path, mode):
    """A shard's index is read with a suffix range; a server answering it with 416 made the
    shard read as empty ("empty (0 bytes); expected at least its 132-byte index"). The size
    now comes from a HEAD (from the headers of a GET where HEAD is forbidden: ObjectStore
    raised RemoteAccessError), and the index from a range that names its bytes."""
    store = _store(backend, f"{partial_http}/{mode}")
    assert np.array_equal(zarrx.open_array(store, path=path, mode="r")[...], EXPECTED)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_suffix_range_from_a_server_without_them(partial_http, backend):
    store = _store(backend, f"{partial_http}/nosuffix")
    whole = _PartialHandler.objects["v2/.zarray"]
    assert store.get("v2/.zarray", ByteRange.last(10)) == whole[-10:]
    assert store.get("v2/.zarray", ByteRange.last(10 ** 6)) == whole
    assert store.get("empty", ByteRange.last(10)) == b""
    assert store.get("v2/missing", ByteRange.last(10)) is None
    _PartialHandler.requests.clear()
    assert store.get("v2/.zarray", ByteRange.last(10)) == whole[-10:]
    ranges = [r for method, _, r in _PartialHandler.requests if method == "GET" and r]
    assert ranges[0] == "bytes=-10" and ranges[-1] == f"bytes={len(whole) - 10}-{len(whole) - 1}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path", ["v3/sharded", "v2"])
def test_weak_etags_and_a_server_that_never_matches_them(partial_http, backend, path):
    """Inner chunks of a shard are read conditioned on the ETag its index came with; a weak
    ETag sent as If-Match failed every time on a server following HTTP (ObjectStore: "shard
    'sharded/c/0/0': changed during each of 64 reads"). A weak ETag is now compared with the
    answer's instead of being sent."""
    store = _store(backend, f"{partial_http}/weak", tail_prefetch=100)
    assert np.array_equal(zarrx.open_array(store, path=path, mode="r")[...], EXPECTED)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_object_with_weak_etags_replaced_during_a_snapshot_is_a_conflict(partial_http,
                                                                           backend):
    url = f"{partial_http}/weak"
    store = _store(backend, url, tail_prefetch=100, revalidate_after=0)
    old = _PartialHandler.objects["v3/sharded/c/0/0"]
    snap = store.snapshot("v3/sharded/c/0/0")
    _PartialHandler.objects["v3/sharded/c/0/0"] = old + b"!"
    try:
        with pytest.raises(ConflictError) as info:
            snap.read([ByteRange.slice(0, 10)])
    finally:
        _PartialHandler.objects["v3/sharded/c/0/0"] = old
    new = hashlib.md5(old + b"!").hexdigest()
    assert str(info.value) == (f"{store!r}: cannot read a snapshot of 'v3/sharded/c/0/0': "
                               f"expected generation {snap.generation!r}, found generation "
                               f"ETag('W/\"{new}\"')")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_server_answering_403_for_missing_keys(partial_http, backend):
    """A 403 is a RemoteAccessError, as it also means wrong or missing credentials; with
    ``forbidden_is_missing=True`` it reads as a missing key, so arrays open (the format is
    found by asking for the documents of both) and missing chunks read as the fill value."""
    url = f"{partial_http}/forbidden"
    store = _store(backend, url)
    with pytest.raises(RemoteAccessError) as info:
        store.get("v2/missing")
    assert str(info.value) == (f"{store!r}: cannot read 'v2/missing' ({url}/v2/missing): "
                               f"HTTP 403; a server that answers 403 where a key is missing "
                               f"(S3 without list permission, some web hosts) reads as "
                               f"missing keys with forbidden_is_missing=True")
    with pytest.raises(RemoteAccessError):
        zarrx.open_array(store, path="v3/sharded", mode="r")
    store = _store(backend, url, forbidden_is_missing=True)
    assert store.get("v2/missing") is None
    assert store.get("v2/missing", ByteRange.last(10)) is None
    assert not store.exists("v2/missing") and store.exists("v2/.zarray")
    for path in ("v3/sharded", "v2"):
        assert np.array_equal(zarrx.open_array(store, path=path, mode="r")[...], EXPECTED)


def test_forbidden_is_missing_takes_a_bool():
    with pytest.raises(StoreError) as info:
        RemoteOptions.make(forbidden_is_missing="yes")
    assert str(info.value) == ("RemoteOptions.forbidden_is_missing: expected True or False, "
                               "found 'yes'")


@pytest.mark.parametrize("backend", BACKENDS)
def test_etags_that_differ_on_every_answer_name_what_kept_changing(partial_http, backend):
    """Every answer looks like another version, so reads that need two requests of one
    version end in a ConflictError; it named neither the store nor the address ("shard
    'sharded/c/0/0': changed during each of 64 reads", "a batch of 1 reads kept finding newer
    versions of its objects")."""
    url = f"{partial_http}/balanced"
    store = _store(backend, url, tail_prefetch=100, revalidate_after=0, part_size=50,
                   min_part_size=50)
    assert len(_PartialHandler.objects["v2/0.0"]) > 50       # read in parts
    with pytest.raises(ConflictError) as info:
        store.get_many([("v2/0.0", None)])
    assert str(info.value) == (f"{store!r}: cannot read 'v2/0.0' ({url}/v2/0.0): it changed "
                               f"during each of 8 reads")
    with pytest.raises(ConflictError) as info:
        zarrx.open_array(store, path="v3/sharded", mode="r")[:5, :5]
    assert str(info.value) == (f"{store!r}: cannot read shard 'v3/sharded/c/0/0' "
                               f"({url}/v3/sharded/c/0/0): it changed during each of 64 reads")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("path,key", [("v3/plain", "v3/plain/c/2/0"),
                                      ("v3/sharded", "v3/sharded/c/1/0")])
def test_a_chunk_answered_with_a_web_page_names_its_url(partial_http, backend, path, key):
    """A host that answers 200 with an HTML page for a missing key: the chunk cannot decode,
    and the error names the object's URL and that the server labels it a web page (before:
    the store's key alone, with nothing to say why its bytes were wrong)."""
    url = f"{partial_http}/html"
    # (a format given: such a host answers the other format's documents with a page too)
    z = zarrx.open_array(_store(backend, url), path=path, mode="r", zarr_format=3)
    np.testing.assert_array_equal(z[:20], EXPECTED[:20])
    with pytest.raises((zarrx.CodecError, zarrx.errors.ShardError)) as info:
        z[...]
    assert info.value.address == f"{url}/{key}" and info.value.served_as == "text/html"
    assert f"(at {url}/{key}, served as text/html): " in str(info.value)
