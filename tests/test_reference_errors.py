"""Broken kerchunk reference sets: each failure is a ZarrError naming the key and the target
(or the reference set), never the fill value and never an exception of fsspec's."""
from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest

import zarrx
from zarrx.errors import RemoteError, RemoteNotFoundError, StoreError, StoreNotFoundError

fsspec = pytest.importorskip("fsspec")

_FORMS = "is not inline data (text or 'base64:...'), [url] or [url, offset, length]"


@pytest.fixture
def refs(tmp_path):
    """A version 1 reference set of one array 'a' (20 big-endian int32 in one chunk) whose
    chunk is bytes 16-95 of a local file."""
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"x" * 16 + np.arange(20, dtype=">i4").tobytes() + b"tail")
    zarray = {"shape": [20], "chunks": [20], "dtype": ">i4", "fill_value": 0, "order": "C",
              "filters": None, "compressor": None, "zarr_format": 2}
    return {"version": 1, "refs": {".zgroup": '{"zarr_format": 2}',
                                   "a/.zarray": json.dumps(zarray),
                                   "a/0": [str(blob), 16, 80]}}, str(blob)


def _read(doc, **so):
    a = zarrx.open_array("reference://", path="a", mode="r",
                         storage_options={"fo": doc, "remote_protocol": "file", **so})
    return a[...]


def _prefix(key="a/0"):
    return re.escape(f"FsspecStore('reference:', read_only=True): cannot read {key!r} "
                     f"(reference:/{key}): ")


def test_the_reference_set_reads(refs):
    doc, _ = refs
    assert _read(doc).tolist() == list(range(20))


def test_a_target_shorter_than_its_reference_names_both(refs):
    doc, blob = refs
    doc["refs"]["a/0"] = [blob, 60, 80]
    with pytest.raises(RemoteError, match=_prefix() + re.escape(
            f"its reference names bytes 60-139 of {blob!r}, which ends before them: 40 bytes "
            f"found of bytes 60-139 (the file is shorter than its references say)")):
        _read(doc)


@pytest.mark.parametrize("ref", [5, ["/x", 5], ["/x", 1, 2, 3]], ids=["int", "two", "four"])
def test_a_reference_fsspec_cannot_take_apart_is_named(refs, ref):
    """fsspec's own TypeError / ValueError went through before."""
    doc, _ = refs
    doc["refs"]["a/0"] = ref
    with pytest.raises(RemoteError, match=_prefix() + re.escape(f"its reference, {ref!r}, "
                                                                + _FORMS)):
        _read(doc)


def test_a_target_on_an_unknown_protocol_is_named(refs):
    doc, _ = refs
    doc["refs"]["a/0"] = ["nosuchproto://x/y.h5", 0, 80]
    with pytest.raises(RemoteError, match=_prefix() + re.escape(
            "the target of its reference, 'nosuchproto://x/y.h5': fsspec knows no protocol "
            "'nosuchproto'")):
        _read(doc)


def test_a_target_on_a_protocol_without_a_filesystem_says_how_to_give_one(refs):
    pytest.importorskip("s3fs")
    doc, _ = refs
    doc["refs"]["a/0"] = ["s3://bucket/y.h5", 0, 80]
    with pytest.raises(RemoteError, match=_prefix() + re.escape(
            "the target of its reference, 's3://bucket/y.h5': the reference filesystem has no "
            "filesystem for its protocol 's3': give remote_protocol='s3' (and remote_options), "
            "or, for references on several protocols, fs={'s3': {...options}, ...}")):
        _read(doc)


def test_a_missing_target_is_no_fill_value(refs, tmp_path):
    doc, _ = refs
    doc["refs"]["a/0"] = [str(tmp_path / "gone.bin"), 0, 80]
    with pytest.raises(RemoteNotFoundError, match=_prefix() + re.escape(
            f"the target of its reference, {str(tmp_path / 'gone.bin')!r}, is missing")):
        _read(doc)


def test_templates_the_set_does_not_define_are_named(refs):
    doc, blob = refs
    doc["refs"]["a/0"] = ["{{u}}", 16, 80]
    with pytest.raises(RemoteError, match=_prefix() + re.escape(
            "the target of its reference, '{{u}}', names a template the reference set does "
            "not define")):
        _read(doc)
    doc["templates"] = {"v": blob}
    with pytest.raises(StoreError, match=re.escape(
            "FsspecStore('reference:'): the reference of 'a/0' names the template 'u', "
            "which its 'templates' do not define")):
        _read(doc)
    doc["templates"] = {"u": blob}
    assert _read(doc).tolist() == list(range(20))


