"""No metadata write makes a document larger than a reader takes (``max_metadata_bytes``):
such a document would leave the node, or with consolidated metadata the whole hierarchy,
impossible to open. The limit is lowered here so that the documents stay small."""
from __future__ import annotations

import json

import pytest
import zarr

import zarrx
from zarrx.errors import MetadataError, ZarrUserWarning

LIMIT = 4096


@pytest.fixture(autouse=True)
def _small_limit():
    with zarrx.config.set(max_metadata_bytes=LIMIT):
        yield


@pytest.fixture(params=[2, 3], ids=["v2", "v3"])
def fmt(request):
    return request.param


def _hierarchy(fmt: int) -> dict:
    store: dict = {}
    g = zarrx.open_group(store, mode="w", zarr_format=fmt)
    g.create_group("a", attributes={"text": "a" * 1500})
    g.create_array("b", shape=(2,), dtype="i4", attributes={"text": "b" * 1500})
    return store


@pytest.mark.parametrize("name", ["a", "b"])
def test_attributes_past_the_limit_are_refused_and_the_node_still_opens(fmt, name):
    store = _hierarchy(fmt)
    before = dict(store)
    node = zarrx.open_group(store, mode="r+")[name]
    with pytest.raises(MetadataError, match=f"expected a document of at most {LIMIT} bytes"):
        node.attrs["more"] = "x" * LIMIT
    assert store == before
    assert zarrx.open_group(store, mode="r")[name].attrs["text"] == name * 1500


def test_consolidate_metadata_refuses_a_document_past_the_limit(fmt):
    store = _hierarchy(fmt)
    zarrx.open_group(store, mode="r+").create_group("c", attributes={"text": "c" * 1500})
    before = dict(store)
    key = "zarr.json" if fmt == 3 else ".zmetadata"
    with pytest.raises(MetadataError, match=f"the consolidated metadata of the group at '/' "
                                            f"would take [0-9]+ bytes at '{key}', more than the "
                                            f"{LIMIT} bytes a reader takes \\(zarrx.config "
                                            f"max_metadata_bytes\\); nothing was written"):
        zarrx.consolidate_metadata(store)
    assert store == before
    assert sorted(zarrx.open_group(store, mode="r").keys()) == ["a", "b", "c"]


def test_a_write_growing_consolidated_metadata_past_the_limit_removes_it(fmt):
    """The node is written; the consolidated metadata, which no reader could take, goes (with a
    warning), so readers list the hierarchy rather than fail to open it."""
    store = _hierarchy(fmt)
    zarrx.consolidate_metadata(store)
    g = zarrx.open_group(store, mode="r+")
    with pytest.warns(ZarrUserWarning, match="the consolidated metadata of the group at '/' "
                                             "would have taken [0-9]+ bytes"):
        g.create_group("c", attributes={"text": "c" * 1500})
    if fmt == 2:
        assert ".zmetadata" not in store
    else:
        assert "consolidated_metadata" not in json.loads(store["zarr.json"])
    assert zarrx.open_group(store, mode="r").metadata.consolidated is None
    assert sorted(zarrx.open_group(store, mode="r").keys()) == ["a", "b", "c"]
    theirs = zarr.open_group(zarr.storage.MemoryStore(
        {k: zarr.core.buffer.cpu.Buffer.from_bytes(v) for k, v in store.items()}), mode="r")
    assert sorted(theirs.keys()) == ["a", "b", "c"]
