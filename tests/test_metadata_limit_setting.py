"""``zarrx.config.max_metadata_bytes``: the largest metadata document read or written is a
setting (default 64 MiB, ``ZARRX_MAX_METADATA_BYTES``), read at each use, so that the
consolidated metadata of a very large hierarchy written by zarr-python opens once it is
raised. The documents here are kept small by lowering the limit."""
from __future__ import annotations

import json
import os
import pathlib
import warnings

import pytest
import zarr

import zarrx
from zarrx.errors import ArgumentError, MetadataError, ZarrUserWarning
from zarrx.metadata import json as mjson
from zarrx.store import LocalStore, MemoryStore
from zarrx.store.base import Store

LIMIT = 64 << 10
RAISED = 1 << 20
ARRAYS = 40                 # with 2 KiB of attributes each: about 100 KiB consolidated


def _message(key: str, size: int | str, limit: int) -> str:
    found = f"{size} bytes" if isinstance(size, int) else size
    return (f"{key}: expected a document of at most {limit} bytes, found {found} (the setting "
            f"zarrx.config max_metadata_bytes, or the environment variable "
            f"ZARRX_MAX_METADATA_BYTES, raises the limit)")


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def written(request, tmp_path_factory) -> tuple[int, pathlib.Path, str]:
    """A hierarchy zarr-python wrote and consolidated: its format, path, consolidated key."""
    fmt = request.param
    path = tmp_path_factory.mktemp(f"big{fmt}") / "h.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = zarr.open_group(zarr.storage.LocalStore(path), mode="w", zarr_format=fmt)
        for w in range(4):
            well = root.create_group(f"w{w}")
            for f in range(ARRAYS // 4):
                well.create_array(f"f{f}", shape=(8,), chunks=(4,), dtype="u2",
                                  attributes={"text": f"{w}/{f} " + "x" * 2048})
        zarr.consolidate_metadata(zarr.storage.LocalStore(path))
    return fmt, path, "zarr.json" if fmt == 3 else ".zmetadata"


def _members(group) -> list[str]:
    return sorted(name for name, _ in group.members(max_depth=None))


def _memory(path: pathlib.Path) -> MemoryStore:
    store = MemoryStore()
    for p in path.rglob("*"):
        if p.is_file():
            store.set(p.relative_to(path).as_posix(), p.read_bytes())
    return store


def test_the_default_is_64_mib():
    assert zarrx.config.get("max_metadata_bytes") == 64 << 20
    assert mjson.max_document_bytes() == 64 << 20


@pytest.mark.parametrize("on", ["local", "memory"])
def test_a_consolidated_document_past_the_limit_opens_once_it_is_raised(written, on):
    fmt, path, key = written
    size = (path / key).stat().st_size
    assert LIMIT < size < RAISED
    store = LocalStore(path) if on == "local" else _memory(path)
    with zarrx.config.set(max_metadata_bytes=LIMIT):
        with pytest.raises(MetadataError) as info:
            zarrx.open_group(store, mode="r")
        assert str(info.value) == _message(key, size, LIMIT)
        if fmt == 3:            # the root's own document is the consolidated one
            with pytest.raises(MetadataError, match="found [0-9]+ bytes"):
                zarrx.open_group(store, mode="r", use_consolidated=False)
    with zarrx.config.set(max_metadata_bytes=RAISED):
        g = zarrx.open_group(store, mode="r")
        assert g.metadata.consolidated is not None
        mine = _members(g)
    theirs = _members(zarr.open_group(zarr.storage.LocalStore(path), mode="r"))
    assert mine == theirs and len(mine) == 4 + ARRAYS


def test_a_store_that_cannot_tell_sizes_is_not_read_whole(written):
    """The message gives the size where the store tells it without a read; a store that
    cannot is not read whole to find it."""
    fmt, path, key = written
    reads: list = []

    class NoSizes(Store):
        latency_bound = False

        def __init__(self, inner):
            self.inner = inner

        def get(self, k, byte_range=None):
            reads.append((k, byte_range))
            return self.inner.get(k, byte_range)

    with zarrx.config.set(max_metadata_bytes=LIMIT):
        with pytest.raises(MetadataError) as info:
            zarrx.open_group(NoSizes(_memory(path)), mode="r")
    assert str(info.value) == _message(key, f"more than {LIMIT} bytes", LIMIT)
    assert reads and all(r is not None and r.length == LIMIT + 1 for _, r in reads)


def test_listing_children_reads_their_documents_up_to_the_limit(tmp_path):
    store = LocalStore(tmp_path)
    g = zarrx.open_group(store, mode="w")
    g.create_group("a", attributes={"text": "x" * 4096})
    reads: list = []
    get_many = LocalStore.get_many

    class Recording(LocalStore):
        def get_many(self, requests):
            requests = list(requests)
            reads.extend(requests)
            return get_many(self, requests)

    with zarrx.config.set(max_metadata_bytes=2048):
        with pytest.raises(MetadataError) as info:
            list(zarrx.open_group(Recording(tmp_path), mode="r", use_consolidated=False).members())
    size = (tmp_path / "a" / "zarr.json").stat().st_size
    assert str(info.value) == _message("a/zarr.json", size, 2048)
    assert all(r is not None and r.length == 2049 for _, r in reads)


def test_consolidation_and_node_writes_follow_the_setting(written):
    """With the limit raised, consolidate_metadata writes a document past the lower limit
    and a node write keeps it in step (no warning); with it lowered again, consolidation is
    refused (the removal on a node write: tests/test_document_limits.py)."""
    fmt, path, key = written
    store = _memory(path)
    with zarrx.config.set(max_metadata_bytes=RAISED):
        zarrx.consolidate_metadata(store)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ZarrUserWarning)
            zarrx.open_group(store, mode="r+").create_group("extra")
        assert "extra" in _members(zarrx.open_group(store, mode="r"))
        assert zarrx.open_group(store, mode="r").metadata.consolidated is not None
    # v3: the root's zarr.json, the consolidated document, is itself too large to be read
    refused = f"more than the {LIMIT} bytes a reader takes" if fmt == 2 else \
        f"^zarr\\.json: expected a document of at most {LIMIT} bytes"
    with zarrx.config.set(max_metadata_bytes=LIMIT), pytest.raises(MetadataError, match=refused):
        zarrx.consolidate_metadata(store)


