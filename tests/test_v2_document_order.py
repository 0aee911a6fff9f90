"""A Zarr v2 node's attributes (``.zattrs``) are written before the document that makes it a
node (``.zarray`` / ``.zgroup``), so no reader, and no writer killed in between, ever finds the
node without its attributes (an xarray variable without ``_ARRAY_DIMENSIONS`` fails to open).
A ``.zattrs`` alone is no node."""
from __future__ import annotations

import numpy as np
import pytest

import zarrx
from zarrx.store.memory import MemoryStore

xr = pytest.importorskip("xarray")
import zarrx.xarray as zx  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::FutureWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]

DOCS = (".zattrs", ".zarray", ".zgroup")


class Killed(BaseException):
    """The writer stops here (as a killed process would)."""


class RecordingStore(MemoryStore):
    """A memory store listing the metadata documents written and removed, in order; with
    ``kill_after`` (a node document's name, ``.zattrs`` say) the write of the first such
    document of ``kill_node`` stops the writer right after it."""

    def __init__(self, kill_after: str | None = None, kill_node: str = "") -> None:
        super().__init__()
        self.log: list[tuple[str, str]] = []
        self.kill_after, self.kill_node = kill_after, kill_node

    def _note(self, op: str, key: str) -> None:
        if key.rpartition("/")[2] in DOCS:
            self.log.append((op, key))
            if key == f"{self.kill_node}/{self.kill_after}".lstrip("/") and op == "set":
                self.kill_after = None
                raise Killed(key)

    def set(self, key, value):
        super().set(key, value)
        self._note("set", key)

    def set_if(self, key, value, if_generation):
        generation = super().set_if(key, value, if_generation)
        self._note("set", key)
        return generation

    def set_many(self, items):
        for key, value in items:
            self.set(key, value)

    def delete(self, key):
        super().delete(key)
        self._note("delete", key)

    def written(self, path: str) -> list[str]:
        """The documents of the node at ``path`` written, by name, in order."""
        prefix = f"{path}/" if path else ""
        return [key[len(prefix):] for op, key in self.log
                if op == "set" and key.rpartition("/")[0] == path.rstrip("/")
                and key.startswith(prefix)]


@pytest.mark.parametrize("overwrite", [False, True])
def test_an_arrays_attributes_are_written_before_its_zarray(overwrite):
    # before: .zarray, then .zattrs
    store = RecordingStore()
    zarrx.create_array(store, name="a", shape=(4,), dtype="i4", zarr_format=2,
                       attributes={"units": "K"}, overwrite=overwrite)
    assert store.written("a") == [".zattrs", ".zarray"]
    assert zarrx.open_array(store, path="a").attrs["units"] == "K"


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_groups_attributes_are_written_before_its_zgroup(overwrite):
    store = RecordingStore()
    root = zarrx.open_group(store, mode="w", zarr_format=2)
    root.create_group("g", attributes={"title": "x"}, overwrite=overwrite)
    assert store.written("g") == [".zattrs", ".zgroup"]
    assert zarrx.open_group(store, path="g").attrs["title"] == "x"


def test_a_node_without_attributes_loses_a_stray_zattrs_before_its_document():
    """A ``.zattrs`` left by a killed writer is removed before the replacing node's document
    is written (a reader never sees the new node with the old attributes)."""
    store = RecordingStore()
    store.set("a/.zattrs", b'{"stale": 1}')
    zarrx.create_array(store, name="a", shape=(4,), dtype="i4", zarr_format=2, overwrite=True)
    order = [(op, key) for op, key in store.log if key.startswith("a/")][1:]
    assert order.index(("delete", "a/.zattrs")) < order.index(("set", "a/.zarray"))
    assert dict(zarrx.open_array(store, path="a").attrs) == {}


def test_an_xarray_variable_is_written_attributes_first():
    store = RecordingStore()
    ds = xr.Dataset({"v": (("t",), np.arange(3.0))}, attrs={"title": "x"})
    zx.to_zarrx(ds, store, mode="w", zarr_format=2)
    assert store.written("v") == [".zattrs", ".zarray"]


