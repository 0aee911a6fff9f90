"""Creating a hierarchy one level at a time (``g.create_group("a").create_group("b")...``,
``require_group``, ``create_array`` at the end of such a chain, attribute changes of its nodes)
reads a few documents per call, not those of every group above the new node: what a call
learnt of the groups above (whether each carries consolidated metadata) is checked by the
generation of its document, which is read again only when it changed. A group another writer
consolidates between two calls has a new generation, so it is kept in step all the same."""
from __future__ import annotations

import warnings

import pytest
import zarr

import zarrx
from zarrx.store import LocalStore, MemoryStore
from zarrx.store.counting import CountingStore

from test_consolidated_nested_in_step import (  # noqa: E402 - shared helpers
    _consolidated, _consolidated_afresh as _afresh, _doc_key)

FORMATS = [2, 3]


def _counted(zarr_format, consolidated):
    store = CountingStore(MemoryStore())
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    g.create_group("x")
    if consolidated:
        zarrx.consolidate_metadata(store)
    g = zarrx.open_group(store, mode="r+")
    store.reset()
    return store, g


def _chain_reads(store, g, levels, step):
    """The store reads of each of ``levels`` calls of ``step(handle, i)``, each on the handle
    the previous one returned."""
    reads, h = [], g
    for i in range(levels):
        before = store.counts["get"]
        h = step(h, i)
        reads.append(store.counts["get"] - before)
    return reads, h


@pytest.mark.parametrize("consolidated", [False, True])
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_a_chain_of_single_level_groups_reads_a_few_documents_per_level(zarr_format,
                                                                        consolidated):
    store, g = _counted(zarr_format, consolidated)
    reads, _ = _chain_reads(store, g, 20, lambda h, i: h.create_group(f"l{i}"))
    # the same few documents at every depth (before: one more for each group above, so the
    # 20th level read 19 more than the first, 315 to 400 reads in all)
    assert max(reads[10:]) <= max(reads[:10])
    # (among them the held group's own documents, read in the same batch: another writer
    # may have deleted it)
    assert sum(reads) <= 14 * 20
    if consolidated:
        # the root's consolidated document: written twice per level (pending, then entry), as
        # before, and listing the whole chain
        assert store.sets_by_key[_doc_key("", zarr_format)] == 2 * 20
        assert _consolidated(store, "", zarr_format) == _afresh(store, "", zarr_format)


@pytest.mark.parametrize("zarr_format", FORMATS)
def test_require_group_arrays_and_attributes_along_a_chain_read_a_few_documents_each(
        zarr_format):
    store, g = _counted(zarr_format, True)
    reads, deep = _chain_reads(store, g, 20, lambda h, i: h.require_group(f"l{i}"))
    assert max(reads[10:]) <= max(reads[:10])

    def array_and_attrs(h, i):
        h.create_array(f"a{i}", shape=(2,), dtype="i4").attrs["n"] = i
        h.attrs["level"] = i
        return h[f"l{i + 1}"]
    reads, _ = _chain_reads(store, g["l0"], 19, array_and_attrs)
    assert max(reads[10:]) <= max(reads[:10])
    assert _consolidated(store, "", zarr_format) == _afresh(store, "", zarr_format)
    assert zarrx.open_group(store, mode="r")["/".join(f"l{i}" for i in range(10))].attrs[
        "level"] == 9


def _stores(tmp_path):
    return [("memory", MemoryStore()), ("local", LocalStore(str(tmp_path / "t.zarr")))]


@pytest.mark.parametrize("consolidator", ["zarrx", "zarr-python"])
@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_group_consolidated_by_another_writer_between_two_calls_is_kept_in_step(
        tmp_path, kind, zarr_format, consolidator):
    store = dict(_stores(tmp_path))[kind]
    if consolidator == "zarr-python" and kind == "memory":
        pytest.skip("zarr-python writes through a path")
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    h = g.create_group("a").create_group("b").create_group("c")
    h.create_group("d")                     # what each level learnt of those above is in use
    if consolidator == "zarrx":
        zarrx.consolidate_metadata(LocalStore(store.root) if kind == "local" else store,
                                   path="a/b")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # zarr-python: v3 inline consolidated
            zarr.consolidate_metadata(str(store.root), path="a/b", zarr_format=zarr_format)
    e = h.create_group("e").create_group("f")
    e.create_array("x", shape=(3,), dtype="i4")
    e.attrs["k"] = 1
    cm = _consolidated(store, "a/b", zarr_format)
    assert "zarrx_pending" not in cm
    if consolidator == "zarrx":             # (zarr-python nests the entries of groups below)
        assert cm == _afresh(store, "a/b", zarr_format)
    listed = zarrx.open_group(store, path="a/b", mode="r")
    assert listed.metadata.consolidated is not None
    assert {n for n, _ in listed.members(max_depth=None)} == {
        "c", "c/d", "c/e", "c/e/f", "c/e/f/x"}
    assert listed["c/e/f"].attrs["k"] == 1


@pytest.mark.parametrize("create", ["array", "group"])
@pytest.mark.parametrize("zarr_format", FORMATS)
@pytest.mark.parametrize("kind", ["memory", "local"])
def test_creating_through_a_handle_of_a_group_another_writer_deleted_makes_it_again(
        tmp_path, kind, zarr_format, create):
    """A handle skips reading the groups above its own, not its own: when another writer
    deleted that group, the new node comes with the groups above it again, as creating it
    from the root does (before: a node with no parent, listed by no reader)."""
    store = dict(_stores(tmp_path))[kind]
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    held = g.create_group("a").create_group("b")
    del zarrx.open_group(store, mode="r+")["a"]
    if create == "array":
        held.create_array("x", shape=(2,), dtype="i1")
    else:
        held.create_group("x")
    listed = {n for n, _ in zarrx.open_group(store, mode="r").members(max_depth=None)}
    assert listed == {"a", "a/b", "a/b/x"}
    if kind == "local":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = zarr.open_group(str(store.root), mode="r", zarr_format=zarr_format)
            assert {n for n, _ in theirs.members(max_depth=None)} == listed


@pytest.mark.parametrize("create", ["array", "group"])
@pytest.mark.parametrize("zarr_format", FORMATS)
def test_creating_through_a_handle_of_a_group_replaced_meanwhile_checks_what_replaced_it(
        zarr_format, create):
    """The group a handle holds, replaced by another writer with an array or with a group of
    the other Zarr format, is checked as any group above a new node is."""
    store = MemoryStore()
    g = zarrx.open_group(store, mode="w", zarr_format=zarr_format)
    held = g.create_group("a")
    zarrx.create_array(store, name="a", shape=(2,), dtype="i1", overwrite=True)

    def make():
        return held.create_array("x", shape=(2,), dtype="i1") if create == "array" \
            else held.create_group("x")
    with pytest.raises(zarrx.errors.ContainsArrayError, match="'a' is an array"):
        make()
    other = 5 - zarr_format
    zarrx.open_group(store, mode="w", zarr_format=other).create_group("a")
    with pytest.raises(zarrx.MetadataError, match=f"inside the Zarr v{other} group 'a'"):
        make()
    assert not any(k.startswith("a/x") for k in store.list_prefix(""))
