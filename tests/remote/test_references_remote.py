"""kerchunk references whose targets are S3 objects and web addresses (the test servers)."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

import zarrx

from reference_files import make_hdf5, references

fsspec = pytest.importorskip("fsspec")
pytest.importorskip("kerchunk", reason="kerchunk is not installed (pip install kerchunk)")
h5py = pytest.importorskip("h5py", reason="h5py is not installed (pip install h5py)")


def _retargeted(fo: str, url: str) -> dict:
    doc = json.load(open(fo))
    doc["refs"] = {k: [url, *v[1:]] if isinstance(v, list) else v
                   for k, v in doc["refs"].items()}
    return doc


def _check(doc, so, h5):
    g = zarrx.open_group("reference://", mode="r", storage_options={"fo": doc, **so})
    with h5py.File(h5) as f:
        for path in ("big", "chunked", "contig", "sparse", "grp/deep/v"):
            assert np.array_equal(g[path][...], f[path][()]), path
        assert np.array_equal(g["big"][60:70, 120:130], f["big"][60:70, 120:130])


def test_targets_on_s3(s3_server, tmp_path):
    pytest.importorskip("s3fs")
    h5 = make_hdf5(tmp_path / "plain.h5")
    url = f"{s3_server.url()}/plain.h5"
    s3 = fsspec.filesystem("s3", skip_instance_cache=True, **s3_server.fsspec_options)
    s3.put(str(h5), url)
    doc = _retargeted(references(h5, tmp_path / "refs.json", 100), url)
    _check(doc, {"remote_protocol": "s3", "remote_options": s3_server.fsspec_options}, h5)


def test_targets_on_a_web_server(http_server, http_root, tmp_path):
    pytest.importorskip("aiohttp")
    h5 = make_hdf5(tmp_path / "plain.h5")
    shutil.copy(h5, http_root / "refs-plain.h5")
    os.chmod(http_root / "refs-plain.h5", 0o644)
    doc = _retargeted(references(h5, tmp_path / "refs.json", 0), f"{http_server.url}/refs-plain.h5")
    _check(doc, {"remote_protocol": "http"}, h5)
    doc["refs"]["contig/0"] = [f"{http_server.url}/gone.h5", 0, 80]
    with pytest.raises(zarrx.errors.RemoteNotFoundError,
                       match=r"the target of its reference, 'http://.*/gone.h5', is missing"):
        zarrx.open_array("reference://", path="contig", mode="r",
                         storage_options={"fo": doc, "remote_protocol": "http"})[...]


def _read_in_child(doc, so, queue):
    try:
        g = zarrx.open_group("reference://", mode="r", storage_options={"fo": doc, **so})
        queue.put(g["big"][60:62, 120:122].tolist())
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        queue.put(f"{type(exc).__name__}: {exc}")


def test_targets_on_several_protocols_read_in_a_forked_child(s3_server, tmp_path):
    """Local targets and S3 ones (the storage option fs): the S3 filesystem is made by fsspec
    from its options, so a forked child makes its own (one bound to the parent's event loop
    is not fork-safe)."""
    import multiprocessing
    pytest.importorskip("s3fs")
    h5 = make_hdf5(tmp_path / "plain.h5")
    url = f"{s3_server.url()}/plain.h5"
    fsspec.filesystem("s3", skip_instance_cache=True, **s3_server.fsspec_options).put(str(h5), url)
    doc = json.load(open(references(h5, tmp_path / "refs.json", 0)))
    doc["refs"] = {k: [url, *v[1:]] if isinstance(v, list) and k.startswith("big/") else v
                   for k, v in doc["refs"].items()}
    so = {"fs": {"file": {}, "s3": s3_server.fsspec_options}}
    g = zarrx.open_group("reference://", mode="r", storage_options={"fo": doc, **so})
    with h5py.File(h5) as f:
        want = f["big"][60:62, 120:122].tolist()
        assert g["big"][60:62, 120:122].tolist() == want
        assert np.array_equal(g["chunked"][...], f["chunked"][()])
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_read_in_child, args=(doc, so, queue))
    child.start()
    got = queue.get(timeout=120)
    child.join(30)
    assert got == want
