"""The requests a read through kerchunk references makes to the server holding their targets."""
from __future__ import annotations

import base64
import http.server
import json

import numpy as np
import pytest

import zarrx

from loopback import answer_range, serving

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp", reason="aiohttp is not installed (pip install aiohttp)")

_ZARRAY = {"shape": [20], "chunks": [10], "dtype": ">i4", "fill_value": 0, "order": "C",
           "filters": None, "compressor": {"id": "zlib", "level": 1}, "zarr_format": 2}


def _server(objects: dict, seen: list):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(("GET", self.path, self.headers.get("Range")))
            answer_range(self, objects[self.path], [("ETag", '"v1"')])

        def do_HEAD(self):
            seen.append(("HEAD", self.path, None))
            answer_range(self, objects[self.path], [("ETag", '"v1"')])
    return Handler


def test_a_whole_file_reference_is_read_with_one_request():
    """fsspec sizes a whole-file reference (``[url]``) by asking its target's filesystem: a
    HEAD after each chunk's GET before. A read that found fewer bytes than it asked for says
    the size."""
    import zlib
    values = np.arange(20, dtype=">i4")
    objects = {f"/c{i}": zlib.compress(values[10 * i:10 * i + 10].tobytes(), 1)
               for i in range(2)}
    seen: list = []
    with serving(_server(objects, seen)) as base:
        doc = {"version": 1, "refs": {".zgroup": '{"zarr_format": 2}',
                                      "a/.zarray": json.dumps(_ZARRAY),
                                      "a/0": [f"{base}/c0"], "a/1": [f"{base}/c1"]}}
        a = zarrx.open_array("reference://", path="a", mode="r",
                             storage_options={"fo": doc, "remote_protocol": "http"})
        assert seen == []                             # the metadata is held inline
        assert a[12:15].tolist() == [12, 13, 14]
        assert [(m, p) for m, p, _ in seen] == [("GET", "/c1")]
        seen.clear()
        assert a[...].tolist() == list(range(20))
        assert sorted((m, p) for m, p, _ in seen) == [("GET", "/c0"), ("GET", "/c1")]


def test_a_reference_file_is_read_once_for_stores_made_again(tmp_path, monkeypatch):
    """A store unpickled in a dask task, or opened again, takes the reference set read before
    (fsspec's cache of filesystem instances did so when it read the file itself)."""
    import pickle
    from fsspec.implementations.local import LocalFileSystem
    doc = {"version": 1, "refs": {".zgroup": '{"zarr_format": 2}', "a/.zarray": json.dumps(
        {**_ZARRAY, "compressor": None}), "a/0": "base64:" + base64.b64encode(bytes(40)).decode()}}
    fo = tmp_path / "refs.json"
    fo.write_text(json.dumps(doc))
    opened = []
    stock = LocalFileSystem._open

    def _open(self, path, *args, **kwargs):
        opened.append(path)
        return stock(self, path, *args, **kwargs)

    monkeypatch.setattr(LocalFileSystem, "_open", _open)
    so = {"fo": str(fo), "remote_protocol": "file"}
    a = zarrx.open_array("reference://", path="a", mode="r", storage_options=so)
    b = zarrx.open_array("reference://", path="a", mode="r", storage_options=so)
    c = pickle.loads(pickle.dumps(a))
    for z in (a, b, c):
        assert z[:10].tolist() == [0] * 10
    assert opened == [str(fo)]
    fresh = zarrx.open_array("reference://", path="a", mode="r",
                             storage_options={**so, "skip_instance_cache": True})
    assert fresh[0] == 0 and opened == [str(fo)] * 2


def test_a_reference_file_written_again_is_read_again(tmp_path):
    doc = {"version": 1, "refs": {".zgroup": '{"zarr_format": 2}', "a/.zarray": json.dumps(
        {**_ZARRAY, "compressor": None}), "a/0": "base64:" + base64.b64encode(bytes(40)).decode()}}
    fo = tmp_path / "refs.json"
    fo.write_text(json.dumps(doc))
    so = {"fo": str(fo), "remote_protocol": "file"}
    assert zarrx.open_array("reference://", path="a", mode="r", storage_options=so)[0] == 0
    doc["refs"]["a/0"] = "base64:" + base64.b64encode(b"\x00\x00\x00\x07" * 10).decode()
    fo.write_text(json.dumps(doc) + "  ")
    assert zarrx.open_array("reference://", path="a", mode="r", storage_options=so)[0] == 7