def test_inline_data_that_is_not_base64_names_its_key(refs):
    doc, _ = refs
    doc["refs"]["a/0"] = "base64:AAAAA"
    with pytest.raises(StoreError, match=re.escape(
            "FsspecStore('reference:'): the reference of 'a/0' is not base64 after its "
            "'base64:' prefix")):
        _read(doc)
    doc["refs"]["a/0"] = "base64:" + base64.b64encode(np.arange(20, dtype=">i4").tobytes()
                                                      ).decode()
    assert _read(doc).tolist() == list(range(20))


def test_a_reference_file_that_is_not_json_names_it(tmp_path):
    fo = tmp_path / "refs.json"
    fo.write_text("{not json")
    with pytest.raises(StoreError, match=re.escape(
            f"FsspecStore('reference:'): the reference set {str(fo)!r} is not JSON: ")):
        zarrx.open_group("reference://", mode="r", storage_options={"fo": str(fo)})


@pytest.mark.parametrize("doc, what", [
    ([1, 2], " is no kerchunk reference set: expected a JSON object, found an array"),
    ({"version": 1, "refs": 5}, ": 'refs': expected a JSON object, found 5"),
    ({"version": 1, "refs": {}, "gen": {}}, ": 'gen': expected a JSON array, found {}"),
    ({"version": 2, "refs": {}}, ": 'version': expected 1 (or no 'version', for version 0), "
                                 "found 2"),
    ({"version": 1, "refs": {}, "templates": {"u": 1}},
     ": 'templates'.u: expected a string, found 1"),
], ids=["array", "refs", "gen", "version", "template"])
def test_a_document_that_is_no_reference_set_names_what(tmp_path, doc, what):
    """fsspec's AttributeError (``'int' object has no attribute 'items'``) before."""
    fo = tmp_path / "refs.json"
    fo.write_text(json.dumps(doc))
    with pytest.raises(StoreError, match=re.escape(
            f"FsspecStore('reference:'): the reference set {str(fo)!r}{what}")):
        zarrx.open_group("reference://", mode="r", storage_options={"fo": str(fo)})
    if not isinstance(doc, list):
        with pytest.raises(StoreError, match=re.escape(
                f"FsspecStore('reference:'): the reference set given as fo{what}")):
            zarrx.open_group("reference://", mode="r", storage_options={"fo": doc})


def test_a_missing_reference_file_is_a_missing_store(tmp_path):
    fo = str(tmp_path / "gone.json")
    with pytest.raises(StoreNotFoundError, match=re.escape(
            f"FsspecStore('reference:'): the reference set {fo!r} (storage option 'fo') "
            f"does not exist")):
        zarrx.open_group("reference://", mode="r", storage_options={"fo": fo})
    assert issubclass(StoreNotFoundError, FileNotFoundError)


def test_targets_on_several_protocols_read_through_fs(refs):
    """fsspec wraps none of the synchronous filesystems of the storage option ``fs`` (nor the
    local one it adds for paths): their reads failed with "'MemoryFileSystem' object has no
    attribute '_cat_file'" (zarr-python fails alike)."""
    doc, blob = refs
    memory = fsspec.filesystem("memory")
    memory.pipe("/refs-walk/blob.bin", open(blob, "rb").read())
    doc["refs"]["a/.zarray"] = doc["refs"]["a/.zarray"].replace("[20]", "[40]", 1)
    doc["refs"]["a/1"] = ["memory://refs-walk/blob.bin", 16, 80]
    want = list(range(20)) * 2
    for fs in ({"file": {}, "memory": {}}, {"memory": {}}, {"memory": memory}):
        assert _read(doc, fs=fs).tolist() == want
    memory.rm("/refs-walk", recursive=True)


@pytest.mark.parametrize("part", [[-5, 80], [16, -1], [1.5, 80], ["16", 80]],
                         ids=["negative-offset", "negative-length", "float", "text"])
def test_a_part_that_is_no_range_of_bytes_is_named(refs, part):
    """The local filesystem's "read length must be non-negative" (or a TypeError) before."""
    doc, blob = refs
    doc["refs"]["a/0"] = [blob, *part]
    ref = [blob, *part]
    with pytest.raises(RemoteError, match=_prefix() + re.escape(
            f"its reference, {ref!r}, names no part of its target: expected [url, offset, "
            f"length] with an offset and a length of 0 or more")):
        _read(doc)