def test_a_document_remembered_under_a_raised_limit_is_refused_once_it_is_lowered():
    store = MemoryStore()
    zarrx.create_array(store, shape=(2,), dtype="i4", attributes={"text": "x" * 8192})
    zarrx.open_array(store, mode="r")           # parsed and remembered
    size = len(store.get("zarr.json"))
    with zarrx.config.set(max_metadata_bytes=4096):
        with pytest.raises(MetadataError) as info:
            zarrx.open_array(store, mode="r")
        assert str(info.value) == _message("zarr.json", size, 4096)
        with pytest.raises(MetadataError, match="expected a document of at most 4096 bytes"):
            zarrx.open_array(store, mode="r+").attrs["more"] = 1


def test_new_items_are_bounded_by_a_64th_of_the_limit():
    with zarrx.config.set(max_metadata_bytes=64 << 10):
        with pytest.raises(zarrx.errors.DataTypeError,
                           match="a data type of at most 1024 bytes an item"):
            zarrx.create_array({}, shape=(1,), dtype="S1025")
        zarrx.create_array({}, shape=(1,), dtype="S1024")


@pytest.mark.parametrize("value", [0, -1, True, 1.5, "64MiB", None])
def test_a_value_that_is_not_a_positive_int_is_refused_naming_the_setting(value):
    with pytest.raises(ArgumentError, match=r"^zarrx\.config\.max_metadata_bytes: expected an "
                                            r"int >= 1 \(bytes\), found "):
        zarrx.config.set(max_metadata_bytes=value)
    assert zarrx.config.get("max_metadata_bytes") == 64 << 20


@pytest.mark.parametrize("text,value", [("1048576", 1 << 20), (" 4096 ", 4096), ("0", None),
                                        ("none", None), ("1e6", None), ("", None)])