@pytest.mark.parametrize("engine", ["zarrx", "zarr"])
def test_a_writer_killed_between_a_variables_documents_leaves_a_readable_dataset(engine):
    """Killed after the variable's first document: the dataset opens without it (before:
    ``.zarray`` without ``.zattrs``, a variable without dimension names, which xarray refuses
    to open)."""
    store = RecordingStore(kill_after=".zattrs", kill_node="v")
    zx.to_zarrx(xr.Dataset({"u": (("t",), np.arange(3.0))}), store, mode="w", zarr_format=2,
                consolidated=False)
    ds = xr.Dataset({"u": (("t",), np.arange(3.0)), "v": (("t",), np.arange(3.0) + 1)})
    with pytest.raises(Killed):
        zx.to_zarrx(ds, store, mode="a", consolidated=False)
    assert store.exists("v/.zattrs") and not store.exists("v/.zarray")
    if engine == "zarrx":
        got = xr.open_dataset(store, engine="zarrx")
    else:
        import zarr
        got = xr.open_zarr(zarr.storage.MemoryStore(
            {k: zarr.core.buffer.cpu.Buffer.from_bytes(store.get(k))
             for k in store.list_prefix("")}), consolidated=False)
    assert list(got.data_vars) == ["u"]
    # the write made again completes the variable
    zx.to_zarrx(ds, store, mode="a", consolidated=False)
    xr.testing.assert_identical(xr.open_dataset(store, engine="zarrx").load(), ds)


def test_two_creators_of_one_array_leave_the_winners_attributes():
    """A creator that finds the array made by another meanwhile removes the ``.zattrs`` it
    wrote only at the generation it wrote (here: taken over by the winner, so kept)."""
    store = MemoryStore()
    zarrx.create_array(store, name="a", shape=(2,), dtype="i4", zarr_format=2,
                       attributes={"who": "first"})
    with pytest.raises(zarrx.errors.ContainsArrayError):
        zarrx.create_array(store, name="a", shape=(2,), dtype="i4", zarr_format=2,
                           attributes={"who": "second"})
    assert zarrx.open_array(store, path="a").attrs["who"] == "first"


class RacingStore(MemoryStore):
    """Runs ``before(self)`` once, right before the first conditional write of ``key``."""

    def __init__(self, key, before):
        super().__init__()
        self.key, self.before = key, before

    def set_if(self, key, value, if_generation):
        if key == self.key and self.before is not None:
            before, self.before = self.before, None
            before(self)
        return super().set_if(key, value, if_generation)


def test_a_creator_whose_zattrs_another_took_over_writes_it_again():
    """Another creator of the array writes its attributes between this one's and its
    ``.zarray`` (and then loses the race for the ``.zarray``): the array keeps this one's."""
    store = RacingStore("a/.zarray", lambda s: s.set("a/.zattrs", b'{"who": "other"}'))
    zarrx.create_array(store, name="a", shape=(2,), dtype="i4", zarr_format=2,
                       attributes={"who": "me"})
    assert dict(zarrx.open_array(store, path="a").attrs) == {"who": "me"}


def test_a_creator_that_loses_the_node_removes_the_zattrs_it_wrote():
    """Another creator makes the array (without attributes) between this one's ``.zattrs`` and
    its ``.zarray``: this one fails, and the other's array is left without this one's
    attributes."""
    def other(s):
        MemoryStore.set(s, "a/.zarray", zarrx_doc)
    ref = MemoryStore()
    zarrx.create_array(ref, name="a", shape=(3,), dtype="i4", zarr_format=2)
    zarrx_doc = ref.get("a/.zarray")
    store = RacingStore("a/.zarray", other)
    zarrx.open_group(store, mode="w", zarr_format=2)
    with pytest.raises(zarrx.errors.ContainsArrayError):
        zarrx.create_array(store, name="a", shape=(2,), dtype="i4", zarr_format=2,
                           attributes={"who": "me"})
    arr = zarrx.open_array(store, path="a")
    assert arr.shape == (3,) and dict(arr.attrs) == {}
    assert not store.exists("a/.zattrs")


def test_a_copy_writes_each_nodes_attributes_before_its_document():
    # before: in the order the source listed them (.zarray before .zattrs in a memory store)
    src = MemoryStore()
    grp = zarrx.open_group(src, mode="w", zarr_format=2, attributes={"r": 1})
    grp.create_array("a", shape=(4,), dtype="i4", chunks=(2,), attributes={"u": 1})[:] = 1
    dst = RecordingStore()
    zarrx.copy(src, dst)
    assert dst.written("a") == [".zattrs", ".zarray"]
    assert dst.written("") == [".zattrs", ".zgroup"]
