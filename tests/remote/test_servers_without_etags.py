"""Web servers that send no ETag: one that sends each object's Last-Modified (as Python's
http.server and web servers configured without ETags do) and one that sends neither. An
object there still has a generation (``None`` means no object), made of what the server
sends; a shard replaced between the read of its index and the reads of its inner chunks is
read as one version, never the index of one and the chunks of the other."""
from __future__ import annotations

import email.utils
import http.server
import re
import threading

import numpy as np
import pytest
from loopback import answer_range, not_found, serving

import zarrx
from zarrx.store import MemoryStore

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

BACKENDS = ["obstore", "fsspec"]
OLD = np.arange(40, dtype="i4")
NEW = OLD[::-1].copy()


class _NoETagHandler(http.server.BaseHTTPRequestHandler):
    """Serves ``objects`` (name -> (bytes, mtime)) below ``/<mode>/``: ``modified`` sends
    Last-Modified, ``bare`` neither it nor an ETag. ``replace`` (name -> (n, bytes)) replaces
    an object, one second later, once its n-th GET is answered."""

    protocol_version = "HTTP/1.1"
    objects: dict[str, tuple[bytes, float]] = {}
    replace: dict[str, tuple[int, bytes]] = {}
    gets: dict[str, int] = {}
    lock = threading.Lock()

    def log_message(self, *args):  # noqa: ANN002 - quiet
        pass

    def do_GET(self) -> None:
        mode, _, name = self.path.lstrip("/").partition("/")
        with self.lock:
            found = self.objects.get(name)
            if found is not None and self.command == "GET":
                self.gets[name] = self.gets.get(name, 0) + 1
                after, new = self.replace.get(name, (0, None))
                if self.gets[name] == after:
                    self.objects[name] = (new, found[1] + 1)
        if found is None or mode not in ("modified", "bare"):
            return not_found(self)
        body, mtime = found
        headers = [("Accept-Ranges", "bytes")]
        if mode == "modified":
            headers.append(("Last-Modified", email.utils.formatdate(mtime, usegmt=True)))
        answer_range(self, body, headers)

    do_HEAD = do_GET


def _objects(values: np.ndarray) -> dict[str, bytes]:
    """An uncompressed array of 40 int32 in two shards of four inner chunks."""
    mem = MemoryStore()
    z = zarrx.create_array(mem, shape=(40,), chunks=(5,), shards=(20,), dtype="i4",
                           compressors=None)
    z[...] = values
    return {key: mem.get(key) for key in mem.list_prefix("")}


@pytest.fixture
def no_etag_http():
    _NoETagHandler.objects = {k: (v, 1e9) for k, v in _objects(OLD).items()}
    _NoETagHandler.replace, _NoETagHandler.gets = {}, {}
    with serving(_NoETagHandler) as url:
        yield url


def _store(backend: str, url: str, **options):
    if backend == "obstore":
        pytest.importorskip("obstore")
        return zarrx.store.ObjectStore(url, retries=0, **options)
    return zarrx.store.FsspecStore(url, retries=0, storage_options={"headers": {}}, **options)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["modified", "bare"])
def test_an_object_without_an_etag_has_a_generation(no_etag_http, backend, mode):
    """ObjectStore gave the generation None, which means no object, to an object a server
    sent without an ETag."""
    store = _store(backend, f"{no_etag_http}/{mode}")
    gen = store.generation("c/0")
    assert gen is not None and store.get_versioned("c/0")[1] == gen
    assert store.generation("c/9") is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_later_last_modified_is_another_generation(no_etag_http, backend):
    """FsspecStore read the modification time of a web server's answer under fsspec's name
    for it ("Last-Modified") nowhere, so a replace by bytes of the same length kept the
    generation; ObjectStore had none."""
    store = _store(backend, f"{no_etag_http}/modified", revalidate_after=0)
    before = store.generation("c/0")
    body, mtime = _NoETagHandler.objects["c/0"]
    _NoETagHandler.objects["c/0"] = (body, mtime + 1)
    assert store.generation("c/0") != before


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("after", [1, 2])
def test_a_shard_replaced_during_its_read_is_read_as_one_version(no_etag_http, backend, after):
    """The first shard is replaced (same length, reversed values) once its first or second
    GET is answered: after its index, or between the reads of its first and last inner chunks.
    Without ETags nothing tied the later reads to the index's version: the read joined the
    chunks of both versions."""
    new = _objects(NEW)["c/0"]
    assert len(new) == len(_NoETagHandler.objects["c/0"][0])
    _NoETagHandler.replace = {"c/0": (after, new)}
    store = _store(backend, f"{no_etag_http}/modified", coalesce_gap=0,
                   tail_prefetch=4 * 16 + 4)     # the index exactly: 4 chunks and a CRC-32C
    picked = [0, 1, 2, 3, 4, 15, 16, 17, 18, 19]
    got = zarrx.open_array(store, mode="r").get_orthogonal_selection(picked)
    assert got.tolist() in (OLD[picked].tolist(), NEW[picked].tolist())
    assert _NoETagHandler.gets["c/0"] > after