def test_the_environment_variable(monkeypatch, text, value):
    monkeypatch.setenv("ZARRX_MAX_METADATA_BYTES", text)
    try:
        if value is None:
            with pytest.raises(ArgumentError, match=r"^environment variable "
                                                    r"ZARRX_MAX_METADATA_BYTES: expected an int "
                                                    r">= 1 \(bytes\), found "):
                zarrx.config.refresh()
        else:
            zarrx.config.refresh()
            assert mjson.max_document_bytes() == value
            with pytest.raises(MetadataError, match=f"at most {value} bytes, found"):
                mjson.load(json.dumps({"a": "x" * value}), "k")
    finally:
        monkeypatch.delenv("ZARRX_MAX_METADATA_BYTES")
        zarrx.config.refresh()
    assert os.environ.get("ZARRX_MAX_METADATA_BYTES") is None
    assert zarrx.config.get("max_metadata_bytes") == 64 << 20


def test_a_limit_past_any_size_reads_documents_whole(tmp_path):
    for store in (MemoryStore(), LocalStore(tmp_path)):
        zarrx.create_array(store, shape=(2,), dtype="i4", attributes={"a": 1})
        with zarrx.config.set(max_metadata_bytes=1 << 70):
            assert zarrx.open_array(store, mode="r").attrs["a"] == 1


def test_a_folder_whose_zarr_json_is_past_the_limit_is_not_looked_into(tmp_path):
    from zarrx.tools.location import _node_type
    zarrx.create_array(LocalStore(tmp_path), shape=(2,), dtype="i4",
                       attributes={"text": "x" * 4096})
    assert _node_type(str(tmp_path)) == "array"
    with zarrx.config.set(max_metadata_bytes=4096):
        assert _node_type(str(tmp_path)) is None


def test_a_remote_prefix_whose_zarr_json_is_past_the_limit_is_not_looked_into():
    from zarrx.store import make_store
    from zarrx.tools.location import _refuse_inside_array_url
    store = make_store("memory://limit-setting/arr", "w")
    zarrx.create_array(store, shape=(2,), dtype="i4", attributes={"text": "x" * 4096})
    with pytest.raises(zarrx.errors.ContainsArrayError, match="inside the array"):
        _refuse_inside_array_url("memory://limit-setting/arr/x", None)
    with zarrx.config.set(max_metadata_bytes=4096):
        _refuse_inside_array_url("memory://limit-setting/arr/x", None)


@pytest.mark.parametrize("fmt", [2, 3])
def test_read_modify_writes_read_documents_up_to_the_limit(tmp_path, fmt):
    """Changing attributes reads the node's document again, up to one byte past the limit
    (before: whole), and refuses one past it, naming its size."""
    reads: list = []

    class Recording(LocalStore):
        def get(self, key, byte_range=None):
            reads.append((key, byte_range))
            return super().get(key, byte_range)

        def get_versioned(self, key, byte_range=None, **kw):
            reads.append((key, byte_range))
            return super().get_versioned(key, byte_range, **kw)

    z = zarrx.create_array(Recording(tmp_path), shape=(2,), dtype="i4", zarr_format=fmt,
                           attributes={"text": "x" * 4096})
    key = "zarr.json" if fmt == 3 else ".zattrs"
    size = (tmp_path / key).stat().st_size
    reads.clear()
    with zarrx.config.set(max_metadata_bytes=2048):
        with pytest.raises(MetadataError) as info:
            z.attrs["more"] = 1
    assert str(info.value) == _message(key, size, 2048)
    assert [r for k, r in reads if k == key] and \
        all(r is not None and r.length == 2049 for k, r in reads if k == key)


def test_a_zarr_python_store_tells_the_size_of_a_document_it_refuses(written):
    fmt, path, key = written
    mine = _memory(path)
    theirs = zarr.storage.MemoryStore({k: zarr.core.buffer.cpu.Buffer.from_bytes(mine.get(k))
                                       for k in mine.list()})
    with zarrx.config.set(max_metadata_bytes=LIMIT):
        with pytest.raises(MetadataError) as info:
            zarrx.open_group(theirs, mode="r")
    assert str(info.value) == _message(key, (path / key).stat().st_size, LIMIT)
